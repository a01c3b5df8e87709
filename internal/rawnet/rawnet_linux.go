package rawnet

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection whose reads and writes are raw system calls
// (see the package's description).
//
// The functions handed to the raw connection are bound once, in Wrap, and
// find their buffer and leave their result in the Conn: a closure made per
// call would cost allocations on every read and write. The mutexes keep
// concurrent Reads (or Writes) from sharing those fields; the socket's own
// lock serializes them anyway.
type Conn struct {
	*net.TCPConn
	rc syscall.RawConn

	readMu   sync.Mutex
	readBuf  []byte
	readN    int
	readErr  syscall.Errno
	readFunc func(fd uintptr) bool

	writeMu   sync.Mutex
	writeBuf  []byte
	written   int
	writeErr  syscall.Errno
	writeFunc func(fd uintptr) bool
}

// supported says raw calls are made on this system.
const supported = true

// Wrap returns c with raw reads and writes when it is a TCP connection,
// else c itself, and c itself under DBPROBE_RAWNET=off. Wrap a
// connection before TLS goes on top of it.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok || !enabled() {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	conn := &Conn{TCPConn: tc, rc: rc}
	conn.readFunc = conn.readOnce
	conn.writeFunc = conn.writeAll
	return conn
}

// opError turns what a raw call left, the raw connection's error (the
// socket closed, a deadline) or the system call's, into the error package
// net would return; nil when neither failed.
func (c *Conn) opError(op string, err error, errno syscall.Errno) error {
	if err == nil && errno == 0 {
		return nil
	}
	if err == nil {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Read reads what the socket holds, waiting in the poller while it holds
// nothing. The call cannot block: the socket is non-blocking.
func (c *Conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.readMu.Lock()
	c.readBuf, c.readN, c.readErr = b, 0, 0
	err := c.rc.Read(c.readFunc)
	n, errno := c.readN, c.readErr
	c.readBuf = nil
	c.readMu.Unlock()
	if err := c.opError("read", err, errno); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is one attempt of Read: false when the socket holds nothing.
func (c *Conn) readOnce(fd uintptr) bool {
	b := c.readBuf
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.readN, c.readErr = int(r), e
		return true
	}
}

// Write writes all of b, waiting in the poller while the socket's buffer
// is full.
func (c *Conn) Write(b []byte) (int, error) {
	c.writeMu.Lock()
	c.writeBuf, c.written, c.writeErr = b, 0, 0
	err := c.rc.Write(c.writeFunc)
	written, errno := c.written, c.writeErr
	c.writeBuf = nil
	c.writeMu.Unlock()
	return written, c.opError("write", err, errno)
}

// writeAll is one attempt of Write: false when the socket's buffer fills
// before all of it is written.
func (c *Conn) writeAll(fd uintptr) bool {
	b := c.writeBuf
	for c.written < len(b) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[c.written])), uintptr(len(b)-c.written))
		switch e {
		case 0:
			c.written += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.writeErr = e
			return true
		}
	}
	return true
}
