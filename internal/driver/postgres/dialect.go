package postgres

import (
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table it did not create.
const markerTable = "dbprobe_tables"

// identityColumn is the marker table's column for the identity of the table
// dbprobe created (its OID), which tells that table from one created later
// under the same name. Marker tables of earlier dbprobe versions lack it
// until dbprobe next creates a table.
const identityColumn = "table_identity"

// foldName lowers ASCII letters the way PostgreSQL folds an unquoted
// identifier. Names are folded and then quoted, so that the table looks the
// same as one created by unquoted SQL (psql users type usertable, ycsb_key)
// while a name that is a reserved word still works.
func foldName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// quote folds and quotes one identifier.
func quote(name string) string { return sqlgen.Postgres.Quote(foldName(name)) }

// qualify quotes name inside schema; an empty schema leaves the name to the
// search path.
func qualify(schema, name string) string { return sqlgen.Postgres.Qualify(schema, name) }

// dialect holds the quoted names of one table and returns the SQL text of
// every statement dbprobe runs on it. It has no connection: it is plain text
// in, text out, and tested as such. The key-value statements are
// sqlgen's; the COPY and the procedure path are PostgreSQL's own.
type dialect struct {
	gen    *sqlgen.Table
	table  string   // schema-qualified, quoted table name
	key    string   // quoted key column
	fields []string // quoted field columns
	proc   procs    // the procedure path's functions
}

// procs holds the schema-qualified, quoted names of a table's functions on
// the procedure path (driver.Procedures), folded like the table's name.
type procs struct {
	read, scan, update, insert, delete string
}

func newDialect(schema string, t driver.Table) *dialect {
	fields := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		fields[i] = foldName(f)
	}
	g := sqlgen.Postgres.Table(schema, foldName(t.Name), foldName(t.KeyColumn), fields)
	d := &dialect{gen: g, table: g.Name, key: g.Key, fields: g.Fields}
	p := driver.Procedures(t)
	d.proc = procs{
		read:   qualify(schema, foldName(p.Read)),
		scan:   qualify(schema, foldName(p.Scan)),
		update: qualify(schema, foldName(p.Update)),
		insert: qualify(schema, foldName(p.Insert)),
		delete: qualify(schema, foldName(p.Delete)),
	}
	return d
}

// createTable returns the CREATE TABLE statement; unlogged makes it an
// UNLOGGED table (--table-type nondurable), whose changes skip the WAL and
// which PostgreSQL empties after a crash. The key column uses the C
// collation: keys then compare byte by byte, which is both the order YCSB and
// the other drivers scan in and cheaper than a locale's collation.
func (d *dialect) createTable(keyLength, fieldLength int, unlogged bool) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if unlogged {
		b.WriteString("UNLOGGED ")
	}
	b.WriteString("TABLE ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(" varchar(")
	b.WriteString(strconv.Itoa(keyLength))
	b.WriteString(`) COLLATE "C" PRIMARY KEY`)
	for _, f := range d.fields {
		b.WriteString(", ")
		b.WriteString(f)
		b.WriteString(" varchar(")
		b.WriteString(strconv.Itoa(fieldLength))
		b.WriteString(") NOT NULL")
	}
	b.WriteString(")")
	return b.String()
}

// columnList writes the listed fields, or all of them when idx is nil.
func (d *dialect) columnList(b *strings.Builder, idx []int) { d.gen.Columns(b, idx) }

// read returns the SELECT of the listed fields (nil: all) of one key ($1).
func (d *dialect) read(idx []int) string { return d.gen.Read(idx) }

// scan returns the range read: the key then the listed fields, from $1
// inclusive, at most $2 rows, in key order.
func (d *dialect) scan(idx []int) string { return d.gen.Scan(idx) }

// update returns the UPDATE of the listed fields (nil: all): the new values
// are $1…$n, the key is $n+1.
func (d *dialect) update(idx []int) string { return d.gen.Update(idx) }

// insert returns a multi-row INSERT of rows records: each row's parameters
// are the key then every field.
func (d *dialect) insert(rows int) string { return d.gen.Insert(rows) }

// delete returns the DELETE of one key ($1).
func (d *dialect) delete() string { return d.gen.Delete() }

// copyFrom returns the COPY … FROM STDIN statement, in the text format.
func (d *dialect) copyFrom() string {
	var b strings.Builder
	b.WriteString("COPY ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, nil)
	b.WriteString(") FROM STDIN")
	return b.String()
}

// hasRows returns a query that yields one row when the table has any.
func (d *dialect) hasRows() string { return d.gen.HasRows() }

// maxParams is the most parameters one extended-protocol statement can bind.
const maxParams = 65535

// rowsPerInsert is how many records fit in one multi-row INSERT.
func rowsPerInsert(fields int) int {
	return maxParams / (fields + 1)
}

// appendCopyText appends one value in COPY's text format: backslash, tab,
// newline and carriage return are escaped, every other byte passes as is.
func appendCopyText(dst, v []byte) []byte {
	return sqlgen.AppendEscaped(dst, v, &sqlgen.CopyEscapes)
}

// maxIdentifier is the longest name PostgreSQL keeps (NAMEDATALEN - 1
// bytes); a longer one is cut short with only a NOTICE, which would make
// the five function names of a long table name collide.
const maxIdentifier = 63

// procedureNamesFit reports whether the table's function names fit
// PostgreSQL's identifiers uncut; the longest ends in _update, _insert or
// _delete.
func procedureNamesFit(t driver.Table) bool {
	return len(foldName(driver.Procedures(t).Update)) <= maxIdentifier
}

// procedureNames are the table's function names as pg_proc holds them.
func procedureNames(t driver.Table) []string {
	names := driver.Procedures(t).All()
	for i, n := range names {
		names[i] = foldName(n)
	}
	return names
}

// varcharArgs returns n "varchar" argument types separated by commas.
func varcharArgs(b *strings.Builder, n int) {
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("varchar")
	}
}

// procedureSignatures returns the five functions with their argument types,
// as to_regprocedure reads them: the procedure path is ready when all five
// resolve.
func (d *dialect) procedureSignatures() []string {
	n := len(d.fields)
	sig := func(name string, args int, last string) string {
		var b strings.Builder
		b.WriteString(name)
		b.WriteString("(")
		varcharArgs(&b, args)
		b.WriteString(last)
		b.WriteString(")")
		return b.String()
	}
	return []string{
		sig(d.proc.read, 1, ""),
		sig(d.proc.scan, 1, ", integer"),
		sig(d.proc.update, n+1, ""),
		sig(d.proc.insert, n+1, ""),
		sig(d.proc.delete, 1, ""),
	}
}

// bodyQuote delimits the functions' bodies. Names are plain identifiers,
// so a body can never hold it.
const bodyQuote = "$dbprobe$"

// createProcedures returns the CREATE FUNCTION statements of the procedure
// path, one per operation. The functions' parameters are unnamed and used
// as $1, $2, …, so that no field name can clash with a parameter's.
//
// read and scan are SQL functions: the planner inlines them into the
// calling query (EXPLAIN shows a plain index scan), so a read costs what
// the statement path's does plus the function lookup at prepare time. The
// writes are PL/pgSQL, which keeps their plans across calls within a
// session (a non-inlined SQL function before PostgreSQL 18 plans its body
// again on every call) and counts the rows with GET DIAGNOSTICS, so that a
// missing key is told apart. update takes every field: NULL keeps a field
// as it is (COALESCE), so one function serves every field list.
// #variable_conflict use_column lets a field named like the function's one
// variable still mean the column.
func (d *dialect) createProcedures() []string {
	n := len(d.fields)
	var read, scan, update, insert, del strings.Builder

	read.WriteString("CREATE FUNCTION ")
	read.WriteString(d.proc.read)
	read.WriteString("(varchar) RETURNS TABLE(")
	for i, f := range d.fields {
		if i > 0 {
			read.WriteString(", ")
		}
		read.WriteString(f)
		read.WriteString(" varchar")
	}
	read.WriteString(") LANGUAGE sql STABLE AS " + bodyQuote + "SELECT ")
	d.columnList(&read, nil)
	read.WriteString(" FROM ")
	read.WriteString(d.table)
	read.WriteString(" WHERE ")
	read.WriteString(d.key)
	read.WriteString(" = $1" + bodyQuote)

	scan.WriteString("CREATE FUNCTION ")
	scan.WriteString(d.proc.scan)
	scan.WriteString("(varchar, integer) RETURNS TABLE(")
	scan.WriteString(d.key)
	scan.WriteString(" varchar")
	for _, f := range d.fields {
		scan.WriteString(", ")
		scan.WriteString(f)
		scan.WriteString(" varchar")
	}
	scan.WriteString(") LANGUAGE sql STABLE AS " + bodyQuote + "SELECT ")
	scan.WriteString(d.key)
	scan.WriteString(", ")
	d.columnList(&scan, nil)
	scan.WriteString(" FROM ")
	scan.WriteString(d.table)
	scan.WriteString(" WHERE ")
	scan.WriteString(d.key)
	scan.WriteString(" >= $1 ORDER BY ")
	scan.WriteString(d.key)
	scan.WriteString(" LIMIT $2" + bodyQuote)

	update.WriteString("CREATE FUNCTION ")
	update.WriteString(d.proc.update)
	update.WriteString("(")
	varcharArgs(&update, n+1)
	update.WriteString(") RETURNS integer LANGUAGE plpgsql AS " + bodyQuote + "\n#variable_conflict use_column\nDECLARE affected integer;\nBEGIN\n  UPDATE ")
	update.WriteString(d.table)
	update.WriteString(" SET ")
	for i, f := range d.fields {
		if i > 0 {
			update.WriteString(", ")
		}
		update.WriteString(f)
		update.WriteString(" = COALESCE($")
		update.WriteString(strconv.Itoa(i + 2))
		update.WriteString(", ")
		update.WriteString(f)
		update.WriteString(")")
	}
	update.WriteString(" WHERE ")
	update.WriteString(d.key)
	update.WriteString(" = $1;\n  GET DIAGNOSTICS affected = ROW_COUNT;\n  RETURN affected;\nEND\n" + bodyQuote)

	insert.WriteString("CREATE FUNCTION ")
	insert.WriteString(d.proc.insert)
	insert.WriteString("(")
	varcharArgs(&insert, n+1)
	insert.WriteString(") RETURNS void LANGUAGE plpgsql AS " + bodyQuote + "\nBEGIN\n  INSERT INTO ")
	insert.WriteString(d.table)
	insert.WriteString(" (")
	insert.WriteString(d.key)
	insert.WriteString(", ")
	d.columnList(&insert, nil)
	insert.WriteString(") VALUES (")
	for i := 1; i <= n+1; i++ {
		if i > 1 {
			insert.WriteString(", ")
		}
		insert.WriteString("$")
		insert.WriteString(strconv.Itoa(i))
	}
	insert.WriteString(");\nEND\n" + bodyQuote)

	del.WriteString("CREATE FUNCTION ")
	del.WriteString(d.proc.delete)
	del.WriteString("(varchar) RETURNS integer LANGUAGE plpgsql AS " + bodyQuote + "\n#variable_conflict use_column\nDECLARE affected integer;\nBEGIN\n  DELETE FROM ")
	del.WriteString(d.table)
	del.WriteString(" WHERE ")
	del.WriteString(d.key)
	del.WriteString(" = $1;\n  GET DIAGNOSTICS affected = ROW_COUNT;\n  RETURN affected;\nEND\n" + bodyQuote)

	return []string{read.String(), scan.String(), update.String(), insert.String(), del.String()}
}

// callRead returns the procedure path's read: the listed fields (nil: all)
// of what the read function returns for $1.
func (d *dialect) callRead(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	d.columnList(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(d.proc.read)
	b.WriteString("($1)")
	return b.String()
}

// callScan returns the procedure path's scan from $1, at most $2 records.
// The function returns them in key order already; the ORDER BY makes the
// order a promise rather than a habit, and costs no sort: the planner sees
// the inlined function's rows come sorted on the key.
func (d *dialect) callScan(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(d.proc.scan)
	b.WriteString("($1, $2) ORDER BY ")
	b.WriteString(d.key)
	b.WriteString(` COLLATE "C"`)
	return b.String()
}

// callUpdate returns the procedure path's update of the listed fields (nil:
// all), with the statement path's parameters: the new values are $1…$n and
// the key is $n+1. Fields not listed are passed as NULL, which the
// function keeps as they are.
func (d *dialect) callUpdate(idx []int) string {
	n := len(idx)
	if idx == nil {
		n = len(d.fields)
	}
	param := make([]int, len(d.fields)) // field -> parameter number, 0 for none
	for i := 0; i < n; i++ {
		f := i
		if idx != nil {
			f = idx[i]
		}
		param[f] = i + 1
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(d.proc.update)
	b.WriteString("($")
	b.WriteString(strconv.Itoa(n + 1))
	for _, p := range param {
		if p == 0 {
			b.WriteString(", NULL")
			continue
		}
		b.WriteString(", $")
		b.WriteString(strconv.Itoa(p))
	}
	b.WriteString(")")
	return b.String()
}

// callInsert returns the procedure path's insert: the key is $1, the
// fields $2….
func (d *dialect) callInsert() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(d.proc.insert)
	b.WriteString("(")
	for i := 1; i <= len(d.fields)+1; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString("$")
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}

// callDelete returns the procedure path's delete of key $1.
func (d *dialect) callDelete() string {
	return "SELECT " + d.proc.delete + "($1)"
}

// tableStorage reads pg_class.relpersistence and the table's access method
// into a table type and PostgreSQL's own words for it.
func tableStorage(persistence, accessMethod string) (driver.TableType, string) {
	if accessMethod == "" {
		accessMethod = "heap"
	}
	switch persistence {
	case "p":
		return driver.TableDisk, "logged " + accessMethod + " table"
	case "u":
		return driver.TableNondurable, "UNLOGGED " + accessMethod + " table (not written to the WAL; emptied after a crash)"
	case "t":
		return driver.TableNondurable, "TEMPORARY " + accessMethod + " table"
	}
	return driver.TableDisk, accessMethod + " table of relpersistence '" + persistence + "'"
}
