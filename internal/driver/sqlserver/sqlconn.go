package sqlserver

import (
	"context"
	"database/sql"
	"fmt"

	"dbprobe/internal/badinput"
	dbdriver "dbprobe/internal/driver"
	"dbprobe/internal/driver/sqlgen"
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
	return c
}

// SQLConn takes a connection of the pool for SQL text. A statement whose
// context ends is stopped by an attention (go-mssqldb's answer to a
// context's end), and the connection stays.
func (db *DB) SQLConn(ctx context.Context) (dbdriver.SQLConn, error) {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: open a connection: %w", classify(err))
	}
	return &sqlConn{c: c}, nil
}

// sqlConn is one connection of the pool running SQL text.
type sqlConn struct {
	c    *sql.Conn
	args []any
}

// sqlStmt is a statement of a sqlConn. go-mssqldb prepares nothing on the
// server: each run is an sp_executesql of the text.
type sqlStmt struct {
	c     *sqlConn
	st    *sql.Stmt
	bound sqlgen.Bound
	rows  bool // run as a query (sqlgen.ReturnsRows)
}

// Params names the parameters in the order Run takes them.
func (st *sqlStmt) Params() []string { return st.bound.Names }

// Close releases the statement.
func (st *sqlStmt) Close() error { return st.st.Close() }

// Prepare binds text's :name parameters to @p1, @p2, ….
func (c *sqlConn) Prepare(ctx context.Context, text string) (dbdriver.Stmt, error) {
	b, err := sqlgen.Bind(sqlgen.SQLServer, text)
	if err != nil {
		return nil, badinput.New("SQL Server statement: %v", err)
	}
	st, err := c.c.PrepareContext(ctx, b.Text)
	if err != nil {
		return nil, classify(err)
	}
	return &sqlStmt{c: c, st: st, bound: b, rows: sqlgen.ReturnsRows(sqlgen.SQLServer, text)}, nil
}

// Run executes a statement: as a query when it returns rows, else for its
// count of rows changed.
func (c *sqlConn) Run(ctx context.Context, s dbdriver.Stmt, args []any, visit func(row []any) error) (dbdriver.Outcome, error) {
	st, ok := s.(*sqlStmt)
	if !ok || st.c != c {
		return dbdriver.Outcome{}, fmt.Errorf("sqlserver: a statement of another connection")
	}
	if len(args) != len(st.bound.Names) {
		return dbdriver.Outcome{}, fmt.Errorf("sqlserver: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.args = append(c.args[:0], args...)
	defer clear(c.args)
	out := dbdriver.Outcome{Affected: -1}
	if !st.rows {
		res, err := st.st.ExecContext(ctx, c.args...)
		if err != nil {
			return out, classify(err)
		}
		out.Affected, err = res.RowsAffected()
		return out, classify(err)
	}
	rows, err := st.st.QueryContext(ctx, c.args...)
	if err != nil {
		return out, classify(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return out, classify(err)
	}
	values := make([]any, len(cols))
	dest := make([]any, len(cols))
	for i := range values {
		dest[i] = &values[i]
	}
	for rows.Next() {
		out.Rows++
		if visit == nil {
			continue
		}
		if err := rows.Scan(dest...); err != nil {
			return out, classify(err)
		}
		if err := visit(values); err != nil {
			return out, err
		}
	}
	return out, classify(rows.Err())
}

// Begin opens a transaction.
func (c *sqlConn) Begin(ctx context.Context) error { return c.exec(ctx, beginTransaction) }

// Commit commits the transaction.
func (c *sqlConn) Commit(ctx context.Context) error { return c.exec(ctx, commitTransaction) }

// Rollback rolls the transaction back, if there is one.
func (c *sqlConn) Rollback(ctx context.Context) error { return c.exec(ctx, rollbackIfOpen) }

func (c *sqlConn) exec(ctx context.Context, q string) error {
	_, err := c.c.ExecContext(ctx, q)
	return classify(err)
}

// Close gives the connection back to the pool, with no transaction open.
func (c *sqlConn) Close() error {
	_, _ = c.c.ExecContext(context.Background(), rollbackIfOpen)
	return c.c.Close()
}
