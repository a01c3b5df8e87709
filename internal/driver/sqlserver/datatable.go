package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// The statements of the storage and stress experiments' tables
// (driver.DataTable): plain text in, text out, golden-tested
// (testdata/datatable.sql) since no SQL Server runs here.

// fillChunkBytes is about how much payload one transaction of FillTable
// writes: large enough that a commit's cost is lost in it, small enough
// that a fill of many gigabytes never holds the log for one transaction.
var fillChunkBytes int64 = 64 << 20

// chunkRows is how many rows of t make one fill chunk.
func chunkRows(t dbdriver.DataTable) int64 {
	return max(1, fillChunkBytes/int64(t.PayloadBytes+8))
}

// dataSQL holds the delimited names of a DataTable.
type dataSQL struct {
	table string // schema-qualified, delimited
	fg    string // delimited filegroup, "" for the default
}

// newDataSQL returns the statements of t in schema.
func newDataSQL(schema string, t dbdriver.DataTable) dataSQL {
	d := dataSQL{table: qualify(schema, t.Name)}
	if t.Where != nil && t.Where.Name != "" {
		d.fg = quoteName(t.Where.Name)
	}
	return d
}

// create is the CREATE TABLE of a DataTable: a BIGINT clustered key and a
// CHAR payload, the type the study's table had (char(2000)), in the
// filegroup when placed.
func (d dataSQL) create(payload int) string {
	s := "CREATE TABLE " + d.table + " (id BIGINT NOT NULL PRIMARY KEY CLUSTERED, payload CHAR(" + strconv.Itoa(payload) + ") NOT NULL)"
	if d.fg != "" {
		s += " ON " + d.fg
	}
	return s
}

// fill inserts the rows with ids @p1 to @p1 + @p2 - 1, numbered by
// ROW_NUMBER over sys.all_columns crossed with itself (some ten thousand
// rows squared on an empty database), their payload REPLICATE'd.
// TABLOCK lets SQL Server log the fill minimally where the recovery model
// allows: it is preparation, not what is measured.
func (d dataSQL) fill(payload int) string {
	return "INSERT INTO " + d.table + " WITH (TABLOCK) (id, payload) SELECT @p1 + seq.n - 1, REPLICATE('x', " + strconv.Itoa(payload) + ") " +
		"FROM (SELECT TOP (@p2) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM sys.all_columns AS a CROSS JOIN sys.all_columns AS b) AS seq"
}

// size reads the pages reserved for the table (its rows, indexes and LOB
// and row-overflow data), in bytes, as sp_spaceused's "reserved"; -1 when
// there is no such table.
func (d dataSQL) size() string {
	return "SELECT CASE WHEN OBJECT_ID(" + literal(d.table) + ", N'U') IS NULL THEN CAST(-1 AS bigint) ELSE " +
		"(SELECT ISNULL(SUM(a.total_pages), 0) FROM sys.partitions AS p JOIN sys.allocation_units AS a " +
		"ON a.container_id = CASE WHEN a.type IN (1, 3) THEN p.hobt_id ELSE p.partition_id END " +
		"WHERE p.object_id = OBJECT_ID(" + literal(d.table) + ", N'U')) * CAST(8192 AS bigint) END"
}

// copyInto is SELECT INTO dst from src at MAXDOP degree: SQL Server reads
// and inserts in parallel (since 2014), the log written by every thread.
func copyInto(src, dst dataSQL, degree int) string {
	s := "SELECT id, payload INTO " + dst.table
	if dst.fg != "" {
		s += " ON " + dst.fg
	}
	return s + " FROM " + src.table + " OPTION (MAXDOP " + strconv.Itoa(degree) + ")"
}

// insertSelect copies src's rows with ids @p1 to @p2 into dst, their ids
// shifted by @p3: fully logged, as the write experiment measures.
func insertSelect(src, dst dataSQL) string {
	return "INSERT INTO " + dst.table + " (id, payload) SELECT id + @p3, payload FROM " + src.table + " WHERE id BETWEEN @p1 AND @p2"
}

// scan reads the rows of the table (with ids @p1 to @p2 when bounded) in
// the clustered index's order, every payload included.
func (d dataSQL) scan(bounded bool) string {
	s := "SELECT COUNT_BIG(*), ISNULL(SUM(CAST(DATALENGTH(payload) AS bigint)), 0) FROM " + d.table
	if bounded {
		s += " WHERE id BETWEEN @p1 AND @p2"
	}
	return s
}

// idRange reads the table's smallest and largest ids.
func (d dataSQL) idRange() string { return "SELECT MIN(id), MAX(id) FROM " + d.table }

// insertRows is a multi-row INSERT of rows (id, payload) pairs, the
// bulk writers' path without Options.BulkLoad.
func (d dataSQL) insertRows(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + d.table + " (id, payload) VALUES ")
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		param(&b, 2*r+1)
		b.WriteString(", ")
		param(&b, 2*r+2)
		b.WriteString(")")
	}
	return b.String()
}

// bulkCopy is go-mssqldb's bulk copy statement of the table's columns.
func (d dataSQL) bulkCopy() string {
	return mssql.CopyIn(d.table, mssql.BulkOptions{}, "id", "payload")
}

// The filegroup a Placer makes: a filegroup and one file in the
// directory, recorded in the marker table under "filegroup NAME".

// filegroupMarker is a filegroup's row in the marker table: its name after
// a word no table name has (a space), so it never stands for a table.
func filegroupMarker(name string) string { return "filegroup " + name }

// fileName is the file a filegroup of name gets in dir, with the
// separator dir uses (the server may run on Windows).
func fileName(dir, name string) string {
	sep := "/"
	if strings.Contains(dir, `\`) && !strings.Contains(dir, "/") {
		sep = `\`
	}
	return strings.TrimRight(dir, sep) + sep + name + ".ndf"
}

// addFilegroup creates filegroup name with one file in dir. ALTER
// DATABASE cannot run in a user transaction: the two statements are one
// batch, and removeFilegroup undoes what the first left when the second
// fails.
func addFilegroup(name, dir string) string {
	return "ALTER DATABASE CURRENT ADD FILEGROUP " + quoteName(name) + "; " +
		"ALTER DATABASE CURRENT ADD FILE (NAME = " + literal(name) + ", FILENAME = " + literal(fileName(dir, name)) + ") TO FILEGROUP " + quoteName(name)
}

// filegroupIdentity reads filegroup @p1's identity: its data space id
// and, for the data space ids are reused, its file's physical name.
const filegroupIdentity = "SELECT CONCAT(fg.data_space_id, N' ', (SELECT MIN(f.physical_name) FROM sys.database_files AS f WHERE f.data_space_id = fg.data_space_id)) " +
	"FROM sys.filegroups AS fg WHERE fg.name = @p1"

// removeFilegroup removes filegroup name's file, if it has one, and the
// filegroup, which must hold no table: nothing is dropped with it.
func removeFilegroup(name string) string {
	return "IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = " + literal(name) + ") ALTER DATABASE CURRENT REMOVE FILE " + quoteName(name) + "; " +
		"IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name = " + literal(name) + ") ALTER DATABASE CURRENT REMOVE FILEGROUP " + quoteName(name)
}

// data returns the statements of t in the DB's schema.
func (db *DB) data(t dbdriver.DataTable) dataSQL { return newDataSQL(db.schema, t) }

// ownedData refuses a DataTable dbprobe did not create, for a method that
// writes into it.
func (db *DB) ownedData(ctx context.Context, t dbdriver.DataTable, doing string) error {
	d := newDialect(db.schema, t.Table())
	own, err := db.ownership(ctx, db.pool, d, t.Name)
	if err != nil {
		return err
	}
	switch {
	case own.Owned():
		return nil
	case own.CurrentIdentity == "":
		return badinput.New("SQL Server: there is no table %s to %s; create it first", d.table, doing)
	}
	return badinput.New("SQL Server: refusing to %s table %s: dbprobe did not create it (%s lists no such table of dbprobe's)",
		doing, d.table, qualify(db.schema, markerTable))
}

// createRecorded creates table t.Name with create on c, which holds the
// lifecycle lock, and records it in the marker table; when recording (or
// after, which runs next) fails, the table and anything made under its
// names are dropped again: memory-optimized tables and natively compiled
// procedures cannot be created in a transaction, so the steps are not one.
func (db *DB) createRecorded(ctx context.Context, c *sql.Conn, t dbdriver.Table, create func() error, after func() error) error {
	d := newDialect(db.schema, t)
	m := db.markers()
	if _, err := c.ExecContext(ctx, m.ensure()); err != nil {
		return classify(err)
	}
	if _, err := c.ExecContext(ctx, m.addIdentity()); err != nil {
		return fmt.Errorf("sqlserver: add column %s to the marker table %s: %w", identityColumn, markerTable, classify(err))
	}
	var exists int
	if err := c.QueryRowContext(ctx, d.exists()).Scan(&exists); err != nil {
		return classify(err)
	}
	if exists == 1 {
		return badinput.New("table %s already exists; drop it or choose another table name", d.table)
	}
	if err := create(); err != nil {
		if anyNumber(err, func(n int32) bool { return n == 2714 }) { // an object of that name exists
			return badinput.New("%w; drop it or choose another table name",
				&dbdriver.Scrubbed{Msg: "table " + d.table + " already exists", Err: classify(err)})
		}
		return classify(err)
	}
	err := func() error {
		var identity string
		if err := c.QueryRowContext(ctx, d.identity()).Scan(&identity); err != nil {
			return classify(err)
		}
		if _, err := c.ExecContext(ctx, m.record(), t.Name, version(), identity); err != nil {
			return classify(err)
		}
		if after != nil {
			return after()
		}
		return nil
	}()
	if err != nil {
		undo := context.WithoutCancel(ctx)
		for _, q := range d.dropProcedures() {
			_, _ = c.ExecContext(undo, q)
		}
		_, _ = c.ExecContext(undo, d.dropTable())
		_, _ = c.ExecContext(undo, m.forget(), t.Name)
	}
	return err
}

// CreateDataTable creates t and records it as dbprobe's.
func (db *DB) CreateDataTable(ctx context.Context, t dbdriver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	return db.lifecycle(ctx, func(c *sql.Conn) error {
		return db.createRecorded(ctx, c, t.Table(), func() error {
			_, err := c.ExecContext(ctx, db.data(t).create(t.PayloadBytes))
			return err
		}, nil)
	})
}

// FillTable inserts the rows first…last, made on the server, one
// transaction (one statement) per chunk. The context's end sends an
// attention, which stops the statement and rolls its chunk back.
func (db *DB) FillTable(ctx context.Context, t dbdriver.DataTable, first, last int64) (int64, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, t, "fill"); err != nil {
		return 0, err
	}
	q, per := db.data(t).fill(t.PayloadBytes), chunkRows(t)
	var done int64
	for from := first; from <= last; from += per {
		count := min(last-from+1, per)
		res, err := db.pool.ExecContext(ctx, q, from, count)
		if err != nil {
			return done, fmt.Errorf("sqlserver: fill %s: %w", db.data(t).table, classify(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return done, classify(err)
		}
		done += n
	}
	return done, nil
}

// DropDataTable drops t when dbprobe created it.
func (db *DB) DropDataTable(ctx context.Context, t dbdriver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	return db.DropTable(ctx, t.Table())
}

// TableSize reads the pages reserved for the table.
func (db *DB) TableSize(ctx context.Context, t dbdriver.DataTable) (dbdriver.TableSize, error) {
	if err := t.Check(); err != nil {
		return dbdriver.TableSize{}, err
	}
	var n int64
	if err := db.pool.QueryRowContext(ctx, db.data(t).size()).Scan(&n); err != nil {
		return dbdriver.TableSize{}, classify(err)
	}
	if n < 0 {
		return dbdriver.TableSize{}, badinput.New("SQL Server: there is no table %s", db.data(t).table)
	}
	return dbdriver.TableSize{Bytes: n, How: "the pages reserved for it (sys.allocation_units total_pages × 8 KB, sp_spaceused's reserved)"}, nil
}

// CopyTable runs SELECT … INTO at MAXDOP degree and records the copy.
// SELECT INTO is minimally logged under the SIMPLE and BULK_LOGGED
// recovery models, fully under FULL (and on Azure SQL Database).
func (db *DB) CopyTable(ctx context.Context, src, dst dbdriver.DataTable, degree int) (dbdriver.CopyResult, error) {
	if err := src.Check(); err != nil {
		return dbdriver.CopyResult{}, err
	}
	if err := dst.Check(); err != nil {
		return dbdriver.CopyResult{}, err
	}
	degree = max(degree, 1)
	res := dbdriver.CopyResult{Degree: degree, How: "SELECT … INTO … OPTION (MAXDOP " + strconv.Itoa(degree) + "): a ceiling, the optimizer may use fewer"}
	err := db.lifecycle(ctx, func(c *sql.Conn) error {
		return db.createRecorded(ctx, c, dst.Table(), func() error {
			r, err := c.ExecContext(ctx, copyInto(db.data(src), db.data(dst), degree))
			if err != nil {
				return err
			}
			res.Rows, err = r.RowsAffected()
			return err
		}, nil)
	})
	if err != nil {
		return dbdriver.CopyResult{}, fmt.Errorf("sqlserver: copy %s to %s: %w", db.data(src).table, db.data(dst).table, err)
	}
	return res, nil
}

// InsertSelect copies src's rows first…last into dst, which must be
// dbprobe's.
func (db *DB) InsertSelect(ctx context.Context, src, dst dbdriver.DataTable, first, last, shift int64) (int64, error) {
	if err := src.Check(); err != nil {
		return 0, err
	}
	if err := dst.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, dst, "insert into"); err != nil {
		return 0, err
	}
	res, err := db.pool.ExecContext(ctx, insertSelect(db.data(src), db.data(dst)), first, last, shift)
	if err != nil {
		return 0, fmt.Errorf("sqlserver: insert into %s: %w", db.data(dst).table, classify(err))
	}
	n, err := res.RowsAffected()
	return n, classify(err)
}

// ScanTable counts a slice of t's rows and their payload bytes on the
// server: the part-th of parts equal ranges of its ids, the clustered
// index's order.
func (db *DB) ScanTable(ctx context.Context, t dbdriver.DataTable, part, parts int) (dbdriver.ScanResult, error) {
	if err := t.Check(); err != nil {
		return dbdriver.ScanResult{}, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return dbdriver.ScanResult{}, fmt.Errorf("sqlserver: scan part %d of %d", part, parts)
	}
	d := db.data(t)
	var res dbdriver.ScanResult
	if parts == 1 {
		return res, classify(db.pool.QueryRowContext(ctx, d.scan(false)).Scan(&res.Rows, &res.PayloadBytes))
	}
	var lo, hi sql.NullInt64
	if err := db.pool.QueryRowContext(ctx, d.idRange()).Scan(&lo, &hi); err != nil {
		return res, classify(err)
	}
	if !lo.Valid {
		return res, nil
	}
	from, to := dbdriver.ScanSlice(lo.Int64, hi.Int64, part, parts)
	return res, classify(db.pool.QueryRowContext(ctx, d.scan(true), from, to).Scan(&res.Rows, &res.PayloadBytes))
}

// BulkWriter takes a connection of the pool that loads t: by bulk copy,
// or multi-row INSERTs without Options.BulkLoad, each batch in one
// transaction.
func (db *DB) BulkWriter(ctx context.Context, t dbdriver.DataTable) (dbdriver.BulkWriter, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	if err := db.ownedData(ctx, t, "load"); err != nil {
		return nil, err
	}
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return &bulkWriter{c: c, d: db.data(t), bulk: db.opts.BulkLoad}, nil
}

// bulkWriter loads batches on one connection.
type bulkWriter struct {
	c    *sql.Conn
	d    dataSQL
	bulk bool
	args []any
}

// Write loads one batch in a transaction.
func (w *bulkWriter) Write(ctx context.Context, ids []int64, payloads [][]byte) error {
	if len(ids) != len(payloads) {
		return fmt.Errorf("sqlserver: a batch of %d ids and %d payloads", len(ids), len(payloads))
	}
	tx, err := w.c.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	if err := w.load(ctx, tx, ids, payloads); err != nil {
		_ = tx.Rollback()
		return err
	}
	return classify(tx.Commit())
}

// load sends the batch's rows.
func (w *bulkWriter) load(ctx context.Context, tx *sql.Tx, ids []int64, payloads [][]byte) error {
	if w.bulk {
		st, err := tx.PrepareContext(ctx, w.d.bulkCopy())
		if err != nil {
			return classify(err)
		}
		defer st.Close()
		for i, id := range ids {
			if _, err := st.ExecContext(ctx, id, payloads[i]); err != nil {
				return classify(err)
			}
		}
		res, err := st.ExecContext(ctx) // sends what is buffered
		if err != nil {
			return classify(err)
		}
		if n, err := res.RowsAffected(); err == nil && n != int64(len(ids)) {
			return fmt.Errorf("sqlserver: bulk copy loaded %d of %d rows", n, len(ids))
		}
		return nil
	}
	// A statement takes at most 1000 rows and 2098 parameters.
	per := min(maxValuesRows, maxParams/2)
	for start := 0; start < len(ids); start += per {
		end := min(start+per, len(ids))
		w.args = w.args[:0]
		for i := start; i < end; i++ {
			// A string goes as nvarchar, which converts to CHAR; bytes
			// would go as varbinary.
			w.args = append(w.args, ids[i], string(payloads[i]))
		}
		_, err := tx.ExecContext(ctx, w.d.insertRows(end-start), w.args...)
		clear(w.args)
		if err != nil {
			return classify(err)
		}
	}
	return nil
}

// How names the path.
func (w *bulkWriter) How() string {
	if w.bulk {
		return "bulk copy (go-mssqldb CopyIn), one transaction per batch"
	}
	return "multi-row INSERT statements, one transaction per batch (bulk load not asked for)"
}

// Close gives the connection back to the pool.
func (w *bulkWriter) Close() error { return w.c.Close() }

// CreateLocation adds a filegroup with one file in dir, recorded as
// dbprobe's. Azure SQL Database manages its files itself and refuses.
func (db *DB) CreateLocation(ctx context.Context, dir string) (dbdriver.Location, error) {
	if dir == "" || strings.ContainsRune(dir, 0) {
		return dbdriver.Location{}, badinput.New("SQL Server: give a directory on the server's host for the filegroup's file")
	}
	id, err := dbdriver.NewTableID()
	if err != nil {
		return dbdriver.Location{}, err
	}
	name := "dbprobe_fg_" + id
	m := db.markers()
	err = db.lifecycle(ctx, func(c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, m.ensure()); err != nil {
			return classify(err)
		}
		if _, err := c.ExecContext(ctx, m.addIdentity()); err != nil {
			return classify(err)
		}
		undo := func() { _, _ = c.ExecContext(context.WithoutCancel(ctx), removeFilegroup(name)) }
		if _, err := c.ExecContext(ctx, addFilegroup(name, dir)); err != nil {
			undo()
			return filegroupError(err, dir)
		}
		var identity string
		if err := c.QueryRowContext(ctx, filegroupIdentity, name).Scan(&identity); err != nil {
			undo()
			return classify(err)
		}
		if _, err := c.ExecContext(ctx, m.record(), filegroupMarker(name), version(), identity); err != nil {
			undo()
			return classify(err)
		}
		return nil
	})
	if err != nil {
		return dbdriver.Location{}, err
	}
	return dbdriver.Location{Dir: dir, Name: name, Description: "filegroup " + name + " with the file " + fileName(dir, name)}, nil
}

// filegroupError says what a filegroup's file needs when the server
// refused it.
func filegroupError(err error, dir string) error {
	var e mssql.Error
	if !errors.As(err, &e) {
		return classify(err)
	}
	switch {
	case anyNumber(err, isPermissionError):
		return badinput.New("SQL Server refused to add a filegroup: %w; the login needs ALTER on the database", &dbdriver.Scrubbed{Msg: e.Message, Err: classify(err)})
	case anyNumber(err, func(n int32) bool { return n == 40508 || n == 40517 || n == 40544 }):
		// Azure SQL Database: keyword or statement option not supported.
		return badinput.New("Azure SQL Database manages its files itself and has no filegroups to add: %w", &dbdriver.Scrubbed{Msg: e.Message, Err: classify(err)})
	case anyNumber(err, func(n int32) bool { return n == 5123 || n == 5133 || n == 5105 }):
		// CREATE FILE could not create the file, the directory lookup failed, a file activation error.
		return badinput.New("SQL Server cannot put a file in %s: %w; the directory must exist on the server's host and the SQL Server service account must be able to write it",
			dir, &dbdriver.Scrubbed{Msg: e.Message, Err: classify(err)})
	}
	return classify(err)
}

// DropLocation removes a filegroup dbprobe recorded making, and its file.
// Its tables must be gone: REMOVE FILE refuses a file that is not empty,
// and nothing is dropped with it.
func (db *DB) DropLocation(ctx context.Context, l dbdriver.Location) error {
	if err := dbdriver.CheckIdentifier("filegroup", l.Name); err != nil {
		return err
	}
	m := db.markers()
	return db.lifecycle(ctx, func(c *sql.Conn) error {
		var marker, withIdentity int
		if err := c.QueryRowContext(ctx, m.shape()).Scan(&marker, &withIdentity); err != nil {
			return classify(err)
		}
		var recorded, current sql.NullString
		if marker == 1 && withIdentity == 1 {
			if err := c.QueryRowContext(ctx, m.recorded(), filegroupMarker(l.Name)).Scan(&recorded); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return classify(err)
			}
		}
		if err := c.QueryRowContext(ctx, filegroupIdentity, l.Name).Scan(&current); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return classify(err)
		}
		if recorded.String == "" || (current.Valid && current.String != recorded.String) {
			return badinput.New("SQL Server: refusing to remove filegroup %s: dbprobe did not create it (%s does not record it)", l.Name, qualify(db.schema, markerTable))
		}
		if _, err := c.ExecContext(ctx, removeFilegroup(l.Name)); err != nil {
			return fmt.Errorf("sqlserver: remove filegroup %s: %w", l.Name, classify(err))
		}
		_, err := c.ExecContext(ctx, m.forget(), filegroupMarker(l.Name))
		return classify(err)
	})
}

// Leftovers returns the filegroups dbprobe added and did not remove (a
// run killed before its end, or --keep) that are still there under the
// identity the marker table recorded; none when the marker table is not
// there or records no identities.
func (db *DB) Leftovers(ctx context.Context) ([]dbdriver.Location, error) {
	m := db.markers()
	var marker, withIdentity int
	if err := db.pool.QueryRowContext(ctx, m.shape()).Scan(&marker, &withIdentity); err != nil {
		return nil, classify(err)
	}
	if marker != 1 || withIdentity != 1 {
		return nil, nil
	}
	rows, err := db.pool.QueryContext(ctx, m.leftovers())
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []dbdriver.Location
	for rows.Next() {
		var name, file string
		if err := rows.Scan(&name, &file); err != nil {
			return nil, classify(err)
		}
		dir := file[:max(strings.LastIndexAny(file, `/\`), 0)]
		out = append(out, dbdriver.Location{Dir: dir, Name: name, Description: "filegroup " + name + " with the file " + file})
	}
	return out, classify(rows.Err())
}
