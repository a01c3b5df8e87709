package experiment

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// TestBrokenPipeIsAnInterrupt: SIGPIPE (stdout's reader gone) stops the
// command as a first Ctrl-C does, so that it cleans up instead of being
// killed by the runtime, and the SIGPIPEs of later writes never abandon
// the cleanup as a second Ctrl-C would.
func TestBrokenPipeIsAnInterrupt(t *testing.T) {
	in := WatchInterrupts(nil)
	defer in.Stop()
	for range 3 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGPIPE); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-in.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGPIPE did not stop the command")
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
