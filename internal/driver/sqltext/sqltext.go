package sqltext

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// Hooks are what a driver adds to the shared loop.
type Hooks struct {
	// Prefix starts dbprobe's own messages: "sqlite".
	Prefix string
	// Product names the database in the refusal of a statement the
	// binder cannot read: "SQLite".
	Product string
	Dialect sqlgen.Dialect
	// Classify maps the database's errors to driver classes.
	Classify func(error) error
	// Begin, Commit and Rollback are the transaction statements; Close
	// runs Rollback too, so that no transaction goes back to the pool.
	Begin, Commit, Rollback string
	// Guard runs one statement's calls; nil runs them as they are. MySQL
	// stops a statement whose context ended with KILL QUERY from another
	// connection.
	Guard func(ctx context.Context, run func(context.Context) error) error
	// Ended classifies the error of a statement whose context may have
	// ended (SQLite's interrupt); nil means Classify.
	Ended func(ctx context.Context, err error) error
	// NoTransaction reports a Rollback refused because no transaction was
	// open, which leaves nothing to roll back; nil means never.
	NoTransaction func(error) bool
}

// New returns c as a driver.SQLConn; Close gives c back to its pool.
func New(c *sql.Conn, h *Hooks) driver.SQLConn { return &conn{c: c, h: h} }

type conn struct {
	c    *sql.Conn
	h    *Hooks
	args []any
}

type stmt struct {
	c     *conn
	st    *sql.Stmt
	bound sqlgen.Bound
	rows  bool // run as a query (sqlgen.ReturnsRows)
}

// Params names the parameters in the order Run takes them.
func (st *stmt) Params() []string { return st.bound.Names }

// Close releases the statement.
func (st *stmt) Close() error { return st.st.Close() }

func (c *conn) guard(ctx context.Context, run func(context.Context) error) error {
	if c.h.Guard == nil {
		return run(ctx)
	}
	return c.h.Guard(ctx, run)
}

func (c *conn) ended(ctx context.Context, err error) error {
	if c.h.Ended == nil {
		return c.h.Classify(err)
	}
	return c.h.Ended(ctx, err)
}

// Prepare binds text's :name parameters to the dialect's placeholders
// and prepares it on the connection.
func (c *conn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(c.h.Dialect, text)
	if err != nil {
		return nil, badinput.New("%s statement: %v", c.h.Product, err)
	}
	st, err := c.c.PrepareContext(ctx, b.Text)
	if err != nil {
		return nil, c.h.Classify(err)
	}
	return &stmt{c: c, st: st, bound: b, rows: sqlgen.ReturnsRows(c.h.Dialect, text)}, nil
}

// Run executes a prepared statement: as a query when it returns rows,
// else for its count of rows changed.
func (c *conn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	st, ok := s.(*stmt)
	if !ok || st.c != c {
		return driver.Outcome{}, fmt.Errorf("%s: a statement of another connection", c.h.Prefix)
	}
	if len(args) != len(st.bound.Names) {
		return driver.Outcome{}, fmt.Errorf("%s: %d values for the parameters %v", c.h.Prefix, len(args), st.bound.Names)
	}
	c.args = c.args[:0]
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	defer clear(c.args)
	out := driver.Outcome{Affected: -1}
	err := c.guard(ctx, func(ctx context.Context) error {
		if !st.rows {
			res, err := st.st.ExecContext(ctx, c.args...)
			if err != nil {
				return c.ended(ctx, err)
			}
			out.Affected, err = res.RowsAffected()
			return c.h.Classify(err)
		}
		var err error
		out.Rows, err = c.query(ctx, st, visit)
		return err
	})
	return out, err
}

// query runs a statement that returns rows and reads them.
func (c *conn) query(ctx context.Context, st *stmt, visit func(row []any) error) (int64, error) {
	var n int64
	rows, err := st.st.QueryContext(ctx, c.args...)
	if err != nil {
		return n, c.ended(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return n, c.h.Classify(err)
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
			return n, c.h.Classify(err)
		}
		if err := visit(values); err != nil {
			return n, err
		}
	}
	return n, c.ended(ctx, rows.Err())
}

// Begin opens a transaction.
func (c *conn) Begin(ctx context.Context) error { return c.exec(ctx, c.h.Begin) }

// Commit commits the transaction.
func (c *conn) Commit(ctx context.Context) error { return c.exec(ctx, c.h.Commit) }

// Rollback rolls the transaction back, if there is one.
func (c *conn) Rollback(ctx context.Context) error {
	err := c.exec(ctx, c.h.Rollback)
	if err != nil && c.h.NoTransaction != nil && c.h.NoTransaction(err) {
		return nil
	}
	return err
}

func (c *conn) exec(ctx context.Context, q string) error {
	return c.guard(ctx, func(ctx context.Context) error {
		_, err := c.c.ExecContext(ctx, q)
		return c.h.Classify(err)
	})
}

// Close gives the connection back to its pool, rolling back a transaction
// left open so that it does not go back with it.
func (c *conn) Close() error {
	_, _ = c.c.ExecContext(context.Background(), c.h.Rollback)
	return c.c.Close()
}
