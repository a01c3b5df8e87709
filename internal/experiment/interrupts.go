package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupts turns Ctrl-C (SIGINT), SIGTERM and SIGPIPE (stdout's reader
// gone) into the two ways a command
// stops early. The first signal cancels Context: the phase stops starting
// operations, gives those in flight --drain-timeout to finish, prints its
// summary and writes it marked interrupted. The second closes Abandoned:
// the command gives up at once, after the functions registered with
// AtAbandon have run (the result file is closed whole).
type Interrupts struct {
	ctx       context.Context
	cancel    context.CancelFunc
	ch        chan os.Signal
	done      chan struct{}
	abandoned chan struct{}
	stopOnce  sync.Once

	mu        sync.Mutex
	first     os.Signal
	onAbandon []func()
}

// WatchInterrupts starts listening for SIGINT and SIGTERM until Stop. It
// keeps listening after the first, so that the second does not kill the
// process by default in the middle of a record, but through Abandoned.
func WatchInterrupts(parent context.Context) *Interrupts {
	if parent == nil {
		parent = context.Background()
	}
	in := &Interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{}), abandoned: make(chan struct{})}
	in.ctx, in.cancel = context.WithCancel(parent)
	// SIGPIPE is a reader gone (dbprobe … | head -2): without it the
	// runtime kills the process on the next write to stdout, leaving
	// what it made on the server. Taken here, the write fails with EPIPE
	// and the command stops as on Ctrl-C, cleaning up. Taking it also
	// brings the SIGPIPEs of writes to a database's dead socket here,
	// which watch tells apart (outputGone).
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go in.watch()
	return in
}

func (in *Interrupts) watch() {
	for first := false; !first; {
		select {
		case sig := <-in.ch:
			// A SIGPIPE from a write to a database's broken connection
			// is that connection's error, which its driver reports; only
			// stdout's or stderr's reader gone stops the command.
			if sig == syscall.SIGPIPE && !outputGone() {
				continue
			}
			in.mu.Lock()
			in.first = sig
			in.mu.Unlock()
			in.cancel()
			first = true
		case <-in.done:
			return
		}
	}
	for {
		select {
		case sig := <-in.ch:
			// Every later write to the closed pipe raises SIGPIPE again:
			// only a person's second signal abandons the cleanup.
			if sig == syscall.SIGPIPE {
				continue
			}
			in.abandon()
		case <-in.done:
		}
		return
	}
}

// abandon runs the AtAbandon functions and closes Abandoned.
func (in *Interrupts) abandon() {
	in.mu.Lock()
	fns := in.onAbandon
	in.onAbandon = nil
	in.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	close(in.abandoned)
}

// Context is cancelled by the first signal.
func (in *Interrupts) Context() context.Context { return in.ctx }

// Abandoned is closed by the second signal, once the AtAbandon functions
// have run.
func (in *Interrupts) Abandoned() <-chan struct{} { return in.abandoned }

// AtAbandon registers fn to run on the second signal, before the command
// returns.
func (in *Interrupts) AtAbandon(fn func()) {
	in.mu.Lock()
	in.onAbandon = append(in.onAbandon, fn)
	in.mu.Unlock()
}

// Signal returns the first signal received, nil if none.
func (in *Interrupts) Signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.first
}

// Stop stops listening; signals get their default action again.
func (in *Interrupts) Stop() {
	in.stopOnce.Do(func() {
		signal.Stop(in.ch)
		close(in.done)
		in.cancel()
	})
}

// Interrupted is the error of a command stopped by a signal. The exit
// status is the one a shell gives a process the signal ended (130 for
// Ctrl-C, 143 for SIGTERM), so that `dbprobe load && dbprobe run` does not
// go on to the run after an interrupted load.
type Interrupted struct {
	Signal os.Signal
	// Abandoned says a second signal stopped the command at once, without
	// draining or a summary.
	Abandoned bool
	// Out is the JSON result file, if any.
	Out string
	// Err is what the command returned when the signal had stopped it
	// before its phases ran (a connection cancelled).
	Err error
}

// Error says what stopped the command and what was kept.
func (e *Interrupted) Error() string {
	name := SignalName(e.Signal)
	switch {
	case e.Abandoned && e.Out != "":
		return fmt.Sprintf("interrupted twice (%s): stopped at once, without a summary; %s keeps every complete interval: dbprobe recover %s rebuilds the summary", name, e.Out, e.Out)
	case e.Abandoned:
		return fmt.Sprintf("interrupted twice (%s): stopped at once, without a summary", name)
	case e.Err != nil:
		return fmt.Sprintf("interrupted (%s): %v", name, e.Err)
	default:
		return fmt.Sprintf("interrupted (%s): the summary covers what finished before the stop", name)
	}
}

// Unwrap returns what the command returned, if anything.
func (e *Interrupted) Unwrap() error { return e.Err }

// ExitCode is 128 plus the signal's number.
func (e *Interrupted) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// InterruptExitCode returns the exit status for err when a signal stopped
// the command, else 0.
func InterruptExitCode(err error) int {
	var in *Interrupted
	if errors.As(err, &in) {
		return in.ExitCode()
	}
	return 0
}

// SignalName names a signal as a shell does: SIGINT, SIGTERM.
func SignalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGPIPE:
		return "SIGPIPE: the output's reader closed it"
	}
	return s.String()
}
