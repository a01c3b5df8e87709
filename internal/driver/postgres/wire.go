package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// wire speaks PostgreSQL's frontend/backend protocol (version 3) on one
// connection that pgconn opened, authenticated and then handed over
// (Hijack). It exists for the client's CPU: pgconn costs a timer reset that
// wakes the network poller, two locks and a context watcher per statement;
// measured on YCSB workload A with 32 sessions on 2 CPUs that is about a
// quarter of dbprobe's CPU per operation, enough to put it above pgbench's.
// wire does only what sessions need: bind and execute named statements with
// text parameters and results, parse, simple queries, and COPY FROM STDIN.
//
// A wire is used by one goroutine; only cancellation runs beside it.
type wire struct {
	conn   net.Conn
	pid    uint32
	secret []byte

	wbuf   []byte
	rbuf   []byte
	r, w   int      // unread bytes are rbuf[r:w]
	row    [][]byte // the current DataRow's values, slices of rbuf
	tag    []byte   // the last CommandComplete's tag, a slice of rbuf
	pgErr  *pgconn.PgError
	ready  bool  // ReadyForQuery seen: the exchange is over
	broken error // set once the connection cannot be used any more

	// Cancellation. A context is watched (context.AfterFunc) from the first
	// exchange that uses it until an exchange uses another one, so that a
	// worker passing the same context to every operation pays no
	// registration, and no allocation, per operation.
	watchStop  func() bool   // ends the watch of c.watched
	cancelDone chan struct{} // a cancellation sends here when it has finished
	cur        context.Context
	mu         sync.Mutex // guards the fields below, shared with cancelFor
	watched    context.Context
	inFlight   bool // an exchange is between send and end
	fired      bool // a cancellation ran during this exchange
}

// maxMessage bounds one backend message, as a guard against a corrupt
// stream: rows here are at most a few kilobytes.
const maxMessage = 1 << 30

// errBroken marks every use of a connection that broke earlier.
var errBroken = errors.New("connection is broken")

// hijack takes over a connection pgconn established.
func hijack(ctx context.Context, pc *pgconn.PgConn) (*wire, error) {
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(ctx)
		return nil, err
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, err
	}
	c := &wire{
		conn:       hc.Conn,
		pid:        hc.PID,
		secret:     hc.SecretKey,
		wbuf:       make([]byte, 0, 1024),
		rbuf:       make([]byte, 16*1024),
		cancelDone: make(chan struct{}, 1),
	}
	return c, nil
}

// close says goodbye to the server and closes the connection.
func (c *wire) close() {
	c.unwatch()
	if c.broken == nil {
		_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.conn.Write([]byte{'X', 0, 0, 0, 4})
		c.broken = net.ErrClosed
	}
	c.conn.Close()
}

// Message building. Each begins a message with its type and a length that
// finish fills in.

func (c *wire) begin(typ byte) int {
	start := len(c.wbuf)
	c.wbuf = append(c.wbuf, typ, 0, 0, 0, 0)
	return start
}

func (c *wire) finish(start int) {
	binary.BigEndian.PutUint32(c.wbuf[start+1:], uint32(len(c.wbuf)-start-1))
}

func (c *wire) cstring(s string) {
	c.wbuf = append(c.wbuf, s...)
	c.wbuf = append(c.wbuf, 0)
}

// parse queues a Parse of sql as the named statement, parameter types left
// to the server.
func (c *wire) parse(name, sql string) {
	m := c.begin('P')
	c.cstring(name)
	c.cstring(sql)
	c.wbuf = append(c.wbuf, 0, 0)
	c.finish(m)
}

// bind queues a Bind of the named statement to the unnamed portal, every
// parameter and result in the text format, then an Execute of it.
func (c *wire) bindExecute(stmt string, params [][]byte) {
	m := c.begin('B')
	c.wbuf = append(c.wbuf, 0) // the unnamed portal
	c.cstring(stmt)
	c.wbuf = append(c.wbuf, 0, 0) // no parameter format codes: all text
	c.wbuf = binary.BigEndian.AppendUint16(c.wbuf, uint16(len(params)))
	for _, p := range params {
		c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(len(p)))
		c.wbuf = append(c.wbuf, p...)
	}
	c.wbuf = append(c.wbuf, 0, 0) // no result format codes: all text
	c.finish(m)
	c.wbuf = append(c.wbuf, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // the unnamed portal, every row
}

func (c *wire) sync() { c.wbuf = append(c.wbuf, 'S', 0, 0, 0, 4) }

func (c *wire) query(sql string) {
	m := c.begin('Q')
	c.cstring(sql)
	c.finish(m)
}

// send writes what was queued and starts an exchange that ends at
// ReadyForQuery. ctx may cancel it: the server gets a cancel request, and
// the connection a deadline in case the server does not answer.
func (c *wire) send(ctx context.Context) error {
	if c.broken != nil {
		c.wbuf = c.wbuf[:0]
		return fmt.Errorf("%w: %w", errBroken, c.broken)
	}
	if ctx.Done() != nil {
		if ctx != c.cur {
			c.watch(ctx)
		}
		c.mu.Lock()
		c.inFlight = true
		c.mu.Unlock()
		// Checked after inFlight is set: a cancellation from now on is seen.
		if err := ctx.Err(); err != nil {
			c.wbuf = c.wbuf[:0]
			return c.end(err)
		}
	}
	c.ready = false
	c.pgErr = nil
	c.tag = nil
	_, err := c.conn.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if err != nil {
		c.fail(err)
		return c.end(err)
	}
	return nil
}

// watch starts watching ctx, and stops watching the previous context.
func (c *wire) watch(ctx context.Context) {
	c.unwatch()
	c.mu.Lock()
	c.watched = ctx
	c.mu.Unlock()
	c.cur = ctx
	c.watchStop = context.AfterFunc(ctx, func() { c.cancelFor(ctx) })
}

func (c *wire) unwatch() {
	if c.watchStop != nil {
		c.watchStop()
		c.watchStop = nil
	}
	c.mu.Lock()
	c.watched = nil
	c.mu.Unlock()
	c.cur = nil
}

// cancelFor runs when a watched context ends. If an exchange under that
// context is in flight, it asks the server to cancel the statement (which
// then fails with 57014, the connection living on) and sets a deadline on
// the connection in case the server does not answer.
func (c *wire) cancelFor(ctx context.Context) {
	c.mu.Lock()
	if !c.inFlight || c.watched != ctx {
		c.mu.Unlock()
		return
	}
	c.fired = true
	c.mu.Unlock()
	defer func() { c.cancelDone <- struct{}{} }()
	_ = c.conn.SetDeadline(time.Now().Add(cancelDeadlineDelay))

	d := net.Dialer{Timeout: cancelDeadlineDelay}
	cc, err := d.Dial(c.conn.RemoteAddr().Network(), c.conn.RemoteAddr().String())
	if err != nil {
		return
	}
	defer cc.Close()
	_ = cc.SetDeadline(time.Now().Add(cancelDeadlineDelay))
	req, err := (&pgproto3.CancelRequest{ProcessID: c.pid, SecretKey: c.secret}).Encode(nil)
	if err != nil {
		return
	}
	if _, err := cc.Write(req); err != nil {
		return
	}
	// The server closes the connection once it has signalled the backend.
	_, _ = io.Copy(io.Discard, cc)
	// The signal may still be on its way: if this statement ends before it
	// lands, it must not cancel the next one (pgconn waits the same way).
	time.Sleep(100 * time.Millisecond)
}

// end finishes an exchange. If a cancellation ran, it waits for it and
// clears the deadline it set, and a network error it caused becomes the
// context's error. err is the exchange's error.
func (c *wire) end(err error) error {
	if c.cur == nil {
		return err
	}
	c.mu.Lock()
	c.inFlight = false
	fired := c.fired
	c.fired = false
	c.mu.Unlock()
	if !fired {
		return err
	}
	<-c.cancelDone
	if c.broken == nil {
		_ = c.conn.SetDeadline(time.Time{})
	}
	if err != nil {
		// The context's error first, so that a cancellation is told from a
		// statement_timeout; the server's 57014 or the deadline's network
		// error after it.
		return fmt.Errorf("%w: %w", c.cur.Err(), err)
	}
	return nil
}

// fail marks the connection broken after an I/O or protocol error.
func (c *wire) fail(err error) {
	if c.broken == nil {
		c.broken = err
		c.conn.Close()
	}
}

// readMessage returns the next backend message's type and body; the body
// is valid until the next read.
func (c *wire) readMessage() (byte, []byte, error) {
	for c.w-c.r < 5 {
		if err := c.fill(5); err != nil {
			return 0, nil, err
		}
	}
	n := int(binary.BigEndian.Uint32(c.rbuf[c.r+1:]))
	if n < 4 || n > maxMessage {
		err := fmt.Errorf("postgres: protocol error: message of %d bytes", n)
		c.fail(err)
		return 0, nil, err
	}
	for c.w-c.r < 1+n {
		if err := c.fill(1 + n); err != nil {
			return 0, nil, err
		}
	}
	typ := c.rbuf[c.r]
	body := c.rbuf[c.r+5 : c.r+1+n]
	c.r += 1 + n
	return typ, body, nil
}

// fill reads until at least need bytes are unread, moving or growing the
// buffer when the message would not fit.
func (c *wire) fill(need int) error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	if len(c.rbuf)-c.r < need {
		if need > len(c.rbuf) {
			nb := make([]byte, max(need, 2*len(c.rbuf)))
			c.w = copy(nb, c.rbuf[c.r:c.w])
			c.rbuf = nb
		} else {
			c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		}
		c.r = 0
	}
	n, err := c.conn.Read(c.rbuf[c.w:])
	c.w += n
	if err != nil {
		if n > 0 {
			return nil
		}
		c.fail(err)
		return err
	}
	return nil
}

// next reads the exchange up to the next DataRow, whose values it leaves in
// c.row, and reports whether there is one. At the end of the command it
// returns false; result collects the outcome.
func (c *wire) next() bool {
	for !c.ready && c.broken == nil {
		typ, body, err := c.readMessage()
		if err != nil {
			return false
		}
		switch typ {
		case 'D':
			if err := c.decodeRow(body); err != nil {
				c.fail(err)
				return false
			}
			return true
		case 'C':
			c.tag = body
			return false
		case 'E':
			c.decodeError(body)
			return false
		case 'Z':
			c.ready = true
			return false
		default:
			if err := c.other(typ, body); err != nil {
				return false
			}
		}
	}
	return false
}

// other handles the messages that need no action here; anything
// unexpected breaks the connection.
func (c *wire) other(typ byte, body []byte) error {
	switch typ {
	case '1', '2', '3', 'n', 's', 'I', 'N', 'S', 'A', 't', 'T':
		// ParseComplete, BindComplete, CloseComplete, NoData,
		// PortalSuspended, EmptyQueryResponse, notices, parameter status,
		// notifications, descriptions: nothing to do.
		return nil
	}
	err := fmt.Errorf("postgres: protocol error: unexpected message %q", typ)
	c.fail(err)
	return err
}

// result reads the rest of the exchange, up to ReadyForQuery, and returns
// the rows the command affected and its error.
func (c *wire) result() (int64, error) {
	var rows int64
	for !c.ready && c.broken == nil {
		if c.next() {
			continue
		}
		if c.tag != nil {
			rows = rowsAffected(c.tag)
			c.tag = nil
		}
	}
	err := c.outcome()
	return rows, c.end(err)
}

// outcome is the exchange's error: the server's, else the connection's.
func (c *wire) outcome() error {
	if c.pgErr != nil {
		return c.pgErr
	}
	if c.broken != nil {
		return c.broken
	}
	return nil
}

// decodeRow points c.row at a DataRow's values.
func (c *wire) decodeRow(b []byte) error {
	if len(b) < 2 {
		return errors.New("postgres: protocol error: short DataRow")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	c.row = c.row[:0]
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return errors.New("postgres: protocol error: short DataRow")
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 {
			c.row = append(c.row, nil)
			continue
		}
		if len(b) < l {
			return errors.New("postgres: protocol error: short DataRow")
		}
		c.row = append(c.row, b[:l:l])
		b = b[l:]
	}
	return nil
}

// decodeError keeps the first ErrorResponse of the exchange. A FATAL one
// means the server is closing the connection.
func (c *wire) decodeError(b []byte) {
	var msg pgproto3.ErrorResponse
	if err := msg.Decode(b); err != nil {
		c.fail(err)
		return
	}
	if c.pgErr == nil {
		c.pgErr = pgconn.ErrorResponseToPgError(&msg)
	}
	if msg.Severity == "FATAL" || msg.Severity == "PANIC" || msg.SeverityUnlocalized == "FATAL" {
		c.fail(c.pgErr)
	}
}

// rowsAffected reads the count at the end of a command tag such as
// "UPDATE 1", "INSERT 0 5" or "COPY 100".
func rowsAffected(tag []byte) int64 {
	if i := len(tag) - 1; i >= 0 && tag[i] == 0 {
		tag = tag[:i]
	}
	var n int64
	mul := int64(1)
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		n += int64(tag[i]-'0') * mul
		mul *= 10
	}
	return n
}

// exec runs the named statement with params and returns the rows affected;
// rows it returns are skipped.
func (c *wire) exec(ctx context.Context, stmt string, params [][]byte) (int64, error) {
	c.bindExecute(stmt, params)
	c.sync()
	if err := c.send(ctx); err != nil {
		return 0, err
	}
	return c.result()
}

// prepare parses sql as the named statement.
func (c *wire) prepare(ctx context.Context, name, sql string) error {
	c.parse(name, sql)
	c.sync()
	if err := c.send(ctx); err != nil {
		return err
	}
	_, err := c.result()
	return err
}

// simple runs sql through the simple query protocol.
func (c *wire) simple(ctx context.Context, sql string) error {
	c.query(sql)
	if err := c.send(ctx); err != nil {
		return err
	}
	_, err := c.result()
	return err
}

// copyIn runs a COPY … FROM STDIN statement with data as the whole input
// and returns the rows copied.
func (c *wire) copyIn(ctx context.Context, sql string, data []byte) (int64, error) {
	c.query(sql)
	if err := c.send(ctx); err != nil {
		return 0, err
	}
	// Wait for CopyInResponse, or the error that replaces it.
	for {
		typ, body, err := c.readMessage()
		if err != nil {
			return 0, c.end(err)
		}
		if typ == 'G' {
			break
		}
		switch typ {
		case 'E':
			c.decodeError(body)
		case 'Z':
			c.ready = true
			return 0, c.end(c.outcome())
		default:
			if err := c.other(typ, body); err != nil {
				return 0, c.end(err)
			}
		}
	}
	const chunk = 256 * 1024
	for len(data) > 0 {
		part := data[:min(chunk, len(data))]
		data = data[len(part):]
		m := c.begin('d')
		c.wbuf = append(c.wbuf, part...)
		c.finish(m)
		if len(c.wbuf) >= chunk {
			if err := c.flushCopy(); err != nil {
				return 0, c.end(err)
			}
		}
	}
	c.wbuf = append(c.wbuf, 'c', 0, 0, 0, 4) // CopyDone
	if err := c.flushCopy(); err != nil {
		return 0, c.end(err)
	}
	return c.result()
}

func (c *wire) flushCopy() error {
	_, err := c.conn.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if err != nil {
		c.fail(err)
	}
	return err
}
