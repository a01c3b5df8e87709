package rawnet

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pair returns a wrapped client connection and the server's end of it,
// both on 127.0.0.1.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	t.Setenv(EnvVar, "on") // whatever the environment of the test says
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server := <-accepted
	if server == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close(); server.Close() })
	w, ok := Wrap(c).(*Conn)
	if !ok {
		t.Fatalf("Wrap of a TCP connection returned %T", Wrap(c))
	}
	return w, server
}

// More than the sockets' buffers hold goes both ways intact, so that
// writes wait for room and reads for data in the poller.
func TestRoundTripLargerThanTheBuffers(t *testing.T) {
	c, server := pair(t)
	data := make([]byte, 16<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	// The server echoes slowly at first, so that the client's writes
	// meet a full buffer.
	echoed := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, err := io.CopyN(server, server, int64(len(data)))
		echoed <- err
	}()
	wrote := make(chan error, 1)
	go func() {
		n, err := c.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
		wrote <- err
	}()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := <-echoed; err != nil {
		t.Fatalf("echo: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the bytes read back differ from those written")
	}
}

func TestReadDeadline(t *testing.T) {
	c, _ := pair(t)
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the Read returned after %v, not at its 50ms deadline", d)
	}
}

func TestCloseEndsABlockedRead(t *testing.T) {
	c, _ := pair(t)
	time.AfterFunc(50*time.Millisecond, func() { c.Close() })
	_, err := c.Read(make([]byte, 10))
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read on a connection closed meanwhile: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write on a closed connection: %v, want net.ErrClosed", err)
	}
}

func TestPeerCloses(t *testing.T) {
	c, server := pair(t)
	if _, err := server.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	server.Close()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("read until the peer closed: %q, %v; want \"bye\" then EOF", got, err)
	}
	// Writing to a connection the peer closed fails (the first write may
	// still be accepted by the kernel) rather than killing the process.
	var werr error
	for range 100 {
		if _, werr = c.Write([]byte("x")); werr != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var oe *net.OpError
	if !errors.As(werr, &oe) || oe.Op != "write" {
		t.Fatalf("write to a closed peer: %v, want a write error", werr)
	}
}

func TestWrapLeavesOtherConnectionsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Error("Wrap changed a connection that is not TCP")
	}
}

// A request and its reply cost no allocation: Read and Write run on every
// operation of every worker.
func TestReadAndWriteDoNotAllocate(t *testing.T) {
	c, server := pair(t)
	request, reply := []byte("ping\n"), make([]byte, 16)
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := server.Read(buf)
			if err != nil {
				return
			}
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(request); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, reply[:len(request)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per request and reply, want 0", allocs)
	}
}
