package mysql

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// Exec runs by the text protocol what the server will not prepare (a
// trigger with a BEGIN … END body), and Run names the columns of a
// statement's rows as the server does (the expression's text for one
// without an alias), by either protocol.
func TestExecAndColumns(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(10)); "); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE TABLE hits (n INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("INSERT INTO k VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	trigger := "CREATE TRIGGER k_count AFTER UPDATE ON k FOR EACH ROW BEGIN UPDATE hits SET n = n + 1; END"
	if _, err := c.Prepare(ctx, trigger); err == nil {
		t.Log("the server prepared CREATE TRIGGER; Exec is not needed for it here")
	}
	ex := c.(driver.Execer)
	for _, q := range []string{"INSERT INTO hits VALUES (0)", trigger} {
		if _, err := ex.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	out, err := ex.Exec(ctx, "UPDATE k SET v = CONCAT(v, 'x')")
	if err != nil || out.Affected != 2 {
		t.Fatalf("UPDATE: %+v, %v", out, err)
	}
	if got := runOne(t, c, "SELECT CAST(n AS CHAR) FROM hits"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("the trigger counted %v updates, want 2", got)
	}
	out, err = ex.Exec(ctx, "SELECT id AS `key` FROM k")
	if err != nil || out.Rows != 2 || !slices.Equal(out.Columns, []string{"key"}) {
		t.Errorf("a SELECT of 2 rows: %+v, %v", out, err)
	}

	for _, simple := range []bool{false, true} {
		sc, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		st, err := sc.Prepare(ctx, "SELECT id, v AS name, id + 1 FROM k WHERE id >= :lo")
		if err != nil {
			t.Fatal(err)
		}
		out, err := sc.Run(ctx, st, []any{int64(1)}, nil)
		if want := []string{"id", "name", "id + 1"}; err != nil || !slices.Equal(out.Columns, want) {
			t.Errorf("simple=%v: Columns %q (%v), want %q", simple, out.Columns, err, want)
		}
		st.Close()
		sc.Close()
	}
}

// A statement EXPLAIN does not take, which the server prepares, has no
// plan: ErrNoPlan, with analyze or without.
func TestExplainNoPlan(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE p (id INT, n INT)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Prepare(ctx, "CREATE INDEX p_n ON p (n)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, analyze := range []bool{false, true} {
		if _, err := c.(driver.Explainer).Explain(ctx, st, nil, analyze); !errors.Is(err, driver.ErrNoPlan) {
			t.Errorf("analyze %v: %v, want ErrNoPlan", analyze, err)
		}
	}
}
