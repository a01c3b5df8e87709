package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/sweep"
	"github.com/dbprobe/dbprobe/internal/testbin"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// Bad input to sweep is one line and exit 2, found before anything runs:
// no database file, no table, no summary.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "never.db")
	db := "sqlite://" + dbPath
	out := filepath.Join(dir, "s.json")
	existing := filepath.Join(dir, "old.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	run1 := []string{"--", "run", "--db", db, "--duration", "1s"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", append([]string{"--vary", "threadz=1,2"}, run1...), "dbprobe run has no flag or YCSB property threadz"},
		{"unknown key of stress", []string{"--vary", "recordcount=1,2", "--", "stress", "--mix", "oltp"}, "dbprobe stress has no flag recordcount"},
		{"empty list", append([]string{"--vary", "threads="}, run1...), "an empty value"},
		{"empty value", append([]string{"--vary", "threads=1,,2"}, run1...), "an empty value"},
		{"no value list", append([]string{"--vary", "threads"}, run1...), "give KEY=V1,V2"},
		{"value twice", append([]string{"--vary", "threads=1,1"}, run1...), "gives 1 twice"},
		{"key twice", append([]string{"--vary", "threads=1,2", "--vary", "threads=4"}, run1...), "given twice"},
		{"bad value", append([]string{"--vary", "threads=one,two"}, run1...), `--threads "one": not a whole number`},
		{"bad property value", append([]string{"--vary", "requestdistribution=zipfian,bogus"}, run1...), "bogus"},
		{"malformed price", append([]string{"--vary", "threads=1,2", "--price", "threads=1:2/day"}, run1...), "--price"},
		{"price without rate", append([]string{"--vary", "threads=1,2", "--price", "threads=1"}, run1...), "--price"},
		{"price on an unvaried key", append([]string{"--vary", "threads=1,2", "--price", "durability=full:2/hour"}, run1...), "which no --vary varies"},
		{"price on an absent value", append([]string{"--vary", "threads=1,2", "--price", "threads=3:2/hour"}, run1...), "not one of the values"},
		{"two prices at once", append([]string{"--vary", "threads=1,2", "--price", "1/hour", "--price", "2/hour"}, run1...), "both apply"},
		{"nothing after --", []string{"--vary", "threads=1,2"}, "nothing after --"},
		{"nothing after a dash", []string{"--vary", "threads=1,2", "--"}, "nothing after --"},
		{"not an experiment", []string{"--vary", "threads=1,2", "--", "version"}, "give an experiment after --"},
		{"no --vary", run1, "no --vary"},
		{"reps 0", append([]string{"--vary", "threads=1,2", "--reps", "0"}, run1...), "--reps 0"},
		{"--out of a run", []string{"--vary", "threads=1,2", "--", "run", "--db", db, "--out", "x.jsonl"}, "give --out to sweep"},
		{"varied and given", []string{"--vary", "threads=1,2", "--", "run", "--db", db, "--threads", "4"}, "also given --threads"},
		{"property and its flag", []string{"--vary", "recordcount=10,20", "--", "run", "--db", db, "--records", "5"}, "also given --records"},
		{"experiment flag unknown", []string{"--vary", "threads=1,2", "--", "run", "--db", db, "--threds", "4"}, "unknown flag"},
		{"no-load with a shape", []string{"--vary", "recordcount=10,20", "--no-load", "--", "run", "--db", db}, "--no-load"},
		{"existing summary", []string{"--vary", "threads=1,2", "--out", existing, "--", "run", "--db", db}, "exists"},
		{"run without --db", []string{"--vary", "threads=1,2", "--", "run", "--duration", "1s"}, "needs --db"},
		{"a --db no driver reads", []string{"--vary", "threads=1,2", "--", "run", "--db", "URL", "--workload", "a"}, `--db "URL": unknown database "url"`},
		{"a varied --db no driver reads", []string{"--vary", "db=" + db + ",postgress://u:hunter2@h/x", "--", "run"}, "--db postgress://…: unknown database"},
	}
	// The refusal of a run without a database holds only when DBPROBE_DB
	// gives none either.
	t.Setenv("DBPROBE_DB", "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sweep"}, tc.args...)
			if !slices.Contains(tc.args, "--out") {
				args = append([]string{"sweep", "--out", out}, tc.args...)
			}
			stdout, stderr, err := run(t, args...)
			if err == nil || !badinput.Is(err) && !isUsage(err) {
				t.Fatalf("got %v, want bad input\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q: want one line with %q", msg, tc.want)
			}
			if stdout != "" {
				t.Errorf("something ran:\n%s", stdout)
			}
			for _, p := range []string{dbPath, out} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

func isUsage(err error) bool {
	return badinput.Is(err) || strings.HasPrefix(err.Error(), "unknown flag")
}

// readSweep reads a sweep's summary.
func readSweep(t *testing.T, path string) *sweep.Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := sweep.ReadSummary(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sweepThreads runs dbprobe sweep over threads 1,2 with reps 2 on db as
// a user does (the binary, whose runs are its children) and checks what
// it promises: the order interleaved, one load, every run's result, the
// recap, --between between runs.
func sweepThreads(t *testing.T, db string) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testbin.ForTest(t)
	out := filepath.Join(dir, "threads.json")
	log := filepath.Join(dir, "between.log")
	p := start(t, bin, "sweep", "--vary", "threads=1,2", "--reps", "2", "--seed", "11", "--out", out,
		"--between", "echo $DBPROBE_SWEEP_POSITION $DBPROBE_SWEEP_VARIANT >> "+log,
		"--", "run", "--db", db, "-p", "recordcount=500", "--workload", "a", "--duration", "2s")
	if code := p.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout.String(), p.stderr.String())
	}
	s := readSweep(t, out)
	if s.Status != sweep.StatusComplete || len(s.Runs) != 4 || s.Kind != result.ExperimentYCSB {
		t.Fatalf("summary: status %s, %d runs, kind %q", s.Status, len(s.Runs), s.Kind)
	}
	// Interleaved: the two variants alternate in each round, so neither
	// has both its runs before the other's first.
	var order []int
	for _, r := range s.Runs {
		order = append(order, r.Variant)
	}
	if order[0] == order[1] || order[2] == order[3] {
		t.Errorf("order %v is not interleaved", order)
	}
	// One load, before the first run, of the table all four share.
	loads, _ := filepath.Glob(filepath.Join(dir, "threads.load-*.jsonl"))
	if len(loads) != 1 || len(s.Shapes) != 1 || s.Shapes[0].Load == nil || s.Shapes[0].Load.Status != sweep.StatusOK {
		t.Errorf("loads %v, shapes %+v", loads, s.Shapes)
	} else if f := readResult(t, loads[0]); len(f.Phases) != 1 || f.Phases[0].Header.Phase != "load" || f.Phases[0].Summary.Ops != 500 {
		t.Errorf("the load's result: %+v", f.Phases)
	}
	for _, r := range s.Runs {
		f := readResult(t, filepath.Join(dir, r.Path))
		if r.Status != sweep.StatusOK || len(f.Phases) != 1 || f.Phases[0].Header.Phase != "run" || f.Phases[0].Summary == nil {
			t.Errorf("run %d: status %s, result %+v", r.Position, r.Status, f.Phases)
			continue
		}
		want := s.Variants[r.Variant-1].Settings[0].Value
		if !slices.ContainsFunc(f.Phases[0].Header.Settings, func(st result.Setting) bool { return st.Key == "threadcount" && st.Value == want }) {
			t.Errorf("run %d of variant threads=%s: its header has other threads", r.Position, want)
		}
		if r.Metrics[sweep.MetricThroughput] <= 0 {
			t.Errorf("run %d: no throughput", r.Position)
		}
		if _, err := os.Stat(filepath.Join(dir, r.Text)); err != nil {
			t.Errorf("run %d: %v", r.Position, err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "2 threads=") || !strings.HasPrefix(lines[2], "4 threads=") {
		t.Errorf("--between ran %q, want before runs 2, 3 and 4", lines)
	}
	stdout := p.stdout.String()
	for _, want := range []string{"# sweep: 2 variants × 2 runs = 4 runs", "\nthreads ", "\nops/s ", "\nread p99 ms ", "\nwrite avg ms ", "\nerrors ", "# curve of ops/s over threads: 1 → ", "# summary: " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if s.Overhead == nil || s.Overhead.Gaps < 2 {
		t.Errorf("overhead %+v: want the gaps between runs measured", s.Overhead)
	} else {
		t.Logf("the sweep's own time between runs: median %.0f ms, max %.0f ms", s.Overhead.MedianMS, s.Overhead.MaxMS)
	}
}

func TestSweepThreadsSQLite(t *testing.T) {
	sweepThreads(t, "sqlite://"+filepath.Join(t.TempDir(), "sweep.db"))
}

func TestSweepThreadsPostgres(t *testing.T) {
	sweepThreads(t, testdb.FreshPostgresDatabase(t))
}

// A sweep over the record count loads one table per count, shapes one
// after the other, and the runs of each shape run on its rows.
func TestSweepLoadsOncePerShape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	bin := testbin.ForTest(t)
	out := filepath.Join(dir, "rows.json")
	p := start(t, bin, "sweep", "--vary", "recordcount=200,400", "--vary", "threads=1,2", "--reps", "1", "--seed", "5", "--out", out,
		"--", "ycsb", "--workload", "c", "-p", "operationcount=300", "--no-monitor")
	if code := p.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout.String(), p.stderr.String())
	}
	s := readSweep(t, out)
	loads, _ := filepath.Glob(filepath.Join(dir, "rows.load-*.jsonl"))
	if len(loads) != 2 || len(s.Shapes) != 2 {
		t.Fatalf("%d loads, %d shapes, want 2", len(loads), len(s.Shapes))
	}
	for _, l := range loads {
		f := readResult(t, l)
		if ops := f.Phases[0].Summary.Ops; ops != 200 && ops != 400 {
			t.Errorf("%s loaded %d rows", l, ops)
		}
	}
	// Shapes are contiguous: the runs of one record count, then the other's.
	shapeOf := func(r sweep.RunRecord) int { return s.Variants[r.Variant-1].Shape }
	if shapeOf(s.Runs[0]) != shapeOf(s.Runs[1]) || shapeOf(s.Runs[2]) != shapeOf(s.Runs[3]) || shapeOf(s.Runs[1]) == shapeOf(s.Runs[2]) {
		t.Errorf("runs by shape: %d %d %d %d", shapeOf(s.Runs[0]), shapeOf(s.Runs[1]), shapeOf(s.Runs[2]), shapeOf(s.Runs[3]))
	}
	for _, r := range s.Runs {
		if r.Status != sweep.StatusOK {
			t.Errorf("run %d: %s %s", r.Position, r.Status, r.Error)
		}
	}
	if !strings.Contains(p.stdout.String(), "\nrecordcount ") {
		t.Errorf("the recap has no recordcount row:\n%s", p.stdout.String())
	}
}

// Ctrl-C mid-sweep: the run in progress stops as on its own Ctrl-C, no
// other runs, the finished ones are kept and the sweep says so; exit 130.
func TestSweepInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	bin := testbin.ForTest(t)
	out := filepath.Join(dir, "intr.json")
	p := start(t, bin, "sweep", "--vary", "threads=1,2", "--reps", "3", "--out", out,
		"--", "ycsb", "-p", "recordcount=200", "--duration", "3s", "-p", "operationcount=0", "--no-monitor")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("two runs did not finish in time")
		}
		if f, err := os.Open(out); err == nil {
			s, err := sweep.ReadSummary(f)
			f.Close()
			if err == nil && len(s.Runs) == 6 && s.Runs[1].Status == sweep.StatusOK {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Into the third run.
	time.Sleep(1500 * time.Millisecond)
	p.signal(t, os.Interrupt)
	if code := p.wait(t, time.Minute); code != 130 {
		t.Fatalf("exit status %d, want 130\nstderr:\n%s", code, p.stderr.String())
	}
	s := readSweep(t, out)
	ok := 0
	for _, r := range s.Runs {
		switch r.Status {
		case sweep.StatusOK:
			ok++
			if _, err := os.Stat(filepath.Join(dir, r.Path)); err != nil {
				t.Errorf("finished run %d: %v", r.Position, err)
			}
		case sweep.StatusInterrupted, sweep.StatusNotRun:
		default:
			t.Errorf("run %d: %s", r.Position, r.Status)
		}
	}
	if s.Status != sweep.StatusInterrupted || ok < 2 || ok == 6 || s.Runs[5].Status != sweep.StatusNotRun {
		t.Errorf("summary: %s, %d ok, last run %s", s.Status, ok, s.Runs[5].Status)
	}
	if want := "finished, kept in " + out; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
	}
}

// Passwords in varied URLs and in --between are hidden in the summary,
// on stdout and on stderr.
func TestSweepHidesPasswords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sec.json")
	p := start(t, testbin.ForTest(t), "sweep", "--vary", "db=postgres://u:canary-one@127.0.0.1:1/x,postgres://u:canary-two@127.0.0.1:1/y",
		"--reps", "1", "--between", "psql postgres://u:canary-three@127.0.0.1:1/x", "--out", out, "--", "run", "--workload", "a")
	if code := p.wait(t, time.Minute); code != 2 {
		t.Fatalf("exit status %d, want 2 (the load cannot reach the database)\n%s", code, p.stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"summary": string(b), "stdout": p.stdout.String(), "stderr": p.stderr.String()} {
		if strings.Contains(text, "canary") {
			t.Errorf("the %s shows a password:\n%s", name, text)
		}
	}
	if !strings.Contains(string(b), "postgres://u:xxxxx@127.0.0.1:1/y") {
		t.Errorf("the summary does not show the second URL, hidden:\n%s", b)
	}
}
