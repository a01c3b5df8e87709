package sqlserver

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// pipe returns the two ends of an in-memory connection, closed at the end.
func pipe(t *testing.T) (client, server net.Conn) {
	client, server = net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestLoginWatch(t *testing.T) {
	t.Run("a login past its deadline fails", func(t *testing.T) {
		client, _ := pipe(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		w := &loginWatch{ctx: ctx}
		w.watch(client)
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read from a silent server = %v, want the login's deadline", err)
		}
		w.done()
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read after the context ended = %v: the connection must stay failed", err)
		}
	})
	t.Run("a cancelled login fails", func(t *testing.T) {
		client, _ := pipe(t)
		ctx, cancel := context.WithCancel(context.Background())
		w := &loginWatch{ctx: ctx}
		w.watch(client)
		errc := make(chan error, 1)
		go func() {
			_, err := client.Read(make([]byte, 1))
			errc <- err
		}()
		cancel()
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read under a cancelled login = %v, want it ended", err)
		}
		w.done()
	})
	t.Run("a finished login keeps no deadline", func(t *testing.T) {
		client, server := pipe(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		w := &loginWatch{ctx: ctx}
		w.watch(client)
		w.done() // the login is over before its deadline
		<-ctx.Done()
		go server.Write([]byte{42})
		b := make([]byte, 1)
		if _, err := client.Read(b); err != nil || b[0] != 42 {
			t.Fatalf("read after the login's deadline = %v: a finished login must leave the connection without one", err)
		}
	})
}

func TestLoginDialerWatchesOnlyLogins(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	d := &loginDialer{}
	ctx, cancel := context.WithCancel(context.Background())
	w := &loginWatch{ctx: ctx}
	c, err := d.DialContext(context.WithValue(ctx, loginKey{}, w), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(w.conns) != 1 {
		t.Fatalf("the dialer put %d connections under the watch, want 1", len(w.conns))
	}
	// A dial outside a Connect (no watch in the context) is left alone.
	c2, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
	if len(w.conns) != 1 {
		t.Errorf("a dial outside the login joined its watch")
	}
	w.done()
	cancel()
}
