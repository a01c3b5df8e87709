package sqlserver

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// TestDeclarationsSent runs every statement path of a session against the
// fake server with keys of 22 to 24 bytes and values of varying length,
// and reads the declarations go-mssqldb sent with each sp_executesql: one
// list per statement text (SQL Server caches a plan per text and list, so
// a list per value length compiled a plan per call), at the columns'
// declared lengths.
func TestDeclarationsSent(t *testing.T) {
	for _, delayed := range []bool{false, true} {
		t.Run(fmt.Sprintf("delayed=%v", delayed), func(t *testing.T) {
			f := newFakeServer(t)
			f.answer = func(call rpcCall) []byte {
				if strings.Contains(call.text(0), "SELECT @rows") {
					return intRow(1) // the delayed transaction's row count
				}
				return nil
			}
			opts := dbdriver.Options{Sessions: 1}
			if delayed {
				opts.Durability, opts.DurabilityScope = dbdriver.DurabilityDelayed, dbdriver.ScopeTransaction
			}
			db := f.db(opts)
			tbl := testTable(10)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sess, err := db.Session(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()

			values := func(n, length int) [][]byte {
				out := make([][]byte, n)
				for i := range out {
					out[i] = bytes.Repeat([]byte{'v'}, length-i%7)
				}
				return out
			}
			read := values(10, 100)
			var keys [][]byte
			var rows [][][]byte
			for i := range 400 {
				keys = append(keys, []byte(fmt.Sprintf("user%0*d", 18+i%3, i))) // 22, 23 and 24 bytes
				rows = append(rows, values(10, 100-i%40))
			}
			for i, key := range keys[:6] {
				length := 60 + 7*i
				for _, err := range []error{
					sess.Update(ctx, key, []int{3}, values(1, length)),
					sess.Update(ctx, key, nil, values(10, length)),
					sess.Insert(ctx, key, values(10, length)),
					sess.Delete(ctx, key),
				} {
					if err != nil && err != dbdriver.ErrNotFound {
						t.Fatal(err)
					}
				}
				if !delayed {
					if err := sess.Read(ctx, key, nil, read); err != dbdriver.ErrNotFound {
						t.Fatalf("Read: %v", err)
					}
					if _, err := sess.Scan(ctx, key, 10+i, []int{1, 2}, nil); err != nil {
						t.Fatalf("Scan: %v", err)
					}
				}
			}
			// A batch of 400: two full chunks of 190 (2,090 parameters) and
			// one of 20; then one of 100 in a single statement.
			if err := sess.InsertBatch(ctx, keys, rows); err != nil {
				t.Fatalf("InsertBatch: %v", err)
			}
			if err := sess.InsertBatch(ctx, keys[:100], rows[:100]); err != nil {
				t.Fatalf("InsertBatch: %v", err)
			}

			declsOf := map[string]map[string]bool{}
			for _, e := range f.executed() {
				if declsOf[e[0]] == nil {
					declsOf[e[0]] = map[string]bool{}
				}
				declsOf[e[0]][e[1]] = true
			}
			if len(declsOf) == 0 {
				t.Fatal("no sp_executesql reached the server")
			}
			one := regexp.MustCompile(`^@p(\d+) (VARBINARY\(255\)|VARBINARY\(100\)|BIGINT)$`)
			for text, lists := range declsOf {
				short := text[:min(len(text), 60)]
				if len(lists) != 1 {
					var seen []string
					for l := range lists {
						seen = append(seen, l[:min(len(l), 50)])
					}
					t.Errorf("%s…: %d declaration lists (%q…): a plan each", short, len(lists), seen)
					continue
				}
				for list := range lists {
					for i, d := range strings.Split(list, ", ") {
						m := one.FindStringSubmatch(d)
						if m == nil || m[1] != fmt.Sprint(i+1) {
							t.Errorf("%s…: declaration %d is %q…, want @p%d at a column's type", short, i+1, d[:min(len(d), 60)], i+1)
							break
						}
					}
					if n := strings.Count(text, "@p"); !strings.Contains(list, fmt.Sprintf("@p%d ", n)) && n > 0 && !strings.Contains(text, "@rows") {
						t.Errorf("%s…: the text has %d parameter markers, the list %q does not reach @p%d", short, n, list[:min(len(list), 40)], n)
					}
				}
			}
			// The statements named: the key at its column's type, the full
			// batch chunk with all 2,090 declarations.
			d := newDialect("dbo", tbl)
			named := map[string]string{d.insert(190): d.insertParams(190).decls}
			if delayed {
				named[delayedWrite(d.update([]int{3}))] = "@p1 VARBINARY(100), @p2 VARBINARY(255)"
				named[delayedWrite(d.delete())] = "@p1 VARBINARY(255)"
			} else {
				named[d.read(nil)] = "@p1 VARBINARY(255)"
				named[d.scan([]int{1, 2})] = "@p1 VARBINARY(255), @p2 BIGINT"
				named[d.update([]int{3})] = "@p1 VARBINARY(100), @p2 VARBINARY(255)"
				named[d.delete()] = "@p1 VARBINARY(255)"
			}
			for text, want := range named {
				lists := declsOf[text]
				if !lists[want] || len(lists) != 1 {
					t.Errorf("%s…: declarations %v, want only %q", text[:min(len(text), 40)], keysOf(lists), want[:min(len(want), 60)])
				}
			}
			if got := strings.Count(d.insertParams(190).decls, "@p"); got != 2090 {
				t.Errorf("a full chunk declares %d parameters, want 2090", got)
			}
		})
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k[:min(len(k), 60)])
	}
	return out
}

// TestValueLongerThanColumn: a value longer than its column is refused
// before it is sent, since sp_executesql would cut it to the declared
// length (a key cut short names another row).
func TestValueLongerThanColumn(t *testing.T) {
	f := newFakeServer(t)
	db := f.db(dbdriver.Options{Sessions: 1})
	ctx := context.Background()
	sess, err := db.Session(ctx, testTable(2))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	long := bytes.Repeat([]byte{'k'}, 256)
	for name, err := range map[string]error{
		"read":   sess.Read(ctx, long, nil, make([][]byte, 2)),
		"update": sess.Update(ctx, []byte("user1"), []int{0}, [][]byte{bytes.Repeat([]byte{'v'}, 101)}),
		"insert": sess.Insert(ctx, long, [][]byte{{'a'}, {'b'}}),
	} {
		if err == nil || !strings.Contains(err.Error(), "is longer than its column's") {
			t.Errorf("%s: %v, want a refusal of the long value", name, err)
		}
	}
	if n := len(f.executed()); n != 0 {
		t.Errorf("%d statements were sent with values too long", n)
	}
}
