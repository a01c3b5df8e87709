//go:build unix

package experiment

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBrokenPipeIsAnInterrupt: SIGPIPE (stdout's reader gone) stops the
// command as a first Ctrl-C does, so that it cleans up instead of being
// killed by the runtime, and the SIGPIPEs of later writes never abandon
// the cleanup as a second Ctrl-C would.
func TestBrokenPipeIsAnInterrupt(t *testing.T) {
	in := WatchInterrupts(nil)
	defer in.Stop()
	// stdout becomes a pipe whose reader is gone, as under dbprobe … |
	// head -2, for as long as three writes take; nothing else may print
	// meanwhile.
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(p[0])
	if err := unix.Dup2(p[1], 1); err != nil {
		t.Fatal(err)
	}
	var werr error
	for range 3 {
		_, werr = unix.Write(1, []byte("x\n"))
	}
	stopped := false
	select {
	case <-in.Context().Done():
		stopped = true
	case <-time.After(5 * time.Second):
	}
	unix.Dup2(saved, 1)
	unix.Close(saved)
	unix.Close(p[1])
	if !errors.Is(werr, unix.EPIPE) {
		t.Errorf("a write to the closed pipe: %v, want EPIPE", werr)
	}
	if !stopped {
		t.Fatal("SIGPIPE on a broken stdout did not stop the command")
	}
	if in.Signal() != syscall.SIGPIPE {
		t.Errorf("signal %v", in.Signal())
	}
	select {
	case <-in.Abandoned():
		t.Fatal("a later SIGPIPE abandoned the cleanup")
	case <-time.After(300 * time.Millisecond):
	}
	e := &Interrupted{Signal: syscall.SIGPIPE}
	if e.ExitCode() != 141 {
		t.Errorf("exit code %d", e.ExitCode())
	}
}

// A SIGPIPE of a write to a database's dead socket, with stdout and
// stderr still read, is that connection's error, not an interrupt.
func TestSocketSIGPIPEIsNoInterrupt(t *testing.T) {
	in := WatchInterrupts(nil)
	defer in.Stop()
	for range 3 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGPIPE); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-in.Context().Done():
		t.Fatalf("a SIGPIPE with stdout still read stopped the command (%v)", in.Signal())
	case <-time.After(500 * time.Millisecond):
	}
}

// TestOwnAddressIsLocal: a URL naming one of this machine's own
// interface addresses is as local as 127.0.0.1; another address is not.
func TestOwnAddressIsLocal(t *testing.T) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("no interface addresses: %v", err)
	}
	own := ""
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
			own = n.IP.String()
			break
		}
	}
	if own == "" {
		t.Skip("this machine has no non-loopback address")
	}
	for host, want := range map[string]bool{own: true, "127.0.0.1": true, "localhost": true, "/var/run/postgresql": true, "192.0.2.7": false, "db.example.com": false} {
		if got := isLocalHost(host); got != want {
			t.Errorf("isLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}
