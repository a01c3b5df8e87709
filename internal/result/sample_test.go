package result

import (
	"bytes"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Sample data shared by the tests, shaped like what the runner produces.

var t0 = time.Date(2024, 1, 1, 12, 0, 0, 123456789, time.UTC)

func sampleHeader(phase string) Header {
	return Header{
		Experiment: ExperimentYCSB,
		Phase:      phase,
		Command:    "dbprobe ycsb -P workloads/workloada -p recordcount=1000 --threads 16 --url postgres://bench:xxxxx@db:5432/bench",
		StartedAt:  t0,
		RunID:      "20260301T120000Z-3fa9",
		Target:     "postgres://bench:xxxxx@db:5432/bench",
		Settings: []Setting{
			{Key: "workload", Value: "core", Source: "file workloads/workloada"},
			{Key: "recordcount", Value: "1000", Source: "-p"},
			{Key: "operationcount", Value: "1000", Source: "file workloads/workloada"},
			{Key: "readproportion", Value: "0.5", Source: "file workloads/workloada"},
			{Key: "updateproportion", Value: "0.5", Source: "file workloads/workloada"},
			{Key: "requestdistribution", Value: "zipfian", Source: "file workloads/workloada"},
			{Key: "threadcount", Value: "16", Source: "--threads"},
			{Key: "fieldlength", Value: "100", Source: "default"},
			{Key: "table", Value: "usertable", Source: "default"},
		},
		Notes: []string{"unknown property foo=bar ignored", "warm-up 10s excluded from statistics"},
		Environment: Environment{
			Dbprobe: "0.1.0", Go: "go1.26.8", OS: "linux", Arch: "amd64",
			CPUs: 8, GOMAXPROCS: 8, Hostname: "bench-client-1",
		},
		Database: Database{
			Driver: "postgres", Library: "github.com/jackc/pgx/v5 v5.12.0", ServerVersion: "16.4",
			Settings: []Setting{
				{Key: "synchronous_commit", Value: "on"},
				{Key: "shared_buffers", Value: "128MB"},
			},
		},
	}
}

func pcts(vals ...int64) []measure.Percentile {
	ps := []float64{50, 95, 99, 99.9}
	out := make([]measure.Percentile, len(vals))
	for i, v := range vals {
		out[i] = measure.Percentile{Percentile: ps[i], Micros: v}
	}
	return out
}

func sampleSummary(phase string) Summary {
	return Summary{
		Phase:      phase,
		RunTime:    10110*time.Millisecond + 456789*time.Nanosecond,
		Ops:        1000,
		Throughput: 98.91196834817013,
		Series: []measure.Summary{
			{
				Name: "READ", Count: 497, MeanMicros: 338.80684104627767, MinMicros: 141, MaxMicros: 9007,
				Percentiles: pcts(301, 617, 1234, 9007),
				Statuses:    []measure.StatusCount{{Status: "OK", Count: 497}, {Status: "NOT_FOUND", Count: 3}},
			},
			{
				Name: "UPDATE", Count: 500, MeanMicros: 1210.5, MinMicros: 402, MaxMicros: 3600000000,
				Percentiles: pcts(1001, 2203, 4011, 3600000000),
				Overflow:    1,
				Statuses:    []measure.StatusCount{{Status: "OK", Count: 500}},
			},
			{
				// Every insert failed: statuses only, latencies in INSERT-FAILED.
				Name:     "INSERT",
				Statuses: []measure.StatusCount{{Status: "ERROR(23505)", Count: 2}},
			},
			{
				Name: "INSERT-FAILED", Count: 2, MeanMicros: 150, MinMicros: 120, MaxMicros: 180,
				Percentiles: pcts(120, 180, 180, 180),
			},
		},
		Errors:      map[string]int64{"ERROR(23505)": 2, "NOT_FOUND": 3},
		Interrupted: true,
		Warmup:      10 * time.Second,
		Ending:      &Ending{By: "interrupt", Text: "interrupted after 1000 operations"},
		Notes:       []string{"interrupted by signal after 10.1 s"},
	}
}

// readBack writes a run phase's header and s as a result file and returns
// the summary Read finds in it.
func readBack(t *testing.T, s Summary) *Summary {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	if err := w.Summary(s); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return f.Phases[0].Summary
}
