package mysql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// runOne prepares text on c, runs it once with args and returns the first
// column of its rows.
func runOne(t *testing.T, c driver.SQLConn, text string, args ...any) []string {
	t.Helper()
	ctx := context.Background()
	st, err := c.Prepare(ctx, text)
	if err != nil {
		t.Fatalf("Prepare %s: %v", text, err)
	}
	defer st.Close()
	var got []string
	if _, err := c.Run(ctx, st, args, func(row []any) error {
		got = append(got, fmt.Sprintf("%s", row[0]))
		return nil
	}); err != nil {
		t.Fatalf("Run %s: %v", text, err)
	}
	return got
}

// threadID is the connection's CONNECTION_ID().
func threadID(t *testing.T, c driver.SQLConn) string {
	t.Helper()
	return runOne(t, c, "SELECT CONNECTION_ID()")[0]
}

// The simple protocol sends text, parameters put in by go-sql-driver: the
// value stays a value, and the server prepared nothing on the connection.
func TestSimpleProtocol(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evil := "'); DROP TABLE notes; --"
	ins, err := c.Prepare(ctx, "INSERT INTO notes (id, body) VALUES (:id, :body)")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if out, err := c.Run(ctx, ins, []any{i, evil}, nil); err != nil || out.Affected != 1 {
			t.Fatalf("insert %d: %+v, %v", i, out, err)
		}
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM notes WHERE body = ?", evil); got != 3 {
		t.Errorf("%d rows hold the value as text, want 3", got)
	}
	status := runOne(t, c, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'")
	if status[0] != "0" {
		t.Errorf("the simple connection executed %v prepared statements, want 0", status)
	}
	// The prepared protocol, for contrast, executes on the server.
	p, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	runOne(t, p, "SELECT body FROM notes WHERE id = :id", 1)
	if got := runOne(t, p, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'"); got[0] == "0" {
		t.Errorf("the prepared connection executed no prepared statement")
	}
}

// Setup runs on the connection when it opens; the connection is closed,
// never pooled, so that its settings reach no later connection. A fresh
// connection is a new thread each time, gone when closed.
func TestSetupAndFresh(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	open := func(id string) bool {
		return count(t, admin, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id) > 0
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{Setup: []string{"SET SESSION sql_mode = 'ANSI_QUOTES'", "SET @dbprobe_mark = 42"}})
	if err != nil {
		t.Fatal(err)
	}
	setupID := threadID(t, c)
	if got := runOne(t, c, "SELECT CONCAT(@@SESSION.sql_mode, ' ', @dbprobe_mark)"); got[0] != "ANSI_QUOTES 42" {
		t.Errorf("the setup connection has %q", got[0])
	}
	c.Close()
	if open(setupID) {
		t.Errorf("the setup connection %s is still open after Close", setupID)
	}
	for range 3 {
		p, err := db.SQLConn(ctx, driver.SQLOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := runOne(t, p, "SELECT CONCAT(@@SESSION.sql_mode, ' ', IFNULL(@dbprobe_mark, 'unset'))"); strings.Contains(got[0], "ANSI_QUOTES") || !strings.HasSuffix(got[0], "unset") {
			t.Errorf("a pool connection (%s) has the setup's session: %q", threadID(t, p), got[0])
		}
		p.Close()
	}
	if _, err := db.SQLConn(ctx, driver.SQLOptions{Setup: []string{"SET SESSION nonsense_variable = 1"}}); driver.Code(err) != "1193" {
		t.Errorf("a setup statement the server refuses: %v (code %q), want 1193", err, driver.Code(err))
	}

	seen := map[string]bool{}
	for i := range 3 {
		f, err := db.SQLConn(ctx, driver.SQLOptions{Fresh: true, Simple: i == 2})
		if err != nil {
			t.Fatal(err)
		}
		id := threadID(t, f)
		if seen[id] {
			t.Errorf("fresh connection %d has thread %s again", i, id)
		}
		seen[id] = true
		f.Close()
		if open(id) {
			t.Errorf("fresh connection %d (thread %s) is still open after Close", i, id)
		}
	}
}

// A plan without analyze does not run the statement; with analyze
// (MariaDB's ANALYZE) it runs inside a transaction rolled back, so that a
// DELETE analyzed leaves its rows.
func TestExplain(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("INSERT INTO notes VALUES (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	for _, simple := range []bool{false, true} {
		c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := c.Prepare(ctx, "SELECT body FROM notes WHERE id > :id")
		if err != nil {
			t.Fatal(err)
		}
		x := c.(driver.Explainer)
		plan, err := x.Explain(ctx, sel, []any{1}, false)
		if err != nil || plan.How != "EXPLAIN" || !strings.Contains(plan.Text, "notes") || !strings.Contains(plan.Text, "possible_keys") {
			t.Errorf("simple %v: Explain = %+v, %v", simple, plan, err)
		}
		del, err := c.Prepare(ctx, "DELETE FROM notes WHERE id >= :id")
		if err != nil {
			t.Fatal(err)
		}
		plan, err = x.Explain(ctx, del, []any{2}, true)
		if err != nil {
			t.Fatalf("simple %v: Explain with analyze: %v", simple, err)
		}
		t.Logf("simple %v: %s\n%s", simple, plan.How, plan.Text)
		if db.mariaDB && (!strings.HasPrefix(plan.How, "ANALYZE (run once inside a transaction rolled back") || !strings.Contains(plan.Text, "r_rows")) {
			t.Errorf("simple %v: a DELETE analyzed: %+v", simple, plan)
		}
		if got := count(t, admin, "SELECT COUNT(*) FROM notes"); got != 3 {
			t.Fatalf("simple %v: %d rows after a DELETE analyzed, want 3", simple, got)
		}
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Explain(ctx, del, []any{2}, true); err == nil {
			t.Errorf("simple %v: Explain with analyze inside an open transaction was not refused", simple)
		}
		if _, err := x.Explain(ctx, sel, []any{2}, false); err != nil {
			t.Errorf("simple %v: Explain inside a transaction: %v", simple, err)
		}
		if err := c.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// The server's digests count each statement as often as it ran by the
// simple protocol; MariaDB counts none of its runs as a prepared
// statement (preparedNote), MySQL all of them.
func TestCosts(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT, n INT NOT NULL DEFAULT 0)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("INSERT INTO notes (id, body) VALUES (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"SELECT body FROM notes WHERE id = :id",
		"UPDATE notes SET n = n + 1, body = CONCAT(:body, 'x') WHERE id IN (:a, :b)",
		"SELECT body FROM notes WHERE id <> :id ORDER BY id -- never run",
	}
	before, err := db.Costs(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before: %+v", before)
	simple, err := db.SQLConn(ctx, driver.SQLOptions{Simple: true})
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close()
	prepared, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close()
	run := func(c driver.SQLConn, text string, n int, args ...any) {
		st, err := c.Prepare(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := c.Run(ctx, st, args, nil); err != nil {
				t.Fatal(err)
			}
		}
		// The prepared statement stays open until the connection closes,
		// as the stress experiment's do while it reads the costs.
	}
	run(simple, texts[0], 7, 1)
	run(prepared, texts[0], 5, 2)
	run(simple, texts[1], 3, "it's", 1, 2)
	run(prepared, texts[1], 2, "v", 3, 99)
	after, err := db.Costs(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after: %+v", after)
	want := []struct{ calls, rows int64 }{{12, 12}, {5, 3*2 + 2*1}, {0, 0}}
	if db.mariaDB {
		want = []struct{ calls, rows int64 }{{7, 7}, {3, 3 * 2}, {0, 0}}
	}
	for i, want := range want {
		d := after.Statements[i].Sub(before.Statements[i])
		if d.Calls != want.calls || d.Rows != want.rows {
			t.Errorf("statement %d: %+v, want %d calls and %d rows", i+1, d, want.calls, want.rows)
		}
		if want.calls > 0 && (d.Elapsed <= 0 || d.RowsExamined < want.rows) {
			t.Errorf("statement %d: no time or no rows examined: %+v", i+1, d)
		}
		if d.LogicalReads != driver.Unknown {
			t.Errorf("statement %d: logical reads %d, which MySQL does not count per statement", i+1, d.LogicalReads)
		}
	}
	db0 := after.Database.Sub(before.Database)
	if db0.LogicalReads <= 0 || db0.Calls < 17 || db0.RowsExamined < 12 || after.PageBytes != 16384 && after.PageBytes != 4096 && after.PageBytes < 4096 {
		t.Errorf("database: %+v, page %d bytes", db0, after.PageBytes)
	}
	if !strings.Contains(after.Source, "events_statements_summary_by_digest") {
		t.Errorf("Source = %q", after.Source)
	}
}

// A server with performance_schema off (MariaDB's default) still has the
// database's figures; the statements' are unknown, and the notes say how
// to turn it on. The server is a second throwaway one of this test's.
func TestCostsWithoutPerformanceSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, instance.MariaDB, instance.Options{Settings: map[string]string{"performance_schema": "OFF"}})
	if errors.Is(err, instance.ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := Driver{}.Open(ctx, target(t, s.URL(), ""), driver.Options{Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	costs, err := d.(*DB).Costs(ctx, []string{"SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if costs.Statements[0] != driver.UnknownCost || costs.Database.LogicalReads <= 0 || costs.Database.Calls == driver.Unknown {
		t.Errorf("Costs = %+v", costs)
	}
	if len(costs.Notes) != 1 || costs.Notes[0] != psOffNote {
		t.Errorf("Notes = %q", costs.Notes)
	}
}

// TablePath is the table's .ibd file, which is on disk.
func TestTablePath(t *testing.T) {
	db, _ := capDB(t)
	ctx := context.Background()
	tbl := driver.DataTable{Name: "located", PayloadBytes: 10}
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	path, err := db.TablePath(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, "/located.ibd") || !strings.HasPrefix(path, "/") {
		t.Errorf("TablePath = %q", path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the table's file: %v", err)
	}
	if _, err := db.TablePath(ctx, driver.DataTable{Name: "absent", PayloadBytes: 10}); err == nil {
		t.Errorf("TablePath of a missing table: no error")
	}
}

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"8.0.18": true, "8.0.17": false, "8.0.36-log": true, "8.4.0": true, "5.7.44": false, "9": true, "8": false, "10.11.19-MariaDB": true} {
		if got := versionAtLeast(v, 8, 0, 18); got != want {
			t.Errorf("versionAtLeast(%q, 8.0.18) = %v", v, got)
		}
	}
}
