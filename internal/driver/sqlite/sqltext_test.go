package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Run names the columns of a statement's rows as SQLite does (the
// expression's text for one without an alias); Exec runs what it is
// given, a trigger's body included, and refuses parameters.
func TestColumnsAndExec(t *testing.T) {
	d, _ := capDB(t)
	ctx := context.Background()
	c, err := d.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex := c.(driver.Execer)
	for _, q := range []string{
		"CREATE TABLE k (id INTEGER PRIMARY KEY, v TEXT)",
		"CREATE TABLE hits (n INTEGER NOT NULL)",
		"INSERT INTO hits VALUES (0)",
		"CREATE TRIGGER k_count AFTER UPDATE ON k BEGIN UPDATE hits SET n = n + 1; END",
	} {
		if _, err := ex.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	out, err := ex.Exec(ctx, "INSERT INTO k (id, v) VALUES (1, 'a'), (2, 'b')")
	if err != nil || out.Affected != 2 || out.Columns != nil {
		t.Errorf("an INSERT of 2 rows: %+v, %v", out, err)
	}
	if _, err := ex.Exec(ctx, "UPDATE k SET v = v || 'x'"); err != nil {
		t.Fatal(err)
	}
	if got := first(t, c, "SELECT n FROM hits"); got != "2" {
		t.Errorf("the trigger counted %s updates, want 2", got)
	}
	out, err = ex.Exec(ctx, "SELECT id AS key FROM k")
	if err != nil || out.Rows != 2 || !slices.Equal(out.Columns, []string{"key"}) {
		t.Errorf("a SELECT of 2 rows: %+v, %v", out, err)
	}
	if _, err := ex.Exec(ctx, "DELETE FROM k WHERE id = :id"); !badinput.Is(err) || !strings.Contains(err.Error(), ":id") {
		t.Errorf("a parameter: %v, want bad input naming it", err)
	}

	for _, tc := range []struct {
		text string
		want []string
	}{
		{"SELECT id, v AS name, id + 1 FROM k WHERE id >= :lo", []string{"id", "name", "id + 1"}},
		{"SELECT id FROM k WHERE id > :lo + 100", []string{"id"}},
		{"UPDATE k SET v = v WHERE id = :lo", nil},
	} {
		st, err := c.Prepare(ctx, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second run's columns are the first's, kept
			out, err := c.Run(ctx, st, []any{int64(1)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Columns, tc.want) {
				t.Errorf("%s: Columns %q, want %q", tc.text, out.Columns, tc.want)
			}
		}
		st.Close()
	}
}

// A statement of comments alone, which a script split keeps when it is a
// hint or an executable comment, is refused before go-sqlite3 sees it:
// it prepares such text as no statement, and running that crashes the
// process.
func TestCommentsOnlyRefused(t *testing.T) {
	d, _ := capDB(t)
	ctx := context.Background()
	c, err := d.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, text := range []string{"/*+ hint */", "/*! SET NAMES utf8 */", "-- x\n/*+ y */"} {
		if _, err := c.Prepare(ctx, text); !badinput.Is(err) || !strings.Contains(err.Error(), "only comments") {
			t.Errorf("Prepare %q: %v, want bad input", text, err)
		}
		if _, err := c.(driver.Execer).Exec(ctx, text); !badinput.Is(err) {
			t.Errorf("Exec %q: %v, want bad input", text, err)
		}
	}
	if got := first(t, c, "/*+ hint */ SELECT 7"); got != "7" {
		t.Errorf("a statement after a hint: %s", got)
	}
}
