package postgres

import (
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"dbprobe/internal/driver"
)

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table it did not create.
const markerTable = "dbprobe_tables"

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
func quote(name string) string { return pgx.Identifier{foldName(name)}.Sanitize() }

// qualify quotes name inside schema; an empty schema leaves the name to the
// search path.
func qualify(schema, name string) string {
	if schema == "" {
		return pgx.Identifier{name}.Sanitize()
	}
	return pgx.Identifier{schema, name}.Sanitize()
}

// dialect holds the quoted names of one table and returns the SQL text of
// every statement dbprobe runs on it. It has no connection: it is plain text
// in, text out, and tested as such.
type dialect struct {
	table  string   // schema-qualified, quoted table name
	key    string   // quoted key column
	fields []string // quoted field columns
}

func newDialect(schema string, t driver.Table) *dialect {
	d := &dialect{
		table:  qualify(schema, foldName(t.Name)),
		key:    quote(t.KeyColumn),
		fields: make([]string, len(t.Fields)),
	}
	for i, f := range t.Fields {
		d.fields[i] = quote(f)
	}
	return d
}

// createTable returns the CREATE TABLE statement. The key column uses the C
// collation: keys then compare byte by byte, which is both the order YCSB and
// the other drivers scan in and cheaper than a locale's collation.
func (d *dialect) createTable(keyLength, fieldLength int) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
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
func (d *dialect) columnList(b *strings.Builder, idx []int) {
	if idx == nil {
		for i, f := range d.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f)
		}
		return
	}
	for i, f := range idx {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.fields[f])
	}
}

// read returns the SELECT of the listed fields (nil: all) of one key ($1).
func (d *dialect) read(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	d.columnList(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(d.table)
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" = $1")
	return b.String()
}

// scan returns the range read: the key then the listed fields, from $1
// inclusive, at most $2 rows, in key order.
func (d *dialect) scan(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(d.table)
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" >= $1 ORDER BY ")
	b.WriteString(d.key)
	b.WriteString(" LIMIT $2")
	return b.String()
}

// update returns the UPDATE of the listed fields (nil: all): the new values
// are $1…$n, the key is $n+1.
func (d *dialect) update(idx []int) string {
	var b strings.Builder
	b.WriteString("UPDATE ")
	b.WriteString(d.table)
	b.WriteString(" SET ")
	n := len(idx)
	if idx == nil {
		n = len(d.fields)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if idx == nil {
			b.WriteString(d.fields[i])
		} else {
			b.WriteString(d.fields[idx[i]])
		}
		b.WriteString(" = $")
		b.WriteString(strconv.Itoa(i + 1))
	}
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" = $")
	b.WriteString(strconv.Itoa(n + 1))
	return b.String()
}

// insert returns a multi-row INSERT of rows records: each row's parameters
// are the key then every field.
func (d *dialect) insert(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, nil)
	b.WriteString(") VALUES ")
	p := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for c := 0; c <= len(d.fields); c++ {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$")
			b.WriteString(strconv.Itoa(p))
			p++
		}
		b.WriteString(")")
	}
	return b.String()
}

// delete returns the DELETE of one key ($1).
func (d *dialect) delete() string {
	return "DELETE FROM " + d.table + " WHERE " + d.key + " = $1"
}

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
func (d *dialect) hasRows() string {
	return "SELECT 1 FROM " + d.table + " LIMIT 1"
}

// maxParams is the most parameters one extended-protocol statement can bind.
const maxParams = 65535

// rowsPerInsert is how many records fit in one multi-row INSERT.
func rowsPerInsert(fields int) int {
	return maxParams / (fields + 1)
}

// appendCopyText appends one value in COPY's text format: backslash, tab,
// newline and carriage return are escaped, every other byte passes as is.
func appendCopyText(dst, v []byte) []byte {
	start := 0
	for i, c := range v {
		var esc byte
		switch c {
		case '\\':
			esc = '\\'
		case '\t':
			esc = 't'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		default:
			continue
		}
		dst = append(dst, v[start:i]...)
		dst = append(dst, '\\', esc)
		start = i + 1
	}
	return append(dst, v[start:]...)
}
