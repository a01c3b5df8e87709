package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// serverSetting is a server-wide setting a --durability run changes, read
// and blocked through an administrator's connection.
type serverSetting struct {
	durability string // the --durability that changes it
	read       func(t *testing.T) string
	// block makes every worker's operation wait until the returned
	// function runs, without keeping an administrator from the setting.
	block func(t *testing.T) (unblock func())
}

// TestSecondInterruptRestoresServerSettings stops a --durability run with
// two Ctrl-C while its workers are blocked, so that the command gives up
// at once and never reaches its Close: the server-wide setting the run
// changed must still be put back. Each server is a throwaway instance of
// the test's own, since the setting is server-wide.
func TestSecondInterruptRestoresServerSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary against servers of its own")
	}
	bin := testbin.ForTest(t)
	for _, kind := range []instance.Kind{instance.MariaDB, instance.Redis} {
		t.Run(kind.String(), func(t *testing.T) {
			s := startInstance(t, kind)
			setting := settingOf(t, kind, s.URL())
			before := setting.read(t)
			if _, stderr, err := run(t, "load", "--db", s.URL(), "-p", "recordcount=200", "--no-monitor"); err != nil {
				t.Fatalf("load: %v\n%s", err, stderr)
			}
			out := filepath.Join(t.TempDir(), "result.jsonl")
			p := start(t, bin, "run", "--db", s.URL(), "--durability", setting.durability, "--duration", "60s",
				"-p", "operationcount=0", "-p", "recordcount=200", "-p", "readproportion=0", "-p", "updateproportion=1",
				"--threads", "2", "--no-monitor", "--drain-timeout", "60s", "--out", out)
			waitForFile(t, p, out, "an interval with operations", func(f *result.File) bool {
				return len(f.Phases) == 1 && len(f.Phases[0].Intervals) > 0 && f.Phases[0].Intervals[0].Ops > 0
			})
			during := setting.read(t)
			if during == before {
				t.Fatalf("--durability %s left the setting at %s: the test shows nothing", setting.durability, before)
			}
			unblock := setting.block(t)
			defer unblock()
			waitForFile(t, p, out, "an interval without operations (the workers blocked)", func(f *result.File) bool {
				ivs := f.Phases[0].Intervals
				return ivs[len(ivs)-1].Ops == 0
			})
			p.signal(t, os.Interrupt)
			time.Sleep(200 * time.Millisecond)
			p.signal(t, os.Interrupt)
			if code := p.wait(t, 15*time.Second); code != 130 {
				t.Fatalf("exit status %d, want 130\n%s", code, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "interrupted twice") {
				t.Errorf("stderr does not say the run was abandoned:\n%s", p.stderr.String())
			}
			if after := setting.read(t); after != before {
				t.Errorf("the setting was %s before the run, %s during it, and is %s after two Ctrl-C\n%s", before, during, after, p.stderr.String())
			}
			assertNoSecret(t, s, p.stdout.String(), p.stderr.String())
		})
	}
}

func settingOf(t *testing.T, kind instance.Kind, url string) serverSetting {
	switch kind {
	case instance.MariaDB:
		admin := testdb.OpenMySQL(t, url)
		return serverSetting{
			durability: "delayed",
			read: func(t *testing.T) string {
				var v string
				if err := admin.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			},
			block: func(t *testing.T) func() {
				conn, err := admin.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(context.Background(), "LOCK TABLES usertable WRITE"); err != nil {
					t.Fatal(err)
				}
				return func() {
					conn.ExecContext(context.Background(), "UNLOCK TABLES")
					conn.Close()
				}
			},
		}
	case instance.Redis:
		admin := testdb.OpenRedis(t, url)
		ctx := context.Background()
		return serverSetting{
			durability: "full",
			read: func(t *testing.T) string {
				v, err := redis.StringMap(admin.Do(ctx, "CONFIG", "GET", "appendfsync"))
				if err != nil {
					t.Fatal(err)
				}
				return v["appendfsync"]
			},
			block: func(t *testing.T) func() {
				// Writes wait; CONFIG GET and SET do not.
				if _, err := admin.Do(ctx, "CLIENT", "PAUSE", "60000", "WRITE"); err != nil {
					t.Fatal(err)
				}
				return func() { admin.Do(ctx, "CLIENT", "UNPAUSE") }
			},
		}
	}
	t.Fatalf("no server setting for %s", kind)
	return serverSetting{}
}
