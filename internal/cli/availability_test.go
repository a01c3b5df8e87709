package cli_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// startInstance starts a throwaway server of its own for a test that
// stops, freezes or restarts it; it skips (fails under CI=true) when the
// server's binaries are missing.
func startInstance(t *testing.T, kind instance.Kind) *instance.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, kind, instance.Options{})
	if errors.Is(err, instance.ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatalf("starting %s: %v", kind, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// runAsync starts dbprobe with args and returns a function that waits for
// it to end.
func runAsync(t *testing.T, args ...string) func() (string, string, error) {
	type outcome struct {
		stdout, stderr string
		err            error
	}
	ch := make(chan outcome, 1)
	go func() {
		stdout, stderr, err := run(t, args...)
		ch <- outcome{stdout, stderr, err}
	}()
	return func() (string, string, error) {
		o := <-ch
		return o.stdout, o.stderr, o.err
	}
}

// readSummary reads the run phase's summary from a JSON result.
func readSummary(t *testing.T, path string) *result.Summary {
	t.Helper()
	for _, ph := range readResult(t, path).Phases {
		if ph.Header.Phase == "run" && ph.Summary != nil {
			return ph.Summary
		}
	}
	t.Fatalf("%s has no run summary", path)
	return nil
}

// idleSeconds counts the run phase's intervals that finished no operation.
func idleSeconds(t *testing.T, path string) int {
	t.Helper()
	idle := 0
	for _, ph := range readResult(t, path).Phases {
		for _, iv := range ph.Intervals {
			if ph.Header.Phase == "run" && iv.Ops == 0 {
				idle++
			}
		}
	}
	return idle
}

// assertNoSecret fails when the server's password shows anywhere dbprobe
// wrote to.
func assertNoSecret(t *testing.T, s *instance.Server, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if strings.Contains(text, s.Password()) {
			t.Fatalf("the password appears in dbprobe's output:\n%s", text)
		}
	}
}

// TestRunSurvivesServerRestart stops PostgreSQL, MariaDB and Redis for
// about 5 s in the middle of a run: the run goes on, the outage is
// reported within 1.5 s of the real downtime, and nothing shows the
// password.
func TestRunSurvivesServerRestart(t *testing.T) {
	for _, kind := range []instance.Kind{instance.Postgres, instance.MariaDB, instance.Redis} {
		t.Run(kind.String(), func(t *testing.T) {
			srv := startInstance(t, kind)
			url := srv.URL()
			if _, stderr, err := run(t, "load", "--db", url, "-p", "recordcount=1000", "--threads", "2"); err != nil {
				t.Fatalf("load: %v\n%s", err, stderr)
			}
			out := filepath.Join(t.TempDir(), "result.jsonl")
			wait := runAsync(t, "run", "--db", url, "-p", "recordcount=1000", "--operations", "0", "--threads", "4", "--duration", "12s", "--out", out, "-s")

			time.Sleep(2 * time.Second)
			down := time.Now()
			if err := srv.Stop(); err != nil {
				t.Fatalf("stopping the server: %v", err)
			}
			// Down for 5 s in all: PostgreSQL's shutdown checkpoint is part of it.
			time.Sleep(max(0, 5*time.Second-time.Since(down)))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := srv.Restart(ctx); err != nil {
				t.Fatalf("restarting the server: %v", err)
			}
			downtime := time.Since(down)

			stdout, stderr, err := wait()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			raw, _ := os.ReadFile(out)
			assertNoSecret(t, srv, stdout, stderr, string(raw))
			sum := readSummary(t, out)
			a := sum.Availability
			if a == nil || len(a.Outages) != 1 {
				t.Fatalf("availability %+v, want one outage:\n%s", a, stdout)
			}
			o := a.Outages[0]
			if diff := o.Duration() - downtime; math.Abs(diff.Seconds()) > 1.5 || o.Ongoing {
				t.Fatalf("outage %v (%+v), the server was down %v", o.Duration(), o, downtime)
			}
			if o.Failed < 1 || a.Reconnects < 4 {
				t.Fatalf("outage %+v, %d reconnections: want failures and every worker back", o, a.Reconnects)
			}
			// The per-second series shows it: seconds without a finished
			// operation, about as many as the server was down.
			if idle := idleSeconds(t, out); idle < 3 {
				t.Fatalf("%d intervals without operations in the per-second series, the server was down %v", idle, downtime)
			}
			if !strings.Contains(stdout, "# outage: 1, ") {
				t.Fatalf("the text summary does not report the outage:\n%s", stdout)
			}
			// The run went on after it: operations succeeded in its last seconds.
			if sum.Ops <= o.Failed {
				t.Fatalf("%d operations, %d failed", sum.Ops, o.Failed)
			}
			t.Logf("server down %v, outage %v, %d operations failed, %d reconnections", downtime.Round(time.Millisecond), o.Duration().Round(time.Millisecond), o.Failed, a.Reconnects)
		})
	}
}

// TestTerminatedBackendIsReplaced kills one worker's backend with
// pg_terminate_backend: the worker reconnects, the run goes on to its end,
// and no outage is reported.
func TestTerminatedBackendIsReplaced(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	if _, stderr, err := run(t, "load", "--db", url, "-p", "recordcount=500", "--threads", "2"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	out := filepath.Join(t.TempDir(), "result.jsonl")
	wait := runAsync(t, "run", "--db", url, "-p", "recordcount=500", "--operations", "0", "--threads", "4", "--duration", "3s", "--out", out)
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	time.Sleep(time.Second)
	var killed int
	err = admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM (
		SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'dbprobe'
			AND query ILIKE '%ycsb_key%'
		LIMIT 1) AS victim`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminating a worker's backend: %d terminated, %v", killed, err)
	}
	stdout, stderr, err := wait()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum := readSummary(t, out)
	if a := sum.Availability; a == nil || a.Reconnects != 1 || len(a.Outages) != 0 {
		t.Fatalf("availability %+v, want one reconnection and no outage:\n%s", a, stdout)
	}
	// The code comes first, its name (admin_shutdown) after it once the
	// driver knows one.
	var n int64
	for code, k := range sum.Errors {
		if code == "ERROR(57P01)" || strings.HasPrefix(code, "ERROR(57P01 ") {
			n += k
		}
	}
	if n != 1 {
		t.Fatalf("errors %v, want one 57P01 (admin shutdown)", sum.Errors)
	}
}

// TestStallShowsInIntendedLatency freezes the server for 3 s during an
// open-loop run with --op-timeout 1s: operations time out and are counted
// as such, and the latency from the intended start shows the whole stall.
func TestStallShowsInIntendedLatency(t *testing.T) {
	srv := startInstance(t, instance.Postgres)
	url := srv.URL()
	if _, stderr, err := run(t, "load", "--db", url, "-p", "recordcount=500", "--threads", "2"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	out := filepath.Join(t.TempDir(), "result.jsonl")
	wait := runAsync(t, "run", "--db", url, "-p", "recordcount=500", "--threads", "4", "--target", "200",
		"--op-timeout", "1s", "--operations", "0", "--duration", "7s", "--out", out)
	time.Sleep(1500 * time.Millisecond)
	if err := srv.Pause(); err != nil {
		t.Fatalf("freezing the server: %v", err)
	}
	time.Sleep(3 * time.Second)
	if err := srv.Resume(); err != nil {
		t.Fatalf("thawing the server: %v", err)
	}
	stdout, stderr, err := wait()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum := readSummary(t, out)
	var timeouts int64
	for code, n := range sum.Errors {
		if code == "ERROR(timeout)" {
			timeouts += n
		}
	}
	if timeouts < 4 {
		t.Fatalf("errors %v: want operations counted as timeouts, at least one per worker\n%s", sum.Errors, stdout)
	}
	var intendedMax, serviceMax int64
	for _, s := range sum.Series {
		switch s.Name {
		case "Intended-READ", "Intended-UPDATE":
			intendedMax = max(intendedMax, s.MaxMicros)
		case "READ", "UPDATE":
			serviceMax = max(serviceMax, s.MaxMicros)
		}
	}
	// The successful operations' service time never saw the freeze whole
	// (those in flight failed at 1 s); the intended-start latency did.
	if intendedMax < 2_500_000 {
		t.Fatalf("Intended max %d µs, service max %d µs: the 3 s freeze does not show\n%s", intendedMax, serviceMax, stdout)
	}
	t.Log(fmt.Sprintf("timeouts %d, intended max %.2f s, service max %.2f s", timeouts, float64(intendedMax)/1e6, float64(serviceMax)/1e6))
}

// TestKilledConnectionsAreReplaced kills worker connections from the
// server's side while a run goes: one MariaDB connection with KILL
// CONNECTION, and every Redis client with CLIENT KILL (as a failover
// does). The workers reconnect, the run ends on time, and a drop that the
// others served through is no outage.
func TestKilledConnectionsAreReplaced(t *testing.T) {
	tests := []struct {
		name       string
		url        func(t *testing.T) string
		kill       func(t *testing.T, url string) int
		reconnects func(killed int) bool
	}{
		{
			name: "mariadb", url: func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) },
			kill: func(t *testing.T, url string) int {
				db := testdb.OpenMySQL(t, url)
				// A worker's connection shows its statement only while the
				// statement runs (between two, INFO is NULL): look until
				// one is caught running.
				var id int64
				var err error
				for try := 0; try < 200; try++ {
					err = db.QueryRow(`SELECT ID FROM information_schema.PROCESSLIST
						WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND INFO LIKE '%YCSB_KEY%' LIMIT 1`).Scan(&id)
					if err == nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				if err != nil {
					t.Fatalf("finding a worker's connection: %v", err)
				}
				if _, err := db.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
					t.Fatalf("KILL CONNECTION: %v", err)
				}
				return 1
			},
			reconnects: func(killed int) bool { return killed == 1 },
		},
		{
			name: "redis", url: func(t *testing.T) string { return testdb.FreshRedisDatabase(t) },
			kill: func(t *testing.T, url string) int {
				c := testdb.OpenRedis(t, url)
				n, err := redis.Int(c.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
				if err != nil || n < 4 {
					t.Fatalf("CLIENT KILL: %d killed, %v", n, err)
				}
				return n
			},
			// The four workers' connections at least; idle pool
			// connections killed beside them are not noticed.
			reconnects: func(killed int) bool { return killed >= 4 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url(t)
			if _, stderr, err := run(t, "load", "--db", url, "-p", "recordcount=500", "--threads", "2"); err != nil {
				t.Fatalf("load: %v\n%s", err, stderr)
			}
			out := filepath.Join(t.TempDir(), "result.jsonl")
			wait := runAsync(t, "run", "--db", url, "-p", "recordcount=500", "--operations", "0", "--threads", "4", "--duration", "3s", "--out", out)
			time.Sleep(time.Second)
			killed := tt.kill(t, url)
			stdout, stderr, err := wait()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			sum := readSummary(t, out)
			a := sum.Availability
			if a == nil || len(a.Outages) != 0 || a.Reconnects < 1 || a.Reconnects > 4 || !tt.reconnects(killed) {
				t.Fatalf("availability %+v after killing %d connections, want reconnections and no outage:\n%s", a, killed, stdout)
			}
			var failed int64
			for _, n := range sum.Errors {
				failed += n
			}
			if failed != a.Reconnects {
				t.Fatalf("errors %v: want one failed operation per reconnection (%d)", sum.Errors, a.Reconnects)
			}
		})
	}
}
