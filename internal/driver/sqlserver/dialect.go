package sqlserver

import (
	"strconv"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// markerTable records the tables dbprobe created, so that it never drops or
// empties a table it did not create. It lives in the same schema as the
// tables it records.
const markerTable = "dbprobe_tables"

// identityColumn is the marker table's column for the identity of the table
// dbprobe created (dialect.identity), which tells that table from one
// created later under the same name. Marker tables of earlier dbprobe
// versions lack it until dbprobe next creates a table.
const identityColumn = "table_identity"

// defaultBucketCount is the hash index size used when Options.BucketCount is
// 0 (a caller that did not size it): 2^20 buckets fit a million-record YCSB
// load at one row per bucket, SQL Server's advice for point lookups (between
// one and two times the number of distinct keys). Info reports when it was
// used, because a table loaded far past it chains rows in its buckets.
const defaultBucketCount = 1 << 20

// maxBucketCount is SQL Server's upper limit for BUCKET_COUNT (2^30); larger
// values are rejected by CREATE TABLE.
const maxBucketCount = 1 << 30

// maxParams is how many parameters one statement may bind: SQL Server takes
// at most 2100 parameters in a request, and go-mssqldb sends every statement
// with parameters as sp_executesql, whose own statement text and parameter
// declarations take two of them.
const maxParams = 2100 - 2

// maxValuesRows is the most rows one INSERT … VALUES may list (SQL Server's
// limit for a table value constructor).
const maxValuesRows = 1000

// rowsPerInsert is how many records one multi-row INSERT can carry: the
// fewer of the parameter limit (the key and every field per row) and the
// VALUES row limit.
func rowsPerInsert(fields int) int {
	return max(1, min(maxValuesRows, maxParams/(fields+1)))
}

// rangeIndexName names the ordered index a memory-optimized table gets
// beside its hash primary key. Index names are scoped to their table, so a
// fixed name cannot collide.
const rangeIndexName = "dbprobe_key_order"

// quoteName delimits one identifier with brackets, doubling any closing
// bracket inside it, so that any name (a reserved word, a name with spaces)
// is valid T-SQL.
func quoteName(s string) string { return sqlgen.SQLServer.Quote(s) }

// qualify returns schema.name, each part delimited. Natively compiled
// procedures are schema-bound and must name tables with two parts, so every
// statement does, which also spares the server the default-schema lookup.
func qualify(schema, name string) string {
	return quoteName(schema) + "." + quoteName(name)
}

// literal returns s as a Unicode string literal.
func literal(s string) string {
	return "N'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// dialect holds the quoted names of one table and returns the text of every
// statement dbprobe runs on it. It has no connection: plain text in, text
// out, and tested as such (golden files under testdata/). The key-value
// statements are sqlgen's; the parameter declarations, bulk copy, delayed
// durability and procedures are SQL Server's own.
type dialect struct {
	gen       *sqlgen.Table
	schema    string   // raw schema name
	table     string   // schema-qualified, delimited table name
	key       string   // delimited key column
	keyName   string   // raw key column name, for bulk copy
	fields    []string // delimited field columns
	fieldRaw  []string // raw field column names, for bulk copy
	keyLength int
	fieldLen  int
	procs     driver.ProcedureNames // raw procedure names
}

// newDialect returns the statements of table t in schema.
func newDialect(schema string, t driver.Table) *dialect {
	g := sqlgen.SQLServer.Table(schema, t.Name, t.KeyColumn, t.Fields)
	return &dialect{
		gen:       g,
		schema:    schema,
		table:     g.Name,
		key:       g.Key,
		keyName:   t.KeyColumn,
		fields:    g.Fields,
		fieldRaw:  append([]string(nil), t.Fields...),
		keyLength: t.KeyLength,
		fieldLen:  t.FieldLength,
		procs:     driver.Procedures(t),
	}
}

// proc returns a procedure's schema-qualified, delimited name.
func (d *dialect) proc(name string) string { return qualify(d.schema, name) }

// keyType is the key column's type, and fieldType the fields'.
//
// Keys and values are arbitrary bytes, so both are VARBINARY: a value comes
// back exactly as it was written (a VARCHAR column would pass bytes through
// a code page, and compare 'a' and 'a ' as equal under ANSI padding, so two
// keys differing by trailing spaces would collide), and keys sort byte by
// byte, the order YCSB scans in and the other drivers use. The one exception
// SQL Server makes to byte order is that values differing only by trailing
// 0x00 bytes compare equal; YCSB's keys are printable and never end in NUL.
// A second reason: the session declares a key parameter with the key
// column's own type (params), so every lookup is an index seek, where a
// VARCHAR key compared with the nvarchar that Go strings are sent as would
// be converted row by row.
func (d *dialect) keyType() string { return varbinary(d.keyLength) }

// fieldType is the fields' column type (see keyType).
func (d *dialect) fieldType() string { return varbinary(d.fieldLen) }

// varbinary is the type of values up to n bytes: VARBINARY(n), or
// VARBINARY(MAX) past the 8000 bytes a sized one can hold.
func varbinary(n int) string {
	if n <= 0 || n > 8000 {
		return "VARBINARY(MAX)"
	}
	return "VARBINARY(" + strconv.Itoa(n) + ")"
}

// sqlParam is one parameter of a statement the session sends: its declared
// type, and the most bytes a value of it may hold (0: none to check).
type sqlParam struct {
	typ   string
	limit int
}

// params are a statement's parameters, @p1 first: the declaration list
// the session sends with the statement to sp_executesql, and each one's
// byte limit.
//
// Why declare them at all: go-mssqldb declares a []byte parameter as
// varbinary(len(value)), so keys of 22 to 24 bytes and values of varying
// length gave one statement text several declaration lists, and SQL Server
// keys its plan cache on the text and the declarations together: each new
// list compiled a new plan (the 2,090-parameter batch INSERT most of all),
// and that compile time was measured as the operation's latency. Declared
// at the column's length, a statement has one list and one plan.
type params struct {
	decls  string
	limits []int
}

// sized is the byte limit of a column of n bytes: n, or none for
// VARBINARY(MAX).
func sized(n int) int {
	if n <= 0 || n > 8000 {
		return 0
	}
	return n
}

// keyParam and fieldParam are parameters of the key's and the fields' types.
func (d *dialect) keyParam() sqlParam   { return sqlParam{d.keyType(), sized(d.keyLength)} }
func (d *dialect) fieldParam() sqlParam { return sqlParam{d.fieldType(), sized(d.fieldLen)} }

// countParam is a scan's row count, which the session sends as an int64.
var countParam = sqlParam{"BIGINT", 0}

// declare numbers ps as @p1, @p2, … and writes their declarations.
func declare(ps []sqlParam) params {
	var b strings.Builder
	out := params{limits: make([]int, len(ps))}
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		param(&b, i+1)
		b.WriteString(" ")
		b.WriteString(p.typ)
		out.limits[i] = p.limit
	}
	out.decls = b.String()
	return out
}

// readParams are read's parameters: the key.
func (d *dialect) readParams() params { return declare([]sqlParam{d.keyParam()}) }

// scanParams are scan's: the start key and the row count.
func (d *dialect) scanParams() params { return declare([]sqlParam{d.keyParam(), countParam}) }

// updateParams are those of update of n fields: the values, then the key.
func (d *dialect) updateParams(n int) params {
	ps := make([]sqlParam, 0, n+1)
	for range n {
		ps = append(ps, d.fieldParam())
	}
	return declare(append(ps, d.keyParam()))
}

// insertParams are those of insert of rows records: each row's key, then
// its fields.
func (d *dialect) insertParams(rows int) params {
	ps := make([]sqlParam, 0, rows*(1+len(d.fields)))
	for range rows {
		ps = append(ps, d.keyParam())
		for range d.fields {
			ps = append(ps, d.fieldParam())
		}
	}
	return declare(ps)
}

// deleteParams are delete's: the key.
func (d *dialect) deleteParams() params { return declare([]sqlParam{d.keyParam()}) }

// delayedProcParams are those of delayedProc with nparams arguments: the
// key, then fields, as every procedure takes them.
func (d *dialect) delayedProcParams(nparams int) params {
	ps := []sqlParam{d.keyParam()}
	for i := 1; i < nparams; i++ {
		ps = append(ps, d.fieldParam())
	}
	return declare(ps)
}

// createTable returns the CREATE TABLE statement for a table type.
//
// disk: an ordinary rowstore table clustered on the key.
//
// memory and nondurable: a memory-optimized table whose primary key is a
// hash index of buckets buckets (point reads, updates and deletes: one hash
// probe), plus a nonclustered range index on the key. A hash index cannot
// answer "keys from @k on, in order": without the range index a YCSB scan
// (SELECT TOP (n) … WHERE key >= @k ORDER BY key) would read every row of
// the table and sort them, so workload E would measure a full scan per
// operation instead of an ordered range read. nondurable keeps the schema
// only (DURABILITY = SCHEMA_ONLY): its rows are not logged and are gone
// after a restart.
func (d *dialect) createTable(tt driver.TableType, buckets int64) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(" ")
	b.WriteString(d.keyType())
	b.WriteString(" NOT NULL")
	if tt == driver.TableDisk {
		b.WriteString(" PRIMARY KEY CLUSTERED")
	} else {
		b.WriteString(" PRIMARY KEY NONCLUSTERED HASH WITH (BUCKET_COUNT = ")
		b.WriteString(strconv.FormatInt(buckets, 10))
		b.WriteString(")")
	}
	for _, f := range d.fields {
		b.WriteString(", ")
		b.WriteString(f)
		b.WriteString(" ")
		b.WriteString(d.fieldType())
		b.WriteString(" NOT NULL")
	}
	switch tt {
	case driver.TableMemory, driver.TableNondurable:
		b.WriteString(", INDEX ")
		b.WriteString(quoteName(rangeIndexName))
		b.WriteString(" NONCLUSTERED (")
		b.WriteString(d.key)
		b.WriteString(")) WITH (MEMORY_OPTIMIZED = ON, DURABILITY = ")
		if tt == driver.TableNondurable {
			b.WriteString("SCHEMA_ONLY)")
		} else {
			b.WriteString("SCHEMA_AND_DATA)")
		}
	default:
		b.WriteString(")")
	}
	return b.String()
}

// exists returns a query that yields 1 when the table exists, else 0.
func (d *dialect) exists() string {
	return "SELECT CASE WHEN OBJECT_ID(" + literal(d.table) + ", N'U') IS NULL THEN 0 ELSE 1 END"
}

// identity returns the table's identity, no row when there is no table: its
// object id with its creation time. Object ids are reused once freed, so
// the id alone might name a table created later under the same name.
func (d *dialect) identity() string {
	return "SELECT CONCAT(o.object_id, N' ', CONVERT(nvarchar(27), o.create_date, 126)) FROM sys.objects AS o " +
		"WHERE o.object_id = OBJECT_ID(" + literal(d.table) + ", N'U')"
}

// dropTable returns the DROP TABLE statement, which does nothing when the
// table is already gone.
func (d *dialect) dropTable() string {
	return "IF OBJECT_ID(" + literal(d.table) + ", N'U') IS NOT NULL DROP TABLE " + d.table
}

// columnList writes the listed fields, or all of them when idx is nil.
func (d *dialect) columnList(b *strings.Builder, idx []int) { d.gen.Columns(b, idx) }

// param writes the n-th parameter marker, @p1 for n = 1: go-mssqldb binds
// positional arguments to @p1, @p2, ….
func param(b *strings.Builder, n int) { sqlgen.SQLServer.Param(b, n) }

// read returns the SELECT of the listed fields (nil: all) of one key (@p1).
func (d *dialect) read(idx []int) string { return d.gen.Read(idx) }

// scan returns the range read: the key then the listed fields, from @p1
// inclusive, at most @p2 rows (TOP), in key order.
func (d *dialect) scan(idx []int) string { return d.gen.Scan(idx) }

// update returns the UPDATE of the listed fields (nil: all): the new values
// are @p1…@pn, the key is @pn+1.
func (d *dialect) update(idx []int) string { return d.gen.Update(idx) }

// insert returns a multi-row INSERT of rows records: each row's parameters
// are the key then every field. rows must not exceed rowsPerInsert.
func (d *dialect) insert(rows int) string { return d.gen.Insert(rows) }

// delete returns the DELETE of one key (@p1).
func (d *dialect) delete() string { return d.gen.Delete() }

// hasRows returns a query that yields one row when the table has any.
func (d *dialect) hasRows() string { return d.gen.HasRows() }

// copyIn returns go-mssqldb's bulk copy statement for every column. The
// library delimits the table name itself (the parts may already be
// delimited, as ours are) and matches the columns by their raw names.
func (d *dialect) copyIn() string {
	return mssql.CopyIn(d.table, mssql.BulkOptions{}, append([]string{d.keyName}, d.fieldRaw...)...)
}

// Transactions: statements that begin, commit and roll back a transaction
// on a session's connection. They are T-SQL rather than database/sql's Tx so
// that a commit can ask for delayed durability, which only the COMMIT
// statement can; go-mssqldb follows the server's transaction through its
// ENVCHANGE tokens either way.
const (
	beginTransaction = "BEGIN TRANSACTION"
	// commitTransaction is a fully durable commit: the database's
	// DELAYED_DURABILITY setting decides (FORCED still delays it).
	commitTransaction = "COMMIT TRANSACTION"
	// commitDelayed asks for a delayed durable commit, honoured when the
	// database's DELAYED_DURABILITY is ALLOWED (or FORCED).
	commitDelayed = "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON)"
	// rollbackIfOpen ends a transaction an error left open; a statement
	// error does not roll back on its own unless XACT_ABORT is on.
	rollbackIfOpen = "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"
)

// inDelayedTransaction wraps a body that sets @rows in a transaction
// committed with DELAYED_DURABILITY = ON, the transaction scope of delayed
// durability, and returns @rows as a one-row result: one round trip per
// write, as in autocommit. XACT_ABORT rolls the transaction back on any
// error, so no transaction is left open on the session when the body fails,
// and NOCOUNT keeps the statements' row counts out of the reply. The SET
// options end with the batch (go-mssqldb runs it through sp_executesql).
func inDelayedTransaction(body string) string {
	return "SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; " +
		body + "; " + commitDelayed + "; SELECT @rows"
}

// delayedWrite is one write statement in a delayed durable transaction,
// returning the rows it affected.
func delayedWrite(stmt string) string {
	return inDelayedTransaction(stmt + "; SET @rows = @@ROWCOUNT")
}

// delayedProc is a procedure call in a delayed durable transaction,
// returning the procedure's return value (the rows an update or delete
// procedure affected). The procedures themselves do not commit with delayed
// durability, so the same procedures serve a run with any durability:
// called inside a transaction, a natively compiled procedure's atomic block
// becomes part of it and the outer COMMIT decides.
func (d *dialect) delayedProc(proc string, nparams int) string {
	var b strings.Builder
	b.WriteString("EXEC @rows = ")
	b.WriteString(d.proc(proc))
	for i := 1; i <= nparams; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		b.WriteString(" ")
		param(&b, i)
	}
	return inDelayedTransaction(b.String())
}

// Procedures. Each takes positional parameters: @key, then what the
// operation needs. Update and delete return @@ROWCOUNT as the procedure's
// return value, which the session reads to report ErrNotFound.

// procParam returns a procedure's name for field i's parameter.
func procParam(i int) string { return "@f" + strconv.Itoa(i) }

// procHeader writes CREATE PROCEDURE, its parameters and the body's opening:
// for a memory-optimized table a natively compiled procedure (compiled to
// machine code when created, schema-bound to the table, its body one atomic
// block at SNAPSHOT isolation: the fastest way to reach such a table), for
// a disk table an interpreted one.
func (d *dialect) procHeader(b *strings.Builder, name string, native bool, params []string) {
	b.WriteString("CREATE PROCEDURE ")
	b.WriteString(d.proc(name))
	for i, p := range params {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.WriteString(p)
	}
	b.WriteString("\n")
	if native {
		b.WriteString("WITH NATIVE_COMPILATION, SCHEMABINDING\nAS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'us_english')\n")
	} else {
		b.WriteString("AS BEGIN\n    SET NOCOUNT ON;\n")
	}
}

// createProcedures returns the CREATE PROCEDURE statements in the order of
// driver.ProcedureNames.All: read, scan, update, insert, delete.
//
// read and scan return every field: one procedure serves any field list,
// and the session picks the fields asked for. update takes every field and
// keeps a field whose parameter is NULL (no stored value is NULL: the
// columns are NOT NULL), so one procedure serves any set of fields too.
func (d *dialect) createProcedures(native bool) []string {
	keyParam := "@key " + d.keyType()
	fieldParams := make([]string, len(d.fields))
	for i := range d.fields {
		fieldParams[i] = procParam(i) + " " + d.fieldType()
	}
	out := make([]string, 0, 5)

	var b strings.Builder
	d.procHeader(&b, d.procs.Read, native, []string{keyParam})
	b.WriteString("    SELECT ")
	d.columnList(&b, nil)
	b.WriteString(" FROM ")
	b.WriteString(d.table)
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" = @key;\nEND")
	out = append(out, b.String())

	b.Reset()
	d.procHeader(&b, d.procs.Scan, native, []string{keyParam, "@count INT"})
	b.WriteString("    SELECT TOP (@count) ")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, nil)
	b.WriteString(" FROM ")
	b.WriteString(d.table)
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" >= @key ORDER BY ")
	b.WriteString(d.key)
	b.WriteString(";\nEND")
	out = append(out, b.String())

	b.Reset()
	d.procHeader(&b, d.procs.Update, native, append([]string{keyParam}, fieldParams...))
	b.WriteString("    UPDATE ")
	b.WriteString(d.table)
	b.WriteString(" SET ")
	for i, f := range d.fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f)
		b.WriteString(" = ISNULL(")
		b.WriteString(procParam(i))
		b.WriteString(", ")
		b.WriteString(f)
		b.WriteString(")")
	}
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" = @key;\n    RETURN @@ROWCOUNT;\nEND")
	out = append(out, b.String())

	b.Reset()
	d.procHeader(&b, d.procs.Insert, native, append([]string{keyParam}, fieldParams...))
	b.WriteString("    INSERT INTO ")
	b.WriteString(d.table)
	b.WriteString(" (")
	b.WriteString(d.key)
	b.WriteString(", ")
	d.columnList(&b, nil)
	b.WriteString(") VALUES (@key")
	for i := range d.fields {
		b.WriteString(", ")
		b.WriteString(procParam(i))
	}
	b.WriteString(");\nEND")
	out = append(out, b.String())

	b.Reset()
	d.procHeader(&b, d.procs.Delete, native, []string{keyParam})
	b.WriteString("    DELETE FROM ")
	b.WriteString(d.table)
	b.WriteString(" WHERE ")
	b.WriteString(d.key)
	b.WriteString(" = @key;\n    RETURN @@ROWCOUNT;\nEND")
	out = append(out, b.String())
	return out
}

// dropProcedures returns one statement per procedure that drops it when it
// exists, in the order of driver.ProcedureNames.All. Natively compiled
// procedures are schema-bound: they must go before their table can.
func (d *dialect) dropProcedures() []string {
	names := d.procs.All()
	out := make([]string, len(names))
	for i, n := range names {
		q := d.proc(n)
		out[i] = "IF OBJECT_ID(" + literal(q) + ", N'P') IS NOT NULL DROP PROCEDURE " + q
	}
	return out
}

// recompileProcedures returns one batch that marks the table's procedures
// for recompilation at their next call (those that exist). A natively
// compiled procedure's plan is made when it is created or first run after
// a restart, on the statistics of that moment: created with the table, it
// was planned for an empty table, and it keeps that plan after a load
// until sp_recompile (SQL Server 2016 and later) has it compiled again.
func (d *dialect) recompileProcedures() string {
	var b strings.Builder
	for i, n := range d.procs.All() {
		if i > 0 {
			b.WriteString("; ")
		}
		q := literal(d.proc(n))
		b.WriteString("IF OBJECT_ID(" + q + ", N'P') IS NOT NULL EXEC sys.sp_recompile @objname = " + q)
	}
	return b.String()
}

// existingProcedures returns a query counting how many of the table's
// procedures exist.
func (d *dialect) existingProcedures() string {
	var b strings.Builder
	b.WriteString("SELECT COUNT(*) FROM (VALUES ")
	for i, n := range d.procs.All() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(OBJECT_ID(")
		b.WriteString(literal(d.proc(n)))
		b.WriteString(", N'P'))")
	}
	b.WriteString(") AS p(id) WHERE p.id IS NOT NULL")
	return b.String()
}

// tableState returns the catalog query for one table: whether it is
// memory-optimized, its durability, its base index (HEAP or CLUSTERED for a
// disk table) and its hash index's bucket count. It yields no row when the
// table does not exist.
func (d *dialect) tableState() string {
	return "SELECT t.is_memory_optimized, t.durability_desc, ISNULL(i.type_desc, N''), " +
		"ISNULL((SELECT MAX(h.bucket_count) FROM sys.hash_indexes AS h WHERE h.object_id = t.object_id), 0) " +
		"FROM sys.tables AS t LEFT JOIN sys.indexes AS i ON i.object_id = t.object_id AND i.index_id <= 1 " +
		"WHERE t.object_id = OBJECT_ID(" + literal(d.table) + ", N'U')"
}

// columns returns the table's column names in order.
func (d *dialect) columns() string {
	return "SELECT c.name FROM sys.columns AS c WHERE c.object_id = OBJECT_ID(" + literal(d.table) + ", N'U') ORDER BY c.column_id"
}

// markers returns the statements on the marker table of one schema.
type markers struct {
	table string // delimited, schema-qualified marker table
}

// newMarkers returns the marker table statements of schema.
func newMarkers(schema string) markers { return markers{table: qualify(schema, markerTable)} }

// ensure creates the marker table when it is missing.
func (m markers) ensure() string {
	return "IF OBJECT_ID(" + literal(m.table) + ", N'U') IS NULL CREATE TABLE " + m.table +
		" (table_name NVARCHAR(128) NOT NULL PRIMARY KEY, created_at DATETIME2 NOT NULL, dbprobe_version NVARCHAR(128) NOT NULL, " +
		identityColumn + " NVARCHAR(100) NULL)"
}

// addIdentity gives a marker table an earlier dbprobe created the column
// for identities.
func (m markers) addIdentity() string {
	return "IF COL_LENGTH(" + literal(m.table) + ", N'" + identityColumn + "') IS NULL ALTER TABLE " + m.table +
		" ADD " + identityColumn + " NVARCHAR(100) NULL"
}

// shape says whether the marker table exists (to this user: OBJECT_ID is
// NULL for a table the user may not see) and whether it has the identity
// column. A statement that names a column the table lacks fails when the
// batch compiles, whatever IF guards it, so the caller chooses between
// recorded and recordedLegacy after asking.
func (m markers) shape() string {
	return "SELECT CASE WHEN OBJECT_ID(" + literal(m.table) + ", N'U') IS NULL THEN 0 ELSE 1 END, " +
		"CASE WHEN COL_LENGTH(" + literal(m.table) + ", N'" + identityColumn + "') IS NULL THEN 0 ELSE 1 END"
}

// recorded reads the identity recorded for table @p1, no row when there
// is none.
func (m markers) recorded() string {
	return "SELECT ISNULL(" + identityColumn + ", N'') FROM " + m.table + " WHERE table_name = @p1"
}

// recordedLegacy finds the row of table @p1 in a marker table without
// identities.
func (m markers) recordedLegacy() string {
	return "SELECT N'' FROM " + m.table + " WHERE table_name = @p1"
}

// record records table @p1 as created by dbprobe version @p2 with identity
// @p3, replacing a row left by a table someone else dropped.
func (m markers) record() string {
	return "DELETE FROM " + m.table + " WHERE table_name = @p1; INSERT INTO " + m.table +
		" (table_name, created_at, dbprobe_version, " + identityColumn + ") VALUES (@p1, SYSUTCDATETIME(), @p2, @p3)"
}

// leftovers lists the filegroups the marker table records as dbprobe's
// under the identity they still have (filegroupIdentity), with their
// file's path.
func (m markers) leftovers() string {
	return "SELECT fg.name, x.physical_name FROM " + m.table + " AS m JOIN sys.filegroups AS fg ON m.table_name = CONCAT(N'filegroup ', fg.name) " +
		"CROSS APPLY (SELECT MIN(f.physical_name) AS physical_name FROM sys.database_files AS f WHERE f.data_space_id = fg.data_space_id) AS x " +
		"WHERE m." + identityColumn + " = CONCAT(fg.data_space_id, N' ', x.physical_name) ORDER BY m.created_at"
}

// forget removes the marker row of table @p1.
func (m markers) forget() string {
	return "IF OBJECT_ID(" + literal(m.table) + ", N'U') IS NOT NULL DELETE FROM " + m.table + " WHERE table_name = @p1"
}

// The application lock that serialises dbprobe's table lifecycle in one
// database (two clients creating tables at once, sessions creating missing
// procedures), held by the connection: memory-optimized tables and natively
// compiled procedures cannot be created inside a user transaction, so a
// transaction cannot hold it.
const (
	lifecycleLock    = "dbprobe_tables"
	getLifecycle     = "DECLARE @r int; EXEC @r = sp_getapplock @Resource = N'" + lifecycleLock + "', @LockMode = 'Exclusive', @LockOwner = 'Session', @LockTimeout = 60000; SELECT @r"
	releaseLifecycle = "EXEC sp_releaseapplock @Resource = N'" + lifecycleLock + "', @LockOwner = 'Session'"
)
