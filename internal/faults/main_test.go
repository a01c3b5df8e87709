package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestMain clears what an earlier, killed run of these tests left, and
// runs them with one dbprobe binary, built by the first test that runs it
// (testbin.ForTest): a suite whose tests all skip builds none.
func TestMain(m *testing.M) {
	removeStale()
	os.Exit(testbin.Main(m))
}

// outcome is what one dbprobe command did.
type outcome struct {
	stdout, stderr string
	// code is the exit status; -1 when it was killed.
	code    int
	elapsed time.Duration
}

// all is stdout and stderr together, for messages.
func (o outcome) all() string {
	return "stdout:\n" + tail(o.stdout, 40) + "\nstderr:\n" + tail(o.stderr, 40)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// dbprobe runs the binary with args, killing it after limit, and returns
// what it did. A failure to start it, or a run that outlives limit, fails
// the test; a non-zero exit does not.
func dbprobe(t *testing.T, limit time.Duration, args ...string) outcome {
	t.Helper()
	o, err := runDbprobe(testbin.ForTest(t), limit, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, o.all())
	}
	return o
}

// dbprobeAsync starts dbprobe as dbprobe does and returns a function that
// waits for it to end.
func dbprobeAsync(t *testing.T, limit time.Duration, args ...string) func() outcome {
	t.Helper()
	type done struct {
		o   outcome
		err error
	}
	bin := testbin.ForTest(t)
	ch := make(chan done, 1)
	go func() {
		o, err := runDbprobe(bin, limit, args...)
		ch <- done{o, err}
	}()
	return func() outcome {
		t.Helper()
		d := <-ch
		if d.err != nil {
			t.Fatalf("%v\n%s", d.err, d.o.all())
		}
		return d.o
	}
}

// runDbprobe runs the binary bin with args in a directory of its own,
// killing it after limit.
func runDbprobe(bin string, limit time.Duration, args ...string) (outcome, error) {
	dir, err := os.MkdirTemp("", "dbprobe-faults-run-")
	if err != nil {
		return outcome{}, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return o, fmt.Errorf("dbprobe %s did not end within %v and was killed", args[0], limit)
	case err == nil:
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	default:
		return o, fmt.Errorf("dbprobe %s: %v", args[0], err)
	}
	return o, nil
}

// needRoot skips the test (fails it under CI=true) unless it runs as root
// with every tool named on PATH.
func needRoot(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testdb.Unavailable(t, "this fault test needs root (loop devices, mounts, network namespaces)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testdb.Unavailable(t, fmt.Sprintf("this fault test needs %s: install the Debian packages e2fsprogs, mount, iproute2 and nftables (.ci/run does)", tool))
		}
	}
}

// sh runs a setup command and fails the test with its output when it
// fails.
func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startServer starts a throwaway server, skipping (failing under CI=true)
// when its binaries are missing; it is closed when the test ends.
func startServer(t *testing.T, kind instance.Kind, opts instance.Options) *instance.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, kind, opts)
	if errors.Is(err, instance.ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatalf("starting %s: %v", kind, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Logf("closing %s: %v", kind, err)
		}
	})
	return s
}

// readResult reads a JSON result file.
func readResult(t *testing.T, path string) *result.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the result file: %v", err)
	}
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return f
}

// summaryOf returns the summary of the named phase, failing the test when
// the result has none: a result file is complete only with it.
func summaryOf(t *testing.T, f *result.File, phase string) *result.Summary {
	t.Helper()
	for _, p := range f.Phases {
		if p.Header.Phase == phase && p.Summary != nil {
			return p.Summary
		}
	}
	t.Fatalf("the result has no %s summary (%d phases, truncated %v)", phase, len(f.Phases), f.Truncated)
	return nil
}

// statusCount returns how many operations of the series ended with status.
func statusCount(s *result.Summary, series, status string) int64 {
	for _, m := range s.Series {
		if m.Name != series {
			continue
		}
		for _, st := range m.Statuses {
			if st.Status == status {
				return st.Count
			}
		}
	}
	return 0
}

// seriesCount returns how many operations the series recorded, 0 when it
// has none.
func seriesCount(s *result.Summary, series string) int64 {
	for _, m := range s.Series {
		if m.Name == series {
			return m.Count
		}
	}
	return 0
}

// percentile returns the series' percentile p in microseconds, -1 when
// absent.
func percentile(s *result.Summary, series string, p float64) int64 {
	for _, m := range s.Series {
		if m.Name != series {
			continue
		}
		for _, q := range m.Percentiles {
			if q.Percentile == p {
				return q.Micros
			}
		}
	}
	return -1
}

// badVerdicts are what the bottleneck verdict must never say of a phase a
// fault stopped or interrupted: it blames the load, not the fault.
var badVerdicts = []string{"none saturated", "more threads", "single writer"}

// checkVerdict fails the test when the bottleneck verdict, in the text
// ("# bottleneck: …") or the JSON, blames anything but the fault, or, when
// wants are given, when it holds none of them (compared without case):
// it must say what happened.
func checkVerdict(t *testing.T, o outcome, s *result.Summary, wants ...string) {
	t.Helper()
	var verdicts []string
	for _, line := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(line, "# bottleneck") {
			verdicts = append(verdicts, line)
		}
	}
	if s != nil && s.Diagnosis != nil {
		verdicts = append(verdicts, "JSON: "+s.Diagnosis.Limit+": "+s.Diagnosis.Verdict)
	}
	if len(verdicts) == 0 && len(wants) > 0 {
		t.Errorf("no verdict; want one that says what happened (%s)", strings.Join(wants, ", "))
	}
	for _, v := range verdicts {
		t.Logf("verdict: %s", v)
		for _, bad := range badVerdicts {
			if strings.Contains(v, bad) {
				t.Errorf("the verdict blames the load, not the fault (%q): %s", bad, v)
			}
		}
		if len(wants) == 0 {
			continue
		}
		said := false
		for _, w := range wants {
			said = said || strings.Contains(strings.ToLower(v), strings.ToLower(w))
		}
		if !said {
			t.Errorf("the verdict does not say what happened (%s): %s", strings.Join(wants, ", "), v)
		}
	}
}

// checkStopped fails the test unless the result records that the phase
// was stopped early for reason (result.StopFatal, StopUnreachable), with
// code among its words when code is not empty, and ended by it.
func checkStopped(t *testing.T, s *result.Summary, reason, code string) {
	t.Helper()
	st := s.Stopped
	switch {
	case st == nil:
		t.Errorf("the result does not record why the phase stopped (want %s)", reason)
		return
	case st.Reason != reason:
		t.Errorf("the result says the phase stopped for %q (%s), want %q", st.Reason, st.Cause, reason)
	case code != "" && !strings.Contains(st.Code, code):
		t.Errorf("the result's stop has code %q, want %s", st.Code, code)
	case st.At.IsZero():
		t.Errorf("the result's stop has no time: %+v", *st)
	}
	want := map[string]string{result.StopFatal: "error", result.StopUnreachable: "unreachable"}[reason]
	if s.Ending == nil || s.Ending.By != want {
		t.Errorf("the result's ending is %+v, want by %q", s.Ending, want)
	}
}

// errorKeys returns the result's error counts as "KEY×N" text, for
// messages.
func errorKeys(s *result.Summary) string {
	var parts []string
	for k, n := range s.Errors {
		parts = append(parts, fmt.Sprintf("%s×%d", k, n))
	}
	return strings.Join(parts, ", ")
}
