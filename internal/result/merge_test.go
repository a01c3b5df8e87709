package result

import (
	"bytes"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
)

var updateMerge = flag.Bool("update-merge", false, "rewrite testdata/merge.golden")

// mergeStart is a whole second, where a client started by --start-at
// begins.
var mergeStart = time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)

// raw holds every latency recorded, independently of the runner's
// histograms: the merge must give exactly its percentiles.
type raw struct {
	window, all map[string]*hdr.Histogram
}

func newRaw() *raw {
	return &raw{window: map[string]*hdr.Histogram{}, all: map[string]*hdr.Histogram{}}
}

func (r *raw) record(m map[string]*hdr.Histogram, name string, v int64) {
	h := m[name]
	if h == nil {
		h = hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
		m[name] = h
	}
	if err := h.RecordValue(v); err != nil {
		panic(err)
	}
}

// clientResult simulates one client of count: seconds whole intervals
// from mergeStart+delay, READ and UPDATE latencies from the client's own
// random source, the window's seconds (those every client measures whole)
// recorded into r.window as well.
func clientResult(t *testing.T, index, count, seconds int, delay time.Duration, clock int64, r *raw, windowSeconds int) *File {
	t.Helper()
	names := []string{"READ", "UPDATE"}
	start := mergeStart.Add(delay)
	set := measure.NewSet(names, []bool{true, true}, start)
	set.MarkRetryable(0)
	set.MarkRetryable(1)
	rec := set.NewRecorder()
	rng := rand.New(rand.NewPCG(uint64(index), 7))
	h := sampleHeader("run")
	h.Environment.Hostname = "client-" + string(rune('a'+index))
	h.Settings = append(h.Settings, Setting{Key: "seed", Value: string(rune('0' + index)), Source: "--seed"}, Setting{Key: "client-count", Value: "3", Source: "--client-count"})
	h.Client = &Client{Index: index, Count: count, Monitors: index == 0, Clock: &ClockOffset{OffsetMicros: clock, RTTMicros: 300, Query: "SELECT clock_timestamp()"}}
	p := Phase{Header: h}
	var total int64
	for s := range seconds {
		inWindow := s < windowSeconds
		n := 300 + rng.IntN(300)
		for range n {
			op, v := 0, 50+rng.Int64N(20000)
			if rng.IntN(2) == 1 {
				op, v = 1, 200+rng.Int64N(200000)
			}
			rec.Record(op, v)
			rec.Done(1)
			r.record(r.all, names[op], v)
			if inWindow {
				r.record(r.window, names[op], v)
			}
		}
		if s == 1 {
			rec.Status(1, "ERROR(40001)")
			rec.Error("40001")
			rec.Retry(1, "40001")
		}
		end := mergeStart.Add(time.Duration(s+1) * time.Second)
		if s == seconds-1 {
			end = end.Add(-time.Duration(index) * time.Millisecond) // each ends a little apart
		}
		iv := set.Tick(end, true)
		total += iv.Ops
		p.Intervals = append(p.Intervals, Interval{
			Phase: "run", Start: iv.Start, End: iv.End, Elapsed: iv.End.Sub(start), Ops: iv.Ops,
			Series: set.SummarizeEncoded(iv.View, []float64{50, 95, 99, 99.9}),
		})
	}
	tot := set.Total()
	sum := Summary{
		Phase: "run", RunTime: p.Intervals[len(p.Intervals)-1].End.Sub(start), Ops: total,
		Series: set.SummarizeEncoded(tot.View, []float64{50, 95, 99, 99.9}), Errors: map[string]int64{"40001": 1},
		Diagnosis: &Diagnosis{Limit: "none saturated", Verdict: "none saturated"},
	}
	if index == 2 {
		sum.Diagnosis = &Diagnosis{Limit: "client", Verdict: "client bound: dbprobe uses 97% of its CPU"}
	}
	sum.Throughput = float64(total) / sum.RunTime.Seconds()
	p.Summary = &sum
	p.Monitor = []MonitorSample{{Phase: "run", Start: start, End: start.Add(time.Second), Metrics: map[string]float64{"db.xact_commit/s": float64(index)}}}
	return &File{Phases: []Phase{p}}
}

// inputs writes the clients' results as a run writes them, named
// r<index>.jsonl.
func inputs(t *testing.T, files ...*File) []MergeInput {
	t.Helper()
	in := make([]MergeInput, len(files))
	for i, f := range files {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, p := range f.Phases {
			if err := w.Header(p.Header); err != nil {
				t.Fatal(err)
			}
			for _, iv := range p.Intervals {
				if err := w.Interval(iv); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range p.Monitor {
				if err := w.Monitor(m); err != nil {
					t.Fatal(err)
				}
			}
			if p.Summary != nil {
				if err := w.Summary(*p.Summary); err != nil {
					t.Fatal(err)
				}
			}
		}
		name := "r?.jsonl"
		if c := f.Phases[0].Header.Client; c != nil {
			name = "r" + strconv.Itoa(c.Index) + ".jsonl"
		}
		in[i] = MergeInput{Name: name, Result: &buf}
	}
	return in
}

// threeClients is a run of three clients, the third running two seconds
// longer than the others (a straggler), the second's clock 30 ms off.
func threeClients(t *testing.T) ([]*File, *raw) {
	r := newRaw()
	files := []*File{clientResult(t, 2, 3, 7, 0, 1200, r, 5), clientResult(t, 0, 3, 5, 0, 1000, r, 5), clientResult(t, 1, 3, 5, 0, -29000, r, 5)}
	return files, r
}

func TestMergeIsExact(t *testing.T) {
	files, r := threeClients(t)
	phases, warnings, err := Merge(inputs(t, files...), "dbprobe merge r0.jsonl r1.jsonl r2.jsonl -o m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %q: the clocks are 30 ms apart, within one interval", warnings)
	}
	s := phases[0].Summary
	m := s.Merge
	var sumOps int64
	for _, f := range files {
		sumOps += f.Phases[0].Summary.Ops
	}
	if m.AllOps != sumOps {
		t.Fatalf("all operations %d, the clients' own add up to %d", m.AllOps, sumOps)
	}
	var outside int64
	for _, o := range m.Outside {
		outside += o.Ops
		if o.Client != 2 {
			t.Errorf("client %d measured outside the window: only client 2 ran on", o.Client)
		}
	}
	if s.Ops+outside != m.AllOps {
		t.Fatalf("window %d + outside %d != all %d", s.Ops, outside, m.AllOps)
	}
	if want := 5 * time.Second; s.RunTime != want {
		t.Fatalf("window run time %s, want %s (the five seconds all three measured)", s.RunTime, want)
	}
	check := func(what string, series []measure.Summary, want map[string]*hdr.Histogram) {
		t.Helper()
		for _, ser := range series {
			h := want[ser.Name]
			if h == nil {
				t.Fatalf("%s: series %s was never recorded", what, ser.Name)
			}
			if ser.Count != h.TotalCount() || ser.MinMicros != h.Min() || ser.MaxMicros != h.Max() || ser.MeanMicros != h.Mean() {
				t.Fatalf("%s [%s]: count %d min %d max %d mean %g; raw %d %d %d %g", what, ser.Name, ser.Count, ser.MinMicros, ser.MaxMicros, ser.MeanMicros, h.TotalCount(), h.Min(), h.Max(), h.Mean())
			}
			for _, p := range ser.Percentiles {
				if got, w := p.Micros, h.ValueAtPercentile(p.Percentile); got != w {
					t.Fatalf("%s [%s] p%g = %d, the raw histogram's %d", what, ser.Name, p.Percentile, got, w)
				}
			}
		}
		if len(series) != len(want) {
			t.Fatalf("%s: %d series, want %d", what, len(series), len(want))
		}
	}
	check("window", s.Series, r.window)
	check("all", m.AllSeries, r.all)
	if s.Errors["ERROR(40001)"] != 3 || m.AllErrors["40001"] != 3 {
		t.Fatalf("errors: window %v, all %v; want 3 of each", s.Errors, m.AllErrors)
	}
	for _, ser := range s.Series {
		if ser.Name == "UPDATE" && (ser.Retries == nil || *ser.Retries != 3) {
			t.Fatalf("UPDATE retries %v, want 3", ser.Retries)
		}
	}
	if m.MonitorClient != 0 || len(phases[0].Monitor) != 1 || phases[0].Monitor[0].Metrics["db.xact_commit/s"] != 0 {
		t.Fatalf("monitor from client %d, %v: want client 0's", m.MonitorClient, phases[0].Monitor)
	}
	if m.ClockSpreadMicros == nil || *m.ClockSpreadMicros != 30200 {
		t.Fatalf("clock spread %v, want 30200 µs", m.ClockSpreadMicros)
	}
	if len(m.Clients) != 3 || m.Clients[2].Diagnosis.Limit != "client" {
		t.Fatalf("clients %+v: client 2 keeps its own client-bound verdict", m.Clients)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "client 2 was itself the limit") {
		t.Fatalf("notes %q do not say client 2 was the limit", s.Notes)
	}
	// Per second, the merged interval holds every client's operations.
	var perSecond int64
	for _, iv := range phases[0].Intervals {
		perSecond += iv.Ops
	}
	if perSecond != sumOps || len(phases[0].Intervals) != 7 {
		t.Fatalf("%d merged intervals with %d operations; want 7 with %d", len(phases[0].Intervals), perSecond, sumOps)
	}
}

func TestMergedResultReadsBack(t *testing.T) {
	files, _ := threeClients(t)
	phases, _, err := Merge(inputs(t, files...), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	p := phases[0]
	if err := w.Header(p.Header); err != nil {
		t.Fatal(err)
	}
	for _, iv := range p.Intervals {
		if err := w.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Summary(*p.Summary); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Phases[0].Summary
	if got.Merge == nil || got.Merge.AllOps != p.Summary.Merge.AllOps || len(got.Merge.Clients) != 3 {
		t.Fatalf("merge summary read back as %+v", got.Merge)
	}
	// The merged intervals carry histograms: recover rebuilds the
	// window-and-stragglers total from them.
	rec, err := RecoverSummary(Phase{Header: f.Phases[0].Header, Intervals: f.Phases[0].Intervals})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Ops != p.Summary.Merge.AllOps {
		t.Fatalf("recovered %d operations from the merged intervals, want %d", rec.Ops, p.Summary.Merge.AllOps)
	}
}

func TestMergeText(t *testing.T) {
	files, _ := threeClients(t)
	phases, _, err := Merge(inputs(t, files...), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, *phases[0].Summary); err != nil {
		t.Fatal(err)
	}
	if err := WriteMergeText(&buf, phases[0].Summary.Merge); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "merge.golden")
	if *updateMerge {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-merge)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("merge text differs from %s (run with -update-merge):\n%s", golden, buf.String())
	}
}

func TestMergeWarnsOfClocksApart(t *testing.T) {
	r := newRaw()
	in := inputs(t, clientResult(t, 0, 2, 3, 0, 0, r, 3), clientResult(t, 1, 2, 3, 0, 1_500_000, r, 3))
	_, warnings, err := Merge(in, "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "disagree by 1.5s") {
		t.Fatalf("warnings %q, want one on clocks 1.5 s apart", warnings)
	}
}

func TestMergeRefuses(t *testing.T) {
	r := newRaw()
	client := func(i, n int) *File { return clientResult(t, i, n, 2, 0, 0, r, 2) }
	tests := []struct {
		name string
		in   func() []*File
		want string
	}{
		{"one result", func() []*File { return []*File{client(0, 2)} }, "at least two clients"},
		{"counts differ", func() []*File { return []*File{client(0, 2), client(1, 3)} }, "client counts differ: r0.jsonl says --client-count 2, r1.jsonl says 3"},
		{"twice", func() []*File { return []*File{client(1, 2), client(1, 2)} }, "r1.jsonl and r1.jsonl are both client 1"},
		{"missing", func() []*File { return []*File{client(0, 3), client(2, 3)} }, "result of client 1 is missing"},
		{"no client", func() []*File {
			a := client(1, 2)
			a.Phases[0].Header.Client = nil
			return []*File{client(0, 2), a}
		}, "r?.jsonl was not run as one of several clients"},
		{"setting differs", func() []*File {
			a := client(1, 2)
			for i, s := range a.Phases[0].Header.Settings {
				if s.Key == "threadcount" {
					a.Phases[0].Header.Settings[i].Value = "32"
				}
			}
			return []*File{client(0, 2), a}
		}, "r0.jsonl and r1.jsonl are not the same experiment: threadcount is 16 in r0.jsonl and 32 in r1.jsonl"},
		{"no summary", func() []*File {
			a := client(1, 2)
			a.Phases[0].Summary = nil
			return []*File{client(0, 2), a}
		}, "run dbprobe recover r1.jsonl first"},
		{"no histogram", func() []*File {
			a := client(1, 2)
			a.Phases[0].Intervals[0].Series[0].Histogram = ""
			return []*File{client(0, 2), a}
		}, "carries no histogram"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Merge(inputs(t, tt.in()...), "dbprobe merge")
			var me *MergeError
			if !errors.As(err, &me) {
				t.Fatalf("err %v, want a MergeError", err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("message %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestMergeTwoPhasesAndCutFiles(t *testing.T) {
	r := newRaw()
	twoPhases := func(i int) *File {
		f := clientResult(t, i, 2, 3, 0, 0, r, 3)
		load := clientResult(t, i, 2, 2, 0, 0, newRaw(), 2).Phases[0]
		load.Header.Phase, load.Summary.Phase = "load", "load"
		for k := range load.Intervals {
			load.Intervals[k].Phase = "load"
		}
		f.Phases = append([]Phase{load}, f.Phases...)
		return f
	}
	phases, _, err := Merge(inputs(t, twoPhases(0), twoPhases(1)), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 || phases[0].Header.Phase != "load" || phases[1].Header.Phase != "run" {
		t.Fatalf("%d phases, want load and run", len(phases))
	}
	in := inputs(t, twoPhases(0), twoPhases(1))
	data := in[1].Result.(*bytes.Buffer).Bytes()
	in[1].Result = bytes.NewReader(data[:len(data)-40]) // killed while writing its summary
	_, _, err = Merge(in, "dbprobe merge")
	if err == nil || !strings.Contains(err.Error(), "ends in a cut record") {
		t.Fatalf("a cut result: %v", err)
	}
	in = inputs(t, twoPhases(0), clientResult(t, 1, 2, 3, 0, 0, r, 3))
	if _, _, err = Merge(in, "dbprobe merge"); err == nil || !strings.Contains(err.Error(), "not the same experiment: the phase is load") {
		t.Fatalf("a load against a run: %v", err)
	}
}
