package result

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// simulatedRun records a run phase the way the runner does (series per
// operation and outcome, a status and an error code per failure, retries,
// an overflow, a warm-up tick) and returns its phase as the file holds it
// (header and intervals, no summary) with the summary the run itself would
// have written.
func simulatedRun(t *testing.T) (Phase, Summary) {
	t.Helper()
	names := []string{"READ", "UPDATE", "READ-FAILED", "UPDATE-FAILED", "VERIFY"}
	set := measure.NewSet(names, []bool{true, true, false, false, true}, t0)
	set.MarkRetryable(0)
	set.MarkRetryable(1)
	rec := set.NewRecorder()
	rng := rand.New(rand.NewPCG(1, 2))
	h := sampleHeader("run")
	h.Settings = append(h.Settings, Setting{Key: "retries", Value: "3", Source: "--retries"}, Setting{Key: "warmup", Value: "1s", Source: "--warmup"})
	p := Phase{Header: h}
	for tick := range 5 {
		warm := tick == 0
		for range 500 + rng.IntN(500) {
			rec.Record(0, 10+rng.Int64N(5000))
			rec.Done(1)
		}
		if tick >= 1 {
			for range 200 {
				rec.Record(1, 100+rng.Int64N(100000))
				rec.Done(1)
			}
			rec.Retry(1, "40001")
			// A code the driver names (driver.Label), with a space in it.
			rec.Retry(1, "40001 serialization_failure")
			if tick%2 == 0 {
				rec.Retry(1, "40P01")
			}
		}
		if tick >= 2 { // a series first seen late, between two known ones
			rec.Record(2, 7)
			rec.Status(0, "NOT_FOUND")
			rec.Error("NOT_FOUND")
		}
		if tick == 3 {
			for range 3 {
				rec.Record(3, 40)
				rec.Status(1, "ERROR")
				rec.Status(1, "ERROR(40001)")
				rec.Error("ERROR(40001)")
			}
			rec.Record(3, 41)
			rec.Status(1, "ERROR")
			rec.Status(1, "ERROR(53100 disk_full)")
			rec.Error("ERROR(53100 disk_full)")
			rec.Record(0, measure.HighestMicros+99) // an overflow
			rec.Record(4, 3)
			rec.Status(4, "UNEXPECTED_STATE")
			rec.Error("UNEXPECTED_STATE")
		}
		start := t0.Add(time.Duration(tick) * time.Second)
		end := start.Add(time.Second)
		iv := set.Tick(end, !warm)
		p.Intervals = append(p.Intervals, Interval{
			Phase: "run", Start: start, End: end, Elapsed: end.Sub(t0), Ops: iv.Ops, Warmup: warm,
			Series: set.SummarizeEncoded(iv.View, measure.DefaultPercentiles),
		})
	}
	total := set.Total()
	want := Summary{
		Phase: "run", RunTime: 4 * time.Second, Ops: total.Ops, Throughput: float64(total.Ops) / 4,
		Series: set.SummarizeEncoded(total.View, measure.DefaultPercentiles), Errors: total.Codes,
		Interrupted: true, Recovered: true, Warmup: time.Second, RetryLimit: 3,
	}
	return p, want
}

func TestRecoverSummaryIsTheRunsOwn(t *testing.T) {
	p, want := simulatedRun(t)
	got, err := RecoverSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "its 4 intervals after the warm-up (1 warm-up intervals left out)") ||
		!strings.Contains(got.Notes[0], "5s into the phase") || !strings.Contains(got.Notes[0], "about 1s) is lost") {
		t.Errorf("notes %q", got.Notes)
	}
	got.Notes = nil
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("recovered summary differs from the run's\n--- got\n%s\n--- want\n%s", gj, wj)
	}
	// The file round trip keeps it exact.
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(p.Header); err != nil {
		t.Fatal(err)
	}
	for _, iv := range p.Intervals {
		if err := w.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RecoverSummary(f.Phases[0])
	if err != nil {
		t.Fatal(err)
	}
	again.Notes = nil
	if !reflect.DeepEqual(again, want) {
		t.Fatal("recovered from the file differs from the run's summary")
	}
}

func TestRecoverSummaryWithoutHistograms(t *testing.T) {
	// Intervals written before they carried histograms: counts stay
	// exact, percentiles are left out and a note says why.
	p := Phase{Header: sampleHeader("run")}
	for i := range 3 {
		p.Intervals = append(p.Intervals, sampleInterval("run", i, false))
	}
	s, err := RecoverSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Series[0]
	if r.Count != 50+51+52 || r.Percentiles != nil || r.MinMicros != 14 || r.MaxMicros != 900 || r.Statuses[0].Count != 153 || s.Ops != 100+101+102 {
		t.Errorf("series %+v, ops %d", r, s.Ops)
	}
	if len(s.Notes) != 2 || !strings.Contains(s.Notes[1], "[READ] percentiles not recovered") {
		t.Errorf("notes %q", s.Notes)
	}
}

func TestRecoverSummaryNothingMeasured(t *testing.T) {
	for _, tt := range []struct {
		name      string
		intervals []Interval
		note      string
	}{
		{"no interval", nil, "before its first interval ended"},
		{"warm-up only", []Interval{sampleInterval("run", 0, true)}, "during its warm-up"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := RecoverSummary(Phase{Header: sampleHeader("run"), Intervals: tt.intervals})
			if err != nil {
				t.Fatal(err)
			}
			if s.Ops != 0 || s.Series != nil || s.RunTime != 0 || s.Throughput != 0 || !s.Recovered || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], tt.note) {
				t.Errorf("got %+v", s)
			}
		})
	}
}

func TestRecoverSummaryRefusesABadHistogram(t *testing.T) {
	p, _ := simulatedRun(t)
	p.Intervals[2].Series[0].Histogram = "HISTFAAAAB" + p.Intervals[2].Series[0].Histogram[10:20]
	if _, err := RecoverSummary(p); err == nil || !strings.Contains(err.Error(), "READ: bad histogram") {
		t.Fatalf("err %v", err)
	}
	p, _ = simulatedRun(t)
	p.Intervals[2].Series[0].Count++
	if _, err := RecoverSummary(p); err == nil || !strings.Contains(err.Error(), "the count says") {
		t.Fatalf("err %v", err)
	}
}

// resultFile writes phases as the writer does; a phase whose summary is
// nil gets none.
func resultFile(t *testing.T, phases []Phase) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, p := range phases {
		if err := w.Header(p.Header); err != nil {
			t.Fatal(err)
		}
		for _, iv := range p.Intervals {
			if err := w.Interval(iv); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range p.Cycles {
			if err := w.Cycle(c); err != nil {
				t.Fatal(err)
			}
		}
		if p.Summary != nil {
			if err := w.Summary(*p.Summary); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.Bytes()
}

func TestRepair(t *testing.T) {
	run, want := simulatedRun(t)
	load := Phase{Header: sampleHeader("load"), Intervals: []Interval{sampleInterval("load", 0, false)}}
	loadSum := sampleSummary("load")
	loaded := load
	loaded.Summary = &loadSum

	t.Run("killed during the run, last line cut", func(t *testing.T) {
		whole := resultFile(t, []Phase{loaded, run})
		data := append(bytes.Clone(whole), `{"type":"interval","phase":"run","sta`...)
		repaired, recovered, cut, err := Repair(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !cut || len(recovered) != 1 || recovered[0].Header.Phase != "run" || recovered[0].Intervals != 5 {
			t.Fatalf("cut %v, recovered %+v", cut, recovered)
		}
		if !bytes.HasPrefix(repaired, whole) || bytes.Count(repaired[len(whole):], []byte("\n")) != 1 {
			t.Fatalf("the repaired file is not the complete lines plus one record:\n%s", repaired[len(whole):])
		}
		f, err := Read(bytes.NewReader(repaired))
		if err != nil {
			t.Fatal(err)
		}
		got := f.Phases[1].Summary
		if f.Truncated || len(f.Phases) != 2 || got == nil || !reflect.DeepEqual(f.Phases[0].Summary, &loadSum) {
			t.Fatalf("read back %+v", f)
		}
		got.Notes = nil
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("summary read back %+v\nwant %+v", *got, want)
		}
		// A second repair finds nothing to do.
		again, none, cut, err := Repair(repaired, nil)
		if err != nil || len(none) != 0 || cut || !bytes.Equal(again, repaired) {
			t.Errorf("second repair: %d recovered, cut %v, err %v", len(none), cut, err)
		}
	})

	t.Run("each phase without a summary, in place", func(t *testing.T) {
		data := resultFile(t, []Phase{load, run})
		repaired, recovered, cut, err := Repair(bytes.TrimSuffix(data, []byte("\n")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if cut || len(recovered) != 2 {
			t.Fatalf("cut %v, %d recovered", cut, len(recovered))
		}
		f, err := Read(bytes.NewReader(repaired))
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Phases) != 2 || f.Phases[0].Summary == nil || f.Phases[0].Summary.Ops != 100 || f.Phases[1].Summary == nil || f.Phases[1].Summary.Ops != want.Ops {
			t.Fatalf("read back %+v", f)
		}
	})

	t.Run("damage is refused with its line", func(t *testing.T) {
		data := resultFile(t, []Phase{loaded, run})
		lines := bytes.SplitAfter(data, []byte("\n"))
		lines[6] = []byte("{\"type\":\"interval\",\"pha\n")
		_, _, _, err := Repair(bytes.Join(lines, nil), nil)
		if err == nil || !strings.Contains(err.Error(), "line 7: not a JSON record") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestRepairV1Fixture recovers a run killed while it wrote its summary,
// in a file of schema version 1: the summary rebuilt is the one the run
// wrote, and the repaired file stays a version 1 file (the summary record
// is the same in both versions).
func TestRepairV1Fixture(t *testing.T) {
	killed, err := os.ReadFile(filepath.Join("testdata", "v1_killed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := readFixture(t, "v1_run.jsonl").Phases[0].Summary
	repaired, recovered, cut, err := Repair(killed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cut || len(recovered) != 1 || recovered[0].Header.Experiment != ExperimentYCSB || recovered[0].Intervals != 6 {
		t.Fatalf("cut %v, recovered %+v", cut, recovered)
	}
	if !bytes.HasPrefix(repaired, []byte(`{"type":"header","schema_version":1,"phase":"run",`)) {
		t.Errorf("the repaired file no longer starts with its version 1 header: %.80s", repaired)
	}
	f, err := Read(bytes.NewReader(repaired))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Phases[0].Summary
	if got == nil || !got.Recovered || got.Ops != want.Ops || got.Warmup != want.Warmup || !reflect.DeepEqual(got.Series, want.Series) {
		t.Fatalf("recovered summary %+v\nwant the run's %+v", got, want)
	}
}

func TestRecoverDurability(t *testing.T) {
	check := sampleCheck()
	written := *check.Summary.Durability
	check.Summary = nil
	s, err := RecoverSummary(check)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Durability
	if d == nil || !s.Recovered || !s.Interrupted || s.Phase != "check" {
		t.Fatalf("summary %+v", s)
	}
	// The totals the check itself wrote; the verdict and caveat are the
	// check's to make again (Repair's finish).
	written.Passed, written.Verdict, written.Caveat = false, "", ""
	if *d != written {
		t.Errorf("totals %+v, want %+v", *d, written)
	}
	if wantRun := check.Cycles[2].End.Sub(t0); s.RunTime != wantRun {
		t.Errorf("run time %v, want %v (the start to the last cycle's end)", s.RunTime, wantRun)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "its 3 checked cycles, up to cycle 3") {
		t.Errorf("notes %q", s.Notes)
	}

	check.Cycles = nil
	s, err = RecoverSummary(check)
	if err != nil || s.Durability == nil || s.Durability.Cycles != 0 || s.RunTime != 0 || !strings.Contains(s.Notes[0], "before its first cycle was checked") {
		t.Errorf("no cycles: %+v, %v", s, err)
	}
}

func TestRepairDurability(t *testing.T) {
	check := sampleCheck()
	check.Summary = nil
	data := resultFile(t, []Phase{check})
	var finished int
	repaired, recovered, cut, err := Repair(data, func(p Phase, s *Summary) {
		finished++
		s.Durability.Verdict = "judged"
	})
	if err != nil || cut || len(recovered) != 1 || finished != 1 {
		t.Fatalf("err %v, cut %v, %d recovered, finish ran %d times", err, cut, len(recovered), finished)
	}
	if r := recovered[0]; len(r.Cycles) != 3 || r.Intervals != 0 || r.Summary.Durability.Verdict != "judged" {
		t.Errorf("recovered %+v", r)
	}
	f, err := Read(bytes.NewReader(repaired))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Phases[0].Summary; s == nil || s.Durability == nil || s.Durability.Acknowledged != 72342 || s.Durability.Verdict != "judged" || !s.Recovered {
		t.Errorf("read back %+v", s)
	}
}

func TestRecoverRefusesAnUnknownExperiment(t *testing.T) {
	data := []byte(`{"type":"header","schema_version":2,"experiment":"sweep","phase":"scan"}` + "\n" + `{"type":"chunk","gb":1.5}` + "\n")
	_, _, _, err := Repair(data, nil)
	if err == nil || !strings.Contains(err.Error(), `result: phase 1 (scan): dbprobe recover rebuilds the summaries of ycsb, stress and storage runs and durability checks, not of a "sweep" experiment`) {
		t.Fatalf("err %v", err)
	}
	// A complete phase of an unknown kind needs nothing and is left alone.
	whole := append(bytes.Clone(data), `{"type":"summary","phase":"scan","gb_per_min":3,"series":{"scan":1}}`+"\n"...)
	if got, recovered, _, err := Repair(whole, nil); err != nil || len(recovered) != 0 || !bytes.Equal(got, whole) {
		t.Errorf("complete phase: %d recovered, err %v", len(recovered), err)
	}
}
