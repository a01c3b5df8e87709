package stress

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// expected is what the OLTP mix should do, worked out here from the
// issue's rule on its own, iteration by iteration: how many statements
// of each kind, and how many of them find a row of a table of ids
// 1…rows, given that INSERTs add ids below 1 and that no DELETE takes a
// row a SELECT or UPDATE wants (their ids differ in parity).
type expected struct {
	runs, hits map[string]int64
}

func expect(rows, threads, perThread int64) expected {
	e := expected{runs: map[string]int64{}, hits: map[string]int64{}}
	present := func(id int64) bool { return id >= 1 && id <= rows }
	deleted := map[int64]bool{}
	for t := int64(0); t < threads; t++ {
		for i := t * perThread; i < (t+1)*perThread; i++ {
			var kind string
			var id int64
			switch {
			case i%4 == 0:
				kind, id = "SELECT", 10*i
			case i%3 == 0:
				kind = "INSERT"
			case i%2 == 0:
				kind, id = "UPDATE", 6*i
			default:
				kind, id = "DELETE", 3*i
			}
			e.runs[kind]++
			switch {
			case kind == "INSERT":
				e.hits[kind]++
			case present(id) && !deleted[id]:
				e.hits[kind]++
				if kind == "DELETE" {
					deleted[id] = true
				}
			}
		}
	}
	return e
}

// oltpCounts, which the header's forecast uses, agrees with the rule
// worked out iteration by iteration, over ranges that start and end
// anywhere in the pattern's cycle.
func TestOLTPCounts(t *testing.T) {
	for _, tc := range []struct{ lo, hi, rows int64 }{
		{0, 0, 10}, {0, 99, 100}, {1, 1, 5}, {5, 137, 1000}, {1000, 1999, 1000}, {7, 6, 10}, {0, 11, 0}, {3, 1234, 2500},
	} {
		e := expectRange(tc.rows, tc.lo, tc.hi)
		runs, hits := oltpCounts(tc.lo, tc.hi, tc.rows)
		for k, name := range oltpKindNames {
			if runs[k] != e.runs[name] || hits[k] != e.hits[name] {
				t.Errorf("oltpCounts(%d, %d, %d) %s: %d runs, %d hits; want %d, %d", tc.lo, tc.hi, tc.rows, name, runs[k], hits[k], e.runs[name], e.hits[name])
			}
		}
	}
}

// expectRange is expect for the iterations lo…hi.
func expectRange(rows, lo, hi int64) expected {
	e := expected{runs: map[string]int64{}, hits: map[string]int64{}}
	if hi < lo {
		return e
	}
	whole := expect(rows, 1, hi+1)
	head := expect(rows, 1, lo)
	for _, k := range oltpKindNames {
		e.runs[k] = whole.runs[k] - head.runs[k]
		e.hits[k] = whole.hits[k] - head.hits[k]
	}
	return e
}

// mixRun is a small run of the OLTP mix.
func mixRun(url string, out *bytes.Buffer, rows, threads, perThread int64) *Config {
	c := smallRun(url, out)
	c.Mix, c.Rows, c.RowBytes = MixOLTP, rows, 300
	c.Threads, c.Iterations = int(threads), perThread
	return c
}

// tableExists asks the database, through its driver, whether the mix's
// table is there and whether dbprobe made it.
func tableExists(t *testing.T, url string) driver.TableState {
	t.Helper()
	ctx := context.Background()
	db := openURL(t, url)
	defer db.Close()
	st, err := db.Inspect(ctx, driver.DataTable{Name: oltpTableName, PayloadBytes: 300}.Table())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The mix runs exactly the statements its rule gives, per kind, and they
// find exactly the rows the rule says; the rows left agree with the
// inserts and deletes. --keep keeps the table, the next run finds it,
// drops it because dbprobe made it, and makes it afresh; without --keep
// the table is gone at the end.
func TestOLTPMixCounts(t *testing.T) {
	const rows, threads, perThread = 500, 3, 40
	want := expect(rows, threads, perThread)
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			for run, keep := range []bool{true, false} {
				var out bytes.Buffer
				c := mixRun(url, &out, rows, threads, perThread)
				c.Keep = keep
				stderr := &bytes.Buffer{}
				c.Stderr = stderr
				if err := Run(context.Background(), c); err != nil {
					t.Fatalf("%v\n%s\n%s", err, stderr, out.String())
				}
				text := out.String()
				var lines []string
				for _, k := range oltpKindNames {
					lines = append(lines,
						fmt.Sprintf("[OLTP-%s], Operations, %d\n", k, want.runs[k]),
						fmt.Sprintf("[OLTP-%s], Return=OK, %d\n", k, want.runs[k]))
				}
				lines = append(lines,
					fmt.Sprintf("[ITERATION], Operations, %d\n", threads*perThread),
					fmt.Sprintf("[OLTP-SELECT], RowsReturned, %d\n", want.hits["SELECT"]),
					fmt.Sprintf("[OLTP-INSERT], RowsAffected, %d\n", want.hits["INSERT"]),
					fmt.Sprintf("[OLTP-UPDATE], RowsAffected, %d\n", want.hits["UPDATE"]),
					fmt.Sprintf("[OLTP-DELETE], RowsAffected, %d\n", want.hits["DELETE"]),
					"# statement [OLTP-INSERT]: --mix oltp (else i mod 3 = 0): INSERT INTO dbprobe_oltp (id, payload) VALUES (:id, :payload)\n",
					"# note: where: table dbprobe_oltp is in the database's default place",
				)
				for _, w := range lines {
					if !strings.Contains(text, w) {
						t.Errorf("run %d: output lacks %q", run, w)
					}
				}
				// The fill says how much it makes, so that a slow one is
				// no surprise.
				if fill := fmt.Sprintf("dbprobe: filling dbprobe_oltp with %d rows of %d bytes (%s of payload) on the server", rows, c.RowBytes, result.BytesText(int64(rows)*int64(c.RowBytes))); !strings.Contains(stderr.String(), fill) {
					t.Errorf("run %d: stderr lacks %q:\n%s", run, fill, stderr)
				}
				if run == 1 && !strings.Contains(stderr.String(), "an earlier run left it") {
					t.Errorf("the second run does not say it found the kept table:\n%s", stderr)
				}
				if keep {
					left := rows + want.hits["INSERT"] - want.hits["DELETE"]
					if n := query(t, url, "SELECT COUNT(*) FROM dbprobe_oltp"); n != left {
						t.Errorf("%d rows are left, want %d (%d + %d inserted − %d deleted)", n, left, rows, want.hits["INSERT"], want.hits["DELETE"])
					}
					if n := query(t, url, "SELECT COUNT(*) FROM dbprobe_oltp WHERE id < 0"); n != want.hits["INSERT"] {
						t.Errorf("%d rows have the INSERTs' ids, want %d", n, want.hits["INSERT"])
					}
					if st := tableExists(t, url); !st.Exists || !st.CreatedByDbprobe {
						t.Errorf("the kept table: %+v", st)
					}
				} else if st := tableExists(t, url); st.Exists {
					t.Errorf("the table is still there at the end")
				}
			}
		})
	}
}

// A table of the mix's name that dbprobe did not create is refused, and
// left as it is.
func TestOLTPRefusesForeignTable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"mine.sql": "CREATE TABLE dbprobe_oltp (id INTEGER PRIMARY KEY, payload VARCHAR(10));\nINSERT INTO dbprobe_oltp VALUES (1, 'mine');\n"})
	url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
	var out bytes.Buffer
	c := smallRun(url, &out)
	// The user's own table, made by their --setup.
	c.Setup = filepath.Join(dir, "mine.sql")
	c.Mix, c.Rows, c.RowBytes, c.Iterations = MixOLTP, 10, 10, 1
	err := Run(context.Background(), c)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "dbprobe did not create") {
		t.Fatalf("a table dbprobe did not create: %v", err)
	}
	if n := query(t, url, "SELECT COUNT(*) FROM dbprobe_oltp WHERE payload = 'mine'"); n != 1 {
		t.Errorf("the user's table was changed: %d rows of theirs", n)
	}
}

// Ctrl-C during the mix keeps what was measured, and the table goes.
func TestOLTPInterruptDropsTable(t *testing.T) {
	url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
	var out bytes.Buffer
	c := mixRun(url, &out, 1000, 2, 0)
	c.Iterations, c.Duration = 0, 30*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	if err := Run(ctx, c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "# ended: interrupted after ") {
		t.Errorf("no interrupted summary:\n%s", out.String())
	}
	if st := tableExists(t, url); st.Exists {
		t.Error("the table is left after Ctrl-C")
	}
}

// Bad input of the mix and placement: one line, nothing measured,
// nothing left.
func TestOLTPBadInput(t *testing.T) {
	if _, err := ParseMix("tpcc"); !badinput.Is(err) || !strings.Contains(err.Error(), "give one of: oltp") {
		t.Errorf("--mix tpcc: %v", err)
	}
	if m, err := ParseMix("OLTP"); err != nil || m != MixOLTP {
		t.Errorf("--mix OLTP: %v, %v", m, err)
	}
	dir := writeFiles(t, map[string]string{"loop.sql": "SELECT 1;\n"})
	missing := filepath.Join(t.TempDir(), "missing")
	cases := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"mix and sql", func(c *Config) { c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}} }, "give one of them"},
		{"mix and param", func(c *Config) { c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 2}} }, "takes its keys from the iteration number"},
		{"rows 0", func(c *Config) { c.Rows = 0 }, "--rows 0"},
		{"row bytes", func(c *Config) { c.RowBytes = 9000 }, "--row-bytes 9000"},
		{"keep without mix", func(c *Config) {
			c.Mix, c.Keep = MixNone, true
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
		}, "--keep keeps the table"},
		{"placement with sql", func(c *Config) {
			c.Mix, c.Placement = MixNone, dir
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
		}, "with --sql dbprobe creates none"},
		{"placement relative", func(c *Config) { c.Placement = "data" }, "give an absolute path"},
		{"sqlite file given", func(c *Config) { c.Placement = dir }, "drop --placement and give --db sqlite://"},
		{"sqlite default in a missing directory", func(c *Config) { c.Target.DB, c.Placement = "", missing }, "cannot create the SQLite database there"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DBPROBE_DB", "")
			url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
			var out bytes.Buffer
			c := mixRun(url, &out, 10, 1, 4)
			tc.edit(c)
			err := Run(context.Background(), c)
			if !badinput.Is(err) {
				t.Fatalf("error %v is not bad input", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q is not one line with %q", msg, tc.want)
			}
			if strings.Contains(out.String(), "[OVERALL]") {
				t.Errorf("something was measured:\n%s", out.String())
			}
		})
	}
}

// The mix's table is settled after the fill and before the measured part,
// and the header says how; on PostgreSQL the table was vacuumed and
// analyzed, so that autovacuum has nothing of the fill's to do during
// the run.
func TestOLTPSettlesAfterFill(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			var out bytes.Buffer
			c := mixRun(url, &out, 300, 1, 8)
			c.Keep = true
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			want := map[string]string{
				"sqlite":   "PRAGMA wal_checkpoint(TRUNCATE)",
				"postgres": "VACUUM (ANALYZE) dbprobe_oltp",
				"mariadb":  "ANALYZE TABLE dbprobe_oltp",
			}[d.name]
			if !strings.Contains(out.String(), "# note: table dbprobe_oltp: settled after the fill, before the measured part: "+want) {
				t.Errorf("the header does not say the table was settled by %s:\n%s", want, out.String())
			}
			if d.name == "postgres" {
				if n := query(t, url, "SELECT COUNT(*) FROM pg_stat_user_tables WHERE relname = 'dbprobe_oltp' AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"); n != 1 {
					t.Error("PostgreSQL has no vacuum and analyze of the table on record")
				}
			}
		})
	}
}
