package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// waitCount waits up to ten seconds for query to count want: a backend
// ends a moment after its client closes the connection.
func waitCount(t *testing.T, admin *pgx.Conn, query string, want int64, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := count(t, admin, query, args...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", query, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// By the simple protocol a value that looks like SQL is still stored as
// text (pgx writes it as a literal, quotes doubled), a statement is still
// checked by the server when prepared, and nothing stays prepared.
func TestSQLConnSimpleProtocol(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE x (id int PRIMARY KEY, body text, n float8)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ins, err := c.Prepare(ctx, "INSERT INTO x (id, body, n) VALUES (:id, :body, :n)")
	if err != nil {
		t.Fatal(err)
	}
	evil := "'); DROP TABLE x; --"
	for i, v := range []any{evil, `back\slash 'quote'`, nil} {
		out, err := c.Run(ctx, ins, []any{int64(i + 1), v, -1.5}, nil)
		if err != nil || out.Affected != 1 {
			t.Fatalf("insert %q: %+v, %v", v, out, err)
		}
	}
	if got := count(t, admin, "SELECT count(*) FROM x WHERE body = $1 AND n = -1.5", evil); got != 1 {
		t.Errorf("%d rows hold the value as text, want 1", got)
	}
	if got := count(t, admin, `SELECT count(*) FROM x WHERE body = $1`, `back\slash 'quote'`); got != 1 {
		t.Errorf("%d rows hold the backslash and quotes as written, want 1", got)
	}
	if got := count(t, admin, "SELECT count(*) FROM x WHERE body IS NULL"); got != 1 {
		t.Errorf("%d rows hold NULL, want 1", got)
	}
	sel, err := c.Prepare(ctx, "SELECT body FROM x WHERE id = :id OR id = :id + 1 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var seen []any
	out, err := c.Run(ctx, sel, []any{int64(1)}, func(row []any) error { seen = append(seen, row[0]); return nil })
	if err != nil || out.Rows != 2 || out.Affected != -1 || len(seen) != 2 || seen[0] != evil {
		t.Fatalf("select: %+v, %v, rows %q", out, err, seen)
	}
	if _, err := c.Prepare(ctx, "SELECT nosuchcolumn FROM x"); driver.Code(err) != "42703" {
		t.Errorf("a statement naming no column: %v (code %q), want the server's 42703", err, driver.Code(err))
	}
	pg := c.(*sqlConn).conn
	if got := count(t, pg, "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'dbprobe_sql_%'"); got != 0 {
		t.Errorf("%d statements stay prepared on a simple-protocol connection", got)
	}
	// A transaction by the simple protocol.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, ins, []any{int64(9), "gone", 0.0}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, admin, "SELECT count(*) FROM x"); got != 3 {
		t.Errorf("%d rows after a rolled back insert, want 3", got)
	}
}

// Setup runs on the connection in order, and a statement the server
// refuses is its own error, naming the statement, with no connection
// left open. A SQLConn is never one of the pool's.
func TestSQLConnSetupAndFresh(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	c, err := db.SQLConn(ctx, driver.SQLOptions{Fresh: true, Setup: []string{"SET work_mem = '1234kB'", "SET application_name = 'setup_2'"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Prepare(ctx, "SELECT current_setting('work_mem'), current_setting('application_name'), pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if _, err := c.Run(ctx, st, nil, func(row []any) error { got = row; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "1234kB" || got[1] != "setup_2" {
		t.Fatalf("work_mem, application_name, pid: %v; want 1234kB, setup_2", got)
	}
	// Closed, its backend ends: it was not one of the pool's, which
	// would stay.
	pid := got[2]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitCount(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", 0, pid)

	before := count(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	_, err = db.SQLConn(ctx, driver.SQLOptions{Setup: []string{"SET work_mem = '2MB'", "SET no_such_setting = 1", "SET work_mem = '3MB'"}})
	if err == nil || driver.Code(err) != "42704" || !strings.Contains(err.Error(), "SET no_such_setting = 1") {
		t.Fatalf("a setup the server refuses: %v (code %q), want its 42704 naming the statement", err, driver.Code(err))
	}
	waitCount(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()", before)
}

// Explain shows the plan without running the statement, and with analyze
// runs it once and rolls it back: a DELETE analyzed leaves its rows,
// whether the connection was in a transaction (a savepoint) or not, and
// the transaction goes on.
func TestExplain(t *testing.T) {
	for _, simple := range []bool{false, true} {
		t.Run(map[bool]string{false: "prepared", true: "simple"}[simple], func(t *testing.T) {
			db, admin := capDB(t)
			ctx := context.Background()
			if _, err := admin.Exec(ctx, "CREATE TABLE e (id int PRIMARY KEY, v text); INSERT INTO e SELECT g, 'v' FROM generate_series(1, 100) g; ANALYZE e"); err != nil {
				t.Fatal(err)
			}
			c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ex := c.(driver.Explainer)
			del, err := c.Prepare(ctx, "DELETE FROM e WHERE id <= :upto")
			if err != nil {
				t.Fatal(err)
			}
			p, err := ex.Explain(ctx, del, []any{int64(50)}, false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.Text, "Delete on e") || strings.Contains(p.Text, "actual") || !strings.Contains(p.Text, "id <= 50") || !strings.HasPrefix(p.How, "EXPLAIN") {
				t.Errorf("EXPLAIN:\n%s\n(%s)", p.Text, p.How)
			}
			p, err = ex.Explain(ctx, del, []any{int64(50)}, true)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Text, "actual time") || !strings.Contains(p.Text, "Buffers: shared hit") || !strings.Contains(p.Text, "rows=50 loops=1") || !strings.Contains(p.How, "rolled back") {
				t.Errorf("EXPLAIN (ANALYZE, BUFFERS):\n%s\n(%s)", p.Text, p.How)
			}
			if got := count(t, admin, "SELECT count(*) FROM e"); got != 100 {
				t.Errorf("%d rows after an analyzed DELETE, want 100", got)
			}

			// In a transaction: a savepoint, and the transaction's own
			// work stays.
			ins, err := c.Prepare(ctx, "INSERT INTO e VALUES (:id, 'mine')")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Run(ctx, ins, []any{int64(1000)}, nil); err != nil {
				t.Fatal(err)
			}
			p, err = ex.Explain(ctx, del, []any{int64(2000)}, true)
			if err != nil || !strings.Contains(p.How, "savepoint") || !strings.Contains(p.Text, "rows=101 loops=1") {
				t.Fatalf("EXPLAIN ANALYZE in a transaction: %v\n%s\n(%s)", err, p.Text, p.How)
			}
			// A statement that fails under the savepoint leaves the
			// transaction usable.
			bad, err := c.Prepare(ctx, "SELECT 1 / :zero")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ex.Explain(ctx, bad, []any{int64(0)}, true); driver.Code(err) != "22012" {
				t.Errorf("EXPLAIN ANALYZE of a division by zero: %v, want 22012", err)
			}
			if err := c.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if got := count(t, admin, "SELECT count(*) FROM e"); got != 101 {
				t.Errorf("%d rows after the transaction, want 101 (its insert, none deleted)", got)
			}
		})
	}
}
