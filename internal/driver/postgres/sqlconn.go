package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
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
)

// Capabilities says what PostgreSQL does beyond key-value, and how.
func (db *DB) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("PostgreSQL")
	c.Has(driver.CapSQL, "statements prepared on the server, :name parameters bound as $n")
	c.Has(driver.CapCancel, "a cancel request on a second connection; the statement's own connection stays open")
	c.Has(driver.CapFill, "INSERT … SELECT from generate_series, committed every 64 MB")
	c.Has(driver.CapSize, "pg_total_relation_size")
	c.Has(driver.CapCopy, "CREATE TABLE … AS SELECT")
	c.Has(driver.CapParallelCopy, "parallel workers for the SELECT (max_parallel_workers_per_gather and the source's parallel_workers at degree − 1, parallel costs at 0); the leader writes every row")
	c.Has(driver.CapInsertSelect, "INSERT … SELECT")
	c.Has(driver.CapScan, "count(*) over ctid ranges (TID range scans, PostgreSQL 14 and later; id ranges before)")
	c.Has(driver.CapBulkLoad, "COPY FROM STDIN, one connection per writer")
	c.Has(driver.CapPlace, "CREATE TABLESPACE … LOCATION: a superuser, and a directory on the server's host that is empty and the server's own")
	c.Has(driver.CapCounters, "pg_stat_wal, pg_stat_database, pg_stat_bgwriter")
	c.Lacks(driver.CapSimpleProtocol, "not built yet")
	c.Lacks(driver.CapExplain, "not built yet")
	c.Lacks(driver.CapCosts, "not built yet")
	c.Lacks(driver.CapTempPlace, "not built yet")
	c.Lacks(driver.CapLocate, "not built yet")
	return c
}

// SQLConn opens a connection of the DB's configuration for SQL text. Its
// statements are cancelled by a cancel request when their context ends
// (the configuration's context watcher), and the connection stays usable.
func (db *DB) SQLConn(ctx context.Context, o driver.SQLOptions) (driver.SQLConn, error) {
	if o.Simple || o.Fresh || len(o.Setup) > 0 {
		return nil, driver.Unsupported("PostgreSQL", "SQL connection options yet", "open it without them")
	}
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: open a connection: %w", classify(err))
	}
	return &sqlConn{conn: conn}, nil
}

// SplitScript cuts a script into its statements by PostgreSQL's rules, with
// its dollar quotes and BEGIN ATOMIC bodies (sqlgen.Script).
func (db *DB) SplitScript(text string) ([]driver.ScriptStatement, error) {
	return sqltext.Script(sqlgen.Postgres, text)
}

// sqlConn is one connection running SQL text.
type sqlConn struct {
	conn *pgx.Conn
	n    int // statements prepared, to name the next
	args []any
}

// sqlStmt is a statement prepared on a sqlConn under name.
type sqlStmt struct {
	c     *sqlConn
	name  string
	bound sqlgen.Bound
}

// Params names the parameters in the order Run takes them.
func (st *sqlStmt) Params() []string { return st.bound.Names }

// Close deallocates the statement.
func (st *sqlStmt) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return classify(st.c.conn.Deallocate(ctx, st.name))
}

// Prepare binds text's :name parameters to $n and prepares it, which has
// the server parse and analyse it.
func (c *sqlConn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(sqlgen.Postgres, text)
	if err != nil {
		return nil, badinput.New("PostgreSQL statement: %v", err)
	}
	c.n++
	name := "dbprobe_sql_" + strconv.Itoa(c.n)
	if _, err := c.conn.Prepare(ctx, name, b.Text); err != nil {
		return nil, classify(err)
	}
	return &sqlStmt{c: c, name: name, bound: b}, nil
}

// Run executes a prepared statement and reads its rows.
func (c *sqlConn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	st, ok := s.(*sqlStmt)
	if !ok || st.c != c {
		return driver.Outcome{}, fmt.Errorf("postgres: a statement of another connection")
	}
	if len(args) != len(st.bound.Names) {
		return driver.Outcome{}, fmt.Errorf("postgres: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.args = c.args[:0]
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	rows, err := c.conn.Query(ctx, st.name, c.args...)
	clear(c.args)
	if err != nil {
		return driver.Outcome{}, classify(err)
	}
	var out driver.Outcome
	for rows.Next() {
		out.Rows++
		if visit == nil {
			continue
		}
		values, err := rows.Values()
		if err == nil {
			err = visit(values)
		}
		if err != nil {
			rows.Close()
			return out, err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, classify(err)
	}
	tag := rows.CommandTag()
	out.Affected = -1
	if !tag.Select() {
		out.Affected = tag.RowsAffected()
	}
	return out, nil
}

// Begin opens a transaction.
func (c *sqlConn) Begin(ctx context.Context) error { return c.exec(ctx, "BEGIN") }

// Commit commits the transaction.
func (c *sqlConn) Commit(ctx context.Context) error { return c.exec(ctx, "COMMIT") }

// Rollback rolls the transaction back; without one the server only warns.
func (c *sqlConn) Rollback(ctx context.Context) error { return c.exec(ctx, "ROLLBACK") }

func (c *sqlConn) exec(ctx context.Context, sql string) error {
	_, err := c.conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return classify(err)
}

// Close closes the connection.
func (c *sqlConn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return c.conn.Close(ctx)
}
