package sqlite

import (
	"strconv"
	"strings"

	"dbprobe/internal/driver"
)

// The functions in this file only build SQL text: no connection, no state,
// so each is tested by comparing strings.

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table someone else owns. table_name compares without case
// because SQLite's identifiers do: "UserTable" and "usertable" are one table.
const markerTable = "dbprobe_tables"

const (
	createMarkerSQL = `CREATE TABLE IF NOT EXISTS "` + markerTable + `" (` +
		`table_name TEXT NOT NULL PRIMARY KEY COLLATE NOCASE, ` +
		`created_at TEXT NOT NULL, ` +
		`dbprobe_version TEXT NOT NULL)`
	// insertMarkerSQL replaces a stale row left by a table someone dropped
	// by hand: the table was just created by us, so the row must say so.
	insertMarkerSQL = `INSERT OR REPLACE INTO "` + markerTable + `" (table_name, created_at, dbprobe_version) VALUES (?, ?, ?)`
	deleteMarkerSQL = `DELETE FROM "` + markerTable + `" WHERE table_name = ?`
	selectMarkerSQL = `SELECT 1 FROM "` + markerTable + `" WHERE table_name = ?`
	tableExistsSQL  = `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE`
	tableColumnsSQL = `SELECT name FROM pragma_table_info(?) ORDER BY cid`
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
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

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
// documentation advises against for WITHOUT ROWID.
func createTableSQL(t driver.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" (")
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

func hasRowsSQL(t driver.Table) string {
	return "SELECT 1 FROM " + quoteIdent(t.Name) + " LIMIT 1"
}

// columnList writes the quoted names of the listed fields, or of all of
// them when fields is nil.
func columnList(b *strings.Builder, t driver.Table, fields []int) {
	if fields == nil {
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(f))
		}
		return
	}
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(t.Fields[f]))
	}
}

// selectSQL reads the listed fields (all when nil) of one record.
func selectSQL(t driver.Table, fields []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	columnList(&b, t, fields)
	b.WriteString(" FROM ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" WHERE ")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(" = ?")
	return b.String()
}

// scanSQL reads the key and the listed fields of up to ? records from a
// start key on, in key order: the primary key index serves both the range
// and the order, so no sort step runs.
func scanSQL(t driver.Table, fields []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(", ")
	columnList(&b, t, fields)
	b.WriteString(" FROM ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" WHERE ")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(" >= ? ORDER BY ")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(" LIMIT ?")
	return b.String()
}

// updateSQL sets the listed fields of one record; the key is the last
// parameter.
func updateSQL(t driver.Table, fields []int) string {
	var b strings.Builder
	b.WriteString("UPDATE ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" SET ")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(t.Fields[f]))
		b.WriteString(" = ?")
	}
	b.WriteString(" WHERE ")
	b.WriteString(quoteIdent(t.KeyColumn))
	b.WriteString(" = ?")
	return b.String()
}

// insertSQL inserts rows records of the key and every field, in that order.
func insertSQL(t driver.Table, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" (")
	b.WriteString(quoteIdent(t.KeyColumn))
	for _, f := range t.Fields {
		b.WriteString(", ")
		b.WriteString(quoteIdent(f))
	}
	b.WriteString(") VALUES ")
	row := "(?" + strings.Repeat(", ?", len(t.Fields)) + ")"
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

func deleteSQL(t driver.Table) string {
	return "DELETE FROM " + quoteIdent(t.Name) + " WHERE " + quoteIdent(t.KeyColumn) + " = ?"
}

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
