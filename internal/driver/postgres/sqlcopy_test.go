package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestCopiesFromClient(t *testing.T) {
	cases := map[string]bool{
		"COPY t FROM STDIN":                               true,
		"copy t (a, b) from stdin;":                       true,
		"-- load\nCOPY t FROM\n  STDIN WITH (FORMAT csv)": true,
		"/* c */ COPY t FROM stdin":                       true,
		"COPY t FROM '/srv/t.csv'":                        false,
		"COPY t TO STDOUT":                                false,
		"COPY (SELECT 'FROM STDIN') TO STDOUT":            false,
		"SELECT 'COPY t FROM STDIN'":                      false,
		"INSERT INTO t SELECT * FROM stdin":               false,
		"COPY t FROM PROGRAM 'cat /srv/t.csv'":            false,
	}
	for text, want := range cases {
		if got := copiesFromClient(text); got != want {
			t.Errorf("copiesFromClient(%q) = %v, want %v", text, got, want)
		}
	}
}

// A user's statement may be a COPY. COPY … TO STDOUT runs, its rows read
// and counted by its tag; COPY … FROM STDIN, which would wait for rows
// dbprobe does not send, is refused when it is prepared, on either
// protocol, and the connection is still usable afterwards.
func TestSQLConnCopy(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE copy_t (a int)"); err != nil {
		t.Fatal(err)
	}
	for _, simple := range []bool{false, true} {
		c, err := db.SQLConn(ctx, driver.SQLOptions{Simple: simple})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Prepare(ctx, "COPY (SELECT g FROM generate_series(1, 10) g) TO STDOUT")
		if err != nil {
			t.Fatalf("simple=%v: prepare COPY TO STDOUT: %v", simple, err)
		}
		res, err := c.Run(ctx, out, nil, nil)
		if err != nil || res.Affected != 10 {
			t.Errorf("simple=%v: COPY TO STDOUT: %+v, %v; want 10 rows copied", simple, res, err)
		}
		if _, err := c.Prepare(ctx, "copy copy_t from stdin;"); !badinput.Is(err) {
			t.Errorf("simple=%v: COPY FROM STDIN prepared: %v, want bad input", simple, err)
		}
		one, err := c.Prepare(ctx, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Run(ctx, one, nil, nil); err != nil || res.Rows != 1 {
			t.Errorf("simple=%v: the next statement: %+v, %v", simple, res, err)
		}
		c.Close()
	}
}

// Should a COPY … FROM STDIN reach the wire anyway, it is ended with
// CopyFail, in the simple and the extended protocol alike, and the
// connection lives on; the error says what happened rather than the
// server's query_canceled, which would count as a timeout.
func TestWireRefusesCopyIn(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE copy_in (a int)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := c.(*sqlConn).w
	if w == nil {
		t.Fatal("the prepared SQLConn is not on wire")
	}
	w.query("COPY copy_in FROM STDIN")
	if err := w.send(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = w.result()
	if !errors.Is(err, errCopyIn) || driver.Code(classify(err)) != codeCopyIn {
		t.Errorf("simple protocol: %v (code %q), want errCopyIn", err, driver.Code(classify(err)))
	}
	usable(t, w)

	w.parse("", "COPY copy_in FROM STDIN")
	w.bindFormats("", nil, nil)
	if err := w.send(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err = w.result(); !errors.Is(err, errCopyIn) {
		t.Errorf("extended protocol: %v, want errCopyIn", err)
	}
	usable(t, w)
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM copy_in").Scan(&n); err != nil || n != 0 {
		t.Errorf("copy_in holds %d rows (%v), want 0", n, err)
	}
}
