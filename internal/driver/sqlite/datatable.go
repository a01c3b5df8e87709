package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// The statements of the storage and stress experiments' tables
// (driver.DataTable). Like dialect.go, plain text in, text out.

// fillChunkBytes is about how much payload one transaction of FillTable
// writes: large enough that a commit's cost is lost in it, small enough
// that the WAL of one transaction stays tens of megabytes.
var fillChunkBytes int64 = 64 << 20

// chunkRows is how many rows of t make one fill chunk.
func chunkRows(t driver.DataTable) int64 {
	return max(1, fillChunkBytes/int64(t.PayloadBytes+8))
}

// createDataSQL is the CREATE TABLE of a DataTable: id is the rowid, so
// rows are stored in id order, and the comment carries dbprobe's id
// (tableIdentitySQL). key says whether id is the key: a copy has its rows,
// not its key.
func createDataSQL(table string, id string, key bool) string {
	idType := "INTEGER PRIMARY KEY"
	if !key {
		idType = "INTEGER NOT NULL"
	}
	return "CREATE TABLE " + quoteIdent(table) + " /* created by dbprobe, id " + id + " */ (id " + idType + ", payload BLOB NOT NULL)"
}

// fillSQL inserts the rows with ids ?1 to ?2, their payload of n 'x'
// made by SQLite.
func fillSQL(table string, n int) string {
	return "WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2) INSERT INTO " + quoteIdent(table) +
		" (id, payload) SELECT n, printf('%.*c', " + strconv.Itoa(n) + ", 'x') FROM seq"
}

// copyRowsSQL copies src's rows into dst.
func copyRowsSQL(src, dst string) string {
	return "INSERT INTO " + quoteIdent(dst) + " (id, payload) SELECT id, payload FROM " + quoteIdent(src)
}

// insertSelectSQL copies src's rows with ids ?1 to ?2 into dst, their ids
// shifted by ?3.
func insertSelectSQL(src, dst string) string {
	return "INSERT INTO " + quoteIdent(dst) + " (id, payload) SELECT id + ?3, payload FROM " + quoteIdent(src) + " WHERE id BETWEEN ?1 AND ?2"
}

// scanDataSQL reads the rows of table (with ids ?1 to ?2 when bounded), every
// payload included, counted in bytes whatever its type.
func scanDataSQL(table string, bounded bool) string {
	s := "SELECT count(*), coalesce(sum(length(CAST(payload AS BLOB))), 0) FROM " + quoteIdent(table)
	if bounded {
		s += " WHERE id BETWEEN ?1 AND ?2"
	}
	return s
}

// usedBytesSQL reads the bytes of the database's pages in use.
const usedBytesSQL = "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()"

// checkData refuses a DataTable that is not one, or that asks for a
// Location, which SQLite has not.
func checkData(t driver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	if t.Where != nil {
		return driver.Unsupported("SQLite", "table placement", noPlacement)
	}
	return nil
}

// noPlacement says why SQLite has no Placer, and what to do instead.
const noPlacement = "a SQLite table lives in its database's file: put the database in the directory (--db sqlite:///DIR/bench.db)"

// ownedData refuses a DataTable dbprobe did not create, for a method that
// writes into it.
func (d *db) ownedData(ctx context.Context, t driver.DataTable, doing string) error {
	own, err := ownership(ctx, d.pool, t.Name)
	if err != nil {
		return err
	}
	switch {
	case own.Owned():
		return nil
	case own.CurrentIdentity == "":
		return badinput.New("sqlite: there is no table %s to %s; create it first", t.Name, doing)
	}
	return badinput.New("sqlite: refusing to %s table %s: dbprobe did not create it (%s lists no such table of dbprobe's)", doing, t.Name, markerTable)
}

// createData creates table with stmt, and records it, unless a table of
// that name exists.
func (d *db) createData(ctx context.Context, name string, create func(c *sql.Conn) error) error {
	return d.createRecorded(ctx, name, func(c *sql.Conn) error {
		var one int
		switch err := c.QueryRowContext(ctx, tableExistsSQL, name).Scan(&one); err {
		case nil:
			return badinput.New("sqlite: table %s already exists; drop it or choose another table name", name)
		case sql.ErrNoRows:
		default:
			return err
		}
		return create(c)
	})
}

// CreateDataTable creates t and records it as dbprobe's.
func (d *db) CreateDataTable(ctx context.Context, t driver.DataTable) error {
	if err := checkData(t); err != nil {
		return err
	}
	id, err := driver.NewTableID()
	if err != nil {
		return err
	}
	err = d.createData(ctx, t.Name, func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, createDataSQL(t.Name, id, true))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create table %s: %w", t.Name, classify(err))
	}
	return nil
}

// FillTable inserts the rows first…last through the writer, a recursive
// CTE making them, one transaction per chunk. The context's end
// interrupts the statement (sqlite3_interrupt) and rolls its chunk back.
func (d *db) FillTable(ctx context.Context, t driver.DataTable, first, last int64) (int64, error) {
	if err := checkData(t); err != nil {
		return 0, err
	}
	if err := d.ownedData(ctx, t, "fill"); err != nil {
		return 0, err
	}
	q, per := fillSQL(t.Name, t.PayloadBytes), chunkRows(t)
	var done int64
	for from := first; from <= last; from += per {
		to := min(last, from+per-1)
		err := d.w.callRows(ctx, true, int(to-from+1), func(c *sql.Conn) error {
			res, err := c.ExecContext(ctx, q, from, to)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			done += n
			return err
		})
		if err != nil {
			return done, fmt.Errorf("sqlite: fill %s: %w", t.Name, interrupted(ctx, err))
		}
	}
	return done, nil
}

// DropDataTable drops t when dbprobe created it.
func (d *db) DropDataTable(ctx context.Context, t driver.DataTable) error {
	if err := checkData(t); err != nil {
		return err
	}
	return d.DropTable(ctx, t.Table())
}

// TableSize reads the bytes of the database's pages in use: neither
// library builds SQLite with dbstat, which alone sizes one table, so it is
// the database's, every table's, which in a database of its own (the
// storage experiments' default) is the table's and a page or two of the
// marker table.
func (d *db) TableSize(ctx context.Context, t driver.DataTable) (driver.TableSize, error) {
	if err := checkData(t); err != nil {
		return driver.TableSize{}, err
	}
	ok, err := d.tableExists(ctx, t.Name)
	if err != nil {
		return driver.TableSize{}, err
	}
	if !ok {
		return driver.TableSize{}, badinput.New("sqlite: there is no table %s", t.Name)
	}
	var n int64
	if err := d.pool.QueryRowContext(ctx, usedBytesSQL).Scan(&n); err != nil {
		return driver.TableSize{}, classify(err)
	}
	return driver.TableSize{Bytes: n, How: "(page_count − freelist_count) × page_size: the database's pages in use, every table's (SQLite's dbstat, which sizes one table, is in neither library)"}, nil
}

// CopyTable creates dst, with dbprobe's id in its statement, and copies
// src's rows into it with INSERT … SELECT, in one transaction with its
// marker row: what CREATE TABLE … AS SELECT does, save that SQLite writes
// the statement of such a table itself, with no room for the id.
func (d *db) CopyTable(ctx context.Context, src, dst driver.DataTable, degree int) (driver.CopyResult, error) {
	if err := checkData(src); err != nil {
		return driver.CopyResult{}, err
	}
	if err := checkData(dst); err != nil {
		return driver.CopyResult{}, err
	}
	if degree > 1 {
		return driver.CopyResult{}, driver.Unsupported("SQLite", "parallel table copy (it has one writer)", "copy with degree 1")
	}
	id, err := driver.NewTableID()
	if err != nil {
		return driver.CopyResult{}, err
	}
	res := driver.CopyResult{Degree: 1, How: "CREATE TABLE then INSERT … SELECT, one transaction on the one writer"}
	err = d.createData(ctx, dst.Name, func(c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, createDataSQL(dst.Name, id, false)); err != nil {
			return err
		}
		r, err := c.ExecContext(ctx, copyRowsSQL(src.Name, dst.Name))
		if err != nil {
			return err
		}
		res.Rows, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return driver.CopyResult{}, fmt.Errorf("sqlite: copy %s to %s: %w", src.Name, dst.Name, classify(err))
	}
	return res, nil
}

// InsertSelect copies src's rows first…last into dst, which must be
// dbprobe's, through the writer.
func (d *db) InsertSelect(ctx context.Context, src, dst driver.DataTable, first, last, shift int64) (int64, error) {
	if err := checkData(src); err != nil {
		return 0, err
	}
	if err := checkData(dst); err != nil {
		return 0, err
	}
	if err := d.ownedData(ctx, dst, "insert into"); err != nil {
		return 0, err
	}
	var n int64
	err := d.w.callRows(ctx, true, int(max(0, last-first+1)), func(c *sql.Conn) error {
		r, err := c.ExecContext(ctx, insertSelectSQL(src.Name, dst.Name), first, last, shift)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: insert into %s: %w", dst.Name, classify(err))
	}
	return n, nil
}

// ScanTable counts a slice of t's rows and their payload bytes on a
// reading connection: the part-th of parts equal ranges of its ids, which
// are its rowids, the order its b-tree keeps them in.
func (d *db) ScanTable(ctx context.Context, t driver.DataTable, part, parts int) (driver.ScanResult, error) {
	if err := checkData(t); err != nil {
		return driver.ScanResult{}, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return driver.ScanResult{}, fmt.Errorf("sqlite: scan part %d of %d", part, parts)
	}
	var res driver.ScanResult
	if parts == 1 {
		err := d.pool.QueryRowContext(ctx, scanDataSQL(t.Name, false)).Scan(&res.Rows, &res.PayloadBytes)
		return res, classify(err)
	}
	var lo, hi sql.NullInt64
	if err := d.pool.QueryRowContext(ctx, "SELECT min(id), max(id) FROM "+quoteIdent(t.Name)).Scan(&lo, &hi); err != nil {
		return res, classify(err)
	}
	if !lo.Valid {
		return res, nil
	}
	from, to := driver.ScanSlice(lo.Int64, hi.Int64, part, parts)
	err := d.pool.QueryRowContext(ctx, scanDataSQL(t.Name, true), from, to).Scan(&res.Rows, &res.PayloadBytes)
	return res, classify(err)
}

// BulkWriter opens a session on t: each batch is one transaction through
// the one writer (SQLite's bulk path), so N writers take turns.
func (d *db) BulkWriter(ctx context.Context, t driver.DataTable) (driver.BulkWriter, error) {
	if err := checkData(t); err != nil {
		return nil, err
	}
	if err := d.ownedData(ctx, t, "load"); err != nil {
		return nil, err
	}
	s, err := d.Session(ctx, t.Table())
	if err != nil {
		return nil, err
	}
	how := "one transaction per batch through the one writer, a prepared INSERT per row"
	if !d.opts.BulkLoad {
		how = "one transaction per batch through the one writer, multi-row INSERT statements"
	}
	return driver.NewSessionBulkWriter(s, func() string { return how }), nil
}

// settleWait bounds how long Settle waits for the checkpoint lock.
const settleWait = 30 * time.Second

// Settle copies what the fill left in the WAL into the database file and
// empties the WAL (wal_checkpoint(TRUNCATE), through the writer so that
// no write runs beside it), then syncs the database file, so that
// neither the copy nor the page cache's write-back lands in the measured
// part: the monitor would count them as the run's writes.
func (d *db) Settle(ctx context.Context, t driver.DataTable) (string, error) {
	if err := checkData(t); err != nil {
		return "", err
	}
	// The checkpointer may be copying the fill's WAL beside the writer:
	// a TRUNCATE then finds the checkpoint lock taken (busy, -1, -1) and
	// is tried again once that pass is over, for up to settleWait.
	var busy, log, copied int64
	deadline := time.Now().Add(settleWait)
	for {
		err := d.w.call(ctx, false, func(c *sql.Conn) error {
			return c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &copied)
		})
		if err != nil {
			return "", fmt.Errorf("sqlite: checkpoint: %w", interrupted(ctx, err))
		}
		if busy == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("sqlite: checkpoint: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	var done string
	switch {
	case busy != 0:
		done = fmt.Sprintf("PRAGMA wal_checkpoint(TRUNCATE) found the checkpoint busy for %s: the fill's WAL may be copied during the measured part", settleWait)
	case log < 0:
		done = "nothing in a WAL to copy (not in WAL mode: each commit of the fill wrote the database file)"
	default:
		done = fmt.Sprintf("PRAGMA wal_checkpoint(TRUNCATE) (the WAL's %d pages in the database file, %d of them copied now; the WAL emptied)", log, copied)
	}
	if d.file == "" {
		return done, nil
	}
	f, err := os.OpenFile(d.file, os.O_RDWR, 0)
	if err != nil {
		return done + "; the database file not synced: " + err.Error(), nil
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return done + "; the database file not synced: " + err.Error(), nil
	}
	return done + "; the database file synced (fsync), so that the page cache's write-back is done", nil
}
