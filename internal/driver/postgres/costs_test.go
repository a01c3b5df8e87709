package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// withStatements creates pg_stat_statements in the test's database, and
// skips (fails under CI) when the server has not loaded it
// (scripts/lib/postgres.sh preloads it).
func withStatements(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	// The view refuses to be read when the library is not loaded.
	if _, err := admin.Exec(ctx, "SELECT count(*) FROM pg_stat_statements"); err != nil {
		if testdb.InCI() {
			t.Fatalf("pg_stat_statements: %v", err)
		}
		t.Skipf("the test server has not loaded pg_stat_statements (%v): start it with shared_preload_libraries = 'pg_stat_statements'", err)
	}
}

// Each statement's counts from pg_stat_statements are the Runs the test
// made, by the prepared and the simple protocol, and the whole database's
// from pg_stat_database hold at least as much.
func TestCosts(t *testing.T) {
	db, admin := capDB(t)
	withStatements(t, admin)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE c (id int PRIMARY KEY, body text); INSERT INTO c SELECT g, 'row' FROM generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"INSERT INTO c (id, body) VALUES (:id, :body)",
		// No constant of its own: by the simple protocol, a constant
		// would be numbered among the values and the entry not found.
		"SELECT body FROM c WHERE id BETWEEN :lo AND :hi",
		"UPDATE c SET body = 'never run' WHERE id = :id",
	}
	before, err := db.Costs(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if before.Source != "pg_stat_statements; pg_stat_database" || len(before.Statements) != 3 || before.PageBytes != count(t, admin, "SELECT current_setting('block_size')::bigint") {
		t.Fatalf("Costs = %+v", before)
	}
	for _, note := range before.Notes {
		if strings.Contains(note, "pg_stat_statements") {
			t.Errorf("a note on pg_stat_statements where it works: %s", note)
		}
	}

	for _, simple := range []bool{false, true} {
		c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		ins, err := c.Prepare(ctx, texts[0])
		if err != nil {
			t.Fatal(err)
		}
		sel, err := c.Prepare(ctx, texts[1])
		if err != nil {
			t.Fatal(err)
		}
		base := int64(2000)
		if simple {
			base = 3000
		}
		for i := range int64(7) {
			if _, err := c.Run(ctx, ins, []any{base + i, "new"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := range int64(5) {
			if out, err := c.Run(ctx, sel, []any{1 + 100*i, 10 + 100*i}, nil); err != nil || out.Rows != 10 {
				t.Fatalf("select: %+v, %v", out, err)
			}
		}
		c.Close()
	}
	after, err := db.Costs(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ins, sel, never := after.Statements[0].Sub(before.Statements[0]), after.Statements[1].Sub(before.Statements[1]), after.Statements[2].Sub(before.Statements[2])
	if ins.Calls != 14 || ins.Rows != 14 || ins.LogicalReads <= 0 || ins.Elapsed <= 0 || ins.CPU != driver.Unknown {
		t.Errorf("the insert, 7 runs of each protocol: %+v", ins)
	}
	if sel.Calls != 10 || sel.Rows != 100 || sel.LogicalReads < 10 || sel.PhysicalReads < 0 || sel.PhysicalReads > sel.LogicalReads {
		t.Errorf("the select, 5 runs of each protocol of 10 rows each: %+v", sel)
	}
	if t.Failed() {
		logStatements(t, admin)
	}
	if never.Calls != 0 || never.LogicalReads != 0 || never.Rows != 0 {
		t.Errorf("a statement that never ran: %+v", never)
	}

	// pg_stat_database counts a backend's work when it reports: the two
	// connections' closing reports theirs.
	deadline := time.Now().Add(15 * time.Second)
	for {
		after, err = db.Costs(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Database.Sub(before.Database)
		if d.Calls >= 24 && d.LogicalReads >= ins.LogicalReads+sel.LogicalReads && d.RowsExamined >= 100 && d.Elapsed > 0 && d.Rows == driver.Unknown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database's figures over 24 transactions: %+v (statements' logical reads %d)", d, ins.LogicalReads+sel.LogicalReads)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Without pg_stat_statements in the database the whole database's figures
// are still read, every statement's are unknown, and a note says what to
// do.
func TestCostsWithoutStatements(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	var database string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	got, err := db.Costs(ctx, []string{"SELECT :a", "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "pg_stat_database" || len(got.Statements) != 2 || got.Statements[0] != driver.UnknownCost || got.Statements[1] != driver.UnknownCost {
		t.Errorf("Costs = %+v", got)
	}
	if got.Database.Calls <= 0 || got.Database.LogicalReads <= 0 || got.PageBytes != 8192 {
		t.Errorf("the database's figures: %+v, page %d", got.Database, got.PageBytes)
	}
	notes := strings.Join(got.Notes, "\n")
	if !strings.Contains(notes, "CREATE EXTENSION pg_stat_statements in database "+database) {
		t.Errorf("the notes do not say to create the extension:\n%s", notes)
	}
}

// Each state of pg_stat_statements has its own note.
func TestStatementsNote(t *testing.T) {
	for _, tc := range []struct {
		nsp              string
		loaded, avail    bool
		track, want, not string
	}{
		{"public", true, true, "top", "", ""},
		{"", true, true, "top", "loaded but not created in database db (per-statement costs are unknown): CREATE EXTENSION pg_stat_statements in database db", "shared_preload_libraries"},
		{"public", false, true, "", "created in database db but its library is not loaded (per-statement costs are unknown): add pg_stat_statements to shared_preload_libraries", "CREATE EXTENSION"},
		{"", false, true, "", "neither loaded nor created (per-statement costs are unknown): add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart the server, then CREATE EXTENSION pg_stat_statements in database db", ""},
		{"", false, false, "", "not installed on the server", ""},
		{"public", true, true, "none", "pg_stat_statements.track is none", ""},
	} {
		got := statementsNote(tc.nsp, tc.loaded, tc.avail, tc.track, "db")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("statementsNote(%q, loaded %v, available %v, track %q) = %q, want %q", tc.nsp, tc.loaded, tc.avail, tc.track, got, tc.want)
		}
	}
}

// simpleText is what pg_stat_statements records for a statement run by
// the simple protocol.
func TestSimpleText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"INSERT INTO c (id, body) VALUES (:id, :body)", "INSERT INTO c (id, body) VALUES ( $1 ,  $2 )"},
		{"  SELECT :a ;\n", "SELECT  $1"},
		{"SELECT :a::int, ':b' -- :c", "SELECT  $1 ::int, ':b' -- :c"},
		{"SELECT 1 WHERE :x = :x", "SELECT 1 WHERE  $1  =  $2"},
	} {
		got, err := simpleText(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("simpleText(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// logStatements logs the entries of pg_stat_statements of the test's
// database, to see why one was not found.
func logStatements(t *testing.T, admin *pgx.Conn) {
	rows, err := admin.Query(context.Background(), "SELECT queryid, calls, query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id, calls int64
		var query string
		if err := rows.Scan(&id, &calls, &query); err == nil {
			t.Logf("%d calls %d: %q", id, calls, query)
		}
	}
}

// A statement whose entry was recorded under another text (here first
// prepared by SQL PREPARE, which records the PREPARE) is found by its
// queryid.
func TestCostsByQueryID(t *testing.T) {
	db, admin := capDB(t)
	withStatements(t, admin)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE q (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "PREPARE p AS SELECT id FROM q WHERE id = $1; EXECUTE p(1)"); err != nil {
		t.Fatal(err)
	}
	text := "SELECT id FROM q WHERE id = :id"
	before, err := db.Costs(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	if before.Statements[0].Calls != 1 {
		logStatements(t, admin)
		t.Fatalf("before: %+v, want the one EXECUTE", before.Statements[0])
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Prepare(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Run(ctx, st, []any{int64(1)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	after, err := db.Costs(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Statements[0].Sub(before.Statements[0]); d.Calls != 3 {
		logStatements(t, admin)
		t.Errorf("3 runs counted as %+v", d)
	}
}
