package sweep

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/price"
	"github.com/dbprobe/dbprobe/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// exitError is a fake run's exit status.
type exitError int

func (e exitError) Error() string { return "exit status " + strconv.Itoa(int(e)) }
func (e exitError) ExitCode() int { return int(e) }

// fakeRuns is an Exec that writes, for each run, a result with fixed
// figures that depend on the run's --threads and its repetition: the
// seam that lets the recap be golden-tested.
type fakeRuns struct {
	mu    sync.Mutex
	calls [][]string
	loads int
	// at places each run's operations at a fixed time: run n's first
	// operation at n × 10 s and its last 9.75 s later, so the sweep's
	// own time between runs is 250 ms.
	n int
	// hook, when set, is called before a run writes its result; it may
	// return an error to end the run with.
	hook func(ctx context.Context, n int) error
	// drift makes each run this much slower than the one before.
	drift float64
}

var fakeBase = time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)

// Throughput by threads: scaling that stops past 8.
var fakeOps = map[int]float64{1: 1000, 2: 1900, 4: 3500, 8: 5200, 16: 5300}

func (f *fakeRuns) exec(ctx context.Context, _ <-chan struct{}, args []string, stdout, _ io.Writer) error {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	out := ""
	threads := 1
	for i, a := range args {
		if a == "--out" {
			out = args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--threads="); ok {
			threads, _ = strconv.Atoi(v)
		}
	}
	if args[0] == "load" {
		f.loads++
		f.mu.Unlock()
		return writeFake(out, "load", 1000, 1, fakeBase, nil, false)
	}
	f.n++
	n := f.n
	f.mu.Unlock()
	fmt.Fprintf(stdout, "[OVERALL], RunTime(ms), 9750\n")
	interrupted := false
	if f.hook != nil {
		if err := f.hook(ctx, n); err != nil {
			if errors.As(err, new(exitError)) && err.(exitError) == 130 {
				interrupted = true
			} else {
				return err
			}
		}
	}
	// A small fixed wobble by run so that medians and spreads are not
	// trivially equal.
	ops := fakeOps[threads] * (1 + 0.01*float64(n%3-1)) * (1 - f.drift*float64(n))
	var diag *result.Diagnosis
	if threads == 8 {
		diag = &result.Diagnosis{Limit: "commit flush", Verdict: "commit flush bound: 62% of sampled backend time waiting on WAL sync; CPU 31%"}
	}
	start := fakeBase.Add(time.Duration(n) * 10 * time.Second)
	if err := writeFake(out, "run", ops, threads, start, diag, interrupted); err != nil {
		return err
	}
	if interrupted {
		return exitError(130)
	}
	return nil
}

// writeFake writes a one-phase YCSB result: READ and UPDATE latencies
// that grow with threads, 9.75 s long.
func writeFake(path, phase string, ops float64, threads int, start time.Time, diag *result.Diagnosis, interrupted bool) error {
	w, err := result.Create(path)
	if err != nil {
		return err
	}
	if err := w.Header(result.Header{Experiment: result.ExperimentYCSB, Phase: phase, StartedAt: start, Command: "fake"}); err != nil {
		return err
	}
	end := start.Add(9750 * time.Millisecond)
	set := measure.NewSet([]string{"READ", "UPDATE"}, []bool{true, true}, start)
	r := set.NewRecorder()
	for i := range 100 {
		r.Record(0, int64(100*threads+i))
		r.Record(1, int64(300*threads+3*i))
	}
	r.Done(200)
	set.Tick(end, true)
	series := set.SummarizeEncoded(set.Total().View, []float64{50, 95, 99})
	if err := w.Interval(result.Interval{Phase: phase, Start: start, End: end, Elapsed: end.Sub(start), Ops: 200, OpsPerSec: ops, Series: series}); err != nil {
		return err
	}
	if err := w.Summary(result.Summary{Phase: phase, RunTime: end.Sub(start), Ops: int64(ops * 9.75), Throughput: ops, Series: series,
		Errors: map[string]int64{}, Diagnosis: diag, Interrupted: interrupted}); err != nil {
		return err
	}
	return w.Close()
}

// config is a sweep of run over threads 1…16 with reps 3.
func config(t *testing.T, f *fakeRuns, stdout, stderr io.Writer) *Config {
	dir := t.TempDir()
	vy := Vary{Key: "threads", Values: []string{"1", "2", "4", "8", "16"}, As: "flag", Concurrency: true}
	c := &Config{
		Experiment: "run", Command: "dbprobe sweep --vary threads=1,2,4,8,16 -- run --db postgres://u@h/db", Vary: []Vary{vy},
		Shapes: []Shape{{Load: []string{"load", "--db", "postgres://u@h/db"}}}, Reps: 3, Seed: 7,
		Out: filepath.Join(dir, "s.json"), Exec: f.exec, Stdout: stdout, Stderr: stderr,
	}
	for i, v := range vy.Values {
		c.Variants = append(c.Variants, Variant{ID: i + 1, Settings: []Setting{{"threads", v}}, Args: []string{"run", "--db", "postgres://u@h/db", "--threads=" + v, "--quiet"}})
	}
	for _, p := range []string{"threads=16:3555/month", "threads=8:1991/month", "1.2/hour"} {
		s, err := price.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		c.Prices = append(c.Prices, s)
	}
	return c
}

// The recap of a sweep with fixed fake figures, the summary it writes
// and the files beside it.
func TestRecapGolden(t *testing.T) {
	f := &fakeRuns{}
	var stdout, stderr bytes.Buffer
	c := config(t, f, &stdout, &stderr)
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if f.loads != 1 {
		t.Errorf("%d loads, want 1 (one shape)", f.loads)
	}
	if len(f.calls) != 16 {
		t.Errorf("%d commands run, want 1 load and 15 runs", len(f.calls))
	}
	golden := filepath.Join("testdata", "recap.golden")
	// The summary's path is the test's temporary directory.
	got := bytes.ReplaceAll(stdout.Bytes(), []byte(c.Out), []byte("s.json"))
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("recap differs from %s (go test -update to rewrite):\n%s", golden, got)
	}

	fh, err := os.Open(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	s, err := ReadSummary(fh)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusComplete || len(s.Runs) != 15 || len(s.Variants) != 5 || s.Kind != result.ExperimentYCSB || s.Shapes[0].Load == nil || s.Shapes[0].Load.Status != StatusOK {
		t.Errorf("summary: status %s, %d runs, %d variants, kind %s, shapes %+v", s.Status, len(s.Runs), len(s.Variants), s.Kind, s.Shapes)
	}
	for i, r := range s.Runs {
		if r.Position != i+1 || r.Status != StatusOK {
			t.Errorf("run %d: %+v", i+1, r)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(c.Out), r.Path)); err != nil {
			t.Errorf("run %d: %v", i+1, err)
		}
		if i > 0 && r.OverheadMS != 250 {
			t.Errorf("run %d: overhead %v ms, want 250", i+1, r.OverheadMS)
		}
	}
	if len(s.Fits) != 1 || s.Fits[0].Knee != 8 || s.Fits[0].Points != 15 {
		t.Errorf("fits %+v", s.Fits)
	}
	if v := s.Variants[4]; v.Cost == nil || !v.Cost.Monthly || v.Cost.Given != "threads=16:3555/month" {
		t.Errorf("variant 5's cost: %+v", v.Cost)
	}
	if v := s.Variants[0]; v.Cost == nil || v.Cost.Given != "1.2/hour" {
		t.Errorf("variant 1's cost: %+v", v.Cost)
	}
}

// --between runs before every run but the first, with the position in
// its environment, and its time is not the sweep's own.
func TestBetween(t *testing.T) {
	f := &fakeRuns{}
	var stdout, stderr bytes.Buffer
	c := config(t, f, &stdout, &stderr)
	log := filepath.Join(t.TempDir(), "between.log")
	c.Between = "echo $DBPROBE_SWEEP_POSITION >> " + log
	c.Reps = 1
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); strings.Join(got, ",") != "2,3,4,5" {
		t.Errorf("--between ran before positions %v, want 2,3,4,5", got)
	}
	c.Out = filepath.Join(t.TempDir(), "fail.json")
	c.Between = "exit 3"
	err = Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "--between before run 2 failed") {
		t.Errorf("failing --between: %v", err)
	}
}

// A run that refuses its settings (exit 2) stops the sweep as bad input;
// one that fails otherwise is recorded and the sweep goes on.
func TestRunFailures(t *testing.T) {
	f := &fakeRuns{}
	f.hook = func(_ context.Context, n int) error {
		if n == 2 {
			return exitError(1)
		}
		return nil
	}
	var stdout, stderr bytes.Buffer
	c := config(t, f, &stdout, &stderr)
	c.Reps = 1
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "1 of 5 runs failed (positions 2)") {
		t.Errorf("one failed run: %v", err)
	}
	if f.n != 5 {
		t.Errorf("%d runs, want all 5", f.n)
	}
	f2 := &fakeRuns{hook: func(_ context.Context, n int) error {
		if n == 1 {
			return exitError(2)
		}
		return nil
	}}
	c2 := config(t, f2, &stdout, &stderr)
	err = Run(context.Background(), c2)
	if err == nil || !strings.Contains(err.Error(), "stopped on bad input (exit 2)") || f2.n != 1 {
		t.Errorf("bad input in run 1: %v after %d runs", err, f2.n)
	}
}

// Ctrl-C during a run: that run is stopped as its own Ctrl-C would stop
// it, no more run, the finished ones are kept and the summary says which
// did not run.
func TestInterrupt(t *testing.T) {
	f := &fakeRuns{}
	f.hook = func(ctx context.Context, n int) error {
		if n != 3 {
			return nil
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			return errors.New("no interrupt came")
		}
		return exitError(130)
	}
	var stdout, stderr bytes.Buffer
	c := config(t, f, &stdout, &stderr)
	err := Run(context.Background(), c)
	var in *experiment.Interrupted
	if !errors.As(err, &in) {
		t.Fatalf("got %v, want an interruption", err)
	}
	if f.n != 3 {
		t.Errorf("%d runs started, want 3", f.n)
	}
	if !strings.Contains(stderr.String(), "interrupted: 2 of 15 runs finished, kept in "+c.Out) {
		t.Errorf("stderr does not say what is kept:\n%s", stderr.String())
	}
	fh, err := os.Open(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	s, err := ReadSummary(fh)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusInterrupted || s.Runs[0].Status != StatusOK || s.Runs[1].Status != StatusOK || s.Runs[2].Status != StatusInterrupted || s.Runs[3].Status != StatusNotRun || s.Runs[14].Status != StatusNotRun {
		t.Errorf("summary: %s, runs %v %v %v %v", s.Status, s.Runs[0].Status, s.Runs[1].Status, s.Runs[2].Status, s.Runs[3].Status)
	}
	if !strings.Contains(stdout.String(), "# recap:") {
		t.Errorf("no recap of the finished runs:\n%s", stdout.String())
	}
}

func TestReadSummaryRefuses(t *testing.T) {
	if _, err := ReadSummary(strings.NewReader(`{"type":"header","schema_version":2}`)); !errors.Is(err, ErrNotSweep) {
		t.Errorf("a run's header: %v", err)
	}
	if _, err := ReadSummary(strings.NewReader(`{"type":"sweep","schema_version":9}`)); err == nil || !strings.Contains(err.Error(), "schema version 9") {
		t.Errorf("version 9: %v", err)
	}
}

// A sweep whose runs get slower run after run says so, for each variant
// and for the whole sweep; the same sweep without the trend says no
// drift was shown.
func TestDriftSaid(t *testing.T) {
	for _, drift := range []float64{0.03, 0} {
		f := &fakeRuns{drift: drift}
		var stdout, stderr bytes.Buffer
		c := config(t, f, &stdout, &stderr)
		c.Variants = c.Variants[:2]
		c.Vary[0].Values = c.Vary[0].Values[:2]
		c.Prices = nil
		c.Reps = 5
		if err := Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		text := stdout.String()
		said := strings.Count(text, "# drift: threads=")
		switch {
		case drift > 0 && (said != 2 || !strings.Contains(text, "# drift over the whole sweep") || !strings.Contains(text, "throughput fell")):
			t.Errorf("drift %v not said for both variants and the sweep:\n%s", drift, text)
		case drift == 0 && (said != 0 || !strings.Contains(text, "# no drift shown")):
			t.Errorf("no drift, yet:\n%s", text)
		}
	}
}

// A run that crashes (here killed by SIGKILL, as the OOM killer would)
// is a failed run: the sweep goes on to the others.
func TestCrashedRunsDoNotStopTheSweep(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	c := &Config{
		Experiment: "run", Vary: []Vary{{Key: "threads", Values: []string{"1", "2"}, As: "flag"}},
		Shapes: []Shape{{}}, Reps: 2, Seed: 1, Out: filepath.Join(dir, "crash.json"),
		// The "dbprobe" of these runs is a shell that kills itself; the
		// --out the sweep adds becomes its $0 and $1.
		Exe: "/bin/sh", Stdout: &stdout, Stderr: &stderr,
	}
	for i := range 2 {
		c.Variants = append(c.Variants, Variant{ID: i + 1, Settings: []Setting{{"threads", strconv.Itoa(i + 1)}}, Args: []string{"-c", "kill -KILL $$"}})
	}
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "4 of 4 runs failed") {
		t.Fatalf("got %v, want all 4 runs failed and run\n%s", err, stderr.String())
	}
	fh, err := os.Open(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	s, err := ReadSummary(fh)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Runs {
		if r.Status != StatusFailed || r.ExitCode != 128+9 || !strings.Contains(r.Error, "killed") {
			t.Errorf("run %d: %+v", r.Position, r)
		}
	}
}

// TestStorageVerdictIsTheRunsDiagnosis checks that a storage run, which
// judges its own limit and has no monitor diagnosis, gives the sweep its
// verdict, while a monitor diagnosis, where there is one, still wins.
func TestStorageVerdictIsTheRunsDiagnosis(t *testing.T) {
	verdict := "log-bound: 22.4 MB/s at DOP 2: the copy waited on the log"
	ph := result.Phase{Summary: &result.Summary{Storage: &result.StorageSummary{Rate: 25e6, Bytes: 473e6, Verdict: verdict}}}
	m := measurePhase(ph)
	if m.Limit != "log-bound" || m.Verdict != verdict {
		t.Errorf("storage run: limit %q, verdict %q; want log-bound and the storage verdict", m.Limit, m.Verdict)
	}
	if m.Metrics[MetricRate] != 25e6 {
		t.Errorf("rate %v, want 25e6", m.Metrics[MetricRate])
	}
	ph.Summary.Diagnosis = &result.Diagnosis{Limit: "server CPU", Verdict: "CPU — the host is 0% idle"}
	if m := measurePhase(ph); m.Limit != "server CPU" {
		t.Errorf("with a monitor diagnosis: limit %q, want the monitor's", m.Limit)
	}
}

// TestKneeIgnoresAFlatStepBeforeGrowth checks that the knee is where the
// curve stops growing for good, not its first flat step: the threads
// sweep of docs/experiments/key-value-sweep.md grew 6% from 2 to 4
// threads and then 83%, 51% and 15%.
func TestKneeIgnoresAFlatStepBeforeGrowth(t *testing.T) {
	xs := []float64{1, 2, 4, 8, 16, 32}
	for _, tc := range []struct {
		ys   []float64
		knee float64
		says string
	}{
		{[]float64{1428, 3808, 4044, 7418, 11196, 12892}, 0, "still grows at threads=32"},
		{[]float64{1000, 1900, 2000, 3500, 3600, 3650}, 8, "stops growing past threads=8"},
		{[]float64{1000, 1900, 3535, 5148, 5300, 5350}, 8, "stops growing past threads=8"},
	} {
		s := &Summary{}
		g := group{xs: xs, byX: map[float64]*VariantRecord{}, ids: map[int]float64{}}
		for i, x := range xs {
			g.ids[i+1] = x
			s.Runs = append(s.Runs, RunRecord{Variant: i + 1, Status: StatusOK, Metrics: map[string]float64{MetricThroughput: tc.ys[i]}})
		}
		f := fit(s, "threads", g, Curve{Key: "threads", X: xs, Y: tc.ys}, MetricThroughput, "throughput")
		if f.Knee != tc.knee || !strings.Contains(f.Sentence, tc.says) {
			t.Errorf("curve %v: knee %v, sentence %q; want knee %v and %q", tc.ys, f.Knee, f.Sentence, tc.knee, tc.says)
		}
	}
}

// TestPoorFitGivesNoPeak checks that a fit the text calls poor puts no
// peak in the JSON either.
func TestPoorFitGivesNoPeak(t *testing.T) {
	xs := []float64{1, 2, 4, 8, 16, 32}
	ys := []float64{1000, 3000, 1200, 4000, 1500, 900}
	s := &Summary{}
	g := group{xs: xs, byX: map[float64]*VariantRecord{}, ids: map[int]float64{}}
	for i, x := range xs {
		g.ids[i+1] = x
		s.Runs = append(s.Runs, RunRecord{Variant: i + 1, Status: StatusOK, Metrics: map[string]float64{MetricThroughput: ys[i]}})
	}
	f := fit(s, "threads", g, Curve{Key: "threads", X: xs, Y: ys}, MetricThroughput, "throughput")
	if f.R2 >= 0.9 || f.Kappa <= 0 {
		t.Fatalf("the curve was meant to fit poorly with a peak: R² %.3f, κ %g", f.R2, f.Kappa)
	}
	if f.Peak != 0 || strings.Contains(f.Sentence, "peak N*") {
		t.Errorf("a poor fit (R² %.3f) gave peak %v: %s", f.R2, f.Peak, f.Sentence)
	}
}

// With five runs a variant, each variant is held against --baseline on
// throughput, Holm over the four comparisons: the baseline itself is
// not among them, the slower variants are said to be slower and the
// faster faster, each p corrected.
func TestPairwiseAgainstBaseline(t *testing.T) {
	f := &fakeRuns{}
	var stdout, stderr bytes.Buffer
	c := config(t, f, &stdout, &stderr)
	c.Reps = 5
	id, err := BaselineID(c.Variants, "threads=4")
	if err != nil || id != 3 {
		t.Fatalf("BaselineID(threads=4) = %d, %v", id, err)
	}
	c.Baseline = id
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"# compared against the baseline threads=4 (variant 3), throughput as dbprobe compare judges it, the Holm correction over the 4 comparisons:\n",
		"#   threads=1 is 71.4% slower (95% CI",
		"#   threads=8 is 48.",
		"p = 0.03, 5 runs each)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "#   threads=4") {
		t.Errorf("the baseline is compared with itself:\n%s", out)
	}
	fh, err := os.Open(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	s, err := ReadSummary(fh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ComparePairs(s, filepath.Dir(c.Out))
	if err != nil || p == nil || s.Baseline != 3 || len(p.Comparisons) != 4 || len(p.Table()) != 5 {
		t.Fatalf("from the summary (baseline %d): %+v, %v", s.Baseline, p, err)
	}
	// The medians as compare prints them: grouped (3,500, not 3500).
	for _, row := range p.Table()[1:] {
		for _, cell := range row[1:3] {
			if !strings.Contains(cell, ",") || strings.Contains(cell, ".") {
				t.Errorf("a median printed as %q in %q", cell, row)
			}
		}
	}
	if _, err := BaselineID(c.Variants, "threads=3"); err == nil || !strings.Contains(err.Error(), "threads=1; threads=2") {
		t.Errorf("an unknown baseline: %v", err)
	}
}
