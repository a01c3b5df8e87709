package experiment

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

// ProgressInterval is how often the live progress line is redrawn: each
// redraw shows the last interval's ops/s and p99, so "this second's".
const ProgressInterval = time.Second

// Console is where an experiment writes for a person: stdout and stderr,
// and, when stderr is a terminal and neither -s nor --quiet was given, the
// live progress line. Stdout and Stderr are to be used for every write, so
// that the line is cleared before anything else appears on the terminal.
type Console struct {
	Stdout, Stderr io.Writer
	// Progress is the live line; nil when there is none.
	Progress *result.Progress
}

// NewConsole decides how progress is shown: status (-s) keeps YCSB's
// status lines, quiet (--quiet) shows none, and otherwise a terminal on
// stderr gets the live line. Asking for both is bad input.
func NewConsole(stdout, stderr io.Writer, status, quiet bool) (*Console, error) {
	if status && quiet {
		return nil, badinput.New("-s (status lines) and --quiet (no progress) contradict each other; give one of them")
	}
	c := &Console{Stdout: stdout, Stderr: stderr}
	fd, ok := terminal(stderr)
	// A dumb terminal (TERM=dumb: Emacs shells, some CI consoles) cannot
	// clear a line, so it gets nothing, as a pipe does.
	if status || quiet || !ok || os.Getenv("TERM") == "dumb" {
		return c, nil
	}
	c.Progress = result.NewProgress(stderr, func() int {
		// A terminal that cannot say its width is taken as 80 columns.
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			return w
		}
		return 80
	})
	c.Stderr = c.Progress.Guard(stderr)
	// Results on stdout stay clean when stdout is a terminal too (the same
	// one, as a rule): the line is cleared before each write. Piped to a
	// file, stdout is left as it is.
	if _, ok := terminal(stdout); ok {
		c.Stdout = c.Progress.Guard(stdout)
	}
	return c, nil
}

// Close clears the progress line for good, so that what is printed after
// the experiment (its error) starts on a clean line.
func (c *Console) Close() {
	if c.Progress != nil {
		c.Progress.Close()
	}
}

// terminal reports whether w is a terminal, and its file descriptor.
func terminal(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}
