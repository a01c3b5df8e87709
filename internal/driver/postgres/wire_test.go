package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The tests below run wire against a scripted server: a pgproto3.Backend on
// the other end of a loopback TCP connection. Loopback rather than net.Pipe:
// a pipe holds no bytes, so a server that answers while the client is still
// writing (an error during COPY) would deadlock against it, and a cancel
// request dials the connection's own address.

// fakePID and fakeSecret are the backend key a cancel request must carry.
const fakePID = 4242

var fakeSecret = []byte{1, 2, 3, 4}

// fakeBackend is the server's end of a wire under test.
type fakeBackend struct {
	t    *testing.T
	conn net.Conn
	be   *pgproto3.Backend
	// cancels receives the cancel requests that came on other connections.
	cancels chan pgproto3.CancelRequest
}

// fakeWire connects a wire to a server that runs script, and a session on
// it whose prepared statements "read" and "scan" exist. The test ends only
// once script has returned.
func fakeWire(t *testing.T, script func(b *fakeBackend)) (*wire, *session) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	b := &fakeBackend{t: t, cancels: make(chan pgproto3.CancelRequest, 4)}
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				first = false
				accepted <- c
				continue
			}
			go func() { // a cancel request's own connection
				defer c.Close()
				msg, err := pgproto3.NewBackend(c, c).ReceiveStartupMessage()
				if cr, ok := msg.(*pgproto3.CancelRequest); ok && err == nil {
					b.cancels <- pgproto3.CancelRequest{ProcessID: cr.ProcessID, SecretKey: append([]byte(nil), cr.SecretKey...)}
				}
			}()
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b.conn = <-accepted
	b.be = pgproto3.NewBackend(b.conn, b.conn)
	w := newWire(conn, fakePID, fakeSecret)
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(b)
	}()
	t.Cleanup(func() {
		w.close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the fake server's script did not end")
		}
		b.conn.Close()
		ln.Close()
	})
	s := &session{c: w, nfields: 2, readAll: "read", scanAll: "scan", params: make([][]byte, 0, 4)}
	return w, s
}

// exchange receives the client's messages up to the end of an exchange (a
// Sync, a Query, or the CopyDone or CopyFail of a COPY) and returns the
// type of the last one, nil when the connection ended first.
func (b *fakeBackend) exchange() pgproto3.FrontendMessage {
	for {
		msg, err := b.be.Receive()
		if err != nil {
			b.t.Errorf("fake server: the client's exchange ended early: %v", err)
			return nil
		}
		switch msg.(type) {
		case *pgproto3.Sync, *pgproto3.Query, *pgproto3.CopyDone, *pgproto3.CopyFail:
			return msg
		}
	}
}

// send sends msgs at once.
func (b *fakeBackend) send(msgs ...pgproto3.BackendMessage) {
	for _, m := range msgs {
		b.be.Send(m)
	}
	if err := b.be.Flush(); err != nil {
		b.t.Errorf("fake server: send: %v", err)
	}
}

// clientCloses reports whether the client closes the connection within
// wait, reading (and dropping) whatever it sends meanwhile; then the
// server closes it too.
func (b *fakeBackend) clientCloses(wait time.Duration) bool {
	defer b.conn.Close()
	_ = b.conn.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, b.conn)
	return err == nil // io.Copy reads to EOF; a deadline is an error
}

// answerSelect1 answers one exchange as a query returning one row.
func (b *fakeBackend) answerSelect1() {
	if b.exchange() != nil {
		b.answer1()
	}
}

// answer1 sends the result of a query returning one row.
func (b *fakeBackend) answer1() {
	b.send(&pgproto3.DataRow{Values: [][]byte{[]byte("1")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, ready)
}

var (
	ready        = &pgproto3.ReadyForQuery{TxStatus: 'I'}
	adminStop    = &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
	internalStop = &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "XX000", Message: "could not read block 7"}
	// panicDE is a PANIC under lc_messages=de_DE: only the unlocalized
	// severity says what it is.
	panicDE = &pgproto3.ErrorResponse{Severity: "PANIK", SeverityUnlocalized: "PANIC", Code: "XX000", Message: "konnte Block 7 nicht lesen"}
)

// wantPgError fails unless err carries the server's error of code.
func wantPgError(t *testing.T, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Fatalf("error %v, want the server's %s", err, code)
	}
}

// usable fails unless the connection still runs an exchange.
func usable(t *testing.T, w *wire) {
	t.Helper()
	if w.broken != nil {
		t.Fatalf("the connection is marked broken: %v", w.broken)
	}
	w.query("SELECT 1")
	if err := w.send(context.Background()); err != nil {
		t.Fatalf("the next exchange: %v", err)
	}
	rows := 0
	for w.next() {
		rows++
	}
	if _, err := w.result(); err != nil || rows != 1 {
		t.Fatalf("the next exchange: %d rows, %v; want 1 row", rows, err)
	}
}

// A FATAL error in the middle of the rows ends the exchange at once: the
// server is closing the connection and sends nothing more, so waiting for
// ReadyForQuery would hang until it does. The error is the server's, the
// operation a lost connection (the runner reconnects), whatever the code.
func TestWireFatalMidStream(t *testing.T) {
	for _, fatal := range []*pgproto3.ErrorResponse{adminStop, internalStop, panicDE} {
		t.Run(fatal.SeverityUnlocalized+" "+fatal.Code, func(t *testing.T) {
			closed := make(chan bool, 1)
			_, s := fakeWire(t, func(b *fakeBackend) {
				if b.exchange() == nil {
					return
				}
				b.send(&pgproto3.BindComplete{},
					&pgproto3.DataRow{Values: [][]byte{[]byte("k1"), []byte("a"), []byte("b")}},
					&pgproto3.DataRow{Values: [][]byte{[]byte("k2"), []byte("a"), []byte("b")}},
					fatal)
				// The server would close now; this one waits to see the
				// client do it.
				closed <- b.clientCloses(2 * time.Second)
			})
			n, err := s.Scan(context.Background(), []byte("k1"), 10, nil, nil)
			if n != 2 {
				t.Errorf("Scan read %d rows before the error, want 2", n)
			}
			wantPgError(t, err, fatal.Code)
			if !driver.IsConnLost(err) || driver.Code(err) != fatal.Code {
				t.Errorf("class %v code %q, want a lost connection with the code %s", driver.ClassOf(err), driver.Code(err), fatal.Code)
			}
			if !<-closed {
				t.Fatal("the client waited for more after a FATAL error instead of closing the connection")
			}
			// Every later use fails at once, as a lost connection.
			err = s.Read(context.Background(), []byte("k1"), nil, make([][]byte, 2))
			if !errors.Is(err, errBroken) || !driver.IsConnLost(err) {
				t.Errorf("a Read after the FATAL error: %v (class %v), want a broken, lost connection", err, driver.ClassOf(err))
			}
		})
	}
}

// A COPY the server refuses before it starts (no such table) and one it
// fails in the middle (a bad value) are the server's errors; the server
// drops the rest of the data, and the connection goes on.
func TestWireErrorDuringCopy(t *testing.T) {
	data := []byte(strings.Repeat("k\tvalue\n", 80_000)) // 640 kB: several writes of CopyData
	t.Run("refused", func(t *testing.T) {
		w, s := fakeWire(t, func(b *fakeBackend) {
			if b.exchange() == nil {
				return
			}
			b.send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "42P01", Message: `relation "usertable" does not exist`}, ready)
			b.answerSelect1()
		})
		rows, err := copyIn(context.Background(), w, "COPY usertable FROM STDIN", data)
		wantPgError(t, err, "42P01")
		if err := s.classify(err); rows != 0 || driver.ClassOf(err) != driver.ClassOther {
			t.Errorf("%d rows, class %v; want 0 and ClassOther", rows, driver.ClassOf(err))
		}
		usable(t, w)
	})
	t.Run("fatal", func(t *testing.T) {
		// A FATAL error instead of CopyInResponse: the code is the
		// server's, not that of the connection closed after it.
		closed := make(chan bool, 1)
		w, s := fakeWire(t, func(b *fakeBackend) {
			if b.exchange() == nil {
				return
			}
			b.send(adminStop)
			closed <- b.clientCloses(2 * time.Second)
		})
		_, err := copyIn(context.Background(), w, "COPY usertable FROM STDIN", data)
		wantPgError(t, err, "57P01")
		if err := s.classify(err); !driver.IsConnLost(err) || driver.Code(err) != "57P01" {
			t.Errorf("class %v code %q, want a lost connection with the code 57P01", driver.ClassOf(err), driver.Code(err))
		}
		if !<-closed {
			t.Fatal("the client waited for more after a FATAL error instead of closing the connection")
		}
	})
	t.Run("midway", func(t *testing.T) {
		got := make(chan int, 1)
		w, s := fakeWire(t, func(b *fakeBackend) {
			if b.exchange() == nil {
				return
			}
			b.send(&pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: []uint16{0, 0}})
			received, answered := 0, false
			for {
				msg, err := b.be.Receive()
				if err != nil {
					b.t.Errorf("fake server: during COPY: %v", err)
					return
				}
				if d, ok := msg.(*pgproto3.CopyData); ok {
					received += len(d.Data)
					if !answered {
						// As PostgreSQL does for a COPY in a simple query:
						// the error and ReadyForQuery at once, the rest of
						// the data dropped as it comes.
						b.send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "22P02", Message: "invalid input syntax"}, ready)
						answered = true
					}
					continue
				}
				if _, ok := msg.(*pgproto3.CopyDone); ok {
					break
				}
			}
			got <- received
			b.answerSelect1()
		})
		rows, err := copyIn(context.Background(), w, "COPY usertable FROM STDIN", data)
		wantPgError(t, err, "22P02")
		if err := s.classify(err); rows != 0 || driver.ClassOf(err) != driver.ClassOther {
			t.Errorf("%d rows, class %v; want 0 and ClassOther", rows, driver.ClassOf(err))
		}
		if n := <-got; n != len(data) {
			t.Errorf("the server received %d bytes of CopyData, want all %d and CopyDone", n, len(data))
		}
		usable(t, w)
	})
}

// A message the protocol does not allow there means client and server no
// longer agree on where they are: the connection is broken and closed,
// and the operation counts as a lost connection.
func TestWireUnexpectedMessage(t *testing.T) {
	cases := []struct {
		name string
		copy bool   // the exchange is a COPY FROM STDIN
		msg  []byte // what the server sends, as it is on the wire
		want string // in the error
	}{
		{name: "BackendKeyData", msg: encode(t, &pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}), want: "unexpected message *pgproto3.BackendKeyData"},
		{name: "CopyOutResponse to COPY FROM", copy: true, msg: encode(t, &pgproto3.CopyOutResponse{}), want: "unexpected message *pgproto3.CopyOutResponse"},
		{name: "unknown type", msg: []byte{'%', 0, 0, 0, 4}, want: "unknown message type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan bool, 1)
			w, s := fakeWire(t, func(b *fakeBackend) {
				if b.exchange() == nil {
					return
				}
				if _, err := b.conn.Write(tc.msg); err != nil {
					b.t.Errorf("fake server: %v", err)
				}
				closed <- b.clientCloses(2 * time.Second)
			})
			var err error
			if tc.copy {
				_, err = copyIn(context.Background(), w, "COPY usertable FROM STDIN", []byte("k\tv\n"))
			} else {
				err = s.Read(context.Background(), []byte("k1"), nil, make([][]byte, 2))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if err := s.classify(err); !driver.IsConnLost(err) {
				t.Errorf("class %v, want a lost connection", driver.ClassOf(err))
			}
			if !<-closed {
				t.Fatal("the client kept the connection after a protocol error")
			}
		})
	}
}

// encode returns msg as the server sends it.
func encode(t *testing.T, msg pgproto3.BackendMessage) []byte {
	t.Helper()
	b, err := msg.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A context that ends during a statement sends the server a cancel request
// naming the connection's backend. A server that honours it ends the
// statement with 57014 and the connection lives on, without the deadline
// set as a fallback; one that does not answer within the delay costs the
// connection. The error leads with the context's, so that a run that
// stops (canceled) is told from an --op-timeout (deadline exceeded).
func TestWireCancel(t *testing.T) {
	canceledByUser := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "57014", Message: "canceling statement due to user request"}

	// honoured runs the statement until a cancel request comes, checks it,
	// answers 57014, then answers one more exchange only after longer than
	// the fallback deadline.
	honoured := func(b *fakeBackend) {
		if b.exchange() == nil {
			return
		}
		select {
		case cr := <-b.cancels:
			if cr.ProcessID != fakePID || string(cr.SecretKey) != string(fakeSecret) {
				b.t.Errorf("cancel request for backend %d key %v, want %d %v", cr.ProcessID, cr.SecretKey, fakePID, fakeSecret)
			}
		case <-time.After(5 * time.Second):
			b.t.Error("no cancel request came")
			return
		}
		b.send(canceledByUser, ready)
		if b.exchange() == nil {
			return
		}
		time.Sleep(400 * time.Millisecond)
		b.answer1()
	}

	t.Run("canceled", func(t *testing.T) {
		w, s := fakeWire(t, honoured)
		w.cancelDelay = 200 * time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		err := s.Read(ctx, []byte("k1"), nil, make([][]byte, 2))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled first", err)
		}
		wantPgError(t, err, "57014")
		if driver.Code(err) != codeCanceled || driver.ClassOf(err) != driver.ClassOther {
			t.Errorf("code %q class %v, want %q and ClassOther: the run is stopping, not the database failing",
				driver.Code(err), driver.ClassOf(err), codeCanceled)
		}
		usable(t, w) // the server answers after the 200ms delay: the deadline is gone
	})

	t.Run("deadline", func(t *testing.T) {
		w, s := fakeWire(t, honoured)
		w.cancelDelay = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := s.Read(ctx, []byte("k1"), nil, make([][]byte, 2))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want context.DeadlineExceeded first", err)
		}
		if !driver.IsTimeout(err) || driver.Code(err) != "57014" {
			t.Errorf("code %q class %v, want a timeout 57014", driver.Code(err), driver.ClassOf(err))
		}
		usable(t, w)
	})

	t.Run("unanswered", func(t *testing.T) {
		w, s := fakeWire(t, func(b *fakeBackend) {
			if b.exchange() == nil {
				return
			}
			select { // a cancel request, and no answer
			case <-b.cancels:
			case <-time.After(5 * time.Second):
				b.t.Error("no cancel request came")
			}
			b.clientCloses(5 * time.Second)
		})
		w.cancelDelay = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Read(ctx, []byte("k1"), nil, make([][]byte, 2))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("error %v, want the context's deadline and the socket's", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the Read returned after %v, not at the 200ms fallback deadline", d)
		}
		if !driver.IsTimeout(err) {
			t.Errorf("class %v, want a timeout", driver.ClassOf(err))
		}
		if w.broken == nil {
			t.Fatal("a connection left in the middle of an exchange is not marked broken")
		}
		err = s.Read(context.Background(), []byte("k1"), nil, make([][]byte, 2))
		if !driver.IsConnLost(err) {
			t.Errorf("the next Read: %v (class %v), want a lost connection", err, driver.ClassOf(err))
		}
	})

	t.Run("before", func(t *testing.T) {
		// A context over before the exchange starts sends nothing.
		w, s := fakeWire(t, func(b *fakeBackend) {
			msg := b.exchange()
			if _, ok := msg.(*pgproto3.Query); msg != nil && !ok {
				b.t.Errorf("the server's first exchange ends in %T: the canceled Read sent its statement", msg)
			}
			b.answer1()
		})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := s.Read(ctx, []byte("k1"), nil, make([][]byte, 2))
		if !errors.Is(err, context.Canceled) || driver.Code(err) != codeCanceled {
			t.Fatalf("error %v (code %q), want context.Canceled", err, driver.Code(err))
		}
		usable(t, w) // the server's first message is this exchange's Query
	})
}

// copyFrames' messages decode as the protocol's: CopyData of about
// copyChunk bytes each that hold the rows in order, then CopyDone; an
// empty input is CopyDone alone.
func TestCopyFrames(t *testing.T) {
	row := []byte(strings.Repeat("r", 999) + "\n")
	for _, rows := range []int{0, 1, 262, 263, 1000} {
		var f copyFrames
		f.reset(nil)
		var want []byte
		for range rows {
			f.buf = append(f.buf, row...)
			want = append(want, row...)
			f.endRow()
		}
		frames := f.done()
		be := pgproto3.NewBackend(strings.NewReader(string(frames)), io.Discard)
		var got []byte
		messages := 0
		for {
			msg, err := be.Receive()
			if err != nil {
				t.Fatalf("%d rows: after %d messages: %v", rows, messages, err)
			}
			if _, ok := msg.(*pgproto3.CopyDone); ok {
				break
			}
			d, ok := msg.(*pgproto3.CopyData)
			if !ok || len(d.Data) == 0 || len(d.Data) >= copyChunk+len(row) {
				t.Fatalf("%d rows: message %d is %T of %d bytes", rows, messages, msg, len(d.Data))
			}
			got = append(got, d.Data...)
			messages++
		}
		// A message closes at the row that takes it to copyChunk bytes.
		perMessage := (copyChunk + len(row) - 1) / len(row)
		if string(got) != string(want) || messages != (rows+perMessage-1)/perMessage {
			t.Errorf("%d rows: %d bytes in %d messages, want %d bytes", rows, len(got), messages, len(want))
		}
	}
}

// copyIn runs a COPY … FROM STDIN statement on w with data as the whole
// input, framed as sessions frame their rows, and returns the rows copied.
func copyIn(ctx context.Context, w *wire, sql string, data []byte) (int64, error) {
	var f copyFrames
	f.reset(make([]byte, 0, len(data)+len(data)/copyChunk*5+16))
	for len(data) > 0 {
		part := data[:min(copyChunk, len(data))]
		data = data[len(part):]
		f.buf = append(f.buf, part...)
		f.endRow()
	}
	return w.copyInFramed(ctx, sql, f.done())
}
