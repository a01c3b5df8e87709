package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

// noSimple says why SQL Server has no simple protocol.
const noSimple = "go-mssqldb sends every statement with parameters as sp_executesql, its one path (the parameters are never put into the text); run with the prepared protocol"

// noTempPlace says why SQL Server has no TempPlacer, and what to do
// instead.
const noTempPlace = "temporary objects and spills go to tempdb, one database for the whole server: move its files with ALTER DATABASE tempdb MODIFY FILE (NAME = tempdev, FILENAME = '<dir>/tempdb.mdf') for each of its files, restart SQL Server, and run without --placement-temp"

// opener returns the DB's sqltext.Opener, made at the first call: the
// pool's connections for SQL text without options, and the connector's
// for a fresh connection or one with setup.
func (db *DB) opener() *sqltext.Opener {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sqlOpen == nil {
		db.sqlOpen = &sqltext.Opener{Product: "SQL Server", Pool: db.pool, SimpleMissing: noSimple}
		if db.connector != nil {
			db.sqlOpen.Connector = func(simple bool) (driver.Connector, error) {
				if simple {
					return nil, nil
				}
				return db.connector, nil
			}
		}
	}
	return db.sqlOpen
}

// The statements of a plan. SHOWPLAN_TEXT and STATISTICS XML must each be
// the only statement of their batch.
const (
	showplanOn   = "SET SHOWPLAN_TEXT ON"
	showplanOff  = "SET SHOWPLAN_TEXT OFF"
	statisticsOn = "SET STATISTICS XML ON"
	statisticsOf = "SET STATISTICS XML OFF"
	// xmlPlanColumn names the result set STATISTICS XML adds after each
	// statement's own.
	xmlPlanColumn = "Microsoft SQL Server 2005 XML Showplan"
)

// explain is SQL text's Hooks.Explain. Without analyze, SHOWPLAN_TEXT:
// the server compiles text and returns its plan's lines (StmtText)
// instead of running it. With analyze, STATISTICS XML: the statement
// runs, inside a transaction rolled back, and the server adds its actual
// plan as XML.
func explain(ctx context.Context, c *sql.Conn, text string, args []any, analyze bool) (dbdriver.Plan, error) {
	on, off, how := showplanOn, showplanOff, "SET SHOWPLAN_TEXT ON"
	if analyze {
		on, off, how = statisticsOn, statisticsOf, "SET STATISTICS XML ON (run once inside a transaction rolled back)"
	}
	if _, err := c.ExecContext(ctx, on); err != nil {
		return dbdriver.Plan{}, err
	}
	defer c.ExecContext(context.WithoutCancel(ctx), off)
	if analyze {
		if _, err := c.ExecContext(ctx, beginTransaction); err != nil {
			return dbdriver.Plan{}, err
		}
		defer c.ExecContext(context.WithoutCancel(ctx), rollbackIfOpen)
	}
	rows, err := c.QueryContext(ctx, text, args...)
	if err != nil {
		return dbdriver.Plan{}, err
	}
	defer rows.Close()
	lines, err := planLines(rows, analyze)
	if err != nil {
		return dbdriver.Plan{}, err
	}
	return dbdriver.Plan{Text: strings.Join(lines, "\n"), How: how}, nil
}

// planLines reads every result set of a statement run under SHOWPLAN_TEXT
// (the StmtText of each, the statement's text first, then its plan's
// steps) or STATISTICS XML (the XML plan; the statement's own rows are
// skipped).
func planLines(rows *sql.Rows, xml bool) ([]string, error) {
	var lines []string
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		want := -1
		for i, c := range cols {
			if (!xml && strings.EqualFold(c, "StmtText")) || (xml && c == xmlPlanColumn) {
				want = i
			}
		}
		values := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range values {
			if i == want {
				dest[i] = &values[i]
			} else {
				dest[i] = new(any)
			}
		}
		for rows.Next() {
			if want < 0 {
				continue
			}
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			lines = append(lines, values[want].String)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return lines, rows.Err()
}

// statementCostsSQL sums sys.dm_exec_query_stats over the statements
// whose text, cut from their batch by their offsets, is @p1 as
// go-mssqldb sends it (the batch holds sp_executesql's parameter
// declarations before it). Times are in microseconds.
const statementCostsSQL = `SELECT COUNT_BIG(*), ISNULL(SUM(qs.execution_count), 0), ISNULL(SUM(qs.total_logical_reads), 0), ISNULL(SUM(qs.total_physical_reads), 0), ` +
	`ISNULL(SUM(qs.total_rows), 0), ISNULL(SUM(qs.total_worker_time), 0), ISNULL(SUM(qs.total_elapsed_time), 0) ` +
	`FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st ` +
	`WHERE st.dbid = DB_ID() AND RTRIM(SUBSTRING(st.text, qs.statement_start_offset / 2 + 1, ` +
	`(CASE qs.statement_end_offset WHEN -1 THEN DATALENGTH(st.text) ELSE qs.statement_end_offset END - qs.statement_start_offset) / 2 + 1)) = RTRIM(@p1)`

// databaseCostsSQL reads the database's committed transactions and the
// server's buffer pool page lookups (logical reads) and page reads
// (physical), cumulative despite their "/sec" names.
const databaseCostsSQL = `SELECT ` +
	`(SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Databases%' AND counter_name = N'Transactions/sec' AND instance_name = DB_NAME()), ` +
	`(SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name = N'Page lookups/sec'), ` +
	`(SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name = N'Page reads/sec')`

// Costs reads sys.dm_exec_query_stats for each statement (found by its
// text as go-mssqldb sends it) and the performance counters for the
// database. Both need VIEW SERVER STATE (VIEW DATABASE STATE on Azure
// SQL Database); without it every figure is unknown and Notes says which
// GRANT gives it.
func (db *DB) Costs(ctx context.Context, texts []string) (dbdriver.Costs, error) {
	out := dbdriver.Costs{
		Source:     "sys.dm_exec_query_stats; sys.dm_os_performance_counters (Databases: Transactions/sec; Buffer Manager: Page lookups/sec, Page reads/sec)",
		Statements: make([]dbdriver.Cost, len(texts)),
		Database:   dbdriver.UnknownCost,
		PageBytes:  pageBytes,
		Notes: []string{
			"sys.dm_exec_query_stats keeps a statement's figures only while its plan is cached: a recompile or memory pressure starts them again",
			"the buffer pool's page lookups and reads are the whole server's, every database's",
		},
	}
	for i := range out.Statements {
		out.Statements[i] = dbdriver.UnknownCost
	}
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return out, classify(err)
	}
	defer c.Close()
	var calls, logical, physical sql.NullInt64
	err = c.QueryRowContext(ctx, databaseCostsSQL).Scan(&calls, &logical, &physical)
	if denied(err) {
		out.Notes = append(out.Notes, viewStateNote)
		return out, nil
	}
	if err != nil {
		return out, classify(err)
	}
	out.Database = dbdriver.Cost{Calls: known(calls), LogicalReads: known(logical), PhysicalReads: known(physical),
		Rows: dbdriver.Unknown, RowsExamined: dbdriver.Unknown, CPU: dbdriver.Unknown, Elapsed: dbdriver.Unknown}
	for i, t := range texts {
		b, err := sqlgen.Bind(sqlgen.SQLServer, t)
		if err != nil {
			return out, badinput.New("SQL Server statement: %v", err)
		}
		var plans, n, lr, pr, rows, worker, elapsed int64
		err = c.QueryRowContext(ctx, statementCostsSQL, b.Text).Scan(&plans, &n, &lr, &pr, &rows, &worker, &elapsed)
		if denied(err) {
			out.Notes = append(out.Notes, viewStateNote)
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("sqlserver: costs of statement %d: %w", i+1, classify(err))
		}
		out.Statements[i] = dbdriver.Cost{Calls: n, LogicalReads: lr, PhysicalReads: pr, Rows: rows,
			RowsExamined: dbdriver.Unknown, CPU: worker * 1000, Elapsed: elapsed * 1000}
	}
	return out, nil
}

// viewStateNote says what a login needs to read the costs.
const viewStateNote = "the login may not read sys.dm_exec_query_stats or the performance counters: GRANT VIEW SERVER STATE TO <login> (on Azure SQL Database, GRANT VIEW DATABASE STATE TO <user>)"

// denied reports the refusal of a DMV for a missing permission (300:
// VIEW SERVER STATE permission was denied; 297: the user does not have
// permission).
func denied(err error) bool {
	return err != nil && anyNumber(err, func(n int32) bool { return n == 300 || n == 297 || n == errPermissionDenied })
}

// known is a counter's value, Unknown when the server has none.
func known(v sql.NullInt64) int64 {
	if !v.Valid {
		return dbdriver.Unknown
	}
	return v.Int64
}

// tablePathSQL is the first file of the filegroup that holds the table's
// rows (its heap or clustered index), @p1 being the quoted name.
const tablePathSQL = `SELECT TOP (1) f.physical_name FROM sys.indexes AS i JOIN sys.database_files AS f ON f.data_space_id = i.data_space_id ` +
	`WHERE i.object_id = OBJECT_ID(@p1, N'U') AND i.index_id IN (0, 1) ORDER BY f.file_id`

// TablePath returns the physical_name of the first file of the filegroup
// that holds t; a table on a partition scheme has no one filegroup.
func (db *DB) TablePath(ctx context.Context, t dbdriver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	quoted := newDataSQL(db.schema, t).table
	var path string
	err := db.pool.QueryRowContext(ctx, tablePathSQL, quoted).Scan(&path)
	if errors.Is(err, sql.ErrNoRows) {
		var exists sql.NullInt64
		if err := db.pool.QueryRowContext(ctx, "SELECT OBJECT_ID(@p1, N'U')", quoted).Scan(&exists); err != nil {
			return "", classify(err)
		}
		if !exists.Valid {
			return "", badinput.New("SQL Server: there is no table %s", quoted)
		}
		return "", fmt.Errorf("sqlserver: table %s is on a partition scheme, not in one filegroup's files", quoted)
	}
	if err != nil {
		return "", classify(err)
	}
	return path, nil
}

// cacheSizeSQL reads the memory SQL Server may give its buffer pool: max
// server memory (MB) as configured and the memory manager's committed
// target, which is lower when the machine or the container has less.
const cacheSizeSQL = `SELECT CAST(c.value_in_use AS bigint) * 1048576, CAST(i.committed_target_kb AS bigint) * 1024 ` +
	`FROM sys.configurations AS c CROSS JOIN sys.dm_os_sys_info AS i WHERE c.name = N'max server memory (MB)'`

// CacheSize reads the smaller of max server memory and the committed
// target: an upper bound of the buffer pool, which shares that memory
// with the plan cache and the rest (sys.dm_os_sys_info takes VIEW SERVER
// STATE).
func (db *DB) CacheSize(ctx context.Context) (dbdriver.CacheSize, error) {
	var maxMem, target int64
	if err := db.pool.QueryRowContext(ctx, cacheSizeSQL).Scan(&maxMem, &target); err != nil {
		return dbdriver.CacheSize{}, classify(err)
	}
	return cacheSizeOf(maxMem, target), nil
}

// cacheSizeOf is the smaller of max server memory and the committed
// target, saying which.
func cacheSizeOf(maxMem, target int64) dbdriver.CacheSize {
	how := fmt.Sprintf("the buffer pool's bound: max server memory = %d MB, committed target = %d MB (sys.dm_os_sys_info), the smaller taken", maxMem>>20, target>>20)
	return dbdriver.CacheSize{Bytes: min(maxMem, target), How: how}
}
