package cli_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// injections are table names that try to break out of the quoting, or
// look like a name they are not, or are too long for some database.
var injections = []string{
	"usertable; DROP TABLE victim",
	`a"b`,
	"a`b",
	"a]b",
	"a'b",
	"usertable --",
	"victim CASCADE",
	"usertab\u0430e",        // Cyrillic а: looks like usertable
	"usertable\u202e",       // right-to-left override
	"usertable\u200b",       // zero-width space
	"\uff55sertable",        // fullwidth u
	strings.Repeat("t", 64), // one past PostgreSQL's limit
	strings.Repeat("t", 10000),
}

// safetyTargets are the databases the identifier tests run on: SQLite
// always, the throwaway servers when scripts/test started them (each test
// gets a fresh database; without the server it skips, or fails under
// CI=true).
var safetyTargets = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "safety.db") }},
	{"postgres", func(t *testing.T) string { return testdb.FreshPostgresDatabase(t) }},
	{"mysql", func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) }},
	{"redis", func(t *testing.T) string { return testdb.FreshRedisDatabase(t) }},
}

// An injection attempt in -p table=… is refused with one line and exit 2
// on every database, before anything reaches it; the table it names
// survives.
func TestTableNameInjectionRefused(t *testing.T) {
	for _, target := range safetyTargets {
		t.Run(target.name, func(t *testing.T) {
			url := target.url(t)
			if _, stderr, err := run(t, "load", "--db", url, "-p", "table=victim", "-p", "recordcount=20"); err != nil {
				t.Fatalf("load victim: %v\n%s", err, stderr)
			}
			for _, table := range injections {
				for _, cmd := range []string{"load", "run"} {
					args := []string{cmd, "--db", url, "-p", "table=" + table, "-p", "recordcount=20"}
					if cmd == "load" {
						args = append(args, "--drop-existing")
					}
					stdout, stderr, err := run(t, args...)
					if !badinput.Is(err) {
						t.Fatalf("%s -p table=%q: %v, want bad input (exit 2)\n%s", cmd, table, err, stdout)
					}
					msg := err.Error()
					if !strings.Contains(msg, "not a plain identifier") || strings.ContainsAny(msg, "\n\u202e\u200b") || len(msg) > 400 {
						t.Fatalf("%s -p table=%q: message %q, want one short line saying the name is not a plain identifier", cmd, table, msg)
					}
					if stdout != "" || strings.Contains(stderr, "\n\n") {
						t.Fatalf("%s -p table=%q printed:\n%s\n%s", cmd, table, stdout, stderr)
					}
				}
			}
			// The victim is untouched: a run reads all of it.
			stdout, stderr, err := run(t, "run", "--db", url, "-p", "table=victim", "-p", "recordcount=20", "-p", "operationcount=20", "--workload", "c")
			if err != nil {
				t.Fatalf("run on victim: %v\n%s", err, stderr)
			}
			if b := parseYCSB(t, stdout); b[0]["READ"]["Return=OK"] != 20 {
				t.Fatalf("victim after the attempts:\n%s", stdout)
			}
		})
	}
}

// Each driver checks the names it is given itself, whoever built the
// Table: a caller that skipped the configuration's validation still
// cannot put SQL into a statement.
func TestDriversRefuseBadNames(t *testing.T) {
	ctx := context.Background()
	good := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 10}
	for _, st := range safetyTargets {
		t.Run(st.name, func(t *testing.T) {
			db := drivertest.MustOpen(t, st.url(t), driver.Options{Sessions: 1})
			bad := []driver.Table{}
			for _, n := range injections {
				tb := good
				tb.Name = n
				bad = append(bad, tb)
			}
			col := good
			col.Fields = []string{"FIELD0) ; DROP TABLE victim; --"}
			if st.name != "redis" { // Redis fields are hash fields, not SQL
				bad = append(bad, col)
			}
			for _, tb := range bad {
				if _, err := db.Inspect(ctx, tb); !badinput.Is(err) {
					t.Errorf("Inspect(%q, %q): %v, want bad input", tb.Name, tb.Fields, err)
				}
				if err := db.CreateTable(ctx, tb); !badinput.Is(err) {
					t.Errorf("CreateTable(%q, %q): %v, want bad input", tb.Name, tb.Fields, err)
				}
				if err := db.DropTable(ctx, tb); !badinput.Is(err) {
					t.Errorf("DropTable(%q, %q): %v, want bad input", tb.Name, tb.Fields, err)
				}
				if s, err := db.Session(ctx, tb); !badinput.Is(err) {
					if s != nil {
						s.Close()
					}
					t.Errorf("Session(%q, %q): %v, want bad input", tb.Name, tb.Fields, err)
				}
			}
		})
	}
}

// load --drop-existing never drops a table dbprobe did not create: it is
// refused with exit 2 and the rows stay, on PostgreSQL and MariaDB.
func TestDropExistingLeavesTheirRows(t *testing.T) {
	createTheirs := "CREATE TABLE usertable (YCSB_KEY varchar(255) PRIMARY KEY"
	for i := range 10 {
		createTheirs += ", FIELD" + string(rune('0'+i)) + " varchar(100)"
	}
	createTheirs += ")"
	for name, setup := range map[string]func(t *testing.T) (url string, count func() int){
		"postgres": func(t *testing.T) (string, func() int) {
			url := testdb.FreshPostgresDatabase(t)
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close(ctx) })
			if _, err := conn.Exec(ctx, createTheirs); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "INSERT INTO usertable (ycsb_key, field0) VALUES ('theirs1', 'a'), ('theirs2', 'b')"); err != nil {
				t.Fatal(err)
			}
			return url, func() int {
				var n int
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
		},
		"mysql": func(t *testing.T) (string, func() int) {
			url := testdb.FreshMySQLDatabase(t)
			db := testdb.OpenMySQL(t, url)
			for _, q := range []string{createTheirs, "INSERT INTO usertable (YCSB_KEY, FIELD0) VALUES ('theirs1', 'a'), ('theirs2', 'b')"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			return url, func() int { return countRows(t, db) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			url, count := setup(t)
			for _, args := range [][]string{
				{"load", "--db", url, "--drop-existing"},
				{"load", "--db", url, "--drop-existing", "--no-copy", "-p", "recordcount=5"},
				{"ycsb", "--db", url, "--drop-existing"},
				{"load", "--db", url},
			} {
				stdout, _, err := run(t, args...)
				if !badinput.Is(err) {
					t.Fatalf("%v: %v, want bad input (exit 2)\n%s", args, err, stdout)
				}
				if msg := err.Error(); !strings.Contains(msg, "not created by dbprobe") && !strings.Contains(msg, "did not write") {
					t.Fatalf("%v: %q, want it to say dbprobe did not create the table", args, msg)
				}
				if n := count(); n != 2 {
					t.Fatalf("after %v their table holds %d rows, want 2", args, n)
				}
			}
		})
	}
}

func countRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM usertable").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
