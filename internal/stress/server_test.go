package stress

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// The tests below hold what a run reports against what the server itself
// knows: its per-statement counters, its table statistics, the backends
// its connections ran on, its plans.

// exec runs statements on url one by one, as written.
func exec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	target, err := experiment.ResolveTarget(experiment.TargetConfig{DB: url}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := target.Open(ctx, driver.Options{Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.(driver.SQLRunner).SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.(driver.Execer).Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// postgresWithStatements is a new PostgreSQL database with
// pg_stat_statements created in it; the test skips (fails under CI) when
// the server has not loaded it (scripts/lib/postgres.sh preloads it).
func postgresWithStatements(t *testing.T) string {
	t.Helper()
	url := testdb.FreshPostgresDatabase(t)
	exec(t, url, "CREATE EXTENSION pg_stat_statements")
	if n := query(t, url, "SELECT count(*) FROM pg_settings WHERE name = 'pg_stat_statements.max'"); n != 1 {
		if testdb.InCI() {
			t.Fatal("the test PostgreSQL has not loaded pg_stat_statements")
		}
		t.Skip("the test PostgreSQL has not loaded pg_stat_statements: start it with shared_preload_libraries = 'pg_stat_statements'")
	}
	return url
}

// metric returns the value of "[label], name, value" in a run's text, or
// "" when the line is not there.
func metric(text, label, name string) string {
	re := regexp.MustCompile(`(?m)^\[` + regexp.QuoteMeta(label) + `\], ` + regexp.QuoteMeta(name) + `, (.*)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// number is metric as a float; the test fails when the line is missing.
func number(t *testing.T, text, label, name string) float64 {
	t.Helper()
	v := metric(text, label, name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("[%s], %s: %q is not a number\n%s", label, name, v, text)
	}
	return f
}

// pointSetup makes table t of 1,000 rows, ids 1…1000, each with a counter
// n and a name.
const pointSetup = `CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, name VARCHAR(100));
INSERT INTO t (id, n) SELECT x, 0 FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT x FROM c) s;
`

// pg_stat_statements counts each statement's calls as the run does them
// (the iterations × once each), and a point SELECT by primary key reads a
// few pages a call, by either protocol; pg_stat_user_tables counts as
// many rows updated as the run reports. By the simple protocol a value
// that would break out of a string is stored as text, and a statement
// with a constant of its own, which pg_stat_statements records under a
// text of its own, is said to be not found rather than shown as free.
func TestPostgresCostsAgree(t *testing.T) {
	for _, proto := range []Protocol{Prepared, Simple} {
		t.Run(proto.String(), func(t *testing.T) {
			const evil = `'); DROP TABLE t; --`
			url := postgresWithStatements(t)
			dir := writeFiles(t, map[string]string{
				"setup.sql": pointSetup,
				"loop.sql": "SELECT n FROM t WHERE id = :id;\n" +
					"UPDATE t SET name = :name WHERE id = :id;\n" +
					"UPDATE t SET n = n + 1 WHERE id = :id;\n",
				"v.csv": "id,name\n1,\"" + evil + "\"\n500,plain\n1000,\"it's\"\n",
			})
			var out bytes.Buffer
			c := smallRun(url, &out)
			c.Protocol = proto
			c.Setup = filepath.Join(dir, "setup.sql")
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
			c.ParamsCSV = filepath.Join(dir, "v.csv")
			c.Threads, c.Iterations = 3, 40
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			total := c.Iterations * int64(c.Threads)

			// Read at once: the run's last reading of the costs waited
			// for its workers' backends to end, which is when they report
			// the last of their work.
			if n := query(t, url, "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 't'"); n != 2*total {
				t.Errorf("pg_stat_user_tables counts %d rows updated, the run reports %s + %s", n, metric(text, "LOOP.SQL-2", "RowsAffected"), metric(text, "LOOP.SQL-3", "RowsAffected"))
			}
			if n := query(t, url, "SELECT SUM(n) FROM t"); n != total {
				t.Errorf("the counter column adds up to %d, want %d", n, total)
			}
			if n := query(t, url, "SELECT COUNT(*) FROM t WHERE name = '"+strings.ReplaceAll(evil, "'", "''")+"'"); n != 1 {
				t.Errorf("%d rows hold the value as text, want 1", n)
			}
			found := []string{"LOOP.SQL-1", "LOOP.SQL-2"}
			if proto == Prepared {
				found = append(found, "LOOP.SQL-3")
			} else {
				if metric(text, "LOOP.SQL-3", "ServerCalls") != "" || !strings.Contains(text, "the server counted no call of [LOOP.SQL-3] (ran 120 times)") {
					t.Errorf("the statement with a constant of its own, not found by the simple protocol, is not said to be:\n%s", text)
				}
			}
			for _, label := range found {
				if calls, ops := number(t, text, label, "ServerCalls"), number(t, text, label, "Operations"); calls != ops || ops != float64(total) {
					t.Errorf("[%s]: pg_stat_statements counts %g calls, the run %g operations, want %d", label, calls, ops, total)
				}
				if rows := number(t, text, label, "ServerRowsPerCall"); rows != 1 {
					t.Errorf("[%s]: %g rows a call, want 1", label, rows)
				}
			}
			if reads := number(t, text, "LOOP.SQL-1", "ServerLogicalReadsPerCall"); reads < 2 || reads >= 10 {
				t.Errorf("a point SELECT by primary key reads %g pages a call; want a few (the index's root and leaf, the heap page)", reads)
			}
			if it := number(t, text, "ITERATION", "ServerLogicalReadsPerIteration"); it < number(t, text, "LOOP.SQL-1", "ServerLogicalReadsPerCall") {
				t.Errorf("the whole database read %g pages an iteration, less than the SELECT alone", it)
			}
		})
	}
}

// A plan that changes during the run is caught: the loop's first
// statement creates the index its second then uses. CREATE INDEX has no
// plan, which is a note, not a refusal.
func TestPostgresPlanChanged(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	dir := writeFiles(t, map[string]string{
		"setup.sql": "CREATE TABLE p (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);\n" +
			"INSERT INTO p SELECT g, g % 1000 FROM generate_series(1, 20000) g;\nANALYZE p;\n",
		"loop.sql": "CREATE INDEX IF NOT EXISTS p_n ON p (n);\nSELECT count(*) FROM p WHERE n = :n;\n",
	})
	var out bytes.Buffer
	c := smallRun(url, &out)
	c.Setup = filepath.Join(dir, "setup.sql")
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
	c.Params = []ParamSpec{{Name: "n", Dist: Uniform, Lo: 0, Hi: 999}}
	c.Threads, c.Iterations, c.Explain = 1, 3, true
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	start, end := section(text, "# plan [LOOP.SQL-2]"), section(text, "# plan at the end [LOOP.SQL-2]")
	for _, want := range []struct {
		ok   bool
		what string
	}{
		{strings.Contains(text, "# note: plan [LOOP.SQL-1]: none: PostgreSQL shows no plan for this kind of statement"), "the note that CREATE INDEX has no plan"},
		{strings.Contains(start, "Seq Scan on p") && !strings.Contains(start, "p_n"), "a sequential scan at the start"},
		{strings.Contains(end, "p_n") && strings.Contains(end, "actual time") && strings.Contains(end, "Buffers:"), "the index analyzed at the end"},
		{strings.Contains(text, "# plan changed [LOOP.SQL-2]"), "the plan changed note"},
		{!strings.Contains(text, "# plan changed [LOOP.SQL-1]"), "no change said of CREATE INDEX"},
	} {
		if !want.ok {
			t.Errorf("no %s:\n%s", want.what, text)
		}
	}
}

// section returns the comment lines of text from the one starting with
// head to the next that is not indented below it.
func section(text, head string) string {
	i := strings.Index(text, head)
	if i < 0 {
		return ""
	}
	lines := strings.Split(text[i:], "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "#   ") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// --session-setup is in force on every worker's connection, and
// --connect-per-iteration gives each iteration a connection of its own:
// the loop writes down the backend it ran on and the setting it saw.
func TestPostgresSessionSetupAndConnections(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("connect-per-iteration=%v", fresh), func(t *testing.T) {
			url := testdb.FreshPostgresDatabase(t)
			dir := writeFiles(t, map[string]string{
				"setup.sql":   "CREATE TABLE seen (backend INTEGER NOT NULL, app TEXT NOT NULL);\n",
				"session.sql": "SET application_name = 'dbprobe stress test';\nSET work_mem = '1234kB';\n",
				"loop.sql":    "INSERT INTO seen SELECT pg_backend_pid(), current_setting('application_name') || ' ' || current_setting('work_mem');\n",
			})
			var out bytes.Buffer
			c := smallRun(url, &out)
			c.Setup, c.SessionSetup = filepath.Join(dir, "setup.sql"), filepath.Join(dir, "session.sql")
			c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
			c.Threads, c.Iterations, c.ConnectPerIteration = 3, 5, fresh
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			total := c.Iterations * int64(c.Threads)
			if n := query(t, url, "SELECT count(*) FROM seen WHERE app = 'dbprobe stress test 1234kB'"); n != total {
				t.Errorf("%d of %d iterations saw the session setup", n, total)
			}
			backends := int64(c.Threads)
			if fresh {
				backends = total
				if got := metric(text, "CONNECT", "Operations"); got != strconv.FormatInt(total, 10) {
					t.Errorf("[CONNECT], Operations, %s; want %d\n%s", got, total, text)
				}
			} else if metric(text, "CONNECT", "Operations") != "" {
				t.Errorf("a CONNECT series without --connect-per-iteration:\n%s", text)
			}
			if n := query(t, url, "SELECT count(DISTINCT backend) FROM seen"); n != backends {
				t.Errorf("the iterations ran on %d backends, want %d", n, backends)
			}
			// Every connection with the session setup is closed, and the
			// server has ended it, once the run returns.
			if n := query(t, url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbprobe stress test'"); n != 0 {
				t.Errorf("%d connections of the run are left on the server", n)
			}
		})
	}
}
