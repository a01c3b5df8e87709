// Package synth writes synthetic but realistic dbprobe results, for the
// report's browser test and its render benchmark: a result of any length
// written through result.Writer and measure.Set exactly as a run writes
// one (per-second intervals with encoded HDR histograms for several
// operations, monitor samples with waits and CPU, failures, retries, an
// outage, a warm-up), without the hour a real run of that length takes.
// The figures are drawn from a seeded generator, so a given Options
// always writes the same result.
package synth

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Options shape the result.
type Options struct {
	// Kind is result.ExperimentYCSB (the default), ExperimentStress or
	// ExperimentStorage.
	Kind     string
	Duration time.Duration
	Threads  int
	// OpsPerSec is the throughput before the outage.
	OpsPerSec float64
	Seed      uint64
	// Warmup, when set, is marked as the warm-up.
	Warmup time.Duration
	// Outage, when set, is an outage of this length at the middle.
	Outage time.Duration
	// Durability is written as the "durability" setting, so that two
	// results differ by it.
	Durability string
	// Cut leaves the summary out, as a run killed before it wrote one.
	Cut bool
	// Distinct, when set, draws and encodes only that many distinct
	// seconds; every later second repeats the operations of second
	// s mod Distinct (recorded again, so the summary counts them, with
	// the same encoded histograms). Encoding the histograms is three
	// quarters of the cost of writing a result: the benchmarks that need
	// a hundred hours of results set it, and their readers decode and
	// add every second all the same. Throughput then repeats with that
	// period.
	Distinct int
	// LatencyScale multiplies every latency (0 is 1): a side whose
	// operations are 5% faster has 1/1.05.
	LatencyScale float64
	// Client, when set, makes the result one client's slice of a run of
	// several (dbprobe merge's input).
	Client *result.Client
	// NoMonitor writes no monitor sample: only one client of a run of
	// several monitors the database.
	NoMonitor bool
}

// draw is one operation's latencies in one second: each value recorded
// count times.
type draw struct{ v, count int64 }

// second is what one second did: each operation's latencies and
// whether it retried, and how many operations the runner counted.
type second struct {
	ops    [][]draw
	retry  []bool
	total  int64
	series []measure.Summary // encoded, once Tick has run
}

// percentiles are the ones a run keeps by default.
var percentiles = []float64{50, 95, 99, 99.9}

// Write writes one phase's result to w.
func Write(w io.Writer, o Options) error {
	if o.Kind == "" {
		o.Kind = result.ExperimentYCSB
	}
	if o.Threads == 0 {
		o.Threads = 16
	}
	if o.OpsPerSec == 0 {
		o.OpsPerSec = 20000
	}
	if o.Durability == "" {
		o.Durability = "full"
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed))
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ops := []string{"READ", "UPDATE", "INSERT", "SCAN"}
	share := []float64{0.6, 0.3, 0.05, 0.05}
	median := []float64{180, 900, 700, 2500} // µs
	switch o.Kind {
	case result.ExperimentStress:
		ops = []string{"ITERATION", "OLTP-INSERT", "OLTP-UPDATE", "OLTP-SELECT", "OLTP-DELETE"}
		share = []float64{0.2, 0.2, 0.2, 0.2, 0.2}
		median = []float64{3000, 600, 800, 400, 500}
	case result.ExperimentStorage:
		ops = []string{"CHUNK"}
		share = []float64{1}
		median = []float64{40000}
	}
	names := append([]string{}, ops...)
	countsOK := make([]bool, len(names))
	for i := range countsOK {
		countsOK[i] = true
	}
	set := measure.NewSet(names, countsOK, start)
	for i := range ops {
		set.MarkRetryable(i)
	}
	rec := set.NewRecorder()

	rw := result.NewWriter(w)
	h := header(o, start)
	if err := rw.Header(h); err != nil {
		return err
	}
	secs := int(o.Duration / time.Second)
	outFrom, outTo := -1, -1
	if o.Outage > 0 {
		outFrom = secs / 2
		outTo = outFrom + int(o.Outage/time.Second)
	}
	var outages []result.Outage
	errs := map[string]int64{}
	var perSecond []result.RatePoint
	scale := o.LatencyScale
	if scale == 0 {
		scale = 1
	}
	cache := map[int]*second{}
	for s := 0; s < secs; s++ {
		down := s >= outFrom && s < outTo
		// Throughput wanders slowly and dips every 5 minutes (a
		// checkpoint), as a real database's does.
		rate := o.OpsPerSec * (1 + 0.05*math.Sin(float64(s)/37)) * (1 - 0.3*math.Exp(-float64(s%300)/8))
		var sec *second
		if o.Distinct > 0 && !down {
			sec = cache[s%o.Distinct]
		}
		fresh := sec == nil
		if fresh {
			sec = &second{ops: make([][]draw, len(ops)), retry: make([]bool, len(ops))}
			for i := range ops {
				n := int64(rate * share[i])
				if down {
					n = 0
				}
				// About 500 distinct latencies a second, each recorded for
				// its share of the second's operations: a realistic
				// histogram at a fraction of the cost of recording every
				// operation.
				const draws = 500
				for k := 0; k < draws && n > 0; k++ {
					c := n / draws
					if k < int(n%draws) {
						c++
					}
					if c == 0 {
						continue
					}
					v := median[i] * math.Exp(rng.NormFloat64()*0.6)
					if rng.Float64() < 0.01 {
						v *= 20 // the tail: a lock wait, a checkpoint
					}
					sec.ops[i] = append(sec.ops[i], draw{int64(v*scale) + 1, c})
				}
				// A stress run counts its iterations as done, not each
				// statement.
				if o.Kind != result.ExperimentStress || i == 0 {
					sec.total += n
				}
				sec.retry[i] = !down && rng.Float64() < 0.05
			}
		}
		for i := range ops {
			for _, d := range sec.ops[i] {
				rec.RecordN(i, d.v, d.count)
			}
			if sec.retry[i] {
				rec.Retry(i, "40001")
				rec.Retry(i, "40001")
			}
		}
		total := sec.total
		if down {
			for range 3 {
				rec.Status(0, "ERROR")
				rec.Status(0, "ERROR(08006)")
				rec.Error("08006")
				errs["ERROR(08006)"]++
			}
		}
		rec.Done(total)
		t0 := start.Add(time.Duration(s) * time.Second)
		t1 := t0.Add(time.Second)
		warm := time.Duration(s)*time.Second < o.Warmup
		iv := set.Tick(t1, !warm)
		if sec.series == nil {
			sec.series = set.SummarizeEncoded(iv.View, percentiles)
		}
		if fresh && o.Distinct > 0 && !down {
			cache[s%o.Distinct] = sec
		}
		sums := sec.series
		err := rw.Interval(result.Interval{Phase: h.Phase, Start: t0, End: t1, Elapsed: t1.Sub(start),
			Ops: iv.Ops, OpsPerSec: float64(iv.Ops), Warmup: warm, Series: sums})
		if err != nil {
			return err
		}
		if !o.NoMonitor {
			if err := rw.Monitor(sample(rng, h.Phase, t0, t1, o.Threads, down)); err != nil {
				return err
			}
		}
		if !warm {
			perSecond = append(perSecond, result.RatePoint{Elapsed: float64(len(perSecond) + 1), Seconds: 1,
				Bytes: int64(rate * 8192), Rate: rate * 8192})
		}
	}
	if outFrom >= 0 {
		outages = append(outages, result.Outage{Start: start.Add(time.Duration(outFrom) * time.Second),
			End: start.Add(time.Duration(outTo) * time.Second), Failed: int64(3 * (outTo - outFrom))})
	}
	if o.Cut {
		return nil
	}
	tot := set.Total()
	run := o.Duration - o.Warmup
	sum := result.Summary{
		Phase: h.Phase, RunTime: run, Ops: tot.Ops, Throughput: float64(tot.Ops) / run.Seconds(),
		Series: set.SummarizeEncoded(tot.View, percentiles), Errors: errs, Warmup: o.Warmup, RetryLimit: 3,
		Ending: &result.Ending{By: "time", Text: fmt.Sprintf("maxexecutiontime=%s ran out after %d operations", o.Duration, tot.Ops)},
		Diagnosis: &result.Diagnosis{Limit: "commit flush", Verdict: "commit flush — 62% of sampled backend time waiting on WAL sync; CPU 31%",
			Evidence: map[string]float64{"wait.commit flush": 0.62, "host.cpu.idle%": 69}},
	}
	if len(outages) > 0 {
		sum.Availability = &result.Availability{Outages: outages, Reconnects: int64(o.Threads)}
	}
	switch o.Kind {
	case result.ExperimentStress:
		sum.Stress = stress()
	case result.ExperimentStorage:
		sum.Storage = storage(perSecond)
	}
	return rw.Summary(sum)
}

func header(o Options, start time.Time) result.Header {
	phase := "run"
	cmd := fmt.Sprintf("dbprobe run --db postgres://bench@db.example:5432/bench --workload a --threads %d --duration %s -p durability=%s --out run.jsonl", o.Threads, o.Duration, o.Durability)
	switch o.Kind {
	case result.ExperimentStress:
		phase = "stress"
		cmd = fmt.Sprintf("dbprobe stress --db postgres://bench@db.example:5432/bench --mix oltp --threads %d --duration %s --out stress.jsonl", o.Threads, o.Duration)
	case result.ExperimentStorage:
		phase = "bulk"
		cmd = fmt.Sprintf("dbprobe storage bulk --db postgres://bench@db.example:5432/bench --threads %d --out bulk.jsonl", o.Threads)
	}
	return result.Header{
		Experiment: o.Kind, Phase: phase, Command: cmd, RunID: "20261127T120000Z-5eed", StartedAt: start,
		Target: "postgres://bench@db.example:5432/bench",
		Settings: []result.Setting{
			{Key: "workload", Value: "site.ycsb.workloads.CoreWorkload", Source: "workloads/workloada"},
			{Key: "threadcount", Value: fmt.Sprint(o.Threads), Source: "--threads"},
			{Key: "durability", Value: o.Durability, Source: "-p"},
			{Key: "maxexecutiontime", Value: o.Duration.String(), Source: "--duration"},
			{Key: "warmup", Value: o.Warmup.String(), Source: "default"},
			{Key: "out", Value: "run.jsonl", Source: "--out"},
		},
		Client:      o.Client,
		Environment: result.Environment{Dbprobe: "synthetic", Go: "go1.26", OS: "linux", Arch: "amd64", CPUs: 8, GOMAXPROCS: 8},
		Database: result.Database{Driver: "postgres", Library: "pgx v5", ServerVersion: "15.14", Placement: "server",
			Settings: []result.Setting{{Key: "synchronous_commit", Value: "on"}, {Key: "shared_buffers", Value: "128MB"}}},
	}
}

// sample is one second of the monitor: waits as shares of the sampled
// active sessions, the host's CPU, the client's.
func sample(rng *rand.Rand, phase string, t0, t1 time.Time, threads int, down bool) result.MonitorSample {
	m := map[string]float64{
		"db.sessions.active":           float64(threads) * (0.7 + 0.2*rng.Float64()),
		"db.wait.IO:WALSync":           0.45 + 0.1*rng.Float64(),
		"db.wait.LWLock:WALWrite":      0.1 + 0.05*rng.Float64(),
		"db.wait.CPU":                  0.2 + 0.05*rng.Float64(),
		"db.wait.Lock:transactionid":   0.05 * rng.Float64(),
		"db.wait.Client:ClientRead":    0.05 * rng.Float64(),
		"db.wait.IO:DataFileRead":      0.02 * rng.Float64(),
		"db.wait.LWLock:BufferMapping": 0.01 * rng.Float64(),
		"db.wait.IO:WALWrite":          0.01 * rng.Float64(),
		"db.wait.Timeout:VacuumDelay":  0.005 * rng.Float64(),
		"host.cpu.idle%":               60 + 10*rng.Float64(),
		"host.cpu.iowait%":             8 + 4*rng.Float64(),
		"host.cpu.steal%":              0.5 * rng.Float64(),
		"client.cpu%":                  40 + 10*rng.Float64(),
	}
	if down {
		for k := range m {
			if len(k) > 8 && k[:8] == "db.wait." {
				delete(m, k)
			}
		}
		m["db.sessions.active"] = 0
	}
	return result.MonitorSample{Phase: phase, Start: t0, End: t1, Metrics: m}
}

func stress() *result.StressSummary {
	f := func(v float64) *float64 { return &v }
	st := &result.StressSummary{CostSource: "pg_stat_statements; pg_stat_database",
		PerIteration:           &result.CostFigures{Calls: 1000, LogicalReads: f(41.5), PhysicalReads: f(0.2)},
		StatementsPerIteration: &result.CostFigures{Calls: 1000, LogicalReads: f(38), PhysicalReads: f(0.1)}}
	for i, s := range []string{"INSERT INTO oltp (id, pad) VALUES ($1, $2)", "UPDATE oltp SET pad = $2 WHERE id = $1", "SELECT pad FROM oltp WHERE id = $1", "DELETE FROM oltp WHERE id = $1"} {
		st.Statements = append(st.Statements, result.StressStatement{Label: []string{"OLTP-INSERT", "OLTP-UPDATE", "OLTP-SELECT", "OLTP-DELETE"}[i],
			File: "--mix oltp", Text: s, Rows: 1000, Affected: 1000,
			Plan: &result.Plan{Text: "Index Scan using oltp_pkey on oltp", How: "EXPLAIN"},
			Cost: &result.CostFigures{Calls: 1000, LogicalReads: f(9.5), PhysicalReads: f(0.02), CPUMicros: f(35), ElapsedMicros: f(80)}})
	}
	return st
}

func storage(ps []result.RatePoint) *result.StorageSummary {
	var bytes int64
	lo, hi := math.Inf(1), 0.0
	for _, p := range ps {
		bytes += p.Bytes
		lo, hi = min(lo, p.Rate), max(hi, p.Rate)
	}
	secs := float64(len(ps))
	return &result.StorageSummary{Experiment: "bulk", Table: result.StorageTable{Name: "dbprobe_bulk", Rows: 1000000, PayloadBytes: 100},
		BytesAre: "row payload sent by the client", Bytes: bytes, Seconds: secs, Rate: float64(bytes) / max(secs, 1),
		PerSecond: ps, Verdict: "log-bound: 160 MB/s, the WAL's rate",
		Consistency: &result.Consistency{Points: len(ps), Median: float64(bytes) / max(secs, 1), Min: lo, Max: hi, CV: 0.08},
		Proof:       &result.StorageProof{Bytes: bytes, DatabaseBytes: bytes * 2, Counter: "pg_stat_wal.wal_bytes", DeviceBytes: -1}}
}
