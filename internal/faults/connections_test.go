package faults

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestTooFewConnections runs 20 threads against servers that accept 10
// connections: dbprobe refuses before the phase, with the numbers and the
// setting to change, exit status 2, and the table is left as it was.
func TestTooFewConnections(t *testing.T) {
	for _, tc := range []struct {
		kind     instance.Kind
		settings map[string]string
		setting  string
	}{
		{instance.Postgres, map[string]string{"max_connections": "10"}, "max_connections"},
		{instance.MariaDB, map[string]string{"max_connections": "10"}, "max_connections"},
		{instance.Redis, map[string]string{"maxclients": "10"}, "maxclients"},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			srv := startServer(t, tc.kind, instance.Options{Settings: tc.settings})
			common := []string{"--db", srv.URL(), "-p", "recordcount=500"}
			if o := dbprobe(t, time.Minute, append([]string{"load", "--threads", "2"}, common...)...); o.code != 0 {
				t.Fatalf("load: status %d\n%s", o.code, o.all())
			}
			before := tableState(t, srv)
			out := filepath.Join(t.TempDir(), "run.jsonl")
			o := dbprobe(t, 30*time.Second, append([]string{"run", "--threads", "20", "--operations", "2000", "--out", out}, common...)...)
			t.Logf("run ended with status %d after %v", o.code, o.elapsed.Round(time.Millisecond))
			if o.code != 2 {
				t.Errorf("exit status %d, want 2 (refused before the phase)\n%s", o.code, o.all())
			}
			line := stopLine(o, tc.setting)
			switch {
			case line == "":
				t.Errorf("no line names %s\n%s", tc.setting, o.all())
			case !hasCount(line, 20) || !someNumberUpTo(line, 10):
				t.Errorf("the line does not give the 20 threads and what the server accepts (10 or less): %s", line)
			default:
				t.Logf("refused: %s", line)
			}
			if strings.Contains(o.stdout, "[OVERALL]") || strings.Contains(o.stdout, "Return=") {
				t.Errorf("the phase ran:\n%s", o.all())
			}
			if after := tableState(t, srv); after != before {
				t.Errorf("the table changed: %s before, %s after", before, after)
			}
		})
	}
}

// someNumberUpTo reports whether text holds a number from 1 to n.
func someNumberUpTo(text string, n int) bool {
	for _, m := range regexp.MustCompile(`\b[0-9]+\b`).FindAllString(text, -1) {
		if v, err := strconv.Atoi(m); err == nil && v >= 1 && v <= n {
			return true
		}
	}
	return false
}

// tableState returns a digest of what the load left: the table's rows and
// contents for the SQL servers, the count of writes for Redis.
func tableState(t *testing.T, srv *instance.Server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch srv.Kind() {
	case instance.Postgres:
		conn, err := pgx.Connect(ctx, srv.URL())
		if err != nil {
			t.Fatalf("connect: %s", srv.Scrub(err))
		}
		defer conn.Close(context.Background())
		var n int64
		var sum string
		err = conn.QueryRow(ctx, "SELECT count(*), md5(string_agg(u::text, ',' ORDER BY ycsb_key)) FROM usertable u").Scan(&n, &sum)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(n, 10) + " rows, md5 " + sum
	case instance.MariaDB:
		db := testdb.OpenMySQL(t, srv.URL())
		var n int64
		var table, sum string
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM usertable").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "CHECKSUM TABLE usertable").Scan(&table, &sum); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(n, 10) + " rows, checksum " + sum
	default:
		c := testdb.OpenRedis(t, srv.URL())
		keys, err := redis.Int64(c.Do(ctx, "DBSIZE"))
		if err != nil {
			t.Fatal(err)
		}
		// Redis saves nothing here (save ""), so this counts every write
		// since it started.
		info, err := redis.String(c.Do(ctx, "INFO", "persistence"))
		if err != nil {
			t.Fatal(err)
		}
		changes := regexp.MustCompile(`rdb_changes_since_last_save:([0-9]+)`).FindStringSubmatch(info)
		if changes == nil {
			t.Fatalf("INFO persistence has no rdb_changes_since_last_save:\n%s", info)
		}
		return strconv.FormatInt(keys, 10) + " keys, " + changes[1] + " writes"
	}
}
