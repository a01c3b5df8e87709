package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Run names the columns of the rows a statement returns as the server
// does, an expression without an alias included, by either protocol; a
// statement that returns no rows names none.
func TestRunColumns(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE k (id int PRIMARY KEY, v text); INSERT INTO k VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	for _, simple := range []bool{false, true} {
		c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			text string
			want []string
		}{
			{"SELECT id, v AS name, id + 1, lower(v) FROM k WHERE id >= :lo", []string{"id", "name", "?column?", "lower"}},
			{"SELECT id FROM k WHERE id > :lo + 100", []string{"id"}}, // no row, still its columns
			{"UPDATE k SET v = v WHERE id = :lo", nil},
			{"UPDATE k SET v = v WHERE id = :lo RETURNING id AS changed", []string{"changed"}},
		} {
			st, err := c.Prepare(ctx, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Run(ctx, st, []any{int64(1)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Columns, tc.want) {
				t.Errorf("simple=%v %s: Columns %q, want %q", simple, tc.text, out.Columns, tc.want)
			}
			st.Close()
		}
		c.Close()
	}
}

// Exec runs what a server takes as text, unprepared and whole, and
// refuses parameters it has no values for.
func TestExec(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex := c.(driver.Execer)
	for _, q := range []string{
		"CREATE TABLE x (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)",
		"CREATE FUNCTION x_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE x SET n = n + 1 WHERE id = 0; RETURN NEW; END $$",
		"INSERT INTO x VALUES (0, 0)",
	} {
		if _, err := ex.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	out, err := ex.Exec(ctx, "INSERT INTO x (id) SELECT g FROM generate_series(1, 5) g")
	if err != nil || out.Affected != 5 || out.Rows != 0 || out.Columns != nil {
		t.Errorf("an INSERT of 5 rows: %+v, %v", out, err)
	}
	out, err = ex.Exec(ctx, "SELECT id AS k FROM x WHERE id > 2")
	if err != nil || out.Rows != 3 || out.Affected != -1 || !slices.Equal(out.Columns, []string{"k"}) {
		t.Errorf("a SELECT of 3 rows: %+v, %v", out, err)
	}
	if _, err := ex.Exec(ctx, "DELETE FROM x WHERE id = :id"); !badinput.Is(err) || !strings.Contains(err.Error(), ":id") {
		t.Errorf("a parameter: %v, want bad input naming it", err)
	}
	if _, err := ex.Exec(ctx, "SELEC 1"); driver.Code(err) != "42601" {
		t.Errorf("a syntax error: %v, want the server's 42601", err)
	}
	if got := count(t, admin, "SELECT count(*) FROM x"); got != 6 {
		t.Errorf("x holds %d rows, want 6", got)
	}
}

// A statement EXPLAIN does not take, which the server prepares and runs,
// has no plan: ErrNoPlan, not the server's syntax error alone.
func TestExplainNoPlan(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE p (id int, n int)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"CREATE INDEX IF NOT EXISTS p_n ON p (n)", "SET work_mem = '8MB'", "ANALYZE p"} {
		st, err := c.Prepare(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, analyze := range []bool{false, true} {
			if _, err := c.(driver.Explainer).Explain(ctx, st, nil, analyze); !errors.Is(err, driver.ErrNoPlan) {
				t.Errorf("%s (analyze %v): %v, want ErrNoPlan", q, analyze, err)
			}
		}
		st.Close()
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_indexes WHERE indexname = 'p_n'"); got != 0 {
		t.Errorf("explaining CREATE INDEX made the index")
	}
}

// A reading taken the moment a SQLConn is closed holds all of its work,
// which its backend reports to pg_stat_database only as it exits: each
// of the 20 scans below reads every page of the table, and all but the
// first are still pending in the backend when it is closed (it reports
// at most once a second).
func TestCostsHoldClosedConnections(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE s (id int, body text); INSERT INTO s SELECT g, repeat('x', 500) FROM generate_series(1, 2000) g"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "VACUUM ANALYZE s"); err != nil {
		t.Fatal(err)
	}
	pages := count(t, admin, "SELECT relpages::bigint FROM pg_class WHERE relname = 's'")
	if pages < 100 {
		t.Fatalf("table s has %d pages", pages)
	}
	for round := range 3 {
		before, err := db.Costs(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.SQLConn(ctx, driver.SQLOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Prepare(ctx, "SELECT count(*) FROM s WHERE body <> :v")
		if err != nil {
			t.Fatal(err)
		}
		const scans = 20
		for range scans {
			if _, err := c.Run(ctx, st, []any{"y"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		after, err := db.Costs(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Database.Sub(before.Database)
		if d.LogicalReads < scans*pages || d.Calls < scans {
			t.Errorf("round %d: the reading after Close counts %d pages read and %d commits; the %d scans alone read %d pages", round, d.LogicalReads, d.Calls, scans, scans*pages)
		}
		for _, n := range after.Notes {
			if strings.Contains(n, "still ending") {
				t.Errorf("round %d: %s", round, n)
			}
		}
	}
}

// Every type a SQLConn binds (nil, int64, float64, string, []byte, bool,
// time.Time) is stored as the value it is, by either protocol: bytes that
// are not UTF-8 and hold a backslash reach a bytea whole. The rows read
// back are the same Go values by either protocol (pgx's decoding of the
// text format); a visit that fails stops the visits, and the connection
// runs the next statement.
func TestRunValueTypes(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `CREATE TABLE v (id int8 PRIMARY KEY, f float8, s text, b bytea, ok bool,
		at timestamptz, day date, local timestamp, n numeric, i4 int4, nothing text)`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 16, 30, 1, 123456000, time.FixedZone("x", 3600))
	raw := []byte{0xff, '\\', 0, 'x', 0x80}
	var rows [2][]any
	for k, simple := range []bool{false, true} {
		c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		ins, err := c.Prepare(ctx, "INSERT INTO v VALUES (:id, :f, :s, :b, :ok, :at, :day, :local, :n, :i4, :nothing)")
		if err != nil {
			t.Fatal(err)
		}
		id := int64(k + 1)
		if out, err := c.Run(ctx, ins, []any{id, -1.25e-7, `it's \ "x"`, raw, true, at, at, at, 2.5, int64(7), nil}, nil); err != nil || out.Affected != 1 {
			t.Fatalf("simple=%v insert: %+v, %v", simple, out, err)
		}
		eq := "SELECT count(*) FROM v WHERE id = $1 AND f = $2 AND s = $3 AND b = $4 AND ok AND at = $5 AND day = '2026-11-27' AND n = 2.5 AND i4 = 7 AND nothing IS NULL"
		if !simple {
			// A timestamp without a zone takes the time's wall clock, as
			// pgx binds it; pgx's literal for the simple protocol is
			// the time in UTC instead.
			eq += " AND local = '2026-11-27 16:30:01.123456'"
		}
		if got := count(t, admin, eq, id, -1.25e-7, `it's \ "x"`, raw, at); got != 1 {
			t.Errorf("simple=%v: the row does not hold the values bound", simple)
		}
		sel, err := c.Prepare(ctx, "SELECT id, f, s, b, ok, at, day, local, n, i4, nothing FROM v WHERE id = :id")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(ctx, sel, []any{id}, func(row []any) error { rows[k] = row; return nil }); err != nil {
			t.Fatal(err)
		}
		stop := errors.New("stop")
		visits := 0
		all, err := c.Prepare(ctx, "SELECT g FROM generate_series(1, :n) g")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := c.Run(ctx, all, []any{int64(1000)}, func([]any) error { visits++; return stop }); !errors.Is(err, stop) || visits != 1 {
			t.Errorf("simple=%v: a visit that fails: %+v, %v after %d visits", simple, out, err, visits)
		}
		if out, err := c.Run(ctx, all, []any{int64(3)}, nil); err != nil || out.Rows != 3 {
			t.Errorf("simple=%v: the statement after a failed visit: %+v, %v", simple, out, err)
		}
		c.Close()
	}
	prepared, simple := rows[0], rows[1]
	if len(prepared) != 11 || prepared[0] != int64(1) || prepared[1] != -1.25e-7 || prepared[2] != `it's \ "x"` ||
		!bytes.Equal(prepared[3].([]byte), raw) || prepared[4] != true || !prepared[5].(time.Time).Equal(at) ||
		prepared[9] != int32(7) || prepared[10] != nil {
		t.Errorf("the prepared protocol's row: %#v", prepared)
	}
	simple[0] = int64(1)    // the key differs
	simple[7] = prepared[7] // and pgx's simple literal of a timestamp
	if fmt.Sprintf("%#v", prepared) != fmt.Sprintf("%#v", simple) {
		t.Errorf("the protocols' rows differ:\n%#v\n%#v", prepared, simple)
	}
}

// A prepared statement run on the prepared protocol, its rows not
// visited, allocates nothing: its parameters are encoded into the
// connection's buffers and its context is watched once for many
// statements (wire), which is what keeps `dbprobe stress` at pgbench's
// client CPU.
func TestRunAllocatesNothing(t *testing.T) {
	db, admin := capDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := admin.Exec(ctx, "CREATE TABLE a (id int8 PRIMARY KEY, n int8, s text); INSERT INTO a SELECT g, 0, 'x' FROM generate_series(1, 10) g"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, text := range []string{"SELECT n, s FROM a WHERE id = :id", "UPDATE a SET n = n + 1, s = :s WHERE id = :id"} {
		st, err := c.Prepare(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		args := []any{int64(3)}
		if len(st.Params()) == 2 {
			args = []any{"y", int64(3)}
		}
		var failed error
		run := func() {
			if out, err := c.Run(ctx, st, args, nil); err != nil || out.Rows != 1 && out.Affected != 1 { // the row read or updated
				failed = fmt.Errorf("%+v, %v", out, err)
			}
		}
		run()
		if allocs := testing.AllocsPerRun(200, run); allocs != 0 || failed != nil {
			t.Errorf("%s: %v allocations per Run, want 0 (%v)", text, allocs, failed)
		}
	}
}
