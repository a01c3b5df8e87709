package rawnet

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection whose reads and writes are raw system calls
// (see the package's description).
type Conn struct {
	*net.TCPConn
	rc syscall.RawConn
}

// Wrap returns c with raw reads and writes when it is a TCP connection,
// else c itself. Wrap a connection before TLS goes on top of it.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{TCPConn: tc, rc: rc}
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Read reads what the socket holds, waiting in the poller while it holds
// nothing. The call cannot block: the socket is non-blocking.
func (c *Conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of b, waiting in the poller while the socket's buffer
// is full.
func (c *Conn) Write(b []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[written])), uintptr(len(b)-written))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, c.opError("write", err)
	case errno != 0:
		return written, c.opError("write", os.NewSyscallError("write", errno))
	}
	return written, nil
}
