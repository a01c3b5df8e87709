package cli_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/ycsb"
)

// TestServerThatDoesNotComeBackStopsTheLoad kills the server under a load
// and leaves it down: the load waits --reconnect-timeout, then stops with
// one line (exit status 1), and the result holds the phase up to then,
// with the stop and a verdict that names it.
func TestServerThatDoesNotComeBackStopsTheLoad(t *testing.T) {
	for _, kind := range []instance.Kind{instance.Postgres, instance.MariaDB} {
		t.Run(kind.String(), func(t *testing.T) {
			srv := startInstance(t, kind)
			out := filepath.Join(t.TempDir(), "result.jsonl")
			wait := runAsync(t, "load", "--db", srv.URL(), "-p", "recordcount=2000000", "--threads", "2", "--reconnect-timeout", "2s", "--out", out)
			time.Sleep(1500 * time.Millisecond)
			if err := srv.Kill(); err != nil {
				t.Fatalf("killing the server: %v", err)
			}
			killed := time.Now()
			stdout, stderr, err := wait()
			waited := time.Since(killed)
			if err == nil || badinput.Is(err) || !errors.Is(err, ycsb.ErrPhaseFailed) {
				t.Fatalf("err %v, want a failed phase (exit status 1)\n%s", err, stderr)
			}
			line := regexp.MustCompile(fmt.Sprintf(`^\w+ at 127\.0\.0\.1:%d has not answered for 2 s since \d\d:\d\d:\d\d: the load stops, after ([0-9,]+) of 2,000,000 rows; the table usertable is incomplete \(left as it is\); (.* on .* \(.*\) has .* free now; )?bring the server back \(or wait longer with --reconnect-timeout\), then load again$`, srv.Port()))
			if !line.MatchString(err.Error()) {
				t.Fatalf("last line %q", err)
			}
			// It waited the timeout, not much more: each attempt to
			// reconnect is cut to the time left.
			if waited > 10*time.Second {
				t.Fatalf("stopped %v after the kill, with --reconnect-timeout 2s", waited)
			}
			raw, _ := os.ReadFile(out)
			assertNoSecret(t, srv, stdout, stderr, err.Error(), string(raw))
			res := readResult(t, out)
			sum := res.Phases[0].Summary
			if sum == nil || sum.Stopped == nil || sum.Stopped.Reason != result.StopUnreachable || sum.Stopped.Text != err.Error() || sum.Ending == nil || sum.Ending.By != "unreachable" {
				t.Fatalf("summary %+v", sum)
			}
			if a := sum.Availability; a == nil || len(a.Outages) != 1 || !a.Outages[0].Ongoing {
				t.Fatalf("availability %+v, want one outage still going on at the stop", sum.Availability)
			}
			if d := sum.Diagnosis; d == nil || d.Limit != "stopped" {
				t.Fatalf("diagnosis %+v, want the stop", sum.Diagnosis)
			}
			t.Logf("%s (%v after the kill)", err, waited.Round(time.Millisecond))
		})
	}
}
