package export

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// csvFile is a result of two phases with what a table has to place: a
// series only one phase has, one with nothing in an interval, percentiles
// 99.9 and 9.99 (whose names must differ), an undefined rate.
func csvFile() *result.File {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pcs := func(p50, p999, p999b int64) []measure.Percentile {
		return []measure.Percentile{{Percentile: 9.99, Micros: p999b}, {Percentile: 50, Micros: p50}, {Percentile: 99.9, Micros: p999}}
	}
	return &result.File{Phases: []result.Phase{
		{
			Header: result.Header{Phase: "load", StartedAt: start},
			Intervals: []result.Interval{{Phase: "load", Start: start, End: start.Add(500 * time.Millisecond), Elapsed: 500 * time.Millisecond, Ops: 10, OpsPerSec: 20,
				Series: []measure.Summary{{Name: "INSERT", Count: 10, MeanMicros: 123.456789, MaxMicros: 900, Percentiles: pcs(100, 800, 50)}}}},
			Monitor: []result.MonitorSample{{Phase: "load", End: start.Add(500 * time.Millisecond), Metrics: map[string]float64{"db.xact_commit/s": 20, "client.cpu%": 12.5}}},
		},
		{
			Header: result.Header{Phase: "run", StartedAt: start.Add(time.Second)},
			Intervals: []result.Interval{
				{Phase: "run", Warmup: true, End: start.Add(2 * time.Second), Elapsed: time.Second, Ops: 3, OpsPerSec: math.NaN(),
					Series: []measure.Summary{{Name: "READ", Count: 3, MeanMicros: 10, MaxMicros: 12, Percentiles: pcs(10, 12, 9)}, {Name: "UPDATE", Count: 0}}},
			},
			Monitor: []result.MonitorSample{{Phase: "run", End: start.Add(2 * time.Second), Metrics: map[string]float64{"host.cpu.user%": -0.00001}}},
		},
	}}
}

func readCSV(t *testing.T, text string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not read back: %v\n%s", err, text)
	}
	return rows
}

func TestIntervalsCSV(t *testing.T) {
	var buf bytes.Buffer
	n, err := IntervalsCSV(&buf, csvFile())
	if err != nil || n != 2 {
		t.Fatalf("IntervalsCSV: %d rows, %v", n, err)
	}
	want := [][]string{
		{"time_utc", "elapsed_s", "phase", "warmup", "ops", "ops_per_s",
			"INSERT count", "INSERT mean_us", "INSERT max_us", "INSERT p9.99_us", "INSERT p50_us", "INSERT p99.9_us",
			"READ count", "READ mean_us", "READ max_us", "READ p9.99_us", "READ p50_us", "READ p99.9_us",
			"UPDATE count", "UPDATE mean_us", "UPDATE max_us"},
		{"2026-03-01 12:00:00.500", "0.500", "load", "false", "10", "20", "10", "123.4568", "900", "50", "100", "800", "", "", "", "", "", "", "", "", ""},
		{"2026-03-01 12:00:02.000", "1.000", "run", "true", "3", "", "", "", "", "", "", "", "3", "10", "12", "9", "10", "12", "0", "", ""},
	}
	got := readCSV(t, buf.String())
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

func TestMonitorCSV(t *testing.T) {
	var buf bytes.Buffer
	n, err := MonitorCSV(&buf, csvFile())
	if err != nil || n != 2 {
		t.Fatalf("MonitorCSV: %d rows, %v", n, err)
	}
	want := "time_utc,elapsed_s,phase,client.cpu%,db.xact_commit/s,host.cpu.user%\n" +
		"2026-03-01 12:00:00.500,0.500,load,12.5,20,\n" +
		// Elapsed from the run phase's start (its first interval's end
		// less its elapsed time); -0.00001 rounds to 0, not -0.
		"2026-03-01 12:00:02.000,1.000,run,,,0\n"
	if buf.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestStorageCSV: a storage result exports its per-second rate, elapsed
// from the measured part's start, each second's point, bytes and the rate
// in the text's unit.
func TestStorageCSV(t *testing.T) {
	st := &result.StorageSummary{Experiment: "read", PerSecond: []result.RatePoint{
		{Elapsed: 1, Seconds: 1, Bytes: 50e6, Rate: 50e6, Point: "threads 1"},
		{Elapsed: 2, Seconds: 1, Bytes: 40e6, Rate: 40e6, Point: "threads 1", Fell: true},
		{Elapsed: 3.5, Seconds: 0.5, Bytes: 50e6, Rate: 100e6, Point: "threads 2"},
	}}
	f := &result.File{Phases: []result.Phase{{Header: result.Header{Phase: "read"}, Summary: &result.Summary{Phase: "read", Storage: st}}}}
	if !HasStorage(f) || HasStorage(csvFile()) {
		t.Fatal("HasStorage")
	}
	var b bytes.Buffer
	n, err := StorageCSV(&b, f)
	if err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}
	want := `elapsed_s,experiment,point,seconds,bytes,rate_bytes_per_s,rate,rate_unit,fell
1.000,read,threads 1,1.000,50000000,50000000,3,GB/min,false
2.000,read,threads 1,1.000,40000000,40000000,2.4,GB/min,true
3.500,read,threads 2,0.500,50000000,100000000,6,GB/min,false
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
