package cli_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for the tests' own connections

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// ownershipTargets are the databases the ownership tests run on: an SQLite
// file always, the throwaway servers when scripts/test started them. Each
// gives a fresh database's URL and a connection of the test's own to it,
// through which the test acts as another user of the database would.
var ownershipTargets = []struct {
	name string
	open func(t *testing.T) (url string, theirs *sql.DB)
}{
	{"sqlite", func(t *testing.T) (string, *sql.DB) {
		path := filepath.Join(t.TempDir(), "ownership.db")
		return "sqlite://" + path, openSQL(t, firstSQLiteDriver(), path)
	}},
	{"postgres", func(t *testing.T) (string, *sql.DB) {
		u := testdb.FreshPostgresDatabase(t)
		return u, openSQL(t, "pgx", u)
	}},
	{"mysql", func(t *testing.T) (string, *sql.DB) {
		u := testdb.FreshMySQLDatabase(t)
		return u, testdb.OpenMySQL(t, u)
	}},
}

func openSQL(t *testing.T, driverName, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the database's own cleanup, so it runs before it.
	t.Cleanup(func() { db.Close() })
	return db
}

// theirTable is the statement another user runs to create their own table
// of YCSB's shape under a name dbprobe used.
func theirTable(name string) string {
	s := "CREATE TABLE " + name + " (YCSB_KEY varchar(255) PRIMARY KEY"
	for i := range 10 {
		s += ", FIELD" + string(rune('0'+i)) + " varchar(100)"
	}
	return s + ")"
}

func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func rowsIn(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// refused runs dbprobe and wants bad input (exit 2) whose message holds
// each of want.
func refused(t *testing.T, want []string, args ...string) {
	t.Helper()
	stdout, _, err := run(t, args...)
	if !badinput.Is(err) {
		t.Fatalf("%v: %v, want bad input (exit 2)\n%s", args, err, stdout)
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Fatalf("%v: %q, want it to say %q", args, msg, w)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Fatalf("%v: %q, want one line", args, msg)
	}
}

func loads(t *testing.T, args ...string) {
	t.Helper()
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
}

// A table dbprobe created, then dropped by someone else who created their
// own under its name and filled it, is not dbprobe's although the marker
// table still names it: --drop-existing is refused with exit 2 and their
// rows stay.
func TestOwnershipReplacedTableIsRefused(t *testing.T) {
	for _, target := range ownershipTargets {
		t.Run(target.name, func(t *testing.T) {
			url, theirs := target.open(t)
			loads(t, "load", "--db", url, "-p", "table=stale", "-p", "recordcount=20")
			execAll(t, theirs, "DROP TABLE stale", theirTable("stale"),
				"INSERT INTO stale (YCSB_KEY, FIELD0) VALUES ('theirs1', 'a'), ('theirs2', 'b')")
			replaced := []string{"stale", "not the one dbprobe", "drop it yourself"}
			for _, args := range [][]string{
				{"load", "--db", url, "-p", "table=stale", "-p", "recordcount=20", "--drop-existing"},
				{"load", "--db", url, "-p", "table=stale", "-p", "recordcount=5", "--drop-existing", "--no-copy"},
				{"ycsb", "--db", url, "-p", "table=stale", "-p", "recordcount=20", "-p", "operationcount=20", "--drop-existing"},
				{"load", "--db", url, "-p", "table=stale", "-p", "recordcount=20"},
			} {
				refused(t, replaced, args...)
				if n := rowsIn(t, theirs, "stale"); n != 2 {
					t.Fatalf("after %v their table holds %d rows, want 2", args, n)
				}
			}
		})
	}
}

// A table dbprobe created is still dropped and loaded again by
// --drop-existing.
func TestOwnershipOwnTableIsDropped(t *testing.T) {
	for _, target := range ownershipTargets {
		t.Run(target.name, func(t *testing.T) {
			url, theirs := target.open(t)
			loads(t, "load", "--db", url, "-p", "table=mine", "-p", "recordcount=20")
			loads(t, "load", "--db", url, "-p", "table=mine", "-p", "recordcount=30", "--drop-existing")
			if n := rowsIn(t, theirs, "mine"); n != 30 {
				t.Fatalf("after load --drop-existing the table holds %d rows, want 30", n)
			}
		})
	}
}

// A marker row an earlier dbprobe wrote, by name only, is no proof that the
// table is dbprobe's: --drop-existing is refused with a message that says
// so and what to do. The next table dbprobe creates gives the marker table
// its identity column, and a table the user dropped themselves can be
// loaded again.
func TestOwnershipRecordWithoutIdentityIsNoProof(t *testing.T) {
	for _, target := range ownershipTargets {
		t.Run(target.name, func(t *testing.T) {
			url, theirs := target.open(t)
			loads(t, "load", "--db", url, "-p", "table=legacy", "-p", "recordcount=20")
			// The marker table as dbprobe created it before identities.
			execAll(t, theirs, "ALTER TABLE dbprobe_tables DROP COLUMN table_identity")
			noProof := []string{"legacy", "without the table's identity", "drop it yourself"}
			refused(t, noProof, "load", "--db", url, "-p", "table=legacy", "-p", "recordcount=20", "--drop-existing")
			if n := rowsIn(t, theirs, "legacy"); n != 20 {
				t.Fatalf("after the refused drop the table holds %d rows, want 20", n)
			}

			loads(t, "load", "--db", url, "-p", "table=other", "-p", "recordcount=5")
			var identity sql.NullString
			if err := theirs.QueryRow("SELECT table_identity FROM dbprobe_tables WHERE table_name = 'other'").Scan(&identity); err != nil || identity.String == "" {
				t.Fatalf("identity recorded for a new table after an earlier dbprobe's marker table: %q, %v", identity.String, err)
			}
			refused(t, noProof, "load", "--db", url, "-p", "table=legacy", "-p", "recordcount=20", "--drop-existing")
			loads(t, "load", "--db", url, "-p", "table=other", "-p", "recordcount=7", "--drop-existing")

			// The user, who knows the table is dbprobe's, drops it.
			execAll(t, theirs, "DROP TABLE legacy")
			loads(t, "load", "--db", url, "-p", "table=legacy", "-p", "recordcount=10")
			loads(t, "load", "--db", url, "-p", "table=legacy", "-p", "recordcount=15", "--drop-existing")
			if n := rowsIn(t, theirs, "legacy"); n != 15 {
				t.Fatalf("the table loaded again holds %d rows, want 15", n)
			}
		})
	}
}
