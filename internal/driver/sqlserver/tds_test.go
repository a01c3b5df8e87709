package sqlserver

// A fake SQL Server: it speaks just enough TDS (MS-TDS) for go-mssqldb to
// log in and send requests, records the requests, and answers each with
// tokens a test chooses. It lets the session's requests be checked as
// they leave go-mssqldb (the declarations sent with sp_executesql), and
// the session's handling of server answers (an error, a row) be tested
// without a server.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"database/sql"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// TDS packet types and tokens the fake server uses.
const (
	tdsSQLBatch  = 0x01
	tdsRPC       = 0x03
	tdsReply     = 0x04
	tdsAttention = 0x06
	tdsLogin7    = 0x10
	tdsPrelogin  = 0x12

	tokColMetadata = 0x81
	tokError       = 0xAA
	tokLoginAck    = 0xAD
	tokRow         = 0xD1
	tokDone        = 0xFD

	doneError = 0x02
	doneCount = 0x10
	doneAttn  = 0x20
)

// rpcCall is one RPC request as the fake server read it.
type rpcCall struct {
	proc   string     // the procedure's name, or "#10" for proc id 10 (sp_executesql)
	params []rpcParam // in order
}

// rpcParam is one RPC parameter: its name, its type, its value's bytes.
type rpcParam struct {
	name  string
	typ   byte
	value []byte // nil for NULL
}

// executeSQL reports whether the call is sp_executesql, by name or by id.
func (c rpcCall) executeSQL() bool {
	return c.proc == "#10" || strings.EqualFold(c.proc, "sp_executesql")
}

// text returns parameter i as a string (nvarchar), "" when it is none.
func (c rpcCall) text(i int) string {
	if i >= len(c.params) || c.params[i].typ != 0xE7 {
		return ""
	}
	return ucs2(c.params[i].value)
}

// fakeServer is a listening fake SQL Server.
type fakeServer struct {
	t *testing.T
	l net.Listener
	// answer returns the tokens that answer a call; nil gives a DONE
	// with a row count of 1. answerBatch does the same for a SQL batch;
	// nil gives a DONE.
	answer      func(call rpcCall) []byte
	answerBatch func(text string) []byte

	mu      sync.Mutex
	calls   []rpcCall
	batches []string
	logins  int
}

// newFakeServer starts a fake server, stopped when the test ends.
func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, l: l}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); f.serve(c) })
		}
	})
	return f
}

// url is a --db URL of the fake server.
func (f *fakeServer) url() *url.URL {
	u, _ := url.Parse("sqlserver://sa:secret@" + f.l.Addr().String() + "?database=bench&encrypt=disable")
	return u
}

// db opens a DB on the fake server with opts, without Open's round trips.
func (f *fakeServer) db(opts dbdriver.Options) *DB {
	f.t.Helper()
	cfg, err := parseURL(dbdriver.Target{URL: f.url()})
	if err != nil {
		f.t.Fatal(err)
	}
	connector, err := newConnector(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	db := &DB{pool: sql.OpenDB(connector), opts: opts, schema: "dbo", open: map[*session]struct{}{}, connector: connector,
		wrote: map[string]bool{}, created: map[string]bool{}}
	f.t.Cleanup(func() { db.Close() })
	return db
}

// executed returns the sp_executesql calls seen: text and declarations.
func (f *fakeServer) executed() [][2]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][2]string
	for _, c := range f.calls {
		if c.executeSQL() {
			out = append(out, [2]string{c.text(0), c.text(1)})
		}
	}
	return out
}

// batchesSeen returns the SQL batches seen.
func (f *fakeServer) batchesSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.batches...)
}

// serve answers one connection until the client goes.
func (f *fakeServer) serve(c net.Conn) {
	for {
		typ, msg, err := readMessage(c)
		if err != nil {
			return
		}
		var reply []byte
		switch typ {
		case tdsPrelogin:
			// Version 16.0, encryption not supported (the client asks for
			// none), no MARS.
			reply = []byte{0x00, 0x00, 0x10, 0x00, 0x06, 0x01, 0x00, 0x16, 0x00, 0x01, 0x04, 0x00, 0x17, 0x00, 0x01, 0xFF,
				0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00}
		case tdsLogin7:
			f.mu.Lock()
			f.logins++
			f.mu.Unlock()
			reply = append(loginAck(), done(0, 0)...)
		case tdsSQLBatch:
			text := batchText(msg)
			f.mu.Lock()
			f.batches = append(f.batches, text)
			answer := f.answerBatch
			f.mu.Unlock()
			if answer != nil {
				reply = answer(text)
			}
			if reply == nil {
				reply = done(0, 0)
			}
		case tdsRPC:
			call, err := parseRPC(msg)
			if err != nil {
				f.t.Errorf("fake server: %v", err)
				return
			}
			f.mu.Lock()
			f.calls = append(f.calls, call)
			answer := f.answer
			f.mu.Unlock()
			if answer != nil {
				reply = answer(call)
			}
			if reply == nil {
				reply = done(doneCount, 1)
			}
		case tdsAttention:
			reply = done(doneAttn, 0)
		default:
			reply = done(0, 0)
		}
		if err := writeMessage(c, reply); err != nil {
			return
		}
	}
}

// readMessage reads packets up to the one that ends a message.
func readMessage(r io.Reader) (byte, []byte, error) {
	var msg []byte
	for {
		var h [8]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, nil, err
		}
		n := int(binary.BigEndian.Uint16(h[2:4]))
		if n < 8 {
			return 0, nil, fmt.Errorf("packet length %d", n)
		}
		body := make([]byte, n-8)
		if _, err := io.ReadFull(r, body); err != nil {
			return 0, nil, err
		}
		msg = append(msg, body...)
		if h[1]&0x01 != 0 {
			return h[0], msg, nil
		}
	}
}

// writeMessage sends a reply in packets of at most 4096 bytes.
func writeMessage(w io.Writer, payload []byte) error {
	id := byte(1)
	for {
		n := min(len(payload), 4096-8)
		status := byte(0)
		if n == len(payload) {
			status = 0x01
		}
		h := []byte{tdsReply, status, 0, 0, 0, 0, id, 0}
		binary.BigEndian.PutUint16(h[2:4], uint16(8+n))
		if _, err := w.Write(append(h, payload[:n]...)); err != nil {
			return err
		}
		payload = payload[n:]
		id++
		if status == 0x01 {
			return nil
		}
	}
}

// loginAck is a LOGINACK token: TDS 7.4, "fake".
func loginAck() []byte {
	name := utf16le("fake")
	body := append([]byte{0x01, 0x74, 0x00, 0x00, 0x04, byte(len(name) / 2)}, name...)
	body = append(body, 0x10, 0x00, 0x00, 0x00)
	return append([]byte{tokLoginAck, byte(len(body)), byte(len(body) >> 8)}, body...)
}

// done is a DONE token with a status and a row count.
func done(status uint16, rows uint64) []byte {
	b := []byte{tokDone, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(b[1:], status)
	return binary.LittleEndian.AppendUint64(b, rows)
}

// errorDone is an ERROR token of a number, then a DONE that flags it.
func errorDone(number int32, msg string) []byte {
	text := utf16le(msg)
	server := utf16le("fake")
	body := binary.LittleEndian.AppendUint32(nil, uint32(number))
	body = append(body, 1, 16) // state, class
	body = binary.LittleEndian.AppendUint16(body, uint16(len(text)/2))
	body = append(body, text...)
	body = append(body, byte(len(server)/2))
	body = append(body, server...)
	body = append(body, 0)          // no procedure
	body = append(body, 1, 0, 0, 0) // line 1
	tok := []byte{tokError, 0, 0}
	binary.LittleEndian.PutUint16(tok[1:], uint16(len(body)))
	return append(append(tok, body...), done(doneError, 0)...)
}

// intRow is a result of one int column holding v, then a DONE.
func intRow(v int32) []byte { return intsRow(&v) }

// intsRow is a result of one row of int columns, nil for NULL, then a
// DONE.
func intsRow(vals ...*int32) []byte {
	b := []byte{tokColMetadata, byte(len(vals)), byte(len(vals) >> 8)}
	for range vals {
		b = append(b, 0, 0, 0, 0, 0, 0, 0x26, 4, 0) // user type, flags, INTN(4), no name
	}
	b = append(b, tokRow)
	for _, v := range vals {
		if v == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 4)
		b = binary.LittleEndian.AppendUint32(b, uint32(*v))
	}
	return append(b, done(doneCount, 1)...)
}

// batchText is the text of a SQL batch message, after its headers.
func batchText(msg []byte) string {
	if len(msg) < 4 {
		return ""
	}
	n := int(binary.LittleEndian.Uint32(msg))
	if n > len(msg) {
		return ""
	}
	return ucs2(msg[n:])
}

// parseRPC reads an RPC request: headers, the procedure, and every
// parameter of the types go-mssqldb sends for dbprobe's arguments.
func parseRPC(msg []byte) (rpcCall, error) {
	var call rpcCall
	r := &reader{b: msg}
	r.skip(int(binary.LittleEndian.Uint32(r.peek(4)))) // ALL_HEADERS
	if n := r.u16(); n == 0xFFFF {
		call.proc = fmt.Sprintf("#%d", r.u16())
	} else {
		call.proc = ucs2(r.bytes(2 * int(n)))
	}
	r.u16() // option flags
	for r.err == nil && r.off < len(r.b) {
		var p rpcParam
		p.name = ucs2(r.bytes(2 * int(r.u8())))
		r.u8() // status
		p.typ = r.u8()
		switch p.typ {
		case 0x26, 0x68, 0x6D: // INTN, BITN, FLTN
			r.u8()
			if n := int(r.u8()); n > 0 {
				p.value = r.bytes(n)
			}
		case 0xA5, 0xA7, 0xE7, 0xAD, 0xAF, 0xEF: // VARBINARY, VARCHAR, NVARCHAR, BINARY, CHAR, NCHAR
			max := r.u16()
			if p.typ == 0xA7 || p.typ == 0xE7 || p.typ == 0xAF || p.typ == 0xEF {
				r.skip(5) // collation
			}
			if max == 0xFFFF {
				p.value = r.plp()
			} else if n := r.u16(); n != 0xFFFF {
				p.value = r.bytes(int(n))
			}
		case 0x1F: // NULL
		default:
			return call, fmt.Errorf("parameter %d: type 0x%02x not understood", len(call.params)+1, p.typ)
		}
		call.params = append(call.params, p)
	}
	return call, r.err
}

// reader reads little-endian values from a message, remembering the
// first overrun.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) peek(n int) []byte {
	if r.err != nil || r.off+n > len(r.b) {
		r.err = errors.New("message too short")
		return make([]byte, n)
	}
	return r.b[r.off : r.off+n]
}
func (r *reader) bytes(n int) []byte { b := r.peek(n); r.off += n; return b }
func (r *reader) skip(n int)         { r.bytes(n) }
func (r *reader) u8() byte           { return r.bytes(1)[0] }
func (r *reader) u16() uint16        { return binary.LittleEndian.Uint16(r.bytes(2)) }
func (r *reader) u32() uint32        { return binary.LittleEndian.Uint32(r.bytes(4)) }

// plp reads a partially length-prefixed value: NULL, or chunks up to a
// zero-length one.
func (r *reader) plp() []byte {
	if binary.LittleEndian.Uint64(r.bytes(8)) == ^uint64(0) {
		return nil
	}
	out := []byte{}
	for r.err == nil {
		n := r.u32()
		if n == 0 {
			break
		}
		out = append(out, r.bytes(int(n))...)
	}
	return out
}

// utf16le encodes s as UCS-2, little-endian, as TDS sends text.
func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// ucs2 decodes UCS-2 little-endian text.
func ucs2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
