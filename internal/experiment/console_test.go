package experiment

import (
	"bytes"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Writers that are not terminals get no progress line and are used as
// they are; -s with --quiet is bad input. (The line on a terminal is
// tested on the binary under a pseudo-terminal, in internal/cli.)
func TestConsoleOffATerminal(t *testing.T) {
	var out, errb bytes.Buffer
	for _, tc := range []struct{ status, quiet bool }{{false, false}, {true, false}, {false, true}} {
		c, err := NewConsole(&out, &errb, tc.status, tc.quiet)
		if err != nil {
			t.Fatalf("status %v quiet %v: %v", tc.status, tc.quiet, err)
		}
		if c.Progress != nil || c.Stdout != &out || c.Stderr != &errb {
			t.Errorf("status %v quiet %v: a progress line or wrapped writers off a terminal", tc.status, tc.quiet)
		}
		c.Close()
	}
	if _, err := NewConsole(&out, &errb, true, true); !badinput.Is(err) {
		t.Errorf("-s with --quiet: %v, want bad input", err)
	}
	if out.Len()+errb.Len() != 0 {
		t.Errorf("the console wrote: %q %q", out.String(), errb.String())
	}
}

// StatusEvery asks the runner for status every status.interval for -s,
// every second for the live line, and never otherwise.
func TestStatusEvery(t *testing.T) {
	if got := (OutputConfig{Status: true}).StatusEvery(10e9); got != 10e9 {
		t.Errorf("-s: %v", got)
	}
	if got := (OutputConfig{}).StatusEvery(10e9); got != 0 {
		t.Errorf("neither: %v", got)
	}
	live := OutputConfig{Progress: result.NewProgress(&bytes.Buffer{}, func() int { return 80 })}
	if got := live.StatusEvery(10e9); got != ProgressInterval {
		t.Errorf("live line: %v, want %v", got, ProgressInterval)
	}
}
