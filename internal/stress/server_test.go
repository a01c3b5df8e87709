package stress

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// The tests below hold what a run reports against what the server itself
// knows: its per-statement counters, its table statistics, the backends
// its connections ran on, its plans.

// exec runs statements on url one by one, as written.
func exec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, closeAll := sqlConn(t, url)
	defer closeAll()
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
			if it := number(t, text, "ITERATION", "DatabaseLogicalReadsPerIteration"); it < number(t, text, "LOOP.SQL-1", "ServerLogicalReadsPerCall") {
				t.Errorf("the whole database read %g pages an iteration, less than the SELECT alone", it)
			}
			// Each statement runs once an iteration: the statements' sum
			// per iteration is the sum of their costs per call.
			if proto == Prepared {
				sum := 0.0
				for _, label := range found {
					sum += number(t, text, label, "ServerLogicalReadsPerCall")
				}
				if it := number(t, text, "ITERATION", "StatementsLogicalReadsPerIteration"); math.Abs(it-sum) > 1e-6*sum {
					t.Errorf("the statements read %g pages an iteration, their calls %g", it, sum)
				}
			} else if metric(text, "ITERATION", "StatementsLogicalReadsPerIteration") != "" {
				t.Errorf("a sum over the statements with one of them not found:\n%s", text)
			}
		})
	}
}

// A plan that changes during the run is caught: the loop's first
// statement creates the index its second then uses. CREATE INDEX has no
// plan (SQLite's EXPLAIN QUERY PLAN shows no step of it), which is a
// note, not a refusal.
func TestPlanChanged(t *testing.T) {
	for _, d := range []struct {
		db            database
		analyze       string
		noPlan        bool
		before, after string
	}{
		{databases[0], "", true, "SCAN p", "USING COVERING INDEX p_n"},
		{databases[1], "ANALYZE p;\n", true, "Seq Scan on p", "p_n"},
		{databases[2], "", true, "| ALL |", "| p_n |"},
	} {
		t.Run(d.db.name, func(t *testing.T) {
			url := d.db.url(t)
			dir := writeFiles(t, map[string]string{
				"setup.sql": "CREATE TABLE p (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);\n" +
					// 200 × 100 rows: MariaDB recurses at most 1,000 times.
					"INSERT INTO p (id, n) SELECT a.x * 100 + b.x + 1, (a.x * 100 + b.x + 1) % 1000 FROM " +
					"(WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 199) SELECT x FROM c) a, " +
					"(WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 99) SELECT x FROM c) b;\n" + d.analyze,
				"loop.sql": "CREATE INDEX p_n ON p (n);\nSELECT COUNT(*) FROM p WHERE n = :n;\n",
			})
			var out bytes.Buffer
			c := scriptRun(url, &out, dir)
			c.Params = []ParamSpec{{Name: "n", Dist: Uniform, Lo: 0, Hi: 999}}
			// The index is made once: the later iterations' CREATE INDEX
			// fails, which ends them before their SELECT.
			c.Threads, c.Iterations, c.Explain = 1, 1, true
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			start, end := section(text, "# plan [LOOP.SQL-2]"), section(text, "# plan at the end [LOOP.SQL-2]")
			noPlan := strings.Contains(text, "# note: plan [LOOP.SQL-1]: none: ")
			for _, want := range []struct {
				ok   bool
				what string
			}{
				{noPlan == d.noPlan, fmt.Sprintf("a note that CREATE INDEX has no plan: %v", d.noPlan)},
				{strings.Contains(start, d.before) && !strings.Contains(start, "p_n"), "the table scanned at the start"},
				{strings.Contains(end, d.after), "the index at the end"},
				{strings.Contains(text, "# plan changed [LOOP.SQL-2]"), "the plan changed note"},
				{!strings.Contains(text, "# plan changed [LOOP.SQL-1]"), "no change said of CREATE INDEX"},
				{metric(text, "LOOP.SQL-2", "Return=OK") == "1", "the SELECT run once"},
			} {
				if !want.ok {
					t.Errorf("no %s:\n%s", want.what, text)
				}
			}
		})
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

// sessionCase is how a database shows, from inside a statement, which
// connection runs it and which session settings it has.
type sessionCase struct {
	db database
	// session is a --session-setup file; seen reads back what it set,
	// want is what that reads; backend is the connection's id on the
	// server ("" where there is none: SQLite runs in dbprobe); alive
	// counts the connections whose ids seen holds that are still open.
	session, seen, want, backend, alive string
	// strict says the run waited for its connections to end (its last
	// reading of the costs did), so that alive is read once.
	strict bool
}

var sessionCases = []sessionCase{
	{db: databases[0], session: "PRAGMA cache_size = -1234;\n", seen: "(SELECT cache_size FROM pragma_cache_size())", want: "-1234", backend: "0"},
	{db: databases[1], session: "SET application_name = 'dbprobe stress test';\nSET work_mem = '1234kB';\n",
		seen: "current_setting('application_name') || ' ' || current_setting('work_mem')", want: "dbprobe stress test 1234kB",
		backend: "pg_backend_pid()", alive: "SELECT count(*) FROM pg_stat_activity WHERE pid IN (SELECT backend FROM seen)", strict: true},
	{db: databases[2], session: "SET @dbprobe_app = 'dbprobe stress test';\nSET SESSION group_concat_max_len = 1234;\n",
		seen: "CONCAT(@dbprobe_app, ' ', @@SESSION.group_concat_max_len)", want: "dbprobe stress test 1234",
		backend: "CONNECTION_ID()", alive: "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN (SELECT backend FROM seen)"},
}

// --session-setup is in force on every worker's connection, and
// --connect-per-iteration gives each iteration a connection of its own:
// the loop writes down the connection it ran on and the settings it saw.
// Once the run has returned, none of its connections is left open.
func TestSessionSetupAndConnections(t *testing.T) {
	for _, sc := range sessionCases {
		for _, fresh := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/connect-per-iteration=%v", sc.db.name, fresh), func(t *testing.T) {
				url := sc.db.url(t)
				dir := writeFiles(t, map[string]string{
					"setup.sql":   "CREATE TABLE seen (backend INTEGER NOT NULL, setting VARCHAR(100) NOT NULL);\n",
					"session.sql": sc.session,
					"loop.sql":    "INSERT INTO seen (backend, setting) SELECT " + sc.backend + ", " + sc.seen + ";\n",
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
				if n := query(t, url, "SELECT COUNT(*) FROM seen WHERE setting = '"+sc.want+"'"); n != total {
					t.Errorf("%d of %d iterations saw the session setup", n, total)
				}
				if fresh {
					if got := metric(text, "CONNECT", "Operations"); got != strconv.FormatInt(total, 10) {
						t.Errorf("[CONNECT], Operations, %s; want %d\n%s", got, total, text)
					}
				} else if metric(text, "CONNECT", "Operations") != "" {
					t.Errorf("a CONNECT series without --connect-per-iteration:\n%s", text)
				}
				if sc.alive == "" {
					return
				}
				backends := int64(c.Threads)
				if fresh {
					backends = total
				}
				if n := query(t, url, "SELECT COUNT(DISTINCT backend) FROM seen"); n != backends {
					t.Errorf("the iterations ran on %d connections, want %d", n, backends)
				}
				deadline := time.Now().Add(5 * time.Second)
				for {
					n := query(t, url, sc.alive)
					if n == 0 {
						break
					}
					if sc.strict || time.Now().After(deadline) {
						t.Fatalf("%d connections of the run are still open on the server", n)
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	}
}

// A counting trigger, made by --setup (a BEGIN … END body, which the
// setup runs as written: MySQL prepares no CREATE TRIGGER), counts as
// many rows changed as the run reports. MariaDB runs by the simple
// protocol, where its per-statement counters count each statement's
// calls as the run made them, and a value that would break out of a
// string is stored as text.
func TestTriggerCountsAgree(t *testing.T) {
	const evil = `'); DROP TABLE t; --`
	for _, d := range []struct {
		db      database
		each    string
		protocl Protocol
	}{
		{databases[0], "", Prepared},
		{databases[2], "FOR EACH ROW ", Simple},
	} {
		t.Run(d.db.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"setup.sql": pointSetup + "CREATE TABLE hits (n INTEGER NOT NULL);\nINSERT INTO hits VALUES (0);\n" +
					"CREATE TRIGGER t_count AFTER UPDATE ON t " + d.each + "BEGIN\n  UPDATE hits SET n = n + 1;\nEND;\n",
				"loop.sql": "UPDATE t SET name = :name WHERE id = :id;\nUPDATE t SET n = n + 1 WHERE id BETWEEN :id AND :id + 2;\n",
				"v.csv":    "id,name\n1,\"" + evil + "\"\n500,plain\n990,\"it's\"\n",
			})
			url := d.db.url(t)
			var out bytes.Buffer
			c := scriptRun(url, &out, dir)
			c.ParamsCSV, c.Protocol = filepath.Join(dir, "v.csv"), d.protocl
			c.Threads, c.Iterations = 3, 20
			if err := Run(context.Background(), c); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			total := c.Iterations * int64(c.Threads)
			one, three := number(t, text, "LOOP.SQL-1", "RowsAffected"), number(t, text, "LOOP.SQL-2", "RowsAffected")
			if one != float64(total) || three != float64(3*total) {
				t.Errorf("the run reports %g and %g rows changed, want %d and %d", one, three, total, 3*total)
			}
			if n := query(t, url, "SELECT n FROM hits"); float64(n) != one+three {
				t.Errorf("the trigger counted %d rows updated, the run reports %g + %g", n, one, three)
			}
			if n := query(t, url, "SELECT COUNT(*) FROM t WHERE name = '"+strings.ReplaceAll(evil, "'", "''")+"'"); n != 1 {
				t.Errorf("%d rows hold the value as text, want 1", n)
			}
			if d.protocl != Simple {
				return
			}
			for _, label := range []string{"LOOP.SQL-1", "LOOP.SQL-2"} {
				if calls, ops := number(t, text, label, "ServerCalls"), number(t, text, label, "Operations"); calls != ops || ops != float64(total) {
					t.Errorf("[%s]: the server counts %g calls, the run %g operations, want %d", label, calls, ops, total)
				}
			}
			if rows := number(t, text, "LOOP.SQL-2", "ServerRowsPerCall"); rows != 3 {
				t.Errorf("[LOOP.SQL-2]: the server counts %g rows a call, want 3", rows)
			}
		})
	}
}

// With --warmup the costs are read again when the warm-up ends, so that
// the server's count of calls is the measured part's: the run's count,
// less those made while the reading was taken (it takes milliseconds,
// in which a point SELECT runs dozens of times), a few percent at most.
// A run that ends before its warm-up reads none, and does not wait for
// the warm-up's end to say so.
func TestPostgresWarmupCosts(t *testing.T) {
	url := postgresWithStatements(t)
	dir := writeFiles(t, map[string]string{
		"setup.sql": pointSetup,
		"loop.sql":  "SELECT n FROM t WHERE id = :id;\n",
	})
	var out bytes.Buffer
	c := scriptRun(url, &out, dir)
	c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 1000}}
	c.Iterations, c.Duration, c.Warmup = 0, 1500*time.Millisecond, 700*time.Millisecond
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	calls, ops := number(t, text, "LOOP.SQL-1", "ServerCalls"), number(t, text, "LOOP.SQL-1", "Operations")
	if ops < 100 || calls < 0.95*ops || calls > ops+float64(c.Threads) {
		t.Errorf("pg_stat_statements counts %g calls over the measured part, the run %g", calls, ops)
	}
	if n := query(t, url, "SELECT calls FROM pg_stat_statements WHERE query = 'SELECT n FROM t WHERE id = $1' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"); float64(n) < calls+10 {
		t.Errorf("all in all %d calls, the measured part %g: the warm-up's are not left out", n, calls)
	}

	out.Reset()
	c = smallRun(url, &out)
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
	c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 1000}}
	c.Iterations, c.Warmup = 3, 10*time.Second
	start := time.Now()
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a run that ended before its warm-up took %s", d)
	}
	if text := out.String(); metric(text, "LOOP.SQL-1", "ServerCalls") != "" || !strings.Contains(text, "the run ended before its warm-up did") {
		t.Errorf("a run that ended before its warm-up:\n%s", text)
	}
}

// Each statement's plan is taken with the values it first runs with:
// the mix's UPDATE and DELETE with their own first keys (12 and 3 for
// one thread), not the SELECT's 0, which they never get.
func TestPlansTakenWithFirstValues(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	var out bytes.Buffer
	c := mixRun(url, &out, 300, 1, 8)
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for label, key := range map[string]string{"OLTP-SELECT": "0", "OLTP-UPDATE": "12", "OLTP-DELETE": "3"} {
		plan := section(text, "# plan ["+label+"]")
		if !strings.Contains(plan, "Index Cond: (id = '"+key+"'::bigint)") {
			t.Errorf("[%s]'s plan is not taken with id %s:\n%s", label, key, plan)
		}
	}
}

// The end line counts failed iterations, as [ITERATION]'s Return=ERROR
// does, not failed attempts: with --transaction --retries 3 an iteration
// whose every attempt meets a serialization failure is one failed
// iteration and three retries.
func TestEndingCountsIterations(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	dir := writeFiles(t, map[string]string{
		"setup.sql": "CREATE FUNCTION conflict(i int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'always' USING ERRCODE = '40001'; END $$;\n",
		"fail.sql":  "SELECT conflict(:id);\n",
	})
	var out bytes.Buffer
	c := smallRun(url, &out)
	c.Setup = filepath.Join(dir, "setup.sql")
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "fail.sql"), Weight: 1}}
	c.Params = []ParamSpec{{Name: "id", Dist: Uniform, Lo: 1, Hi: 9}}
	c.Transaction, c.Retries, c.Threads, c.Iterations = true, 3, 1, 2
	c.OnError = runner.OnErrorContinue
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, w := range []string{
		"[ITERATION], Return=ERROR, 2\n",
		"# ended: all 2 iterations done (--iterations 2 × --threads 1); 2 of them failed; 6 failed attempts were retried (--retries 3)\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
}
