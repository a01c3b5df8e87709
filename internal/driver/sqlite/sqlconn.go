package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

var (
	_ driver.SQLRunner    = (*db)(nil)
	_ driver.TableFiller  = (*db)(nil)
	_ driver.TableSizer   = (*db)(nil)
	_ driver.TableCopier  = (*db)(nil)
	_ driver.ChunkWriter  = (*db)(nil)
	_ driver.TableScanner = (*db)(nil)
	_ driver.BulkLoader   = (*db)(nil)
	_ driver.Describer    = (*db)(nil)
	_ driver.TempPlacer   = (*db)(nil)
	_ driver.Locator      = (*db)(nil)
)

// Capabilities says what SQLite does beyond key-value, and how.
func (d *db) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("SQLite")
	c.Has(driver.CapSQL, "statements prepared by SQLite on a connection of their own, :name parameters bound as ?; their writes wait for SQLite's one write lock (busy_timeout)")
	c.Has(driver.CapCancel, "sqlite3_interrupt when the context ends; the connection stays open")
	c.Has(driver.CapFill, "INSERT … SELECT from a recursive CTE, through the one writer, committed every 64 MB")
	c.Has(driver.CapSize, "the database's pages in use, every table's: SQLite's dbstat, which sizes one table, is in neither library")
	c.Has(driver.CapCopy, "CREATE TABLE then INSERT … SELECT, in one transaction")
	c.Lacks(driver.CapParallelCopy, "it has one writer and copies serially; copy with degree 1")
	c.Has(driver.CapInsertSelect, "INSERT … SELECT, through the one writer")
	c.Has(driver.CapScan, "count(*) over rowid ranges")
	c.Has(driver.CapBulkLoad, "one transaction per batch through the one writer: N writers take turns")
	c.Lacks(driver.CapPlace, noPlacement)
	c.Has(driver.CapCounters, "device_read_bytes and device_write_bytes (the process's own I/O: SQLite runs inside dbprobe) and page_bytes; SQLite counts no log bytes and no cache hits")
	c.Lacks(driver.CapSimpleProtocol, noSimple)
	c.Has(driver.CapExplain, "EXPLAIN QUERY PLAN; SQLite has no ANALYZE of a statement, so a plan with analyze is the same, not run")
	c.Lacks(driver.CapCosts, noCosts)
	c.Has(driver.CapTempPlace, "PRAGMA temp_store_directory, which is one setting for the whole dbprobe process (SQLite runs inside it), set once and never changed under a running statement")
	c.Has(driver.CapLocate, "the database file (PRAGMA database_list): every table of a SQLite database is in it")
	c.Has(driver.CapCacheSize, "PRAGMA cache_size of a reading connection (each has its own)")
	c.Lacks(driver.CapCacheCounts, "SQLite counts its page cache's hits and misses per connection (sqlite3_db_status SQLITE_DBSTATUS_CACHE_HIT and _MISS), and neither Go driver dbprobe builds with (mattn/go-sqlite3, modernc.org/sqlite) lets it read them; its page cache is also each connection's own, not one cache of the database: measure a server database")
	return c
}

// SQLConn takes a connection for SQL text, as o asks (sqltext.Opener):
// its own, as an application's would be, so its writes take SQLite's
// write lock beside the DB's writer and wait for it (busy_timeout). A
// statement whose context ends is interrupted (sqlite3_interrupt); the
// connection stays.
func (d *db) SQLConn(ctx context.Context, o driver.SQLOptions) (driver.SQLConn, error) {
	c, err := d.sqlOpen.Conn(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open a connection: %w", classify(err))
	}
	return sqltext.Start(ctx, c, &sqlTextHooks, o)
}

// SplitScript cuts a script into its statements by SQLite's rules, with
// its trigger bodies (sqlgen.Script).
func (d *db) SplitScript(text string) ([]driver.ScriptStatement, error) {
	return sqltext.Script(sqlgen.SQLite, text)
}

// sqlTextHooks are SQLite's part of SQL text: ? placeholders, an error of
// an interrupted statement said as its context's end, and a ROLLBACK
// without a transaction taken as done.
var sqlTextHooks = sqltext.Hooks{
	Prefix: "sqlite", Product: "SQLite", Dialect: sqlgen.SQLite, Classify: classify,
	Begin: "BEGIN", Commit: "COMMIT", Rollback: "ROLLBACK",
	Ended: interrupted, NoTransaction: isNoTransaction,
	Explain: explain, Setup: setTempDir, Check: refuseCommentsOnly,
}

// refuseCommentsOnly refuses a statement of comments alone (a /*+ hint */
// or /*! … */ that a script split keeps as a statement): SQLite reads
// them as comments and go-sqlite3 prepares them as no statement, which
// crashes the process when run.
func refuseCommentsOnly(text string) error {
	if sqlgen.CommentsOnly(sqlgen.SQLite, text) {
		return badinput.New("SQLite statement %q holds only comments, which SQLite does not run (/*+ and /*! are comments to it): remove it or give it a statement", strings.Join(strings.Fields(text), " "))
	}
	return nil
}

// interrupted classifies err, the error of a statement, as its context's
// end when that is what interrupted it.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return classify(fmt.Errorf("sqlite: interrupted: %w", ctx.Err()))
	}
	return classify(err)
}

// isNoTransaction reports SQLite's refusal of a ROLLBACK without a
// transaction: there is nothing to roll back.
func isNoTransaction(err error) bool {
	code, ok := errorCode(err)
	return ok && code&0xff == 1 // SQLITE_ERROR: "cannot rollback - no transaction is active"
}
