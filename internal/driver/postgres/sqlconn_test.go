package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

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
