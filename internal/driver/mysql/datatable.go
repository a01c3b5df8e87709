package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// The statements of the storage and stress experiments' tables
// (driver.DataTable). Like dialect, plain text in, text out.

// fillChunkBytes is about how much payload one transaction of FillTable
// writes: large enough that a commit's cost is lost in it, small enough
// that a fill of many gigabytes never holds one huge transaction (InnoDB
// keeps its undo until the commit).
var fillChunkBytes int64 = 64 << 20

// chunkRows is how many rows of t make one fill chunk.
func chunkRows(t driver.DataTable) int64 {
	return max(1, fillChunkBytes/int64(t.PayloadBytes+8))
}

// createDataSQL is the CREATE TABLE of a DataTable: a BIGINT key and a
// VARBINARY payload (CHAR holds at most 255 characters), InnoDB, its file
// in dir when it is not "", the comment carrying dbprobe's id.
func createDataSQL(table string, payload int, dir, id string) string {
	s := "CREATE TABLE " + table + " (`id` BIGINT NOT NULL, `payload` VARBINARY(" + strconv.Itoa(payload) +
		") NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB"
	if dir != "" {
		// DATA DIRECTORY takes a plain string literal, not an expression.
		s += " DATA DIRECTORY = '" + strings.ReplaceAll(dir, "'", "''") + "'"
	}
	return s + " COMMENT='" + tableComment(id) + "'"
}

// digits is a derived table of the ten digits, crossed with itself to make
// numbers on the server: MySQL 5.7 has no recursive CTE, and MySQL 8 caps
// one at cte_max_recursion_depth (1000) rows.
const digits = "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 " +
	"UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"

// fillSQL inserts the rows with ids ? to ? + ? - 1 (first, first, count),
// count at most 10^places, in id order so that InnoDB appends each page
// rather than splitting it.
func fillSQL(table string, payload, places int) string {
	var n, from strings.Builder
	scale := 1
	for p := range places {
		ds := "d" + strconv.Itoa(p)
		if p > 0 {
			n.WriteString(" + ")
			from.WriteString(" CROSS JOIN ")
		}
		n.WriteString(ds + ".d * " + strconv.Itoa(scale))
		from.WriteString(digits + " AS " + ds)
		scale *= 10
	}
	return "INSERT INTO " + table + " (`id`, `payload`) SELECT ? + seq.n, REPEAT('x', " + strconv.Itoa(payload) + ") FROM (SELECT " +
		n.String() + " AS n FROM " + from.String() + ") AS seq WHERE seq.n < ? ORDER BY seq.n"
}

// places is how many digits count takes: the fill's derived table makes
// 10^places numbers.
func places(count int64) int {
	p := 1
	for n := int64(10); n < count; n *= 10 {
		p++
	}
	return p
}

// copySQL copies src's rows into a new table dst, its file in dir when it
// is not "".
func copySQL(src, dst, dir, id string) string {
	s := "CREATE TABLE " + dst + " ENGINE=InnoDB"
	if dir != "" {
		s += " DATA DIRECTORY = '" + strings.ReplaceAll(dir, "'", "''") + "'"
	}
	return s + " COMMENT='" + tableComment(id) + "' SELECT `id`, `payload` FROM " + src
}

// insertSelectSQL copies src's rows with ids between the second and third
// parameters into dst, their ids shifted by the first.
func insertSelectSQL(src, dst string) string {
	return "INSERT INTO " + dst + " (`id`, `payload`) SELECT `id` + ?, `payload` FROM " + src + " WHERE `id` BETWEEN ? AND ?"
}

// scanSQL reads the rows of table (with ids between two parameters when
// bounded) in the clustered index's order, every payload included.
func scanSQL(table string, bounded bool) string {
	s := "SELECT COUNT(*), COALESCE(SUM(LENGTH(`payload`)), 0) FROM " + table
	if bounded {
		s += " WHERE `id` BETWEEN ? AND ?"
	}
	return s
}

// dataTable returns t's quoted name and its name as the catalog holds it.
func (db *DB) dataTable(t driver.DataTable) (quoted, stored string) {
	return quote(t.Name), db.storedName(t.Table())
}

// dirOf is the directory t's file goes in, "" for the server's default.
func dirOf(t driver.DataTable) string {
	if t.Where == nil {
		return ""
	}
	return t.Where.Dir
}

// ownedData refuses a DataTable dbprobe did not create, for a method that
// writes into it.
func (db *DB) ownedData(ctx context.Context, t driver.DataTable, doing string) error {
	quoted, stored := db.dataTable(t)
	own, err := db.ownership(ctx, db.pool, stored)
	if err != nil {
		return err
	}
	switch {
	case own.Owned():
		return nil
	case own.CurrentIdentity == "":
		return badinput.New("MySQL: there is no table %s to %s; create it first", quoted, doing)
	}
	return badinput.New("MySQL: refusing to %s table %s: dbprobe did not create it (%s lists no such table of dbprobe's)", doing, quoted, markerTable)
}

// killable runs fn on c, whose server thread is id, under a context that
// does not end, so that go-sql-driver never closes the socket under a
// statement; when ctx ends first, the statement is stopped from another
// connection of the pool by KILL QUERY, c stays open, and the error is
// ctx's. KILL QUERY on a thread that has finished its statement does
// nothing: the server clears it when the next one starts.
func (db *DB) killable(ctx context.Context, id int64, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(killed)
		kctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		_, _ = db.pool.ExecContext(kctx, "KILL QUERY "+strconv.FormatInt(id, 10))
	})
	err := fn(context.WithoutCancel(ctx))
	if !stop() {
		// The KILL went out: wait for it, so that it is over before c
		// runs anything else.
		<-killed
	}
	if ctx.Err() != nil {
		return classify(fmt.Errorf("mysql: the statement was stopped (KILL QUERY): %w", ctx.Err()))
	}
	return err
}

// withConn runs fn on a connection of the pool, killable when ctx ends.
func (db *DB) withConn(ctx context.Context, fn func(ctx context.Context, c *sql.Conn) error) error {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return classify(err)
	}
	return db.killable(ctx, id, func(ctx context.Context) error { return fn(ctx, c) })
}

// CreateDataTable creates t and records it as dbprobe's.
func (db *DB) CreateDataTable(ctx context.Context, t driver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	if dir := dirOf(t); dir != "" {
		if err := checkDir(dir); err != nil {
			return err
		}
	}
	quoted, stored := db.dataTable(t)
	return db.withLock(ctx, func(c *sql.Conn) error {
		if err := ensureMarker(ctx, c); err != nil {
			return err
		}
		id, err := driver.NewTableID()
		if err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, createDataSQL(quoted, t.PayloadBytes, dirOf(t), id)); err != nil {
			return placementError(createError(err, quoted), dirOf(t))
		}
		return recordCreated(ctx, c, stored, quoted)
	})
}

// placementError says what a DATA DIRECTORY needs when the server refused
// one.
func placementError(err error, dir string) error {
	if dir == "" || badinput.Is(err) {
		return err
	}
	switch number(err) {
	case 1210, 1005, 1030, 1296, 1478, 3121, 1815: // wrong arguments, cannot create, storage engine errors
		return badinput.New("MySQL cannot put a table's file in %s: %w; the directory must exist on the database server's host, be writable by the server's OS user (mysql), and on MySQL 8 be listed in innodb_directories",
			dir, &driver.Scrubbed{Msg: err.Error(), Err: err, Unchecked: true})
	}
	return err
}

// FillTable inserts the rows first…last, made on the server, one
// transaction per chunk.
func (db *DB) FillTable(ctx context.Context, t driver.DataTable, first, last int64) (int64, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, t, "fill"); err != nil {
		return 0, err
	}
	quoted, _ := db.dataTable(t)
	per := chunkRows(t)
	var done int64
	err := db.withConn(ctx, func(sctx context.Context, c *sql.Conn) error {
		for from := first; from <= last; from += per {
			// sctx never ends (see killable), and a KILL QUERY sent while
			// no chunk runs stops nothing: without this check a fill whose
			// ctx ended between chunks, or before the first, went on to
			// its last row (a test's billion rows hung for 10 minutes).
			if err := ctx.Err(); err != nil {
				return classify(err)
			}
			count := min(last-from+1, per)
			res, err := c.ExecContext(sctx, fillSQL(quoted, t.PayloadBytes, places(count)), from, count)
			if err != nil {
				return classify(err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return classify(err)
			}
			done += n
		}
		return nil
	})
	if err != nil {
		return done, fmt.Errorf("mysql: fill %s: %w", quoted, err)
	}
	return done, nil
}

// DropDataTable drops t when dbprobe created it.
func (db *DB) DropDataTable(ctx context.Context, t driver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	return db.DropTable(ctx, t.Table())
}

// TableSize reads the pages the table's rows and indexes use,
// DATA_LENGTH + INDEX_LENGTH, after ANALYZE TABLE has counted them anew
// (InnoDB's persistent statistics are otherwise refreshed in the
// background, after a tenth of the rows changed). Not the .ibd file's
// size: InnoDB grows the file by extents ahead of its pages, and a scan
// of a 40 MB table read 46.8 MB from the device, DATA_LENGTH's count,
// from a file of 54.5 MB. ANALYZE samples a few pages
// (innodb_stats_persistent_sample_pages) and writes a row of
// mysql.innodb_table_stats: a few kB of log at most.
func (db *DB) TableSize(ctx context.Context, t driver.DataTable) (driver.TableSize, error) {
	if err := t.Check(); err != nil {
		return driver.TableSize{}, err
	}
	quoted, stored := db.dataTable(t)
	var exists int
	if err := db.pool.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", stored).Scan(&exists); err != nil {
		return driver.TableSize{}, classify(err)
	}
	if exists == 0 {
		return driver.TableSize{}, badinput.New("MySQL: there is no table %s", quoted)
	}
	if err := analyze(ctx, db.pool, quoted); err != nil {
		return driver.TableSize{}, err
	}
	var size sql.NullInt64
	err := db.pool.QueryRowContext(ctx,
		"SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", stored).Scan(&size)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.TableSize{}, badinput.New("MySQL: there is no table %s", quoted)
	case err != nil:
		return driver.TableSize{}, classify(err)
	}
	return driver.TableSize{Bytes: size.Int64, How: "DATA_LENGTH + INDEX_LENGTH after ANALYZE TABLE (information_schema.TABLES): the pages its rows and indexes use, not the free extents its file holds for growth"}, nil
}

// analyze runs ANALYZE TABLE and reads its result rows, whose Msg_type
// says whether it worked (it reports a failure as a row, not an error).
func analyze(ctx context.Context, q *sql.DB, quoted string) error {
	rows, err := q.QueryContext(ctx, "ANALYZE TABLE "+quoted)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, op, kind, text string
		if err := rows.Scan(&table, &op, &kind, &text); err != nil {
			return classify(err)
		}
		if strings.EqualFold(kind, "error") {
			return fmt.Errorf("mysql: ANALYZE TABLE %s: %s", quoted, text)
		}
	}
	return classify(rows.Err())
}

// CopyTable runs CREATE TABLE … SELECT, which MySQL runs on one thread,
// and records the copy. The statement commits at once: the copy is dropped
// again if it cannot be recorded.
func (db *DB) CopyTable(ctx context.Context, src, dst driver.DataTable, degree int) (driver.CopyResult, error) {
	if err := src.Check(); err != nil {
		return driver.CopyResult{}, err
	}
	if err := dst.Check(); err != nil {
		return driver.CopyResult{}, err
	}
	if dir := dirOf(dst); dir != "" {
		if err := checkDir(dir); err != nil {
			return driver.CopyResult{}, err
		}
	}
	if degree > 1 {
		return driver.CopyResult{}, driver.Unsupported("MySQL", "parallel table copy (CREATE TABLE … SELECT runs on one thread)", "copy with degree 1")
	}
	from, _ := db.dataTable(src)
	to, stored := db.dataTable(dst)
	res := driver.CopyResult{Degree: 1, How: "CREATE TABLE … SELECT, on one thread"}
	err := db.withLock(ctx, func(c *sql.Conn) error {
		if err := ensureMarker(ctx, c); err != nil {
			return err
		}
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			return classify(err)
		}
		tid, err := driver.NewTableID()
		if err != nil {
			return err
		}
		err = db.killable(ctx, id, func(kctx context.Context) error {
			r, err := c.ExecContext(kctx, copySQL(from, to, dirOf(dst), tid))
			if err != nil {
				return placementError(createError(err, to), dirOf(dst))
			}
			res.Rows, err = r.RowsAffected()
			return classify(err)
		})
		if err != nil {
			return err
		}
		return recordCreated(ctx, c, stored, to)
	})
	if err != nil {
		return driver.CopyResult{}, fmt.Errorf("mysql: copy %s to %s: %w", from, to, err)
	}
	return res, nil
}

// InsertSelect copies src's rows first…last into dst, which must be
// dbprobe's.
func (db *DB) InsertSelect(ctx context.Context, src, dst driver.DataTable, first, last, shift int64) (int64, error) {
	if err := src.Check(); err != nil {
		return 0, err
	}
	if err := dst.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, dst, "insert into"); err != nil {
		return 0, err
	}
	from, _ := db.dataTable(src)
	to, _ := db.dataTable(dst)
	var n int64
	err := db.withConn(ctx, func(ctx context.Context, c *sql.Conn) error {
		res, err := c.ExecContext(ctx, insertSelectSQL(from, to), shift, first, last)
		if err != nil {
			return classify(err)
		}
		n, err = res.RowsAffected()
		return classify(err)
	})
	if err != nil {
		return 0, fmt.Errorf("mysql: insert into %s: %w", to, err)
	}
	return n, nil
}

// ScanTable counts a slice of t's rows and their payload bytes on the
// server: the part-th of parts equal ranges of its ids, which is the order
// InnoDB's clustered index keeps them in.
func (db *DB) ScanTable(ctx context.Context, t driver.DataTable, part, parts int) (driver.ScanResult, error) {
	if err := t.Check(); err != nil {
		return driver.ScanResult{}, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return driver.ScanResult{}, fmt.Errorf("mysql: scan part %d of %d", part, parts)
	}
	quoted, _ := db.dataTable(t)
	var res driver.ScanResult
	err := db.withConn(ctx, func(ctx context.Context, c *sql.Conn) error {
		if parts == 1 {
			return classify(c.QueryRowContext(ctx, scanSQL(quoted, false)).Scan(&res.Rows, &res.PayloadBytes))
		}
		var lo, hi sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT MIN(`id`), MAX(`id`) FROM "+quoted).Scan(&lo, &hi); err != nil {
			return classify(err)
		}
		if !lo.Valid {
			return nil
		}
		from, to := driver.ScanSlice(lo.Int64, hi.Int64, part, parts)
		return classify(c.QueryRowContext(ctx, scanSQL(quoted, true), from, to).Scan(&res.Rows, &res.PayloadBytes))
	})
	return res, err
}

// BulkWriter opens a session of its own on t, on the statement path
// whatever the DB's: each batch is one LOAD DATA LOCAL INFILE, or
// multi-row INSERTs without Options.BulkLoad or when the server refuses
// it, as InsertBatch loads.
func (db *DB) BulkWriter(ctx context.Context, t driver.DataTable) (driver.BulkWriter, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	if err := db.ownedData(ctx, t, "load"); err != nil {
		return nil, err
	}
	s, err := db.session(ctx, t.Table(), false)
	if err != nil {
		return nil, err
	}
	return driver.NewSessionBulkWriter(s, func() string {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.loadPath
	}), nil
}

// CreateLocation checks that the server can give tables a DATA DIRECTORY
// of their own: InnoDB puts a table's file in a directory given when it
// is created, so there is nothing to create, record or drop but the
// tables.
func (db *DB) CreateLocation(ctx context.Context, dir string) (driver.Location, error) {
	if err := checkDir(dir); err != nil {
		return driver.Location{}, err
	}
	var perTable string
	if err := db.pool.QueryRowContext(ctx, "SELECT @@innodb_file_per_table").Scan(&perTable); err != nil {
		return driver.Location{}, classify(err)
	}
	if perTable != "1" && !strings.EqualFold(perTable, "ON") {
		return driver.Location{}, badinput.New("MySQL puts a table in a DATA DIRECTORY only with innodb_file_per_table=ON, and the server has it off; set it in the server's configuration")
	}
	return driver.Location{Dir: dir, Description: "DATA DIRECTORY " + dir + " (each table's .ibd file under it, in a directory named after the database)"}, nil
}

// checkDir refuses a DATA DIRECTORY that is not an absolute path, or
// holds a backslash, which reads differently with and without
// NO_BACKSLASH_ESCAPES in a literal that takes no expression.
func checkDir(dir string) error {
	if dir == "" || !filepath.IsAbs(dir) || strings.ContainsAny(dir, "\x00\\") {
		return badinput.New("MySQL: DATA DIRECTORY %q must be an absolute path on the server's host, without backslashes", dir)
	}
	return nil
}

// DropLocation has nothing to drop: the tables' files go with the
// tables, and the directory is the user's. The server leaves the
// directory it made for the database's files under it.
func (db *DB) DropLocation(ctx context.Context, l driver.Location) error { return nil }

// Leftovers has none to return: a DATA DIRECTORY is named on each table,
// and its files go with the table.
func (db *DB) Leftovers(ctx context.Context) ([]driver.Location, error) { return nil, nil }

// Settle analyzes a table just filled and has InnoDB write its dirty
// pages (FLUSH TABLES … FOR EXPORT, then UNLOCK TABLES), so that neither
// lands in the measured part. A fill leaves InnoDB's purge nothing to do
// (an insert's undo goes at its commit). Where the user may not lock the
// table, its pages are left to the server's background flushing, said.
func (db *DB) Settle(ctx context.Context, t driver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	quoted, _ := db.dataTable(t)
	var done string
	err := db.withConn(ctx, func(ctx context.Context, c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, "ANALYZE TABLE "+quoted)
		if err != nil {
			return classify(err)
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		done = "ANALYZE TABLE " + t.Name + " (statistics taken)"
		if _, err := c.ExecContext(ctx, "FLUSH TABLES "+quoted+" FOR EXPORT"); err != nil {
			var me *gomysql.MySQLError
			if errors.As(err, &me) && (me.Number == 1044 || me.Number == erTableAccessDenied || me.Number == erSpecificAccess) {
				done += "; no FLUSH TABLES " + t.Name + " FOR EXPORT: " + me.Message + " (it needs LOCK TABLES and RELOAD or FLUSH_TABLES): the fill's dirty pages are left to InnoDB's background flushing, which may write them during the measured part"
				return nil
			}
			return classify(err)
		}
		_, err = c.ExecContext(context.WithoutCancel(ctx), "UNLOCK TABLES")
		done += "; FLUSH TABLES " + t.Name + " FOR EXPORT, UNLOCK TABLES (its dirty pages written)"
		return classify(err)
	})
	if err != nil {
		return "", fmt.Errorf("mysql: settle %s: %w", t.Name, err)
	}
	return done + "; InnoDB's purge has nothing of a fill's to do", nil
}
