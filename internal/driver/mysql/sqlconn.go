package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
	"dbprobe/internal/driver/sqlgen"
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
	return c
}

// SQLConn takes a connection of the pool for SQL text. Its statements are
// stopped by KILL QUERY from another connection when their context ends
// (killable), and it stays usable.
func (db *DB) SQLConn(ctx context.Context) (driver.SQLConn, error) {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql: open a connection: %w", classify(err))
	}
	s := &sqlConn{db: db, c: c}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id); err != nil {
		c.Close()
		return nil, classify(err)
	}
	return s, nil
}

// sqlConn is one connection of the pool running SQL text.
type sqlConn struct {
	db   *DB
	c    *sql.Conn
	id   int64 // CONNECTION_ID(), for KILL QUERY
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

// Close deallocates the statement on the server.
func (st *sqlStmt) Close() error { return st.st.Close() }

// Prepare binds text's :name parameters to ? and prepares it on the
// server, which checks it.
func (c *sqlConn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(sqlgen.MySQL, text)
	if err != nil {
		return nil, badinput.New("MySQL statement: %v", err)
	}
	st, err := c.c.PrepareContext(ctx, b.Text)
	if err != nil {
		return nil, classify(err)
	}
	return &sqlStmt{c: c, st: st, bound: b, rows: sqlgen.ReturnsRows(sqlgen.MySQL, text)}, nil
}

// Run executes a prepared statement: as a query when it returns rows,
// else for its count of rows changed.
func (c *sqlConn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	st, ok := s.(*sqlStmt)
	if !ok || st.c != c {
		return driver.Outcome{}, fmt.Errorf("mysql: a statement of another connection")
	}
	if len(args) != len(st.bound.Names) {
		return driver.Outcome{}, fmt.Errorf("mysql: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.args = c.args[:0]
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	defer clear(c.args)
	out := driver.Outcome{Affected: -1}
	err := c.db.killable(ctx, c.id, func(ctx context.Context) error {
		if !st.rows {
			res, err := st.st.ExecContext(ctx, c.args...)
			if err != nil {
				return classify(err)
			}
			out.Affected, err = res.RowsAffected()
			return classify(err)
		}
		rows, err := st.st.QueryContext(ctx, c.args...)
		if err != nil {
			return classify(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return classify(err)
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
				return classify(err)
			}
			if err := visit(values); err != nil {
				return err
			}
		}
		return classify(rows.Err())
	})
	return out, err
}

// Begin opens a transaction.
func (c *sqlConn) Begin(ctx context.Context) error { return c.exec(ctx, "START TRANSACTION") }

// Commit commits the transaction.
func (c *sqlConn) Commit(ctx context.Context) error { return c.exec(ctx, "COMMIT") }

// Rollback rolls the transaction back, if there is one.
func (c *sqlConn) Rollback(ctx context.Context) error { return c.exec(ctx, "ROLLBACK") }

func (c *sqlConn) exec(ctx context.Context, query string) error {
	return c.db.killable(ctx, c.id, func(ctx context.Context) error {
		_, err := c.c.ExecContext(ctx, query)
		return classify(err)
	})
}

// Close gives the connection back to the pool. A transaction left open
// would go back with it: it is rolled back first.
func (c *sqlConn) Close() error {
	_, _ = c.c.ExecContext(context.Background(), "ROLLBACK")
	return c.c.Close()
}
