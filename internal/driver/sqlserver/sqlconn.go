package sqlserver

import (
	"context"
	"fmt"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

var (
	_ dbdriver.SQLRunner    = (*DB)(nil)
	_ dbdriver.TableFiller  = (*DB)(nil)
	_ dbdriver.TableSizer   = (*DB)(nil)
	_ dbdriver.TableCopier  = (*DB)(nil)
	_ dbdriver.ChunkWriter  = (*DB)(nil)
	_ dbdriver.TableScanner = (*DB)(nil)
	_ dbdriver.BulkLoader   = (*DB)(nil)
	_ dbdriver.Placer       = (*DB)(nil)
	_ dbdriver.Describer    = (*DB)(nil)
	_ dbdriver.CostReader   = (*DB)(nil)
	_ dbdriver.Locator      = (*DB)(nil)
)

// Capabilities says what SQL Server does beyond key-value, and how.
func (db *DB) Capabilities() dbdriver.Capabilities {
	c := dbdriver.NewCapabilities("SQL Server")
	c.Has(dbdriver.CapSQL, "statements through sp_executesql, :name parameters bound as @pn; checked by the server when they first run, not when prepared")
	c.Has(dbdriver.CapCancel, "an attention on the statement's connection (TDS), which stays open")
	c.Has(dbdriver.CapFill, "INSERT … WITH (TABLOCK) SELECT TOP (n) ROW_NUMBER() over sys.all_columns crossed with itself, committed every 64 MB")
	c.Has(dbdriver.CapSize, "the pages reserved for the table (sp_spaceused's reserved)")
	c.Has(dbdriver.CapCopy, "SELECT … INTO (minimally logged under SIMPLE and BULK_LOGGED recovery)")
	c.Has(dbdriver.CapParallelCopy, "OPTION (MAXDOP degree): a ceiling the optimizer may stay under")
	c.Has(dbdriver.CapInsertSelect, "INSERT … SELECT, fully logged")
	c.Has(dbdriver.CapScan, "COUNT_BIG(*) over id ranges of the clustered index")
	c.Has(dbdriver.CapBulkLoad, "bulk copy (go-mssqldb CopyIn), one connection per writer")
	c.Has(dbdriver.CapPlace, "a filegroup with one file in the directory (ALTER DATABASE … ADD FILEGROUP, ADD FILE); not on Azure SQL Database")
	c.Has(dbdriver.CapCounters, "sys.dm_io_virtual_file_stats and the Buffer Manager's performance counters")
	c.Lacks(dbdriver.CapSimpleProtocol, noSimple)
	c.Has(dbdriver.CapExplain, "SET SHOWPLAN_TEXT; with analyze SET STATISTICS XML, the statement run inside a transaction rolled back")
	c.Has(dbdriver.CapCosts, "sys.dm_exec_query_stats per statement, found by its text (sys.dm_exec_sql_text); the Databases and Buffer Manager performance counters for the database (VIEW SERVER STATE, or VIEW DATABASE STATE on Azure SQL Database)")
	c.Lacks(dbdriver.CapTempPlace, noTempPlace)
	c.Has(dbdriver.CapLocate, "physical_name of the first file of the filegroup that holds the table (sys.indexes, sys.database_files)")
	c.Has(dbdriver.CapCacheSize, "the smaller of max server memory and the committed target (sys.configurations, sys.dm_os_sys_info: VIEW SERVER STATE), the buffer pool's bound")
	c.Has(dbdriver.CapCacheCounts, "the Buffer Manager's Page lookups and Page reads (sys.dm_os_performance_counters: VIEW SERVER STATE): the instance's, not the table's")
	return c
}

// SQLConn takes a connection of the pool for SQL text. A statement whose
// context ends is stopped by an attention (go-mssqldb's answer to a
// context's end), and the connection stays. go-mssqldb prepares nothing
// on the server: each run is an sp_executesql of the text.
func (db *DB) SQLConn(ctx context.Context, o dbdriver.SQLOptions) (dbdriver.SQLConn, error) {
	c, err := db.opener().Conn(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: open a connection: %w", classify(err))
	}
	return sqltext.Start(ctx, c, &sqlTextHooks, o)
}

// SplitScript cuts a script into its statements by SQL Server's rules, with
// its GO lines (sqlgen.Script).
func (db *DB) SplitScript(text string) ([]dbdriver.ScriptStatement, error) {
	return sqltext.Script(sqlgen.SQLServer, text)
}

// sqlTextHooks are SQL Server's part of SQL text: @pn placeholders and a
// rollback that is a no-op without a transaction.
var sqlTextHooks = sqltext.Hooks{
	Prefix: "sqlserver", Product: "SQL Server", Dialect: sqlgen.SQLServer, Classify: classify,
	Begin: beginTransaction, Commit: commitTransaction, Rollback: rollbackIfOpen,
	Explain: explain,
}
