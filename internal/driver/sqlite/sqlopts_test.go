package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// first prepares text on c, runs it once with args and returns the first
// column of its first row.
func first(t *testing.T, c driver.SQLConn, text string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	st, err := c.Prepare(ctx, text)
	if err != nil {
		t.Fatalf("Prepare %s: %v", text, err)
	}
	defer st.Close()
	got := "no row"
	if _, err := c.Run(ctx, st, args, func(row []any) error {
		if got == "no row" {
			got = fmt.Sprintf("%v", row[0])
		}
		return nil
	}); err != nil {
		t.Fatalf("Run %s: %v", text, err)
	}
	return got
}

func TestSQLOptionsRefused(t *testing.T) {
	d, _ := capDB(t)
	c := d.Capabilities()
	for cap, want := range map[driver.Capability]string{
		driver.CapSimpleProtocol: "SQLite has no simple query protocol: " + noSimple,
		driver.CapCosts:          "SQLite has no statement costs: " + noCosts,
	} {
		if err := c.Need(cap); !badinput.Is(err) || err.Error() != want {
			t.Errorf("Need(%s) = %v, want %q", cap, err, want)
		}
	}
	if _, err := d.SQLConn(context.Background(), driver.SQLOptions{Simple: true}); !badinput.Is(err) || !strings.Contains(err.Error(), noSimple) {
		t.Errorf("a simple connection: %v", err)
	}
}

// Setup runs on the connection when it opens, and no later connection of
// the pool has its settings; a fresh connection is a new one each time
// (a TEMP table, which lives as long as its connection, is gone).
func TestSetupAndFresh(t *testing.T) {
	d, _ := capDB(t)
	ctx := context.Background()
	c, err := d.SQLConn(ctx, driver.SQLOptions{Setup: []string{"PRAGMA cache_size = 7", "CREATE TEMP TABLE mark (x)"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := first(t, c, "PRAGMA cache_size"); got != "7" {
		t.Errorf("the setup connection has cache_size %s", got)
	}
	c.Close()
	for range 3 {
		p, err := d.SQLConn(ctx, driver.SQLOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := first(t, p, "PRAGMA cache_size"); got == "7" {
			t.Errorf("a pool connection has the setup's cache_size")
		}
		if got := first(t, p, "SELECT count(*) FROM temp.sqlite_master WHERE name = 'mark'"); got != "0" {
			t.Errorf("a pool connection has the setup's TEMP table")
		}
		p.Close()
	}
	if _, err := d.SQLConn(ctx, driver.SQLOptions{Setup: []string{"PRAGMA nonsense("}}); driver.Code(err) != "1" {
		t.Errorf("a setup statement SQLite refuses: %v (code %q)", err, driver.Code(err))
	}
	for i := range 3 {
		f, err := d.SQLConn(ctx, driver.SQLOptions{Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := first(t, f, "SELECT count(*) FROM temp.sqlite_master WHERE name = 'fresh'"); got != "0" {
			t.Errorf("fresh connection %d has the TEMP table of the one before", i)
		}
		first(t, f, "CREATE TEMP TABLE fresh (x)")
		f.Close()
	}
	if n := d.sqlOpen.Open(); n != 0 {
		t.Errorf("%d fresh connections still open after Close", n)
	}
}

// EXPLAIN QUERY PLAN as the shell shows it; with analyze the same, not
// run: a DELETE leaves its rows.
func TestExplain(t *testing.T) {
	d, other := capDB(t)
	ctx := context.Background()
	if _, err := other.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); CREATE INDEX notes_body ON notes (body); INSERT INTO notes VALUES (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	c, err := d.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x := c.(driver.Explainer)
	sel, err := c.Prepare(ctx, "SELECT id FROM notes WHERE id = :id UNION ALL SELECT id FROM notes WHERE body = :body")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := x.Explain(ctx, sel, []any{1, "b"}, false)
	want := "QUERY PLAN\n`--COMPOUND QUERY\n   |--LEFT-MOST SUBQUERY\n   |  `--SEARCH notes USING INTEGER PRIMARY KEY (rowid=?)\n   `--UNION ALL\n      `--SEARCH notes USING COVERING INDEX notes_body (body=?)"
	if err != nil || plan.How != "EXPLAIN QUERY PLAN" || plan.Text != want {
		t.Errorf("Explain = %v\n%s\n%s\nwant\n%s", err, plan.How, plan.Text, want)
	}
	del, err := c.Prepare(ctx, "DELETE FROM notes WHERE id >= :id")
	if err != nil {
		t.Fatal(err)
	}
	plan, err = x.Explain(ctx, del, []any{2}, true)
	if err != nil || !strings.Contains(plan.How, "SQLite has no ANALYZE") || !strings.Contains(plan.Text, "SEARCH notes") {
		t.Errorf("Explain with analyze = %+v, %v", plan, err)
	}
	if got := count(t, other, "SELECT count(*) FROM notes"); got != 3 {
		t.Errorf("%d rows after a DELETE explained, want 3", got)
	}
}

// TempSetup's pragma sends the connection's temporary files to the
// directory: a TEMP table larger than the page cache spills into a file
// there, which this process holds open (SQLite unlinks it at once).
func TestTempSetup(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to see the process's open files")
	}
	d, _ := capDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	setup, err := d.TempSetup(driver.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The setting is the process's: later tests must not find it
		// naming a directory that is gone.
		c, err := d.SQLConn(ctx, driver.SQLOptions{Setup: []string{"PRAGMA temp_store_directory = ''"}})
		if err != nil {
			t.Errorf("reset temp_store_directory: %v", err)
			return
		}
		c.Close()
	})
	if _, err := d.TempSetup(driver.Location{Dir: filepath.Join(dir, "absent")}); !badinput.Is(err) {
		t.Errorf("a directory that does not exist: %v", err)
	}
	c, err := d.SQLConn(ctx, driver.SQLOptions{Setup: append(setup, "PRAGMA temp_store = FILE", "PRAGMA cache_size = 10")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := first(t, c, "PRAGMA temp_store_directory"); got != dir {
		t.Errorf("temp_store_directory = %q, want %q", got, dir)
	}
	first(t, c, "CREATE TEMP TABLE spill AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000) SELECT x, randomblob(2000) AS b FROM n")
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			in = append(in, target)
		}
	}
	if len(in) == 0 {
		t.Errorf("no file of this process is in %s after a TEMP table spilled", dir)
	}
	// A second connection with the same setup changes nothing.
	c2, err := d.SQLConn(ctx, driver.SQLOptions{Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
}

// TablePath is the database file, absolute, which exists.
func TestTablePath(t *testing.T) {
	d, _ := capDB(t)
	ctx := context.Background()
	tbl := driver.DataTable{Name: "located", PayloadBytes: 10}
	if err := d.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	path, err := d.TablePath(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if path != d.file || !filepath.IsAbs(path) {
		t.Errorf("TablePath = %q, the database is %q", path, d.file)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	if _, err := d.TablePath(ctx, driver.DataTable{Name: "absent", PayloadBytes: 10}); !badinput.Is(err) {
		t.Errorf("a missing table: %v", err)
	}
}
