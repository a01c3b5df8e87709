package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

func sampleInterval(phase string, i int, warmup bool) Interval {
	start := t0.Add(time.Duration(i) * time.Second)
	return Interval{
		Phase:     phase,
		Start:     start,
		End:       start.Add(time.Second + 1234*time.Nanosecond),
		Elapsed:   time.Duration(i+1)*time.Second + 1234*time.Nanosecond,
		Ops:       int64(100 + i),
		OpsPerSec: float64(100+i) / 1.000001234,
		Warmup:    warmup,
		Series: []measure.Summary{{
			Name: "READ", Count: int64(50 + i), MeanMicros: 33.876, MinMicros: 14, MaxMicros: 900,
			Percentiles: pcts(30, 50, 86, 400),
			Statuses:    []measure.StatusCount{{Status: "OK", Count: int64(50 + i)}},
		}},
	}
}

// writeTwoPhases writes what `dbprobe ycsb` writes: a load phase, then a run
// phase, each a header, three intervals and a summary.
func writeTwoPhases(t *testing.T, w *Writer) *File {
	t.Helper()
	want := &File{}
	for _, phase := range []string{"load", "run"} {
		p := Phase{Header: sampleHeader(phase)}
		if err := w.Header(p.Header); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			iv := sampleInterval(phase, i, phase == "run" && i == 0)
			if err := w.Interval(iv); err != nil {
				t.Fatal(err)
			}
			p.Intervals = append(p.Intervals, iv)
		}
		s := sampleSummary(phase)
		if err := w.Summary(s); err != nil {
			t.Fatal(err)
		}
		p.Summary = &s
		want.Phases = append(want.Phases, p)
	}
	return want
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := writeTwoPhases(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("read back differs\n--- got\n%s\n--- want\n%s", gj, wj)
	}
}

func TestMonitorRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	h, s := sampleHeader("run"), sampleSummary("run")
	if err := w.Header(h); err != nil {
		t.Fatal(err)
	}
	var want []MonitorSample
	for i := range 3 {
		iv := sampleInterval("run", i, false)
		m := MonitorSample{Phase: "run", Start: iv.Start, End: iv.End,
			Metrics: map[string]float64{"db.xact_commit/s": float64(90 + i), "db.wait.IO:WALSync": 0.64, "host.cpu.iowait%": 3.5}}
		if err := w.Interval(iv); err != nil {
			t.Fatal(err)
		}
		if err := w.Monitor(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	if err := w.Summary(s); err != nil {
		t.Fatal(err)
	}
	if err := w.Monitor(want[0]); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()))
	if err == nil || !strings.Contains(err.Error(), "after the summary") {
		t.Fatalf("a monitor sample after the summary: err %v, want it named out of place", err)
	}
	cut := buf.Bytes()[:bytes.LastIndexByte(buf.Bytes()[:buf.Len()-1], '\n')+1]
	if f, err = Read(bytes.NewReader(cut)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Phases[0].Monitor, want) {
		t.Errorf("monitor samples read back %+v, want %+v", f.Phases[0].Monitor, want)
	}
}

func TestMonitorLeavesOutWhatJSONCannotHold(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	m := MonitorSample{Phase: "run", Start: t0, End: t0.Add(time.Second),
		Metrics: map[string]float64{"ok": 1, "nan": math.NaN(), "inf": math.Inf(1)}}
	if err := w.Monitor(m); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Phases[0].Monitor
	if len(got) != 1 || len(got[0].Metrics) != 1 || got[0].Metrics["ok"] != 1 {
		t.Fatalf("monitor samples read back %+v, want only the finite metric", got)
	}
}

func TestRecordLayout(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	writeTwoPhases(t, w)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("got %d lines, want 10", len(lines))
	}
	for i, prefix := range []string{
		`{"type":"header","schema_version":2,"experiment":"ycsb","phase":"load","started_at":"2024-01-01T12:00:00.123456789Z",`,
		`{"type":"interval","phase":"load","start":"2024-01-01T12:00:00.123456789Z","end":"2024-01-01T12:00:01.123458023Z","elapsed_ms":1000.001234,"ops":100,`,
	} {
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("line %d = %s\nwant prefix %s", i+1, lines[i], prefix)
		}
	}
	for _, part := range []string{`"runtime_ms":10110.456789`, `"warmup_ms":10000`, `"throughput_ops_per_sec":98.91196834817013`, `"errors":{"ERROR(23505)":2,"NOT_FOUND":3}`} {
		if !strings.Contains(lines[4], part) {
			t.Errorf("summary line lacks %s: %s", part, lines[4])
		}
	}
}

// The summary record as it is on disk, retries per code included: tools
// other than dbprobe read these keys.
func TestSummaryRecordGolden(t *testing.T) {
	s := Summary{
		Phase: "run", RunTime: 10 * time.Second, Ops: 500, Throughput: 50, RetryLimit: 5,
		Series: []measure.Summary{{
			Name: "UPDATE", Count: 500, MeanMicros: 2210.25, MinMicros: 800, MaxMicros: 90000,
			Percentiles: pcts(1500, 6000, 30000, 90000), Retries: new(int64(2410)),
			RetriesByCode: map[string]int64{"40001": 2401, "40P01": 9},
			Statuses:      []measure.StatusCount{{Status: "OK", Count: 500}},
		}},
	}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Summary(s); err != nil {
		t.Fatal(err)
	}
	golden(t, "json_summary_retries.golden", buf.Bytes())
	f, err := Read(strings.NewReader(`{"type":"header","schema_version":2,"experiment":"ycsb","phase":"run"}` + "\n" + buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Phases[0].Summary.Series[0].RetriesByCode; !reflect.DeepEqual(got, s.Series[0].RetriesByCode) {
		t.Fatalf("retries by code read back as %v, want %v", got, s.Series[0].RetriesByCode)
	}
}

func TestUndefinedThroughput(t *testing.T) {
	// A zero run time gives an undefined throughput; the record must still
	// be written (encoding/json refuses NaN) and read back as NaN.
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(Header{Experiment: ExperimentYCSB, Phase: "run"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		if err := w.Interval(Interval{Phase: "run", OpsPerSec: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Summary(Summary{Phase: "run", Throughput: math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"throughput_ops_per_sec":null`) {
		t.Errorf("no null throughput in %s", buf.String())
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Phases[0]
	if !math.IsNaN(p.Summary.Throughput) || !math.IsNaN(p.Intervals[0].OpsPerSec) || !math.IsNaN(p.Intervals[1].OpsPerSec) {
		t.Errorf("undefined rates read back as %v, %v, %v; want NaN", p.Summary.Throughput, p.Intervals[0].OpsPerSec, p.Intervals[1].OpsPerSec)
	}
}

func TestMillis(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999999, 1e6, 10110*time.Millisecond + 456789, -1500 * time.Microsecond, 1<<62 + 7, math.MaxInt64, math.MinInt64 + 1} {
		s := formatMillis(d)
		back, err := parseMillis(s)
		if err != nil || back != d {
			t.Errorf("%d ns → %q → %d, %v", d, s, back, err)
		}
	}
	for s, want := range map[string]time.Duration{"1e3": time.Second, "0.5": 500 * time.Microsecond, "2.0000001": 2*time.Millisecond + 0} {
		if got, err := parseMillis(s); err != nil || got != want {
			t.Errorf("parseMillis(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"1e300", "-1e300", "9223372036854775807", `"5"`} {
		if _, err := parseMillis(s); err == nil {
			t.Errorf("parseMillis(%q): no error", s)
		}
	}
}

func TestConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Header(sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := w.Interval(sampleInterval("run", i, false)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := w.Summary(sampleSummary("run")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.Phases[0].Intervals); got != n {
		t.Errorf("read %d intervals, want %d", got, n)
	}
	seen := map[int64]bool{}
	for _, iv := range f.Phases[0].Intervals {
		seen[iv.Ops] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct intervals, want %d", len(seen), n)
	}
}

func TestWriterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.jsonl")
	// Create truncates: an old result at the path is replaced.
	if err := os.WriteFile(path, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Interval(Interval{}); err == nil {
		t.Error("write after Close: no error")
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("file not truncated: %q", data)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir", "r.jsonl")); err == nil {
		t.Error("Create in a missing directory: no error")
	}
}

func TestWriterFailingWriter(t *testing.T) {
	w := NewWriter(failWriter{})
	if err := w.Header(Header{Experiment: ExperimentYCSB}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("got %v, want the writer's error", err)
	}
}

func ExampleWriter() {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.Summary(Summary{Phase: "run", RunTime: 1500 * time.Millisecond, Ops: 3, Throughput: 2})
	fmt.Print(buf.String())
	// Output:
	// {"type":"summary","phase":"run","runtime_ms":1500,"ops":3,"throughput_ops_per_sec":2,"interrupted":false,"warmup_ms":0,"retry_limit":0,"series":null}
}

func TestDiagnosisInTextAndJSON(t *testing.T) {
	s := sampleSummary("run")
	s.Diagnosis = &Diagnosis{Limit: "commit flush", Verdict: "commit flush (log write/sync) — 70% of sampled dbprobe sessions wait on it",
		Evidence: map[string]float64{"wait.commit_flush": 0.7}}
	var text bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n# bottleneck: commit flush (log write/sync) — 70%") {
		t.Errorf("text output lacks the bottleneck line:\n%s", text.String())
	}
	if got := readBack(t, s).Diagnosis; !reflect.DeepEqual(got, s.Diagnosis) {
		t.Errorf("diagnosis read back %+v, want %+v", got, s.Diagnosis)
	}
}

// The header record as it is on disk: schema version 2 names the
// experiment. Tools other than dbprobe read these keys.
func TestHeaderRecordGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := NewWriter(&buf).Header(sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	golden(t, "json_header_v2.golden", buf.Bytes())
}

func TestHeaderWithoutExperimentIsRefused(t *testing.T) {
	var buf bytes.Buffer
	h := sampleHeader("run")
	h.Experiment = ""
	if err := NewWriter(&buf).Header(h); err == nil || !strings.Contains(err.Error(), "without an experiment") {
		t.Errorf("err %v, want the header refused", err)
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

// sampleCheck is a durability check as the writer gets it: a header,
// three cycles (one lost a tail, one found rows of the first gone) and
// the summary.
func sampleCheck() Phase {
	h := Header{
		Experiment: ExperimentDurability, Phase: "check", StartedAt: t0,
		Command:     "dbprobe durability --database postgres --durability delayed --cycles 3",
		Settings:    []Setting{{Key: "database", Value: "postgres", Source: "--database"}, {Key: "durability", Value: "delayed", Source: "--durability"}},
		Environment: Environment{Dbprobe: "0.1.0", Go: "go1.26.8", OS: "linux", Arch: "amd64", CPUs: 8, GOMAXPROCS: 8},
		Database:    Database{Driver: "postgres", ServerVersion: "16.4", Placement: "server", Settings: []Setting{{Key: "synchronous_commit", Value: "off"}}},
	}
	start := t0.Add(2 * time.Second)
	cycle := func(n, acked, lost int, pattern string, earlier int) Cycle {
		c := Cycle{Phase: "check", Number: n, Start: start.Add(time.Duration(n-1) * 3 * time.Second),
			CrashAfter: 1500*time.Millisecond + 250*time.Microsecond, Acknowledged: acked, Lost: lost, Pattern: pattern,
			UnacknowledgedPresent: 2, EarlierLost: earlier, Recovery: 940123456 * time.Nanosecond}
		c.End = c.Start.Add(2*time.Second + 500*time.Millisecond)
		if lost > 0 {
			c.LostWindow, c.FirstLostPosition = 40*time.Millisecond+17*time.Microsecond, acked-lost+1
		}
		return c
	}
	p := Phase{Header: h, Cycles: []Cycle{
		cycle(1, 37741, 6, PatternTail, 0),
		cycle(2, 14601, 0, PatternNone, 0),
		cycle(3, 20000, 27, PatternScattered, 1),
	}}
	p.Summary = &Summary{Phase: "check", RunTime: 10 * time.Second, Notes: []string{"a note"}, Durability: &DurabilitySummary{
		Cycles: 3, Acknowledged: 72342, Lost: 34, TailCycles: 1, ScatteredCycles: 1,
		Verdict: "failed: acknowledged writes were lost out of order in 1 cycles", Caveat: "a process kill cannot reveal power loss",
	}}
	return p
}

func TestDurabilityRoundTrip(t *testing.T) {
	want := sampleCheck()
	data := resultFile(t, []Phase{want})
	f, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Phases) != 1 || !reflect.DeepEqual(f.Phases[0], want) {
		gj, _ := json.MarshalIndent(f.Phases, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("read back differs\n--- got\n%s\n--- want\n%s", gj, wj)
	}
	// A durability summary carries none of a YCSB summary's fields, which
	// would say it measured zero operations.
	last := data[bytes.LastIndexByte(data[:len(data)-1], '\n')+1:]
	for _, key := range []string{`"ops"`, `"series"`, `"throughput_ops_per_sec"`, `"warmup_ms"`} {
		if bytes.Contains(last, []byte(key)) {
			t.Errorf("durability summary has %s: %s", key, last)
		}
	}
}
