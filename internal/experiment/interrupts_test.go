package experiment

import (
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
