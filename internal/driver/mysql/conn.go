package mysql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	sqldriver "database/sql/driver"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// conn is one go-sql-driver connection that a session holds itself, not
// through database/sql. Under a context that can end (every run's can:
// Ctrl-C), database/sql starts a goroutine per query to watch it, and
// go-sql-driver hands the context to its own watcher goroutine and back
// for every statement: measured on workload A with 32 sessions on 2 CPUs
// (BenchmarkReadUpdate), about 40% of the client's CPU per operation.
//
// conn therefore gives go-sql-driver a context that never ends and
// watches the caller's itself, once for as many statements as use it
// (see watch). When it ends while the session is using the connection
// (busy), the socket is closed: a statement waiting for the server fails
// at once, and the session tells the server to stop the statement (KILL).
// That is what go-sql-driver does on a context's end too. A context that
// ends between operations (an operation's own, under --op-timeout) leaves
// the connection alone.
type conn struct {
	dc       sqldriver.Conn
	prepper  sqldriver.ConnPrepareContext
	execer   sqldriver.ExecerContext
	queryer  sqldriver.QueryerContext
	validity sqldriver.Validator
	sock     net.Conn // the socket under dc (under TLS too)
	id       int64    // CONNECTION_ID(): the server's thread, for KILL

	// watcher watches the caller's context (see driver.ContextWatch).
	watcher driver.ContextWatch
	// expired is set when a watched context ended while the connection was
	// busy: the socket is closed, and the connection is done for.
	expired atomic.Bool
}

// unwatched is the context conn passes to go-sql-driver, which then
// watches nothing; conn watches the caller's context instead.
var unwatched = context.Background()

// socketSlot receives the socket dialSocket opened for a conn, through
// the context of the connector's Connect.
type socketSlot struct{ sock net.Conn }

type socketSlotKey struct{}

// dialSocket is the connector's DialFunc: net.Dialer's dial, as
// go-sql-driver's own, that also hands the socket to a session opening
// a conn (a pool connection has no slot).
func dialSocket(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	// Raw reads and writes (see rawnet); go-sql-driver puts TLS on top.
	c = rawnet.Wrap(c)
	if slot, ok := ctx.Value(socketSlotKey{}).(*socketSlot); ok {
		slot.sock = c
	}
	return c, nil
}

// openConn opens a connection through connector (whose DialFunc is
// dialSocket), the handshake bounded by timeout, and reads its thread id.
func openConn(ctx context.Context, connector sqldriver.Connector, timeout time.Duration) (*conn, error) {
	slot := &socketSlot{}
	cctx := context.WithValue(ctx, socketSlotKey{}, slot)
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(cctx, timeout)
		defer cancel()
	}
	dc, err := connector.Connect(cctx)
	if err != nil {
		return nil, err
	}
	c := &conn{dc: dc, sock: slot.sock}
	c.watcher.OnEnd = c.expire
	var ok [4]bool
	c.prepper, ok[0] = dc.(sqldriver.ConnPrepareContext)
	c.execer, ok[1] = dc.(sqldriver.ExecerContext)
	c.queryer, ok[2] = dc.(sqldriver.QueryerContext)
	c.validity, ok[3] = dc.(sqldriver.Validator)
	if ok != [4]bool{true, true, true, true} || c.sock == nil {
		dc.Close()
		return nil, fmt.Errorf("mysql: %T is not the go-sql-driver connection sessions need", dc)
	}
	if c.id, err = connectionID(cctx, dc); err != nil {
		dc.Close()
		return nil, err
	}
	return c, nil
}

// watch makes ctx's end stop the connection's statements (see
// driver.ContextWatch), and reports whether the connection can still be
// used: not once a context's end closed it.
func (c *conn) watch(ctx context.Context) bool {
	c.watcher.Watch(ctx)
	return !c.expired.Load()
}

// expire runs when a watched context ends while the connection is busy.
// Closing the socket, rather than setting a deadline, holds even when the
// URL sets read_timeout: go-sql-driver sets its own deadline before every
// read.
func (c *conn) expire() {
	c.expired.Store(true)
	_ = c.sock.Close()
}

// valid reports whether go-sql-driver can still use the connection.
func (c *conn) valid() bool { return c.validity.IsValid() }

// close ends the watch and the connection.
func (c *conn) close() {
	c.watcher.Unwatch()
	c.dc.Close()
}

// stmt is a statement prepared on a conn.
type stmt struct {
	st    sqldriver.Stmt
	query sqldriver.StmtQueryContext
	exec  sqldriver.StmtExecContext
}

func (c *conn) prepare(query string) (*stmt, error) {
	st, err := c.prepper.PrepareContext(unwatched, query)
	if err != nil {
		return nil, err
	}
	q, okQ := st.(sqldriver.StmtQueryContext)
	e, okE := st.(sqldriver.StmtExecContext)
	if !okQ || !okE {
		st.Close()
		return nil, fmt.Errorf("mysql: %T cannot run statements", st)
	}
	return &stmt{st: st, query: q, exec: e}, nil
}

// close frees the statement on the server.
func (st *stmt) close() { st.st.Close() }

// exec runs a statement without a result set; args may be nil. A
// statement with arguments is prepared for this execution (go-sql-driver
// sends arguments only to prepared statements).
func (c *conn) exec(query string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	res, err := c.execer.ExecContext(unwatched, query, args)
	if !errors.Is(err, sqldriver.ErrSkip) {
		return res, err
	}
	st, err := c.prepare(query)
	if err != nil {
		return nil, err
	}
	defer st.close()
	return st.exec.ExecContext(unwatched, args)
}

// query runs a statement without arguments that returns rows.
func (c *conn) query(query string) (sqldriver.Rows, error) {
	return c.queryer.QueryContext(unwatched, query, nil)
}

// nextRow reads the next row into dest; false at the end of the rows.
func nextRow(rows sqldriver.Rows, dest []sqldriver.Value) (bool, error) {
	err := rows.Next(dest)
	if err == io.EOF {
		return false, nil
	}
	return err == nil, err
}

// text returns a column's value as the binary protocol hands a VARCHAR:
// bytes valid until the next row; NULL is nil.
func text(v sqldriver.Value) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		return v, nil
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("mysql: a text column came back as %T", v)
}
