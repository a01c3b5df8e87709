package mysql

import (
	"context"
	"fmt"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

var (
	_ driver.SQLRunner    = (*DB)(nil)
	_ driver.TableFiller  = (*DB)(nil)
	_ driver.TableSizer   = (*DB)(nil)
	_ driver.TableCopier  = (*DB)(nil)
	_ driver.ChunkWriter  = (*DB)(nil)
	_ driver.TableScanner = (*DB)(nil)
	_ driver.BulkLoader   = (*DB)(nil)
	_ driver.Placer       = (*DB)(nil)
	_ driver.Describer    = (*DB)(nil)
	_ driver.CostReader   = (*DB)(nil)
	_ driver.Locator      = (*DB)(nil)
	_ driver.Explainer    = (*sqlConn)(nil)
	_ driver.Execer       = (*sqlConn)(nil)
)

// Capabilities says what MySQL and MariaDB do beyond key-value, and how.
func (db *DB) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("MySQL")
	if db.mariaDB {
		c.Database = "MariaDB"
	}
	c.Has(driver.CapSQL, "statements prepared on the server, :name parameters bound as ?")
	c.Has(driver.CapCancel, "KILL QUERY from another connection; the statement's own connection stays open")
	c.Has(driver.CapFill, "INSERT … SELECT over digits crossed with themselves, committed every 64 MB")
	c.Has(driver.CapSize, "FILE_SIZE of the table's .ibd file (DATA_LENGTH + INDEX_LENGTH without one)")
	c.Has(driver.CapCopy, "CREATE TABLE … SELECT")
	c.Lacks(driver.CapParallelCopy, "CREATE TABLE … SELECT runs on one thread; copy with degree 1")
	c.Has(driver.CapInsertSelect, "INSERT … SELECT")
	c.Has(driver.CapScan, "COUNT(*) over id ranges of the clustered index")
	c.Has(driver.CapBulkLoad, "LOAD DATA LOCAL INFILE, one connection per writer (multi-row INSERT when the server has local_infile off)")
	c.Has(driver.CapPlace, "DATA DIRECTORY on each table (innodb_file_per_table; MySQL 8 also wants the directory in innodb_directories)")
	c.Has(driver.CapCounters, "SHOW GLOBAL STATUS (InnoDB's redo log, buffer pool and data files)")
	c.Has(driver.CapSimpleProtocol, "go-sql-driver/mysql's interpolateParams: each parameter put into the text as an escaped literal, one COM_QUERY per statement, nothing prepared on the server")
	c.Has(driver.CapExplain, "EXPLAIN; with analyze "+db.analyzeHow()+", in a transaction rolled back (changes to MEMORY or MyISAM tables are not undone)")
	c.Has(driver.CapCosts, "performance_schema's events_statements_summary_by_digest per statement (calls, rows, time; on MariaDB only statements sent as text: use the simple protocol), SHOW GLOBAL STATUS for the database (InnoDB buffer pool read requests and reads)")
	c.Lacks(driver.CapTempPlace, noTempPlace)
	c.Has(driver.CapLocate, "the .ibd file InnoDB names in information_schema (INNODB_SYS_TABLESPACES, INNODB_SYS_DATAFILES or FILES), under @@datadir when relative")
	c.Has(driver.CapCacheSize, "innodb_buffer_pool_size")
	c.Has(driver.CapCacheCounts, "SHOW GLOBAL STATUS Innodb_buffer_pool_read_requests and Innodb_buffer_pool_reads: the whole server's, not the table's")
	return c
}

// SQLConn takes a connection for SQL text, as o asks (sqltext.Opener):
// the pool's, one of a pool whose connections interpolate parameters
// (Simple), or one of its own (Fresh, Setup). Its statements are stopped
// by KILL QUERY from another connection when their context ends
// (killable), and it stays usable.
func (db *DB) SQLConn(ctx context.Context, o driver.SQLOptions) (driver.SQLConn, error) {
	c, err := db.sqlOpen.Conn(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("mysql: open a connection: %w", classify(err))
	}
	s := &sqlConn{}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id); err != nil {
		c.Close()
		return nil, classify(err)
	}
	s.SQLConn, err = sqltext.Start(ctx, c, &sqltext.Hooks{
		Prefix: "mysql", Product: "MySQL", Dialect: sqlgen.MySQL, Classify: classify,
		Begin: "START TRANSACTION", Commit: "COMMIT", Rollback: "ROLLBACK",
		Guard: func(ctx context.Context, run func(context.Context) error) error {
			return db.killable(ctx, s.id, run)
		},
		Explain: db.explain,
	}, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// SplitScript cuts a script into its statements by MySQL's rules, with
// its DELIMITER lines and BEGIN … END bodies (sqlgen.Script).
func (db *DB) SplitScript(text string) ([]driver.ScriptStatement, error) {
	return sqltext.Script(sqlgen.MySQL, text)
}

// sqlConn is one connection of the pool running SQL text, with the
// thread id that KILL QUERY names.
type sqlConn struct {
	driver.SQLConn
	id int64 // CONNECTION_ID()
}

// RunRaw implements driver.RawRunner with sqltext's, which embedding
// the SQLConn interface does not promote.
func (s *sqlConn) RunRaw(ctx context.Context, st driver.Stmt, args []any, visit func(row [][]byte) error) (driver.Outcome, error) {
	return s.SQLConn.(driver.RawRunner).RunRaw(ctx, st, args, visit)
}
