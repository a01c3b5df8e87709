package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

// The binary itself, stopped as a user or a machine stops it: Ctrl-C
// once, Ctrl-C twice, kill -9. Each runs against SQLite and takes a few
// seconds.
func TestInterrupts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testbin.ForTest(t)
	dbPath := filepath.Join(dir, "ycsb.db")
	db := "sqlite://" + filepath.ToSlash(dbPath)
	if _, stderr, err := run(t, "load", "--db", db, "-p", "recordcount=1000", "--no-monitor"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	runArgs := []string{"run", "--db", db, "--duration", "30s", "-p", "operationcount=0", "--threads", "2", "--no-monitor"}

	t.Run("first Ctrl-C drains and summarizes", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.jsonl")
		p := start(t, bin, append(runArgs, "--warmup", "1s", "--out", out)...)
		waitForFile(t, p, out, "two measured intervals", func(f *result.File) bool {
			return len(f.Phases) == 1 && len(measured(f.Phases[0])) >= 2
		})
		p.signal(t, os.Interrupt)
		if code := p.wait(t, 15*time.Second); code != 130 {
			t.Fatalf("exit status %d, want 130\n%s", code, p.stderr.String())
		}
		if !strings.Contains(p.stderr.String(), "dbprobe: interrupted (SIGINT)") {
			t.Errorf("stderr does not say it was interrupted:\n%s", p.stderr.String())
		}
		stdout := p.stdout.String()
		for _, want := range []string{"[OVERALL], RunTime(ms)", "# interrupted", "# note: stopped by SIGINT", "--drain-timeout"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		f := readResult(t, out)
		if f.Truncated || len(f.Phases) != 1 || f.Phases[0].Summary == nil {
			t.Fatalf("result: truncated %v, %d phases, want one with a summary", f.Truncated, len(f.Phases))
		}
		ph := f.Phases[0]
		sum := ph.Summary
		if !sum.Interrupted || sum.Recovered {
			t.Errorf("summary interrupted %v, recovered %v", sum.Interrupted, sum.Recovered)
		}
		ops, counts := addUp(measured(ph))
		if sum.Ops == 0 || sum.Ops != ops {
			t.Errorf("summary has %d operations, its measured intervals %d", sum.Ops, ops)
		}
		text := parseYCSB(t, stdout)[0]
		for _, s := range sum.Series {
			if s.Count != counts[s.Name] || text[s.Name]["Operations"] != float64(s.Count) {
				t.Errorf("[%s]: summary %d, intervals %d, text %v", s.Name, s.Count, counts[s.Name], text[s.Name]["Operations"])
			}
		}
	})

	t.Run("second Ctrl-C exits at once", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.jsonl")
		// Only updates, and a drain that would outlast the test: once the
		// test holds SQLite's write lock, every worker waits in an update.
		// The test is another process, so the file is opened shared.
		p := start(t, bin, "run", "--db", db+"?vfs=unix&busy_timeout=60000", "--duration", "30s", "-p", "operationcount=0", "--threads", "2", "--no-monitor",
			"-p", "readproportion=0", "-p", "updateproportion=1", "--drain-timeout", "60s", "--out", out)
		waitForFile(t, p, out, "an interval with operations", func(f *result.File) bool {
			return len(f.Phases) == 1 && len(f.Phases[0].Intervals) > 0 && f.Phases[0].Intervals[0].Ops > 0
		})
		release := holdWriteLock(t, dbPath)
		defer release()
		waitForFile(t, p, out, "an interval without operations (the workers blocked)", func(f *result.File) bool {
			ivs := f.Phases[0].Intervals
			return ivs[len(ivs)-1].Ops == 0
		})
		p.signal(t, os.Interrupt)
		time.Sleep(200 * time.Millisecond) // a person's second press
		p.signal(t, os.Interrupt)
		// Without the second press the drain would wait 60 s.
		if code := p.wait(t, 10*time.Second); code != 130 {
			t.Fatalf("exit status %d, want 130\n%s", code, p.stderr.String())
		}
		if !strings.Contains(p.stderr.String(), "interrupted twice (SIGINT)") || !strings.Contains(p.stderr.String(), "dbprobe recover "+out) {
			t.Errorf("stderr:\n%s", p.stderr.String())
		}
		if strings.Contains(p.stdout.String(), "[OVERALL]") {
			t.Errorf("a summary was printed after the second Ctrl-C:\n%s", p.stdout.String())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(data, []byte("\n")) {
			t.Fatalf("the result ends in the middle of a record: %q", data[max(0, len(data)-80):])
		}
		f := readResult(t, out)
		if f.Truncated || len(f.Phases) != 1 || f.Phases[0].Summary != nil || len(f.Phases[0].Intervals) < 2 {
			t.Fatalf("result: truncated %v, %d phases", f.Truncated, len(f.Phases))
		}
	})

	t.Run("kill -9, then recover", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "result.jsonl")
		// ycsb: the load phase ends with its summary, the run is killed.
		p := start(t, bin, "ycsb", "--db", "sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "killed.db")), "-p", "recordcount=1000",
			"--duration", "30s", "-p", "operationcount=0", "--threads", "2", "--warmup", "1s", "--out", out)
		waitForFile(t, p, out, "two measured intervals of the run", func(f *result.File) bool {
			return len(f.Phases) == 2 && len(measured(f.Phases[1])) >= 2
		})
		p.signal(t, syscall.SIGKILL)
		if code := p.wait(t, 5*time.Second); code != -1 {
			t.Fatalf("exit status %d after SIGKILL", code)
		}
		// As a kill in the middle of a write leaves the file.
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		last := lines[len(lines)-1]
		if err := os.WriteFile(out, append(data, last[:len(last)/2]...), 0o644); err != nil {
			t.Fatal(err)
		}
		before := readResult(t, out)
		if !before.Truncated || before.Phases[0].Summary == nil || before.Phases[1].Summary != nil {
			t.Fatalf("before recover: truncated %v, summaries %v %v", before.Truncated, before.Phases[0].Summary != nil, before.Phases[1].Summary != nil)
		}
		kept := measured(before.Phases[1])
		ops, counts := addUp(kept)

		r := start(t, bin, "recover", out)
		if code := r.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("recover: exit status %d\n%s", code, r.stderr.String())
		}
		stdout := r.stdout.String()
		for _, want := range []string{"# phase: run", "# interrupted", "# recovered", "is lost"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("recover's output lacks %q:\n%s", want, stdout)
			}
		}
		blocks := parseYCSB(t, stdout)
		if len(blocks) != 1 {
			t.Fatalf("%d summaries printed, want the run's only", len(blocks))
		}
		text := blocks[0]
		for _, name := range []string{"READ", "UPDATE"} {
			if counts[name] == 0 || text[name]["Operations"] != float64(counts[name]) {
				t.Errorf("[%s], Operations: %v, the intervals hold %d", name, text[name]["Operations"], counts[name])
			}
			merged := mergeHistograms(t, kept, name)
			for _, pc := range []struct {
				key string
				p   float64
			}{{"50thPercentileLatency(us)", 50}, {"95thPercentileLatency(us)", 95}, {"99thPercentileLatency(us)", 99}, {"99.9PercentileLatency(us)", 99.9}} {
				if got, want := text[name][pc.key], float64(merged.ValueAtPercentile(pc.p)); got != want {
					t.Errorf("[%s], %s: %v, the merged histograms say %v", name, pc.key, got, want)
				}
			}
			if got, want := text[name]["MaxLatency(us)"], float64(merged.Max()); got != want {
				t.Errorf("[%s], MaxLatency(us): %v, the merged histograms say %v", name, got, want)
			}
		}

		after := readResult(t, out)
		if after.Truncated || len(after.Phases) != 2 || !reflect.DeepEqual(before.Phases[0].Summary, after.Phases[0].Summary) {
			t.Fatalf("after recover: truncated %v, %d phases", after.Truncated, len(after.Phases))
		}
		sum := after.Phases[1].Summary
		if sum == nil || !sum.Recovered || !sum.Interrupted || sum.Ops != ops || len(after.Phases[1].Intervals) != len(before.Phases[1].Intervals) {
			t.Fatalf("recovered summary %+v, want %d operations", sum, ops)
		}

		again := start(t, bin, "recover", out)
		if code := again.wait(t, 10*time.Second); code != 0 || !strings.Contains(again.stderr.String(), "nothing to recover") {
			t.Fatalf("second recover: exit %d\n%s", code, again.stderr.String())
		}
	})
}

// proc is a dbprobe process started by a test.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	code           int
}

func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.code = exit.ExitCode() // -1 when a signal ended it
		} else if err != nil {
			p.code = -2
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait returns the exit status, failing the test if the process has not
// ended within limit.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("still running after %s\nstdout:\n%s\nstderr:\n%s", limit, p.stdout.String(), p.stderr.String())
		return 0
	}
}

// waitForFile polls the result file the process writes until ready says
// it holds what the test waits for.
func waitForFile(t *testing.T, p *proc, path, what string, ready func(*result.File) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("dbprobe ended (status %d) before the result held %s\n%s", p.code, what, p.stderr.String())
		default:
		}
		if data, err := os.ReadFile(path); err == nil {
			if f, err := result.Read(bytes.NewReader(data)); err == nil && len(f.Phases) > 0 && ready(f) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the result did not hold %s within 10 s\n%s", what, p.stderr.String())
}

func readResult(t *testing.T, path string) *result.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// measured returns the intervals after the warm-up.
func measured(p result.Phase) []result.Interval {
	var out []result.Interval
	for _, iv := range p.Intervals {
		if !iv.Warmup {
			out = append(out, iv)
		}
	}
	return out
}

// addUp returns the operations of the intervals and each series' count.
func addUp(ivs []result.Interval) (int64, map[string]int64) {
	var ops int64
	counts := map[string]int64{}
	for _, iv := range ivs {
		ops += iv.Ops
		for _, s := range iv.Series {
			counts[s.Name] += s.Count
		}
	}
	return ops, counts
}

// mergeHistograms decodes and merges the histograms of one series with
// the HdrHistogram library itself, apart from dbprobe's own merging.
func mergeHistograms(t *testing.T, ivs []result.Interval, name string) *hdr.Histogram {
	t.Helper()
	var merged *hdr.Histogram
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if s.Name != name {
				continue
			}
			h, err := hdr.Decode([]byte(s.Histogram))
			if err != nil {
				t.Fatalf("[%s] histogram of the interval ending %s: %v", name, iv.End, err)
			}
			if merged == nil {
				merged = h
			} else {
				merged.Merge(h)
			}
		}
	}
	if merged == nil {
		t.Fatalf("no histogram for [%s]", name)
	}
	return merged
}

// holdWriteLock takes SQLite's write lock on the database file from this
// process, as another writer would, until release.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open(firstSQLiteDriver(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("taking the write lock: %v", err)
	}
	return func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	}
}

func TestInterruptExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{&experiment.Interrupted{Signal: os.Interrupt}, 130},
		{&experiment.Interrupted{Signal: syscall.SIGTERM, Abandoned: true}, 143},
		{fmt.Errorf("wrapped: %w", &experiment.Interrupted{Signal: os.Interrupt}), 130},
		{errors.New("run failed"), 0},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := experiment.InterruptExitCode(tt.err); got != tt.code {
			t.Errorf("InterruptExitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}

func TestDrainTimeoutMustNotBeNegative(t *testing.T) {
	_, _, err := run(t, "run", "--db", "null", "--drain-timeout", "-1s")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "--drain-timeout") {
		t.Fatalf("err %v, want bad input about --drain-timeout", err)
	}
}
