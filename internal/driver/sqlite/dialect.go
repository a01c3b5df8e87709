package sqlite

import (
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// The functions in this file only build SQL text: no connection, no state,
// so each is tested by comparing strings.

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table someone else owns. table_name compares without case
// because SQLite's identifiers do: "UserTable" and "usertable" are one table.
const markerTable = "dbprobe_tables"

// identityColumn is the marker table's column for the identity of the table
// dbprobe created (tableIdentitySQL), which tells that table from one
// created later under the same name. Marker tables of earlier dbprobe
// versions lack it until dbprobe next creates a table.
const identityColumn = "table_identity"

const (
	createMarkerSQL = `CREATE TABLE IF NOT EXISTS "` + markerTable + `" (` +
		`table_name TEXT NOT NULL PRIMARY KEY COLLATE NOCASE, ` +
		`created_at TEXT NOT NULL, ` +
		`dbprobe_version TEXT NOT NULL, ` +
		identityColumn + ` TEXT)`
	// markerShapeSQL says whether the marker table exists and whether it
	// has the identity column.
	markerShapeSQL = `SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '` + markerTable + `'), ` +
		`(SELECT COUNT(*) FROM pragma_table_info('` + markerTable + `') WHERE name = '` + identityColumn + `')`
	addIdentitySQL = `ALTER TABLE "` + markerTable + `" ADD COLUMN ` + identityColumn + ` TEXT`
	// insertMarkerSQL replaces a stale row left by a table someone dropped
	// by hand: the table was just created by us, so the row must say so.
	insertMarkerSQL = `INSERT OR REPLACE INTO "` + markerTable + `" (table_name, created_at, dbprobe_version, ` + identityColumn + `) VALUES (?, ?, ?, ?)`
	deleteMarkerSQL = `DELETE FROM "` + markerTable + `" WHERE table_name = ?`
	// selectIdentitySQL reads a marker row's identity; selectLegacySQL
	// finds the row in a marker table of an earlier dbprobe, which has
	// none.
	selectIdentitySQL = `SELECT IFNULL(` + identityColumn + `, '') FROM "` + markerTable + `" WHERE table_name = ?`
	selectLegacySQL   = `SELECT '' FROM "` + markerTable + `" WHERE table_name = ?`
	// tableIdentitySQL reads a table's identity: its root page and its
	// CREATE statement, which carries a random id dbprobe gives each table
	// it creates (createTableSQL). Dropped and created again, a table
	// often gets the freed root page back, but not the id, unless its
	// statement was copied; a VACUUM may move the root page, and the table
	// then no longer counts as dbprobe's: the safe side.
	tableIdentitySQL = `SELECT rootpage || ' ' || sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE`
	tableExistsSQL   = `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE`
	tableColumnsSQL  = `SELECT name FROM pragma_table_info(?) ORDER BY cid`
	// mainFileSQL gives the file of the main database: "" when it is in
	// memory.
	mainFileSQL       = `SELECT file FROM pragma_database_list WHERE name = 'main'`
	beginImmediateSQL = `BEGIN IMMEDIATE`
	commitSQL         = `COMMIT`
	rollbackSQL       = `ROLLBACK`
)

// quoteIdent quotes an identifier for SQLite. Names arrive validated as
// plain identifiers; quoting anyway keeps reserved words (a table called
// "order") and the exact case working.
func quoteIdent(name string) string { return sqlgen.SQLite.Quote(name) }

// varchar declares a text column; SQLite does not enforce the length, but
// declaring it keeps the schema the same as on every other database.
func varchar(n int) string {
	if n <= 0 {
		return "VARCHAR"
	}
	return "VARCHAR(" + strconv.Itoa(n) + ")"
}

// createTableSQL is the YCSB table: a text primary key and NOT NULL text
// fields. It stays a rowid table: rows of about 1 KB are what SQLite's
// documentation advises against for WITHOUT ROWID. id, hexadecimal, goes
// into a comment, which SQLite keeps with the statement in sqlite_master.
func createTableSQL(t driver.Table, id string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" /* created by dbprobe, id ")
	b.WriteString(id)
	b.WriteString(" */ (")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(" ")
	b.WriteString(varchar(t.KeyLength))
	b.WriteString(" NOT NULL PRIMARY KEY")
	for _, f := range t.Fields {
		b.WriteString(", ")
		b.WriteString(quoteIdent(f))
		b.WriteString(" ")
		b.WriteString(varchar(t.FieldLength))
		b.WriteString(" NOT NULL")
	}
	b.WriteString(")")
	return b.String()
}

func dropTableSQL(t driver.Table) string {
	return "DROP TABLE IF EXISTS " + quoteIdent(t.Name)
}

func hasRowsSQL(t driver.Table) string { return gen(t).HasRows() }

// gen returns sqlgen's statements of t. They are built when a statement is
// first prepared, never per operation.
func gen(t driver.Table) *sqlgen.Table {
	return sqlgen.SQLite.Table("", t.Name, t.KeyColumn, t.Fields)
}

// selectSQL reads the listed fields (all when nil) of one record.
func selectSQL(t driver.Table, fields []int) string { return gen(t).Read(fields) }

// scanSQL reads the key and the listed fields of up to ? records from a
// start key on, in key order: the primary key index serves both the range
// and the order, so no sort step runs.
func scanSQL(t driver.Table, fields []int) string { return gen(t).Scan(fields) }

// updateSQL sets the listed fields of one record; the key is the last
// parameter.
func updateSQL(t driver.Table, fields []int) string { return gen(t).Update(fields) }

// insertSQL inserts rows records of the key and every field, in that order.
func insertSQL(t driver.Table, rows int) string { return gen(t).Insert(rows) }

func deleteSQL(t driver.Table) string { return gen(t).Delete() }

// multiRowCount is how many records one multi-row INSERT carries when
// Options.BulkLoad is off. SQLite allows 32766 parameters per statement;
// staying near 1000 keeps each statement small enough to prepare once and
// reuse, and past a few dozen rows a larger statement no longer saves time.
func multiRowCount(fields int) int {
	n := 1000 / (fields + 1)
	if n < 1 {
		n = 1
	}
	return n
}
