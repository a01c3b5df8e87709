package testdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// fakeTB records Skip and Fatal instead of stopping the test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skip(args ...any)               { f.skipped = fmt.Sprint(args...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

func TestPostgresURLWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{
		{ci: "", skip: true},
		{ci: "false", skip: true},
		{ci: "true", fail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv(PostgresURLEnv, "")
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			PostgresURL(f)
			if got := f.skipped != ""; got != tc.skip {
				t.Errorf("skipped = %v (%q), want %v", got, f.skipped, tc.skip)
			}
			if got := f.failed != ""; got != tc.fail {
				t.Errorf("failed = %v (%q), want %v", got, f.failed, tc.fail)
			}
			msg := f.skipped + f.failed
			if !strings.Contains(msg, "scripts/test") || !strings.Contains(msg, "postgresql") {
				t.Errorf("message %q does not say to run scripts/test or install postgresql", msg)
			}
		})
	}
}

func TestFreshPostgresDatabase(t *testing.T) {
	base := PostgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var name string
	t.Run("fresh", func(t *testing.T) {
		u := FreshPostgresDatabase(t)
		if strings.Contains(u, "/dbprobe?") {
			t.Fatalf("URL still names the base database")
		}
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var tables int
		if err := conn.QueryRow(ctx, "SELECT current_database(), count(*) FROM pg_tables WHERE schemaname = 'public'").
			Scan(&name, &tables); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "dbprobe_test_") || tables != 0 {
			t.Fatalf("database %q with %d tables, want a fresh dbprobe_test_… one", name, tables)
		}
		if other := FreshPostgresDatabase(t); other == u {
			t.Fatalf("two fresh databases share the URL %s", u)
		}
	})

	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left {
		t.Fatalf("database %s was not dropped when its test ended", name)
	}
}

// A server scripts/test could not start: the failure quotes its reason, so
// that CI's summary of the run, which keeps the failures and not the
// start's log, says why.
func TestMissingServerQuotesWhyItDidNotStart(t *testing.T) {
	t.Setenv(MySQLURLEnv, "")
	t.Setenv("CI", "true")
	t.Setenv("DBPROBE_MYSQL_UNAVAILABLE", "[ERROR] mariadbd: Can't create/write to file '/tmp/x/ibtmp1'")
	f := &fakeTB{TB: t}
	MySQLURL(f)
	if !strings.Contains(f.failed, "scripts/test could not start it: [ERROR] mariadbd: Can't create/write to file") {
		t.Errorf("failure %q does not quote why the server did not start", f.failed)
	}
	t.Setenv("DBPROBE_MYSQL_UNAVAILABLE", "")
	f = &fakeTB{TB: t}
	MySQLURL(f)
	if strings.Contains(f.failed, "could not start it") {
		t.Errorf("failure %q gives a reason nobody left", f.failed)
	}
}
