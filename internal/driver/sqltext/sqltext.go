package sqltext

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

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
	// Explain shows the plan of text (bound: the dialect's placeholders)
	// with args (one per placeholder, in order) on c, under the Guard;
	// nil means the database shows none (driver.Explainer returns
	// Unsupported). With analyze it runs the statement inside a
	// transaction it rolls back; it is never called with analyze while
	// the connection has a transaction open.
	Explain func(ctx context.Context, c *sql.Conn, text string, args []any, analyze bool) (driver.Plan, error)
	// Check refuses a statement before it reaches the database's
	// library, as bad input; nil takes every one. SQLite refuses one of
	// comments alone, which go-sqlite3 prepares as no statement and
	// crashes running.
	Check func(text string) error
	// Setup runs one of SQLOptions.Setup's statements on c, under the
	// Guard, when the database runs some its own way (SQLite's
	// process-wide temp_store_directory); nil, or false returned, runs
	// it as any other.
	Setup func(ctx context.Context, c *sql.Conn, q string) (bool, error)
}

// New returns c as a driver.SQLConn; Close gives c back to its pool.
// Statements are prepared on the server.
func New(c *sql.Conn, h *Hooks) driver.SQLConn { return &conn{c: c, h: h} }

// Start returns c as a driver.SQLConn that talks as o asks, having run
// o.Setup on it in order; a Setup statement's failure closes c and is the
// database's error. c must come from Opener.Conn with the same o: with
// o.Simple each statement is sent as text (the connection's library puts
// the parameters in), and a connection with Setup or Fresh is closed, not
// pooled, by Close.
func Start(ctx context.Context, c *sql.Conn, h *Hooks, o driver.SQLOptions) (driver.SQLConn, error) {
	cn := &conn{c: c, h: h, simple: o.Simple}
	for i, q := range o.Setup {
		done := false
		err := cn.guard(ctx, func(ctx context.Context) error {
			if h.Setup == nil {
				return nil
			}
			var err error
			done, err = h.Setup(ctx, c, q)
			return h.Classify(err)
		})
		if err == nil && !done {
			err = cn.exec(ctx, q)
		}
		if err != nil {
			cn.Close()
			return nil, fmt.Errorf("%s: session setup statement %d: %w", h.Prefix, i+1, err)
		}
	}
	return cn, nil
}

type conn struct {
	c      *sql.Conn
	h      *Hooks
	args   []any
	simple bool // statements go as text, parameters put in by the library
	inTx   bool // Begin opened a transaction that is not over
}

type stmt struct {
	c     *conn
	st    *sql.Stmt // nil on a simple connection: the text is sent each time
	bound sqlgen.Bound
	rows  bool // run as a query (sqlgen.ReturnsRows)
	// cols are the columns of its rows, read at its first run:
	// Outcome.Columns.
	cols []string
}

// Params names the parameters in the order Run takes them.
func (st *stmt) Params() []string { return st.bound.Names }

// Close releases the statement.
func (st *stmt) Close() error {
	if st.st == nil {
		return nil
	}
	return st.st.Close()
}

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
// and prepares it on the connection. On a simple connection the server
// still checks it once (prepared, then released at once), and each Run
// sends the text.
func (c *conn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(c.h.Dialect, text)
	if err != nil {
		return nil, badinput.New("%s statement: %v", c.h.Product, err)
	}
	if c.h.Check != nil {
		if err := c.h.Check(text); err != nil {
			return nil, err
		}
	}
	st, err := c.c.PrepareContext(ctx, b.Text)
	if err != nil {
		return nil, c.h.Classify(err)
	}
	if c.simple {
		st.Close()
		st = nil
	}
	return &stmt{c: c, st: st, bound: b, rows: sqlgen.ReturnsRows(c.h.Dialect, text)}, nil
}

// bind fills c.args with args in the order of st's placeholders.
func (c *conn) bind(s driver.Stmt, args []any) (*stmt, error) {
	st, ok := s.(*stmt)
	if !ok || st.c != c {
		return nil, fmt.Errorf("%s: a statement of another connection", c.h.Prefix)
	}
	if len(args) != len(st.bound.Names) {
		return nil, fmt.Errorf("%s: %d values for the parameters %v", c.h.Prefix, len(args), st.bound.Names)
	}
	c.args = c.args[:0]
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	return st, nil
}

// Run executes a prepared statement: as a query when it returns rows,
// else for its count of rows changed.
func (c *conn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	return c.run(ctx, s, args, visit, nil)
}

// RunRaw implements driver.RawRunner: each value scanned into a
// sql.RawBytes, which database/sql hands over without copying it (a
// number the library decoded is written back as text).
func (c *conn) RunRaw(ctx context.Context, s driver.Stmt, args []any, visit func(row [][]byte) error) (driver.Outcome, error) {
	return c.run(ctx, s, args, nil, visit)
}

// run is Run with the rows' values for visit, or their bytes for raw.
func (c *conn) run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error, raw func(row [][]byte) error) (driver.Outcome, error) {
	st, err := c.bind(s, args)
	if err != nil {
		return driver.Outcome{}, err
	}
	defer clear(c.args)
	out := driver.Outcome{Affected: -1}
	err = c.guard(ctx, func(ctx context.Context) error {
		if !st.rows {
			var res sql.Result
			var err error
			if st.st == nil {
				res, err = c.c.ExecContext(ctx, st.bound.Text, c.args...)
			} else {
				res, err = st.st.ExecContext(ctx, c.args...)
			}
			if err != nil {
				return c.ended(ctx, err)
			}
			out.Affected, err = res.RowsAffected()
			return c.h.Classify(err)
		}
		var err error
		out.Rows, err = c.query(ctx, st, visit, raw)
		out.Columns = st.cols
		return err
	})
	return out, err
}

// Exec runs text once as it is, unprepared where the library can (MySQL
// sends text without arguments by its text protocol, which takes what
// it will not prepare), for its rows or its count of rows changed.
func (c *conn) Exec(ctx context.Context, text string) (driver.Outcome, error) {
	b, err := sqlgen.Bind(c.h.Dialect, text)
	if err != nil {
		return driver.Outcome{}, badinput.New("%s statement: %v", c.h.Product, err)
	}
	if len(b.Names) > 0 {
		return driver.Outcome{}, badinput.New("the statement has parameters (:%s), which nothing gives a value to here", strings.Join(b.Names, ", :"))
	}
	if c.h.Check != nil {
		if err := c.h.Check(text); err != nil {
			return driver.Outcome{}, err
		}
	}
	out := driver.Outcome{Affected: -1}
	err = c.guard(ctx, func(ctx context.Context) error {
		if !sqlgen.ReturnsRows(c.h.Dialect, text) {
			res, err := c.c.ExecContext(ctx, text)
			if err != nil {
				return c.ended(ctx, err)
			}
			out.Affected, err = res.RowsAffected()
			return c.h.Classify(err)
		}
		rows, err := c.c.QueryContext(ctx, text)
		if err != nil {
			return c.ended(ctx, err)
		}
		defer rows.Close()
		if out.Columns, err = rows.Columns(); err != nil {
			return c.h.Classify(err)
		}
		for rows.Next() {
			out.Rows++
		}
		return c.ended(ctx, rows.Err())
	})
	return out, err
}

// query runs a statement that returns rows and reads them, for visit or
// raw.
func (c *conn) query(ctx context.Context, st *stmt, visit func(row []any) error, raw func(row [][]byte) error) (int64, error) {
	var n int64
	var rows *sql.Rows
	var err error
	if st.st == nil {
		rows, err = c.c.QueryContext(ctx, st.bound.Text, c.args...)
	} else {
		rows, err = st.st.QueryContext(ctx, c.args...)
	}
	if err != nil {
		return n, c.ended(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return n, c.h.Classify(err)
	}
	if st.cols == nil {
		st.cols = cols
	}
	values := make([]any, len(cols))
	raws := make([]sql.RawBytes, len(cols))
	bytes := make([][]byte, len(cols))
	dest := make([]any, len(cols))
	for i := range values {
		if raw != nil {
			dest[i] = &raws[i]
		} else {
			dest[i] = &values[i]
		}
	}
	for rows.Next() {
		n++
		if visit == nil && raw == nil {
			continue
		}
		if err := rows.Scan(dest...); err != nil {
			return n, c.h.Classify(err)
		}
		if raw != nil {
			for i, b := range raws {
				bytes[i] = b
			}
			err = raw(bytes)
		} else {
			err = visit(values)
		}
		if err != nil {
			return n, err
		}
	}
	return n, c.ended(ctx, rows.Err())
}

// Begin opens a transaction.
func (c *conn) Begin(ctx context.Context) error {
	err := c.exec(ctx, c.h.Begin)
	c.inTx = err == nil
	return err
}

// Commit commits the transaction.
func (c *conn) Commit(ctx context.Context) error {
	c.inTx = false
	return c.exec(ctx, c.h.Commit)
}

// Rollback rolls the transaction back, if there is one.
func (c *conn) Rollback(ctx context.Context) error {
	c.inTx = false
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

// Explain shows st's plan with args through the driver's Hooks.Explain.
func (c *conn) Explain(ctx context.Context, s driver.Stmt, args []any, analyze bool) (driver.Plan, error) {
	if c.h.Explain == nil {
		return driver.Plan{}, driver.Unsupported(c.h.Product, "statement plans", "run the statements without --explain")
	}
	if analyze && c.inTx {
		return driver.Plan{}, fmt.Errorf("%s: a plan with analyze runs the statement in a transaction of its own: commit or roll back the open one first", c.h.Prefix)
	}
	st, err := c.bind(s, args)
	if err != nil {
		return driver.Plan{}, err
	}
	args = append([]any(nil), c.args...)
	clear(c.args)
	var plan driver.Plan
	err = c.guard(ctx, func(ctx context.Context) error {
		var err error
		plan, err = c.h.Explain(ctx, c.c, st.bound.Text, args, analyze)
		if err != nil && !badinput.Is(err) {
			return c.ended(ctx, err)
		}
		return err
	})
	return plan, err
}

// Close gives the connection back to its pool, rolling back a transaction
// left open so that it does not go back with it.
func (c *conn) Close() error {
	_, _ = c.c.ExecContext(context.Background(), c.h.Rollback)
	return c.c.Close()
}

var (
	_ driver.Explainer = (*conn)(nil)
	_ driver.Execer    = (*conn)(nil)
)
