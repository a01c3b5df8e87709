package redis

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// errClosed is the error of an operation on a DB that was closed: its
// connections are gone, as if the server had dropped them.
var errClosed = errors.New("redis: the database handle is closed")

// ownConn is the connection a session keeps for its operations: a redigo
// connection of its own, dialled at the first operation, with no
// per-operation socket deadlines.
//
// redigo bounds a call by a context (DoContext) with a goroutine and a
// channel per command. Instead, the caller's context is watched once for
// many operations (driver.ContextWatch), and when it ends while an
// operation is in flight the socket is closed, which ends the blocked read
// or write at once; the connection is then replaced. A URL that sets
// read_timeout or write_timeout adds redigo's per-command deadlines.
type ownConn struct {
	db   *DB
	conn redis.Conn // nil before the first operation and after one broke it

	sock  atomic.Pointer[net.Conn] // conn's socket, which expire closes
	watch driver.ContextWatch
}

func newOwnConn(db *DB) *ownConn {
	c := &ownConn{db: db}
	c.watch.OnEnd = c.expire
	return c
}

// begin readies an operation under ctx: a connection, dialled under ctx
// when there is none; ctx live, watched, and the operation marked in
// flight until end.
func (c *ownConn) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return classify(err)
		}
	}
	c.watch.Watch(ctx)
	if !c.watch.Busy(ctx) {
		c.watch.Idle()
		return classify(ctx.Err())
	}
	return nil
}

// connect dials the session's connection and records its socket.
func (c *ownConn) connect(ctx context.Context) error {
	if c.db.closed.Load() {
		return errClosed
	}
	conn, err := c.db.connOpts.dial(ctx, func(sock net.Conn) { c.sock.Store(&sock) })
	if err != nil {
		c.sock.Store(nil)
		return err
	}
	if !c.db.own.add(conn) {
		conn.Close()
		c.sock.Store(nil)
		return errClosed
	}
	c.conn = conn
	return nil
}

// expire runs when a watched context ends while an operation is in flight.
func (c *ownConn) expire() {
	if sock := c.sock.Load(); sock != nil {
		(*sock).Close()
	}
}

// end ends the operation begun under ctx, given its outcome, and returns
// the error the caller should see. When ctx ended meanwhile the socket is
// closed, so the connection is dropped: the operation's outcome stands
// if it had finished, else the context's end is the error. After any
// other error but the server's own reply, redigo has closed the
// connection, so it is dropped too. The next operation dials anew.
func (c *ownConn) end(ctx context.Context, err error) error {
	answered := err == nil || isReply(err)
	if c.watch.Idle() {
		c.drop()
		if !answered && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if !answered {
		c.drop()
		if c.db.closed.Load() {
			return errClosed
		}
	}
	return err
}

// drop closes the connection and forgets it.
func (c *ownConn) drop() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.db.own.remove(c.conn)
	c.conn = nil
	c.sock.Store(nil)
	return err
}

// close stops watching and closes the connection.
func (c *ownConn) close() error {
	c.watch.Unwatch()
	if c.db.closed.Load() {
		c.drop()
		return nil // the DB closed it first
	}
	return c.drop()
}

// sessionConns are the sessions' own connections of a DB, closed with it
// so that a session of a closed DB fails with a lost connection.
type sessionConns struct {
	mu     sync.Mutex
	conns  map[redis.Conn]struct{}
	closed bool
}

// add records a session's connection; it reports false once the DB has
// closed.
func (sc *sessionConns) add(c redis.Conn) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return false
	}
	if sc.conns == nil {
		sc.conns = make(map[redis.Conn]struct{})
	}
	sc.conns[c] = struct{}{}
	return true
}

func (sc *sessionConns) remove(c redis.Conn) {
	sc.mu.Lock()
	delete(sc.conns, c)
	sc.mu.Unlock()
}

// closeAll closes every session's connection; an operation in flight on
// one fails as a lost connection.
func (sc *sessionConns) closeAll() {
	sc.mu.Lock()
	conns := sc.conns
	sc.conns, sc.closed = nil, true
	sc.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// isReply reports whether err is the server's own error reply, after
// which the connection is still good.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}
