package faults

import (
	"net"
	"sync"
	"testing"
	"time"
)

// relay is a TCP proxy between dbprobe and a server that delays what it
// forwards. The kernels these tests run on have no netem (tc qdisc … netem
// is "unknown"), so a delay on the path is made here: each chunk read
// from one side is written to the other delay after it arrived, in order,
// while the next chunks are already read — a longer path, not a slower
// one.
type relay struct {
	ln       net.Listener
	upstream string
	delay    time.Duration

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// newRelay listens on 127.0.0.1 and forwards every connection to upstream
// (host:port) with delay each way; it is closed when the test ends.
func newRelay(t *testing.T, upstream string, delay time.Duration) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, upstream: upstream, delay: delay}
	r.wg.Add(1)
	go r.serve()
	t.Cleanup(r.close)
	return r
}

// Addr is the relay's host:port.
func (r *relay) Addr() string { return r.ln.Addr().String() }

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.forward(c)
		}()
	}
}

// track keeps c to close at the end; false when the relay is closed.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.conns = append(r.conns, c)
	return true
}

func (r *relay) forward(client net.Conn) {
	server, err := net.DialTimeout("tcp", r.upstream, 10*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if !r.track(client) || !r.track(server) {
		client.Close()
		server.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.pipe(server, client) }()
	go func() { defer wg.Done(); r.pipe(client, server) }()
	wg.Wait()
	client.Close()
	server.Close()
}

// chunk is what one read brought, and when it is due on the other side.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk delay after it was read. When src
// ends, dst's writing side is closed after the last chunk; when dst
// fails, both are closed.
func (r *relay) pipe(dst, src net.Conn) {
	ch := make(chan chunk, 4096)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{buf[:n], time.Now().Add(r.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			src.Close()
			dst.Close()
			for range ch {
			}
			return
		}
	}
	if tcp, ok := dst.(*net.TCPConn); ok {
		tcp.CloseWrite()
	} else {
		dst.Close()
	}
}

func (r *relay) close() {
	r.ln.Close()
	r.mu.Lock()
	r.closed = true
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
