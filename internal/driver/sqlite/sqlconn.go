package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
	"dbprobe/internal/driver/sqlgen"
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
	return c
}

// SQLConn takes a connection of the pool for SQL text: its own, as an
// application's would be, so its writes take SQLite's write lock beside
// the DB's writer and wait for it (busy_timeout). A statement whose
// context ends is interrupted (sqlite3_interrupt); the connection stays.
func (d *db) SQLConn(ctx context.Context) (driver.SQLConn, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open a connection: %w", classify(err))
	}
	return &sqlConn{c: c}, nil
}

// sqlConn is one connection running SQL text.
type sqlConn struct {
	c    *sql.Conn
	args []any
}

// sqlStmt is a statement prepared on a sqlConn.
type sqlStmt struct {
	c     *sqlConn
	st    *sql.Stmt
	bound sqlgen.Bound
	rows  bool // run as a query (sqlgen.ReturnsRows)
}

// Params names the parameters in the order Run takes them.
func (st *sqlStmt) Params() []string { return st.bound.Names }

// Close finalizes the statement.
func (st *sqlStmt) Close() error { return st.st.Close() }

// Prepare binds text's :name parameters to ? and has SQLite compile it.
func (c *sqlConn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(sqlgen.SQLite, text)
	if err != nil {
		return nil, badinput.New("SQLite statement: %v", err)
	}
	st, err := c.c.PrepareContext(ctx, b.Text)
	if err != nil {
		return nil, classify(err)
	}
	return &sqlStmt{c: c, st: st, bound: b, rows: sqlgen.ReturnsRows(sqlgen.SQLite, text)}, nil
}

// Run executes a prepared statement: as a query when it returns rows,
// else for its count of rows changed.
func (c *sqlConn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	st, ok := s.(*sqlStmt)
	if !ok || st.c != c {
		return driver.Outcome{}, fmt.Errorf("sqlite: a statement of another connection")
	}
	if len(args) != len(st.bound.Names) {
		return driver.Outcome{}, fmt.Errorf("sqlite: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.args = c.args[:0]
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	defer clear(c.args)
	out := driver.Outcome{Affected: -1}
	if !st.rows {
		res, err := st.st.ExecContext(ctx, c.args...)
		if err != nil {
			return out, interrupted(ctx, err)
		}
		out.Affected, err = res.RowsAffected()
		return out, classify(err)
	}
	var err error
	out.Rows, err = c.query(ctx, st, visit)
	return out, err
}

// query runs a statement that returns rows and reads them.
func (c *sqlConn) query(ctx context.Context, st *sqlStmt, visit func(row []any) error) (int64, error) {
	var n int64
	rows, err := st.st.QueryContext(ctx, c.args...)
	if err != nil {
		return n, interrupted(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return n, classify(err)
	}
	values := make([]any, len(cols))
	dest := make([]any, len(cols))
	for i := range values {
		dest[i] = &values[i]
	}
	for rows.Next() {
		n++
		if visit == nil {
			continue
		}
		if err := rows.Scan(dest...); err != nil {
			return n, classify(err)
		}
		if err := visit(values); err != nil {
			return n, err
		}
	}
	return n, interrupted(ctx, rows.Err())
}

// interrupted classifies err, the error of a statement, as its context's
// end when that is what interrupted it.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return classify(fmt.Errorf("sqlite: interrupted: %w", ctx.Err()))
	}
	return classify(err)
}

// Begin opens a transaction.
func (c *sqlConn) Begin(ctx context.Context) error { return c.exec(ctx, "BEGIN") }

// Commit commits the transaction.
func (c *sqlConn) Commit(ctx context.Context) error { return c.exec(ctx, "COMMIT") }

// Rollback rolls the transaction back, if there is one.
func (c *sqlConn) Rollback(ctx context.Context) error {
	if err := c.exec(ctx, "ROLLBACK"); err != nil && !isNoTransaction(err) {
		return err
	}
	return nil
}

func (c *sqlConn) exec(ctx context.Context, q string) error {
	_, err := c.c.ExecContext(ctx, q)
	return classify(err)
}

// isNoTransaction reports SQLite's refusal of a ROLLBACK without a
// transaction: there is nothing to roll back.
func isNoTransaction(err error) bool {
	code, ok := errorCode(err)
	return ok && code&0xff == 1 // SQLITE_ERROR: "cannot rollback - no transaction is active"
}

// Close gives the connection back to the pool, rolling back a transaction
// left open so that it does not go back with it.
func (c *sqlConn) Close() error {
	_, _ = c.c.ExecContext(context.Background(), "ROLLBACK")
	return c.c.Close()
}
