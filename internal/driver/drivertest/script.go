package drivertest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// RunScript cuts script with r's SplitScript, checks the statements start
// on lines, then prepares and runs each in order on one new SQLConn, as
// the stress command runs a user's setup script. It returns the first
// value of the last row the script returned, as text.
func RunScript(t *testing.T, r driver.SQLRunner, script string, lines []int) string {
	t.Helper()
	stmts, err := r.SplitScript(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != len(lines) {
		t.Fatalf("%d statements, want %d: %+v", len(stmts), len(lines), stmts)
	}
	ctx := context.Background()
	c, err := r.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last string
	for i, s := range stmts {
		if s.Line != lines[i] {
			t.Errorf("statement %d on line %d, want %d: %q", i+1, s.Line, lines[i], s.Text)
		}
		st, err := c.Prepare(ctx, s.Text)
		if err != nil {
			t.Fatalf("line %d: prepare %q: %v", s.Line, s.Text, err)
		}
		if _, err := c.Run(ctx, st, nil, func(row []any) error {
			last = text(row[0])
			return nil
		}); err != nil {
			t.Fatalf("line %d: run %q: %v", s.Line, s.Text, err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

// text renders a value a script returned; bytes are shown as the text
// they hold because MySQL returns a DECIMAL that way.
func text(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// ScriptRefused checks that r's SplitScript refuses script, which leaves
// what open, as bad input naming line.
func ScriptRefused(t *testing.T, r driver.SQLRunner, script, what string, line int) {
	t.Helper()
	want := fmt.Sprintf("line %d", line)
	if _, err := r.SplitScript(script); !badinput.Is(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want bad input naming %s", what, err, want)
	}
}

// RawRows checks that r's connections, made with each of opts, are
// driver.RawRunners whose RunRaw hands over the rows Run does, each value
// as its text (nil for NULL): query returns rows of a text, a NULL and a
// number.
func RawRows(t *testing.T, r driver.SQLRunner, query string, opts ...driver.SQLOptions) {
	t.Helper()
	ctx := context.Background()
	for _, o := range opts {
		c, err := r.SQLConn(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := c.(driver.RawRunner)
		if !ok {
			c.Close()
			t.Fatalf("%+v: %T is no driver.RawRunner", o, c)
		}
		st, err := c.Prepare(ctx, query)
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		var want, got [][]string
		if _, err := c.Run(ctx, st, nil, func(row []any) error {
			var r []string
			for _, v := range row {
				if v == nil {
					r = append(r, "NULL")
				} else {
					r = append(r, text(v))
				}
			}
			want = append(want, r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out, err := raw.RunRaw(ctx, st, nil, func(row [][]byte) error {
			var r []string
			for _, v := range row {
				if v == nil {
					r = append(r, "NULL")
				} else {
					r = append(r, string(v))
				}
			}
			got = append(got, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || out.Rows != int64(len(want)) || len(want) == 0 {
			t.Errorf("%+v: RunRaw gave %d rows %q, Run %q", o, out.Rows, got, want)
		}
		st.Close()
		c.Close()
	}
}
