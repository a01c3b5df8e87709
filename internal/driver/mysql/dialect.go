package mysql

import (
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table it did not create.
const markerTable = "dbprobe_tables"

// identityColumn is the marker table's column for the identity of the table
// dbprobe created, which tells that table from one created later under the
// same name. Marker tables of earlier dbprobe versions lack it until dbprobe
// next creates a table.
const identityColumn = "table_identity"

// tableIdentity reads the identity of table ? of the current database, NULL
// when there is none: its creation time, as a Unix time so that the
// session's time zone does not change it, and its comment, which carries a
// random id dbprobe gives each table it creates (tableComment). A
// least-privileged user can read both; CREATE_TIME alone has whole
// seconds, and a table dropped and created again within the second would
// keep it. ALTER TABLE and OPTIMIZE TABLE change CREATE_TIME too: the table
// then no longer counts as dbprobe's, the safe side.
const tableIdentity = `SELECT CONCAT(IFNULL(UNIX_TIMESTAMP(CREATE_TIME), ''), ' ', TABLE_COMMENT) FROM information_schema.TABLES
	WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`

// tableComment is the comment of a table dbprobe creates, with the random
// id (hexadecimal) that makes its identity its own.
func tableComment(id string) string { return "created by dbprobe, id " + id }

// maxIdentifier is the longest table, column or routine name MySQL takes.
const maxIdentifier = 64

// maxRowSize is the most bytes MySQL allows in the columns of one row
// other than BLOBs, whatever the engine.
const maxRowSize = 65535

// maxParams is the most placeholders one prepared statement may hold.
const maxParams = 65535

// quote quotes one identifier with backticks. MySQL compares column names
// without case and table names as the file system does
// (lower_case_table_names); names are kept as given.
func quote(name string) string { return sqlgen.MySQL.Quote(name) }

// varbinaryBytes is what a VARBINARY(n) column counts toward maxRowSize:
// its bytes and a length prefix of one or two bytes.
func varbinaryBytes(n int) int {
	if n < 256 {
		return n + 1
	}
	return n + 2
}

// columnTypes chooses the key and field column types. Values are arbitrary
// bytes, so the columns are binary strings: nothing is converted between
// character sets, every byte round-trips, and keys compare byte by byte,
// which is the order scans read in. Fields are VARBINARY(fieldlength) when
// the row fits in MySQL's row size limit; wider InnoDB rows keep their
// fields in BLOBs, which ENGINE=MEMORY cannot hold.
func columnTypes(t driver.Table, tt driver.TableType) (keyType, fieldType string, err error) {
	keyType = "VARBINARY(" + strconv.Itoa(t.KeyLength) + ")"
	row := varbinaryBytes(t.KeyLength) + len(t.Fields)*varbinaryBytes(t.FieldLength)
	if row <= maxRowSize {
		return keyType, "VARBINARY(" + strconv.Itoa(t.FieldLength) + ")", nil
	}
	if tt == driver.TableMemory {
		return "", "", badinput.New("an ENGINE=MEMORY table holds rows of at most %d bytes and cannot hold BLOBs; a %d-byte key and %d fields of %d bytes need %d: lower fieldlength or fieldcount, or use --table-type disk",
			maxRowSize, t.KeyLength, len(t.Fields), t.FieldLength, row)
	}
	switch {
	case t.FieldLength <= 65535:
		fieldType = "BLOB"
	case t.FieldLength <= 16777215:
		fieldType = "MEDIUMBLOB"
	default:
		fieldType = "LONGBLOB"
	}
	return keyType, fieldType, nil
}

// dialect holds the quoted names of one table and returns the SQL text of
// every statement dbprobe runs on it. It has no connection: it is plain text
// in, text out, and tested as such. The key-value statements are sqlgen's;
// LOAD DATA and the procedure path are MySQL's own.
type dialect struct {
	gen       *sqlgen.Table
	table     string   // quoted table name
	key       string   // quoted key column
	fields    []string // quoted field columns
	keyType   string
	fieldType string
	procs     driver.ProcedureNames // unquoted
}

// newDialect returns the dialect of table t stored as tt.
func newDialect(t driver.Table, tt driver.TableType) (*dialect, error) {
	if err := driver.CheckTable(t); err != nil {
		return nil, err
	}
	keyType, fieldType, err := columnTypes(t, tt)
	if err != nil {
		return nil, err
	}
	g := sqlgen.MySQL.Table("", t.Name, t.KeyColumn, t.Fields)
	return &dialect{
		gen:       g,
		table:     g.Name,
		key:       g.Key,
		fields:    g.Fields,
		keyType:   keyType,
		fieldType: fieldType,
		procs:     driver.Procedures(t),
	}, nil
}

// createTable returns the CREATE TABLE statement; id, hexadecimal, goes
// into the table's comment (tableComment). TableMemory is ENGINE=MEMORY
// with a B-tree primary key: MEMORY indexes are hashes by default, and a
// hash cannot serve a range scan in key order.
func (d *dialect) createTable(tt driver.TableType, id string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(" ")
	b.WriteString(d.keyType)
	b.WriteString(" NOT NULL")
	for _, f := range d.fields {
		b.WriteString(", ")
		b.WriteString(f)
		b.WriteString(" ")
		b.WriteString(d.fieldType)
		b.WriteString(" NOT NULL")
	}
	b.WriteString(", PRIMARY KEY (")
	b.WriteString(d.key)
	if tt == driver.TableMemory {
		b.WriteString(") USING BTREE) ENGINE=MEMORY")
	} else {
		b.WriteString(")) ENGINE=InnoDB")
	}
	b.WriteString(" COMMENT='" + tableComment(id) + "'")
	return b.String()
}

// columnList writes the listed fields, or all of them when idx is nil.
func (d *dialect) columnList(b *strings.Builder, idx []int) { d.gen.Columns(b, idx) }

// read returns the SELECT of the listed fields (nil: all) of one key.
func (d *dialect) read(idx []int) string { return d.gen.Read(idx) }

// scan returns the range read: the key then the listed fields, from the
// first parameter on, at most the second parameter's count of rows, in key
// order.
func (d *dialect) scan(idx []int) string { return d.gen.Scan(idx) }

// update returns the UPDATE of the listed fields (nil: all): the new values
// come first, the key last.
func (d *dialect) update(idx []int) string { return d.gen.Update(idx) }

// insert returns a multi-row INSERT of rows records: each row's parameters
// are the key then every field.
func (d *dialect) insert(rows int) string { return d.gen.Insert(rows) }

// delete returns the DELETE of one key.
func (d *dialect) delete() string { return d.gen.Delete() }

// hasRows returns a query that yields one row when the table has any.
func (d *dialect) hasRows() string { return d.gen.HasRows() }

// loadData returns the LOAD DATA LOCAL statement that reads go-sql-driver's
// registered reader name. The format is MySQL's default one, spelt out so
// that no server or session default can change it: fields end with a tab,
// lines with a newline, and a backslash escapes (appendLoadText). The
// separators are hex literals, which read the same whether or not the
// session's sql_mode has NO_BACKSLASH_ESCAPES. CHARACTER SET binary: the
// bytes go into the binary columns as they are.
func (d *dialect) loadData(reader string) string {
	var b strings.Builder
	b.WriteString("LOAD DATA LOCAL INFILE 'Reader::")
	b.WriteString(reader)
	b.WriteString("' INTO TABLE ")
	b.WriteString(d.table)
	b.WriteString(" CHARACTER SET binary FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' (")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, nil)
	b.WriteString(")")
	return b.String()
}

// appendLoadText appends one value in LOAD DATA's escaped text format:
// backslash, tab, newline, carriage return, NUL and Ctrl-Z are written as a
// backslash sequence, every other byte as it is. A value is never read as
// NULL: \N needs an unescaped backslash, and every backslash is escaped.
func appendLoadText(dst, v []byte) []byte {
	return sqlgen.AppendEscaped(dst, v, &sqlgen.LoadDataEscapes)
}

// Procedure parameters are named apart from any column: inside a routine a
// parameter hides a column of the same name.
const (
	paramKey   = "dbprobe_key"
	paramCount = "dbprobe_count"
)

func paramValue(i int) string { return "dbprobe_v" + strconv.Itoa(i) }

// procedures returns the CREATE PROCEDURE statements of the procedure path,
// in the order of driver.ProcedureNames.All. Read and scan return every
// field, so that one procedure serves any field list; update takes every
// field and keeps a column whose argument is NULL. Update and delete end
// with SELECT ROW_COUNT(), the rows they found (the connection reports
// found rows, not changed ones), so that a missing key is seen through CALL.
func (d *dialect) procedures() []string {
	keyParam := "IN " + paramKey + " " + d.keyType
	valueParams := func() string {
		var b strings.Builder
		for i := range d.fields {
			b.WriteString(", IN ")
			b.WriteString(paramValue(i))
			b.WriteString(" ")
			b.WriteString(d.fieldType)
		}
		return b.String()
	}
	whereKey := " WHERE " + d.key + " = " + paramKey

	var read strings.Builder
	read.WriteString("CREATE PROCEDURE " + quote(d.procs.Read) + "(" + keyParam + ") READS SQL DATA SELECT ")
	d.columnList(&read, nil)
	read.WriteString(" FROM " + d.table + whereKey)

	var scan strings.Builder
	scan.WriteString("CREATE PROCEDURE " + quote(d.procs.Scan) + "(" + keyParam + ", IN " + paramCount + " INT) READS SQL DATA SELECT " + d.key + ", ")
	d.columnList(&scan, nil)
	scan.WriteString(" FROM " + d.table + " WHERE " + d.key + " >= " + paramKey + " ORDER BY " + d.key + " LIMIT " + paramCount)

	var update strings.Builder
	update.WriteString("CREATE PROCEDURE " + quote(d.procs.Update) + "(" + keyParam + valueParams() + ") MODIFIES SQL DATA BEGIN UPDATE " + d.table + " SET ")
	for i, f := range d.fields {
		if i > 0 {
			update.WriteString(", ")
		}
		update.WriteString(f + " = COALESCE(" + paramValue(i) + ", " + f + ")")
	}
	update.WriteString(whereKey + "; SELECT ROW_COUNT(); END")

	var insert strings.Builder
	insert.WriteString("CREATE PROCEDURE " + quote(d.procs.Insert) + "(" + keyParam + valueParams() + ") MODIFIES SQL DATA INSERT INTO " + d.table + " (" + d.key + ", ")
	d.columnList(&insert, nil)
	insert.WriteString(") VALUES (" + paramKey)
	for i := range d.fields {
		insert.WriteString(", " + paramValue(i))
	}
	insert.WriteString(")")

	del := "CREATE PROCEDURE " + quote(d.procs.Delete) + "(" + keyParam + ") MODIFIES SQL DATA BEGIN DELETE FROM " + d.table + whereKey + "; SELECT ROW_COUNT(); END"

	return []string{read.String(), scan.String(), update.String(), insert.String(), del}
}

// dropProcedure returns the DROP PROCEDURE IF EXISTS of one name.
func dropProcedure(name string) string {
	return "DROP PROCEDURE IF EXISTS " + quote(name)
}

// call returns the CALL of procedure name with n placeholders.
func call(name string, n int) string {
	var b strings.Builder
	b.WriteString("CALL ")
	b.WriteString(quote(name))
	b.WriteString("(")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("?")
	}
	b.WriteString(")")
	return b.String()
}

// calls returns the CALL statements of the procedure path, in the order of
// driver.ProcedureNames.All.
func (d *dialect) calls() []string {
	n := len(d.fields)
	return []string{call(d.procs.Read, 1), call(d.procs.Scan, 2), call(d.procs.Update, n+1), call(d.procs.Insert, n+1), call(d.procs.Delete, 1)}
}

// checkProcedureNames refuses a table whose procedure names would be longer
// than MySQL's identifiers may be.
func checkProcedureNames(t driver.Table) error {
	for _, name := range driver.Procedures(t).All() {
		if len(name) > maxIdentifier {
			return badinput.New("table name %q is too long for the procedure path: procedure %s is longer than MySQL's %d characters; use a table name of at most %d characters",
				t.Name, name, maxIdentifier, maxIdentifier-len("dbprobe__update"))
		}
	}
	return nil
}

// rowsPerInsert is how many records fit in one multi-row INSERT by its
// placeholders.
func rowsPerInsert(fields int) int {
	return maxParams / (fields + 1)
}

// privilegeProbe returns a statement that needs privilege p on the
// columns the operations use and matches no row (WHERE 1 = 0): updates set
// fields and find their row by key, inserts write every column, reads and
// scans read every column.
func (d *dialect) privilegeProbe(p driver.Access) string {
	var b strings.Builder
	switch p {
	case driver.AccessUpdate:
		b.WriteString("UPDATE " + d.table + " SET ")
		for i, f := range d.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f + " = NULL")
		}
	case driver.AccessInsert:
		b.WriteString("INSERT INTO " + d.table + " (" + d.key)
		for _, f := range d.fields {
			b.WriteString(", " + f)
		}
		b.WriteString(") SELECT NULL")
		for range d.fields {
			b.WriteString(", NULL")
		}
		b.WriteString(" FROM DUAL")
	default:
		b.WriteString("SELECT " + d.key)
		for _, f := range d.fields {
			b.WriteString(", " + f)
		}
		b.WriteString(" FROM " + d.table)
	}
	return b.String() + " WHERE 1 = 0"
}
