package redis

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// ownConn is the connection a session keeps for its reads and
// single-record writes: a go-redis client of its own with one connection,
// held as a go-redis Conn, with no per-operation socket deadlines.
//
// go-redis bounds a call by setting the socket's read and write deadlines
// before every command (two runtime timers reset per operation, about 5%
// of the client's CPU in whole runs). Instead, the caller's context is
// watched once for many operations (driver.ContextWatch), and when it ends
// while an operation is in flight the socket is closed, which ends the
// blocked read or write at once; the connection is then replaced. A URL
// that sets read_timeout or write_timeout keeps go-redis's deadlines too.
//
// The client is the session's own so that the socket is known: go-redis
// dials on a goroutine of its pool, away from any operation, and the
// session's dialer records what it dialled.
type ownConn struct {
	db     *DB
	client *redis.Client
	conn   *redis.Conn

	sock    atomic.Pointer[net.Conn] // the client's socket, set by its dialer
	expired atomic.Bool              // a watched context ended during an operation
	watch   driver.ContextWatch
}

// sessionOptions turns the options of the DB's pool, not yet used by a
// client (go-redis rewrites the options it is given), into those of a
// session's own client.
func sessionOptions(pool redis.Options) redis.Options {
	o := pool
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns = 1, 0, 0, 0
	if o.ReadTimeout == 0 && o.WriteTimeout == 0 {
		// Neither set by the URL: -2 tells go-redis to set no deadline.
		o.ReadTimeout, o.WriteTimeout = -2, -2
	}
	return o
}

func newOwnConn(db *DB) *ownConn {
	c := &ownConn{db: db}
	c.watch.OnEnd = c.expire
	c.connect()
	return c
}

// connect makes the client and takes its connection (dialled at the first
// command).
func (c *ownConn) connect() {
	o := c.db.sessionOpts
	dial := o.Dialer
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		sock, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.sock.Store(&sock)
		if c.expired.Load() {
			// The operation that needed this connection has already ended.
			sock.Close()
		}
		return sock, nil
	}
	c.client = c.db.own.add(redis.NewClient(&o))
	c.conn = c.client.Conn()
}

// begin readies an operation under ctx: ctx is live, watched, and the
// operation marked in flight until end.
func (c *ownConn) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	c.watch.Watch(ctx)
	if !c.watch.Busy(ctx) {
		c.watch.Idle()
		return classify(ctx.Err())
	}
	return nil
}

// expire runs when a watched context ends while an operation is in flight.
func (c *ownConn) expire() {
	c.expired.Store(true)
	if sock := c.sock.Load(); sock != nil {
		(*sock).Close()
	}
}

// end ends the operation begun under ctx, given its outcome, and returns
// the error the caller should see. When ctx ended meanwhile the socket is
// closed, so the connection is replaced: the operation's outcome stands
// if it had finished, else the context's end is the error. After any
// other error but the server's own reply, go-redis has marked the
// connection bad and the Conn refuses every command after, so it is
// replaced too.
func (c *ownConn) end(ctx context.Context, err error) error {
	answered := err == nil || isReply(err)
	if c.watch.Idle() {
		c.renew()
		if !answered && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if !answered {
		_ = c.conn.Close()
		c.conn = c.client.Conn()
	}
	return err
}

// renew replaces the client whose socket expire closed: go-redis would
// otherwise pool the closed socket as a healthy connection.
func (c *ownConn) renew() {
	_ = c.closeClient()
	c.sock.Store(nil)
	c.expired.Store(false)
	c.connect()
}

// closeClient closes the connection and the client, and forgets it.
func (c *ownConn) closeClient() error {
	err := c.conn.Close()
	if cerr := c.client.Close(); err == nil {
		err = cerr
	}
	c.db.own.remove(c.client)
	return err
}

// close stops watching and closes the client.
func (c *ownConn) close() error {
	c.watch.Unwatch()
	if err := c.closeClient(); !errors.Is(err, redis.ErrClosed) {
		return err
	}
	return nil // the DB closed it first
}

// sessionClients are the sessions' own clients of a DB, closed with it so
// that a session of a closed DB fails as it did on the shared pool.
type sessionClients struct {
	mu      sync.Mutex
	clients map[*redis.Client]struct{}
	closed  bool
}

// add records a session's client; one made after the DB closed is closed
// at once.
func (sc *sessionClients) add(c *redis.Client) *redis.Client {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		c.Close()
		return c
	}
	if sc.clients == nil {
		sc.clients = make(map[*redis.Client]struct{})
	}
	sc.clients[c] = struct{}{}
	return c
}

func (sc *sessionClients) remove(c *redis.Client) {
	sc.mu.Lock()
	delete(sc.clients, c)
	sc.mu.Unlock()
}

// closeAll closes every session's client.
func (sc *sessionClients) closeAll() {
	sc.mu.Lock()
	clients := sc.clients
	sc.clients, sc.closed = nil, true
	sc.mu.Unlock()
	for c := range clients {
		c.Close()
	}
}

// isReply reports whether err is the server's own reply. It is a function
// of its own so that the target errors.As needs is allocated only for an
// error, not on every operation.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}
