package stress

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// database is one real database the tests run against.
type database struct {
	name string
	url  func(t *testing.T) string
}

// databases are SQLite (a new file per test) and, when scripts/with-databases
// started them, PostgreSQL and MariaDB (a new database per test).
var databases = []database{
	{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db")) }},
	{"postgres", func(t *testing.T) string { return testdb.FreshPostgresDatabase(t) }},
	{"mariadb", func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) }},
}

// writeFiles writes name → content into a new directory and returns its path.
func writeFiles(t *testing.T, m map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range m {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// smallRun is a small run's configuration: no monitor, the text in out.
func smallRun(url string, out *bytes.Buffer) *Config {
	return &Config{
		Threads: 2, Iterations: 10, Seed: 7, SeedGiven: true,
		Target:          experiment.TargetConfig{DB: url},
		Monitor:         experiment.MonitorConfig{Off: true},
		DrainTimeout:    5 * time.Second,
		RetryBackoff:    time.Millisecond,
		RetryMaxBackoff: 10 * time.Millisecond,
		Stdout:          out, Stderr: &bytes.Buffer{},
	}
}

// query returns the first column of the first row of q on url, as an
// int64 (a NULL is -1).
func query(t *testing.T, url, q string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, closeAll := sqlConn(t, url)
	defer closeAll()
	st, err := conn.Prepare(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer st.Close()
	got := int64(-2)
	_, err = conn.Run(ctx, st, nil, func(row []any) error {
		if got != -2 {
			return nil
		}
		switch v := normalize(row[0]).(type) {
		case nil:
			got = -1
		case int64:
			got = v
		case string:
			fmt.Sscan(v, &got)
		case float64:
			got = int64(v)
		default:
			t.Fatalf("%s: %T %v", q, v, v)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return got
}

// setup makes table t of 100 rows, ids 1…100, each with a counter n.
const setup = `CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, name VARCHAR(100));
CREATE TABLE log (id INTEGER NOT NULL, v VARCHAR(100));
INSERT INTO t (id, n) SELECT x, 0 FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) SELECT x FROM c) s;
`

// Each parameter source gives values the database binds, and the
// database's own count of the rows changed agrees with dbprobe's: the
// counter column adds up to the iterations run, and RowsAffected says as
// much.
func TestParameterSourcesCountsAgree(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			ids := "id\n"
			for i := 1; i <= 100; i += 7 {
				ids += fmt.Sprintf("%d\n", i)
			}
			dir := writeFiles(t, map[string]string{
				"setup.sql": setup,
				"loop.sql":  "-- a read and a write\nSELECT n FROM t WHERE id = :id;\n\nUPDATE t SET n = n + 1 WHERE id = :id;\n",
				"ids.csv":   ids,
			})
			for _, src := range []string{"param", "csv", "query"} {
				t.Run(src, func(t *testing.T) {
					url := d.url(t)
					var out bytes.Buffer
					c := scriptRun(url, &out, dir)
					switch src {
					case "param":
						c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 100}}
					case "csv":
						c.ParamsCSV = filepath.Join(dir, "ids.csv")
					case "query":
						c.ParamsQuery = "SELECT id FROM t WHERE id <= 50"
						c.ParamsOrder = Random
					}
					if err := Run(context.Background(), c); err != nil {
						t.Fatalf("%v\n%s", err, out.String())
					}
					total := c.Iterations * int64(c.Threads)
					if n := query(t, url, "SELECT SUM(n) FROM t"); n != total {
						t.Errorf("the table counts %d updates, want %d", n, total)
					}
					text := out.String()
					for _, want := range []string{
						fmt.Sprintf("[LOOP.SQL-1], Operations, %d\n", total),
						fmt.Sprintf("[LOOP.SQL-2], Return=OK, %d\n", total),
						fmt.Sprintf("[ITERATION], Operations, %d\n", total),
						fmt.Sprintf("[LOOP.SQL-1], RowsReturned, %d\n", total),
						fmt.Sprintf("[LOOP.SQL-2], RowsAffected, %d\n", total),
						"loop.sql line 4: UPDATE t SET n = n + 1 WHERE id = :id\n",
					} {
						if !strings.Contains(text, want) {
							t.Errorf("output lacks %q:\n%s", want, text)
						}
					}
				})
			}
		})
	}
}

// With --transaction, a second statement that fails rolls back the first:
// no row of it is left. Without, the first's rows stay.
func TestTransactionRollsBack(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"setup.sql": setup,
				"two.sql":   "INSERT INTO log (id, v) VALUES (:id, 'x');\nUPDATE t SET n = NULL WHERE id = :id;\n",
			})
			for _, tx := range []bool{true, false} {
				url := d.url(t)
				var out bytes.Buffer
				c := smallRun(url, &out)
				c.Setup = filepath.Join(dir, "setup.sql")
				c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "two.sql"), Weight: 1}}
				c.Params = []ParamSpec{{Name: "id", Dist: Sequential, Lo: 1, Hi: 100}}
				c.Transaction, c.Threads, c.Iterations = tx, 1, 5
				if err := Run(context.Background(), c); err != nil {
					t.Fatalf("--transaction=%v: %v\n%s", tx, err, out.String())
				}
				want := int64(0)
				if !tx {
					want = 5
				}
				if n := query(t, url, "SELECT COUNT(*) FROM log"); n != want {
					t.Errorf("--transaction=%v: log holds %d rows, want %d", tx, n, want)
				}
				if text := out.String(); !strings.Contains(text, "[ITERATION], Return=ERROR, 5\n") || !strings.Contains(text, "[TWO.SQL-2-FAILED], Operations, 5\n") {
					t.Errorf("--transaction=%v: the failures are not counted:\n%s", tx, text)
				}
			}
		})
	}
}

// A value that would break out of a string if spliced into the text is
// bound as a parameter and stored as it is.
func TestParametersAreBound(t *testing.T) {
	const evil = `'); DROP TABLE t; --`
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"setup.sql": setup,
				"name.sql":  "UPDATE t SET name = :name WHERE id = :id;\n",
				"v.csv":     "id,name\n1,\"" + evil + "\"\n",
			})
			url := d.url(t)
			var out bytes.Buffer
			c := smallRun(url, &out)
			c.Setup = filepath.Join(dir, "setup.sql")
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "name.sql"), Weight: 1}}
			c.ParamsCSV = filepath.Join(dir, "v.csv")
			c.Threads, c.Iterations = 1, 1
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if n := query(t, url, "SELECT COUNT(*) FROM t WHERE name = '"+strings.ReplaceAll(evil, "'", "''")+"'"); n != 1 {
				t.Errorf("%d rows hold the value as text, want 1 (and table t is still there)", n)
			}
		})
	}
}

// Bad input: one line, exit status 2, nothing measured, and what --setup
// made is gone (--teardown ran).
func TestBadInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"setup.sql":    "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);\n",
		"teardown.sql": "DROP TABLE t;\n",
		"ok.sql":       "SELECT n FROM t WHERE id = :id;\n",
		"syntax.sql":   "SELECT n FROM t WHERE id = :id;\n\n-- the second one\nSELEC n FROM t;\n",
		"empty.sql":    "  \n",
		"comments.sql": "-- nothing\n/* here */\n",
		"nowhere.sql":  "SELECT n FROM t WHERE id = :id AND n = :other;\n",
		"short.csv":    "id,n\n1,2\n3\n",
		"ids.csv":      "id\n1\n",
		"hint.sql":     "SELECT n FROM t WHERE id = :id;\n/*+ hint */;\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name string
		edit func(c *Config)
		want []string
	}{
		{"missing file", func(c *Config) { c.Scripts[0].Path = p("nope.sql") }, []string{"--sql", "nope.sql: no such file"}},
		{"empty file", func(c *Config) { c.Scripts[0].Path = p("empty.sql") }, []string{"empty.sql is empty"}},
		{"comments only", func(c *Config) { c.Scripts[0].Path = p("comments.sql") }, []string{"comments.sql holds no statement (only comments or separators): write at least one statement"}},
		{"syntax error", func(c *Config) { c.Scripts[0].Path = p("syntax.sql") }, []string{"syntax.sql line 4:", "SQLite says:", "syntax error"}},
		{"parameter given nowhere", func(c *Config) { c.Scripts[0].Path = p("nowhere.sql") }, []string{"nowhere.sql line 1: parameter :other is given no value (--param id=uniform:1:10 gives :id)"}},
		{"csv short row", func(c *Config) { c.Params = nil; c.ParamsCSV = p("short.csv") }, []string{"short.csv line 3 has 1 field, the header 2"}},
		{"params-query no rows", func(c *Config) { c.Params = nil; c.ParamsQuery = "SELECT id FROM t" }, []string{"--params-query returned no rows"}},
		{"params-query unnamed", func(c *Config) { c.Params = nil; c.ParamsQuery = "SELECT id + 1 FROM t" }, []string{"--params-query: SQLite names column 1 \"id + 1\"", "AS"}},
		{"params-query twice", func(c *Config) { c.Params = nil; c.ParamsQuery = "SELECT id, n AS id FROM t" }, []string{"columns 1 and 2 are both named id"}},
		{"params-query no result", func(c *Config) { c.Params = nil; c.ParamsQuery = "UPDATE t SET n = 1" }, []string{"--params-query returns no rows"}},
		{"comment alone", func(c *Config) { c.Scripts[0].Path = p("hint.sql") }, []string{"hint.sql line 2:", "only comments"}},
		{"source twice", func(c *Config) { c.ParamsCSV = p("ids.csv") }, []string{"parameter :id is given twice"}},
		{"no count no duration", func(c *Config) { c.Iterations = 0 }, []string{"no --iterations count and no --duration"}},
		{"null database", func(c *Config) { c.Target.DB = "null" }, []string{"has no SQL text"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
			var out bytes.Buffer
			c := smallRun(url, &out)
			c.Setup, c.Teardown = p("setup.sql"), p("teardown.sql")
			c.Scripts = []ScriptFile{{Path: p("ok.sql"), Weight: 1}}
			c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 10}}
			tc.edit(c)
			err := Run(context.Background(), c)
			if !badinput.Is(err) {
				t.Fatalf("error %v is not bad input", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("the message is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(out.String(), "[OVERALL]") {
				t.Errorf("something was measured:\n%s", out.String())
			}
			if tc.name == "comments only" {
				// Refused before the database was opened: no file made.
				if _, err := os.Stat(strings.TrimPrefix(url, "sqlite://")); err == nil {
					t.Error("the database file was made before the file was refused")
				}
				return
			}
			if c.Target.DB != "null" && query(t, url, "SELECT COUNT(*) FROM sqlite_master WHERE name = 't'") != 0 {
				t.Errorf("table t is left behind: --teardown did not run")
			}
		})
	}
	for _, bad := range []string{"a.sql@0", "a.sql@-1", "a.sql@x", "@3", ""} {
		if _, err := ParseScriptArg(bad); !badinput.Is(err) {
			t.Errorf("--sql %q: %v, want bad input", bad, err)
		}
	}
}

// Ctrl-C mid-run keeps the series measured so far, prints the summary and
// runs --teardown.
func TestInterruptKeepsSeriesAndTearsDown(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"setup.sql":    setup,
		"teardown.sql": "DROP TABLE t;\nDROP TABLE log;\n",
		"loop.sql":     "UPDATE t SET n = n + 1 WHERE id = :id;\n",
	})
	url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
	var out bytes.Buffer
	c := smallRun(url, &out)
	c.Setup, c.Teardown = filepath.Join(dir, "setup.sql"), filepath.Join(dir, "teardown.sql")
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
	c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 100}}
	c.Iterations, c.Duration = 0, 30*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	if err := Run(ctx, c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the run took %s after the interrupt at 1.5 s", d)
	}
	text := out.String()
	for _, want := range []string{"[LOOP.SQL-1], Operations, ", "[ITERATION], Return=OK, ", "# interrupted", "# ended: interrupted after "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if query(t, url, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('t', 'log')") != 0 {
		t.Errorf("--teardown did not run after the interrupt")
	}
}

// A sequential --param starts at LO with the first measured iteration
// (checking the statements beforehand draws nothing from it) and wraps
// around to LO after HI.
func TestSequentialStartsAtLo(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"setup.sql": "CREATE TABLE seen (k INTEGER PRIMARY KEY, v INTEGER NOT NULL);\n",
		"seq.sql":   "INSERT INTO seen (k, v) VALUES ((SELECT COUNT(*) FROM seen), :id);\n",
	})
	url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
	var out bytes.Buffer
	c := smallRun(url, &out)
	c.Setup = filepath.Join(dir, "setup.sql")
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "seq.sql"), Weight: 1}}
	c.Threads, c.Iterations = 1, 7
	c.Params = []ParamSpec{{Name: "id", Dist: Sequential, Lo: 1, Hi: 5}}
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for k, want := range []int64{1, 2, 3, 4, 5, 1, 2} {
		if got := query(t, url, fmt.Sprintf("SELECT v FROM seen WHERE k = %d", k)); got != want {
			t.Errorf("iteration %d got :id %d, want %d", k, got, want)
		}
	}
}

// The header says how the statements run, not how the key-value
// sessions commit: no "a load batch is one transaction", no SQLite
// writes sharing commits (the statements run on connections of their
// own, not through the key-value writer), and a note of the SQL path.
func TestHeaderSaysHowSQLRuns(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"one.sql": "SELECT 1;\n"})
			var out bytes.Buffer
			c := smallRun(d.url(t), &out)
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "one.sql"), Weight: 1}}
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			for _, bad := range []string{"a load batch is one transaction", "share one commit", "several to a commit"} {
				if strings.Contains(text, bad) {
					t.Errorf("the header says %q of the key-value path:\n%s", bad, text)
				}
			}
			if !strings.Contains(text, "# note: SQL text: ") || !strings.Contains(text, "; each thread on a connection of its own\n") {
				t.Errorf("no note of how the SQL text runs:\n%s", text)
			}
		})
	}
}

// The first failure of a code is one dbprobe: line on stderr, as
// dbprobe's other messages are, not a log record; --quiet leaves it out.
func TestFirstFailureLine(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"setup.sql": "CREATE TABLE u (id INTEGER PRIMARY KEY);\n",
		"dup.sql":   "INSERT INTO u (id) VALUES (1);\n",
	})
	for _, quiet := range []bool{false, true} {
		var out, errs bytes.Buffer
		c := smallRun("sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "s.db")), &out)
		c.Stderr, c.Quiet = &errs, quiet
		c.Setup = filepath.Join(dir, "setup.sql")
		c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "dup.sql"), Weight: 1}}
		c.Threads, c.Iterations, c.OnError = 1, 3, runner.OnErrorContinue
		c.Flags = []config.Setting{{Key: "rows", Value: "1000000", Source: config.SourceDefault}, {Key: "threads", Value: "1", Source: "--threads"}}
		if err := Run(context.Background(), c); err != nil {
			t.Fatalf("%v\n%s", err, errs.String())
		}
		// Nor does the header show the mix's rows without a mix, or a
		// plan of "QUERY PLAN" alone for an INSERT SQLite shows no step of.
		if text := out.String(); strings.Contains(text, "#   rows ") || !strings.Contains(text, "#   threads ") ||
			!strings.Contains(text, "# note: plan [DUP.SQL-1]: none: SQLite shows no plan") || strings.Contains(text, "QUERY PLAN\n") {
			t.Errorf("the header:\n%s", text)
		}
		line := "dbprobe: [DUP.SQL-1] failed with "
		switch {
		case strings.Contains(errs.String(), "level=WARN"):
			t.Errorf("--quiet=%v: a log record on stderr:\n%s", quiet, errs.String())
		case quiet && strings.Contains(errs.String(), line):
			t.Errorf("--quiet: the failure is said:\n%s", errs.String())
		case !quiet && !strings.Contains(errs.String(), line):
			t.Errorf("the first failure is not said in a dbprobe: line:\n%s", errs.String())
		}
	}
}
