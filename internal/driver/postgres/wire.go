package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// wire drives one connection that pgconn opened, authenticated and then
// handed over (Hijack), in PostgreSQL's frontend/backend protocol (version
// 3). The messages are pgproto3's, pgx's own protocol package: outgoing ones
// are encoded by pgproto3 into wire's buffer, incoming ones read and decoded
// by a pgproto3.Frontend. What wire adds is what pgconn costs too much for:
// pgconn spends a timer reset that wakes the network poller, two locks and a
// context watcher on every statement; measured on YCSB workload A with 32
// sessions on 2 CPUs that is about a quarter of dbprobe's CPU per
// operation, enough to put it above pgbench's. wire instead watches a
// context once for many statements (driver.ContextWatch) and writes each exchange
// with one system call.
//
// wire does only what sessions and the prepared SQLConn need: parse (and
// describe) and close named statements, bind and execute them with
// parameters and results in the text format (a SQLConn's bytea parameters
// binary), simple queries, and COPY FROM STDIN.
// Every message it sends is a struct it holds and reuses, and every one it
// receives is a pgproto3.Frontend's own, so an exchange allocates nothing.
//
// A wire is used by one goroutine; only cancellation runs beside it.
type wire struct {
	conn   net.Conn
	fe     *pgproto3.Frontend // reads and decodes backend messages
	pid    uint32
	secret []byte

	// Outgoing messages are encoded into wbuf, not sent through fe: the
	// Frontend's Flush replaces a buffer that grew past 1 kB with a new one,
	// an allocation for every insert or update of a whole YCSB record.
	wbuf        []byte
	encErr      error // a message that could not be encoded since the last send
	parseMsg    pgproto3.Parse
	describeMsg pgproto3.Describe
	closeMsg    pgproto3.Close
	bindMsg     pgproto3.Bind
	executeMsg  pgproto3.Execute // the unnamed portal, every row
	queryMsg    pgproto3.Query

	row   [][]byte // the current DataRow's values, valid until the next read
	tag   []byte   // the last CommandComplete's tag, valid until the next read
	pgErr *pgconn.PgError
	ready bool // ReadyForQuery seen: the exchange is over
	// txStatus is the last ReadyForQuery's transaction status: 'I' idle,
	// 'T' in a transaction, 'E' in a failed one.
	txStatus byte
	broken   error // set once the connection cannot be used any more
	// extended is set while the exchange in flight is the extended
	// protocol's (it ends with a Sync), clear for a simple query.
	extended bool
	// copyRefused is set when the exchange's statement was a COPY … FROM
	// STDIN, answered with CopyFail: its error is errCopyIn, not the
	// server's query_canceled, which would read as a timeout.
	copyRefused bool

	// Cancellation. A context is watched from the first exchange that
	// uses it until an exchange uses another one (driver.ContextWatch), so
	// that a worker passing the same context to every operation pays no
	// registration, and no allocation, per operation; an exchange is busy
	// from send to end.
	watcher driver.ContextWatch
	// cancelDelay is how long after a cancel request the connection's
	// deadline fires if the server has not answered (cancelDeadlineDelay).
	cancelDelay time.Duration
}

// errBroken marks every use of a connection that broke earlier.
var errBroken = errors.New("connection is broken")

// errCopyIn is the error of a user's COPY … FROM STDIN, which waits for
// rows from the client: a statement run by dbprobe has none to send.
var errCopyIn = errors.New("postgres: " + copyInAdvice)

const copyInAdvice = "COPY … FROM STDIN waits for rows from the client, and dbprobe sends none: load rows with dbprobe storage bulk, or COPY from a file the server reads"

// hijack takes over a connection pgconn established. SyncConn leaves
// nothing unread in pgconn's buffers, so a new Frontend on the bare
// connection starts at a message boundary (pgconn's own reads through a
// background reader that wire does not need).
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
	c := newWire(hc.Conn, hc.PID, hc.SecretKey)
	if hc.Config != nil && hc.Config.MaxProtocolMessageBodyLen > 0 {
		c.fe.SetMaxBodyLen(hc.Config.MaxProtocolMessageBodyLen)
	}
	return c, nil
}

// newWire drives conn, a connection ready for a query, whose backend
// process pid and secret key a cancel request names.
func newWire(conn net.Conn, pid uint32, secret []byte) *wire {
	c := &wire{
		conn:        conn,
		fe:          pgproto3.NewFrontend(conn, conn),
		pid:         pid,
		secret:      secret,
		wbuf:        make([]byte, 0, 1024),
		cancelDelay: cancelDeadlineDelay,
	}
	c.watcher.OnEnd = c.cancel
	return c
}

// close says goodbye to the server and closes the connection.
func (c *wire) close() {
	c.watcher.Unwatch()
	if c.broken == nil {
		if bye, err := (&pgproto3.Terminate{}).Encode(nil); err == nil {
			_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.conn.Write(bye)
		}
		c.broken = net.ErrClosed
	}
	c.conn.Close()
}

// Message building. Each queues one message, encoded by pgproto3, in
// c.wbuf; send writes them all at once.

// put takes the buffer a message's Encode returned, which appended it to
// c.wbuf. An error (a message over the protocol's limits) is kept instead,
// and send reports it without writing anything.
func (c *wire) put(b []byte, err error) {
	if err != nil {
		if c.encErr == nil {
			c.encErr = err
		}
		return
	}
	c.wbuf = b
}

// parse queues a Parse of sql as the named statement, parameter types left
// to the server.
func (c *wire) parse(name, sql string) {
	c.parseMsg.Name, c.parseMsg.Query = name, sql
	c.put(c.parseMsg.Encode(c.wbuf))
}

// empty is what a nil parameter is sent as.
var empty = []byte{}

// bindExecute queues a Bind of the named statement to the unnamed portal,
// every parameter and result in the text format, then an Execute of it for
// every row. pgproto3 sends a nil parameter as NULL; here it means an empty
// value (every column is NOT NULL), so params' nil entries are replaced.
func (c *wire) bindExecute(stmt string, params [][]byte) {
	for i, p := range params {
		if p == nil {
			params[i] = empty
		}
	}
	c.bindMsg.PreparedStatement = stmt
	c.bindMsg.Parameters = params
	c.put(c.bindMsg.Encode(c.wbuf))
	c.bindMsg.Parameters = nil // keep nothing of the caller's
	c.put(c.executeMsg.Encode(c.wbuf))
}

func (c *wire) sync() {
	c.put((&pgproto3.Sync{}).Encode(c.wbuf))
	c.extended = true
}

func (c *wire) query(sql string) {
	c.extended = false
	c.queryMsg.String = sql
	c.put(c.queryMsg.Encode(c.wbuf))
}

// send writes what was queued and starts an exchange that ends at
// ReadyForQuery. ctx may cancel it: the server gets a cancel request, and
// the connection a deadline in case the server does not answer.
func (c *wire) send(ctx context.Context) error {
	if c.broken != nil {
		c.wbuf = c.wbuf[:0]
		c.encErr = nil
		return fmt.Errorf("%w: %w", errBroken, c.broken)
	}
	if err := c.encErr; err != nil {
		// Nothing was written: the connection is as it was.
		c.wbuf = c.wbuf[:0]
		c.encErr = nil
		return fmt.Errorf("postgres: %w", err)
	}
	if ctx.Done() != nil {
		c.watcher.Watch(ctx)
		if !c.watcher.Busy(ctx) {
			c.wbuf = c.wbuf[:0]
			return c.end(ctx.Err())
		}
	}
	c.ready = false
	c.pgErr = nil
	c.copyRefused = false
	c.tag = nil
	_, err := c.conn.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if err != nil {
		c.fail(err)
		return c.end(err)
	}
	return nil
}

// cancel runs when a watched context ends while an exchange under it is
// in flight. It asks the server to cancel the statement (which then fails
// with 57014, the connection living on) and sets a deadline on the
// connection in case the server does not answer.
func (c *wire) cancel() {
	_ = c.conn.SetDeadline(time.Now().Add(c.cancelDelay))

	d := net.Dialer{Timeout: c.cancelDelay}
	cc, err := d.Dial(c.conn.RemoteAddr().Network(), c.conn.RemoteAddr().String())
	if err != nil {
		return
	}
	defer cc.Close()
	_ = cc.SetDeadline(time.Now().Add(c.cancelDelay))
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

// end finishes an exchange. If a cancellation ran (Idle waits for it), it
// clears the deadline it set, and a network error it caused becomes the
// context's error. err is the exchange's error.
func (c *wire) end(err error) error {
	cur := c.watcher.Current()
	if cur == nil {
		return err
	}
	if !c.watcher.Idle() {
		return err
	}
	if c.broken == nil {
		_ = c.conn.SetDeadline(time.Time{})
	}
	if err != nil {
		// The context's error first, so that a cancellation is told from a
		// statement_timeout; the server's 57014 or the deadline's network
		// error after it.
		return fmt.Errorf("%w: %w", cur.Err(), err)
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

// receive reads the next backend message, decoded by pgproto3 into the
// Frontend's own message of its type; it is valid until the next read. An
// I/O or protocol error breaks the connection.
func (c *wire) receive() (pgproto3.BackendMessage, error) {
	msg, err := c.fe.Receive()
	if err != nil {
		c.fail(err)
		return nil, err
	}
	return msg, nil
}

// next reads the exchange up to the next DataRow, whose values it leaves in
// c.row, and reports whether there is one. At the end of the command it
// returns false; result collects the outcome.
func (c *wire) next() bool {
	for !c.ready && c.broken == nil {
		msg, err := c.receive()
		if err != nil {
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			c.row = m.Values
			return true
		case *pgproto3.CommandComplete:
			c.tag = m.CommandTag
			return false
		case *pgproto3.ErrorResponse:
			c.serverError(m)
			return false
		case *pgproto3.ReadyForQuery:
			c.ready = true
			c.txStatus = m.TxStatus
			return false
		default:
			if err := c.other(msg); err != nil {
				return false
			}
		}
	}
	return false
}

// other handles the messages that need no action here; anything
// unexpected breaks the connection. A user's statement may be a COPY: the
// rows of a COPY … TO STDOUT are read and dropped (its tag counts them),
// and a COPY … FROM STDIN is refused with CopyFail, so that the
// connection lives on either way.
func (c *wire) other(msg pgproto3.BackendMessage) error {
	switch msg.(type) {
	case *pgproto3.ParseComplete, *pgproto3.BindComplete, *pgproto3.CloseComplete,
		*pgproto3.NoData, *pgproto3.PortalSuspended, *pgproto3.EmptyQueryResponse,
		*pgproto3.NoticeResponse, *pgproto3.ParameterStatus, *pgproto3.NotificationResponse,
		*pgproto3.ParameterDescription, *pgproto3.RowDescription,
		*pgproto3.CopyOutResponse, *pgproto3.CopyData, *pgproto3.CopyDone:
		return nil
	case *pgproto3.CopyInResponse:
		return c.refuseCopyIn()
	}
	return c.unexpected(msg)
}

// unexpected breaks the connection on a message the protocol does not
// allow where it came: client and server no longer agree where they are.
func (c *wire) unexpected(msg pgproto3.BackendMessage) error {
	err := fmt.Errorf("postgres: protocol error: unexpected message %T", msg)
	c.fail(err)
	return err
}

// refuseCopyIn ends a COPY … FROM STDIN the server is waiting on. In the
// extended protocol the server ignored the exchange's Sync while it waited
// and now skips everything up to the next one, so a Sync follows.
func (c *wire) refuseCopyIn() error {
	c.put((&pgproto3.CopyFail{Message: "dbprobe sends no rows to COPY FROM STDIN"}).Encode(c.wbuf))
	if c.extended {
		c.sync()
	}
	c.copyRefused = true
	err := c.encErr
	if err == nil {
		_, err = c.conn.Write(c.wbuf)
	}
	c.wbuf = c.wbuf[:0]
	c.encErr = nil
	if err != nil {
		c.fail(err) // the server is still waiting in the COPY
	}
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
	if c.copyRefused && c.broken == nil {
		return errCopyIn
	}
	if c.pgErr != nil {
		return c.pgErr
	}
	if c.broken != nil {
		return c.broken
	}
	return nil
}

// serverError keeps the first ErrorResponse of the exchange. A FATAL or
// PANIC one means the server is closing the connection. The severity is
// read unlocalized (lc_messages=de says PANIK); servers before 9.6 send
// only the localized one.
func (c *wire) serverError(msg *pgproto3.ErrorResponse) {
	if c.pgErr == nil {
		c.pgErr = pgconn.ErrorResponseToPgError(msg)
	}
	severity := msg.SeverityUnlocalized
	if severity == "" {
		severity = msg.Severity
	}
	if severity == "FATAL" || severity == "PANIC" {
		c.fail(c.pgErr)
	}
}

// rowsAffected reads the count at the end of a command tag such as
// "UPDATE 1", "INSERT 0 5" or "COPY 100".
func rowsAffected(tag []byte) int64 {
	if i := len(tag) - 1; i >= 0 && tag[i] == 0 { // as the message carries it
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

// parseCount reads a non-negative integer in the text format, as a
// function's integer result comes; a NULL or anything but digits is not
// one.
func parseCount(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
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

// copyInFramed runs a COPY … FROM STDIN statement whose input frames
// holds as the protocol's messages, CopyData and the final CopyDone
// (copyFrames makes them), and returns the rows copied. The frames go to
// the socket as they are: the rows are not copied again into the wire's
// buffer, which took a sixth of a bulk load's client CPU
// (BenchmarkCopyBatch: 0.52 against 0.43 CPU-s per GB, medians of 8
// alternating runs).
func (c *wire) copyInFramed(ctx context.Context, sql string, frames []byte) (int64, error) {
	c.query(sql)
	if err := c.send(ctx); err != nil {
		return 0, err
	}
	// Wait for CopyInResponse, or the error that replaces it.
wait:
	for {
		msg, err := c.receive()
		if err != nil {
			return 0, c.end(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyInResponse:
			break wait
		case *pgproto3.ErrorResponse:
			c.serverError(m)
			if c.broken != nil { // FATAL: reading on would report the closed socket instead
				return 0, c.end(c.outcome())
			}
		case *pgproto3.ReadyForQuery:
			c.ready = true
			c.txStatus = m.TxStatus
			return 0, c.end(c.outcome())
		case *pgproto3.CopyOutResponse, *pgproto3.CopyData, *pgproto3.CopyDone:
			return 0, c.end(c.unexpected(msg)) // dbprobe's own COPY is FROM STDIN
		default:
			if err := c.other(msg); err != nil {
				return 0, c.end(err)
			}
		}
	}
	// The server is in the middle of the COPY: a write that fails breaks
	// the connection.
	if _, err := c.conn.Write(frames); err != nil {
		c.fail(err)
		return 0, c.end(err)
	}
	return c.result()
}

// copyChunk is about how many bytes of rows one CopyData message holds.
const copyChunk = 256 * 1024

// copyFrames builds a COPY's input in place as the protocol's messages:
// rows are appended to buf, and endRow closes the CopyData message they
// are in once it holds copyChunk bytes and opens the next; done closes
// the last and adds CopyDone.
type copyFrames struct {
	buf   []byte
	start int // where the open CopyData message begins in buf
}

// reset starts the frames in buf's storage.
func (f *copyFrames) reset(buf []byte) {
	f.buf = buf[:0]
	f.open()
}

// open begins a CopyData message: its type and a length done fills in.
func (f *copyFrames) open() {
	f.start = len(f.buf)
	f.buf = append(f.buf, 'd', 0, 0, 0, 0)
}

// close sets the open message's length: its own four bytes and the data.
func (f *copyFrames) close() {
	binary.BigEndian.PutUint32(f.buf[f.start+1:], uint32(len(f.buf)-f.start-1))
}

// endRow is called after each row (or piece of the input): a full
// message is closed and another opened.
func (f *copyFrames) endRow() {
	if len(f.buf)-f.start-5 >= copyChunk {
		f.close()
		f.open()
	}
}

// done closes the last message, dropped when empty, adds CopyDone and
// returns the frames.
func (f *copyFrames) done() []byte {
	if len(f.buf)-f.start == 5 {
		f.buf = f.buf[:f.start]
	} else {
		f.close()
	}
	f.buf = append(f.buf, 'c', 0, 0, 0, 4)
	return f.buf
}
