package cli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

// progressCols is the width of the pseudo-terminal the binary runs on:
// narrower than the full progress line, so that leaving fields out is
// tested too.
const progressCols = 72

// drawn matches one redraw of the progress line as it reaches the
// terminal: carriage return, the line, clear to the end of the line.
var drawn = regexp.MustCompile("\r([^\r\n\x1b]*)\x1b\\[K")

// progressText matches what only a progress line shows: its ops/s field,
// or its first draw of a phase.
var progressText = regexp.MustCompile(`(?m)[0-9] ops/s( |$)| starting$`)

// The binary under a pseudo-terminal, as a person runs it: the live
// progress line on stderr, redrawn in place, no wider than the terminal,
// gone at the end; the results on stdout clean whether stdout is a file
// or the same terminal; none of it with -s, --quiet, or a stderr that is
// not a terminal.
func TestProgressOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.ForTest(t)
	// The null database, so the run is the same anywhere; 2.5 s gives the
	// line about three redraws of the run phase.
	args := []string{"ycsb", "--db", "null", "-p", "recordcount=1000", "--duration", "2500ms", "--threads", "2", "--no-monitor"}

	t.Run("stdout to a file", func(t *testing.T) {
		t.Parallel()
		outPath := filepath.Join(t.TempDir(), "stdout.txt")
		stdout, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		term := runOnTerminal(t, bin, args, stdout)
		stdout.Close()

		var lines []string
		for _, m := range drawn.FindAllStringSubmatch(term, -1) {
			if m[1] != "" {
				lines = append(lines, m[1])
			}
		}
		var runDraws int
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n >= progressCols {
				t.Errorf("a progress line of %d columns on a %d-column terminal wraps: %q", n, progressCols, l)
			}
			if strings.HasPrefix(l, "run ") && strings.Contains(l, " ops") {
				runDraws++
			}
		}
		if runDraws < 2 {
			t.Fatalf("%d redraws of the run phase's line (phase, time, ops), want at least 2; terminal:\n%q", runDraws, term)
		}
		// Redrawn in place: from the first draw to the last, no new line.
		first, last := strings.Index(term, "\rrun "), strings.LastIndex(term, "\rrun ")
		if strings.Contains(term[first:last], "\n") {
			t.Errorf("the run phase's progress line is not redrawn in place: a new line between its draws:\n%q", term[first:last])
		}
		// Gone at the end: the last draw is followed by a clear.
		if !strings.Contains(term[last+1:], "\r\x1b[K") {
			t.Errorf("the progress line is left on the terminal at the end:\n%q", term[last:])
		}
		if screen := emulate(term); progressText.MatchString(screen) {
			t.Errorf("the terminal still shows a progress line after the run:\n%s", screen)
		}
		out, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsAny(out, "\r\x1b") || progressText.Match(out) {
			t.Errorf("stdout holds progress output:\n%q", out)
		}
		if c := bytes.Count(out, []byte("[OVERALL], RunTime(ms)")); c != 2 {
			t.Errorf("stdout has %d summaries, want 2 (load, run):\n%s", c, out)
		}
	})

	t.Run("stdout on the same terminal", func(t *testing.T) {
		t.Parallel()
		term := runOnTerminal(t, bin, args, nil)
		if !strings.Contains(term, "\rrun ") {
			t.Fatalf("no progress line on the terminal:\n%q", term)
		}
		screen := emulate(term)
		if progressText.MatchString(screen) {
			t.Errorf("a progress line is left among the results:\n%s", screen)
		}
		// Every result line begins its line, whole: the progress line was
		// cleared before it was written.
		var summaries int
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "[OVERALL]") && !strings.HasPrefix(l, "[OVERALL], ") {
				t.Errorf("a result line is mixed with something else: %q", l)
			}
			if strings.HasPrefix(l, "[OVERALL], RunTime(ms), ") {
				summaries++
			}
		}
		if summaries != 2 {
			t.Errorf("the terminal shows %d summaries, want 2:\n%s", summaries, screen)
		}
	})

	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"with -s, YCSB's status lines", []string{"-s", "-p", "status.interval=1"}},
		{"with --quiet, nothing", []string{"--quiet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			term := runOnTerminal(t, bin, append(args, tc.extra...), io.Discard)
			if strings.Contains(term, "\x1b[K") {
				t.Errorf("a progress line on the terminal:\n%q", term)
			}
			status := strings.Contains(term, "current ops/sec")
			if want := tc.extra[0] == "-s"; status != want {
				t.Errorf("YCSB status lines on the terminal: %v, want %v:\n%q", status, want, term)
			}
		})
	}

	t.Run("dumb terminal", func(t *testing.T) {
		t.Parallel()
		term := runOnTerminal(t, bin, args, io.Discard, "TERM=dumb")
		if strings.ContainsAny(term, "\r\x1b") || progressText.MatchString(term) {
			t.Errorf("progress output on a terminal that cannot clear a line:\n%q", term)
		}
	})

	t.Run("stderr not a terminal", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if strings.ContainsAny(stderr.String(), "\r\x1b") || progressText.MatchString(stderr.String()) {
			t.Errorf("progress output on a stderr that is not a terminal:\n%q", stderr.String())
		}
	})
}

// runOnTerminal runs the binary with stderr on a new pseudo-terminal of
// progressCols columns, and stdout there too when stdout is nil; it
// returns what the terminal received. The terminal is an xterm unless env
// says otherwise (TERM=dumb), whatever terminal the tests run under.
func runOnTerminal(t *testing.T, bin string, args []string, stdout io.Writer, env ...string) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: progressCols}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "TERM=xterm"), env...)
	cmd.Stderr = tty
	cmd.Stdout = stdout
	if stdout == nil {
		cmd.Stdout = tty
	}
	got := make(chan []byte)
	go func() {
		// Reading ends with an error (EIO) once the child and the
		// parent have closed the terminal's other side.
		b, _ := io.ReadAll(ptmx)
		got <- b
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(<-got)
}

// emulate returns what a terminal shows after receiving s: a carriage
// return moves to the line's start, ESC [ K clears from there to its end,
// a new line starts the next line, and any other character is written over
// what is there.
func emulate(s string) string {
	var lines [][]rune
	line, col := []rune{}, 0
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\r':
			col = 0
			i++
		case strings.HasPrefix(s[i:], "\x1b[K"):
			line = line[:col]
			i += 3
		case s[i] == '\n':
			lines = append(lines, line)
			line, col = []rune{}, 0
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
			i += n
		}
	}
	lines = append(lines, line)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return strings.Join(out, "\n")
}
