package faults

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
)

// TestServerDoesNotComeBack loses the server in the middle of a phase
// without a duration — a load, a run by operation count — for good:
// killed and never started again, or cut off by a network that stays cut
// (operations then fail by --op-timeout). dbprobe waits
// --reconnect-timeout (5 s) for it, then stops with one line that says
// so, exit status 1, and a result file complete up to that moment, whose
// verdict names the outage.
func TestServerDoesNotComeBack(t *testing.T) {
	for _, tc := range []struct {
		kind  instance.Kind
		phase string
		// cut: the network to the server is cut rather than the server
		// killed.
		cut bool
	}{
		// A server killed in the middle of a load is internal/cli's
		// TestServerThatDoesNotComeBackStopsTheLoad; here a run by
		// operation count, and a load cut off by the network.
		{instance.MariaDB, "run", false},
		{instance.Postgres, "load", true},
	} {
		name := tc.kind.String() + "/" + tc.phase
		if tc.cut {
			name += "/cut"
		}
		t.Run(name, func(t *testing.T) {
			var srv *instance.Server
			var ns *netNS
			if tc.cut {
				ns, srv = postgresInNetns(t)
			} else {
				srv = startServer(t, tc.kind, instance.Options{})
			}
			out := filepath.Join(t.TempDir(), tc.phase+".jsonl")
			args := []string{tc.phase, "--db", srv.URL(), "--threads", "2", "--reconnect-timeout", "5s", "--out", out}
			if tc.cut {
				// Without an operation timeout an operation on a cut
				// network waits as long as TCP does (minutes).
				args = append(args, "--op-timeout", "1s", "--allow-insecure-tls")
			}
			if tc.phase == "load" {
				args = append(args, "-p", "recordcount=1000000")
			} else {
				if o := dbprobe(t, time.Minute, "load", "--db", srv.URL(), "-p", "recordcount=500"); o.code != 0 {
					t.Fatalf("load: status %d\n%s", o.code, o.all())
				}
				args = append(args, "-p", "recordcount=500", "--operations", "100000000")
			}
			wait := dbprobeAsync(t, 30*time.Second, args...)
			time.Sleep(1500 * time.Millisecond)
			lost := time.Now()
			if tc.cut {
				ns.drop(t, 100)
			} else if err := srv.Kill(); err != nil {
				t.Fatalf("killing the server: %v", err)
			}
			o := wait()
			after := time.Since(lost)
			t.Logf("%s ended with status %d %v after the server was lost", tc.phase, o.code, after.Round(time.Millisecond))
			if strings.Contains(o.stdout+o.stderr, srv.Password()) {
				t.Errorf("the password appears in dbprobe's output")
			}
			if o.code != 1 {
				t.Errorf("exit status %d, want 1\n%s", o.code, o.all())
			}
			// 5 s of waiting, and the time to stop and write the summary.
			// The wait counts from the start of the first operation that
			// failed, one in flight at the kill: a little before it.
			if after < 4500*time.Millisecond || after > 9*time.Second {
				t.Errorf("dbprobe ended %v after the server was lost, want 5 s (--reconnect-timeout) and a little", after)
			}
			line := stopLine(o, "has not answered")
			switch {
			case line == "":
				t.Errorf("no line says the server has not answered\n%s", o.all())
			case !strings.Contains(line, "incomplete") && tc.phase == "load":
				t.Errorf("the stop line does not say the table is incomplete: %s", line)
			default:
				t.Logf("stopped: %s", line)
			}
			sum := summaryOf(t, readResult(t, out), tc.phase)
			a := sum.Availability
			if a == nil || len(a.Outages) == 0 || !a.Outages[len(a.Outages)-1].Ongoing {
				t.Fatalf("availability %+v: want an outage still going on at the end", a)
			}
			checkStopped(t, sum, result.StopUnreachable, "")
			if d := a.Outages[len(a.Outages)-1].Duration(); d < 4*time.Second || d > 8*time.Second {
				t.Errorf("the outage lasted %v in the result, want about 5 s", d)
			}
			checkVerdict(t, o, sum, "unavailable", "not answered", "outage", "server down")
		})
	}
}
