package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts turns Ctrl-C (SIGINT) and SIGTERM into the two ways a command
// stops early. The first signal cancels ctx: the phase stops starting
// operations, gives those in flight --drain-timeout to finish, prints its
// summary and writes it marked interrupted. The second closes abandoned:
// the command gives up at once, after the functions registered with
// atAbandon have run (the result file is closed whole).
type interrupts struct {
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

// watchInterrupts starts listening for SIGINT and SIGTERM until stop. It
// keeps listening after the first, so that the second does not kill the
// process by default in the middle of a record, but through abandoned.
func watchInterrupts(parent context.Context) *interrupts {
	if parent == nil {
		parent = context.Background()
	}
	in := &interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{}), abandoned: make(chan struct{})}
	in.ctx, in.cancel = context.WithCancel(parent)
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go in.watch()
	return in
}

func (in *interrupts) watch() {
	select {
	case sig := <-in.ch:
		in.mu.Lock()
		in.first = sig
		in.mu.Unlock()
		in.cancel()
	case <-in.done:
		return
	}
	select {
	case <-in.ch:
		in.mu.Lock()
		fns := in.onAbandon
		in.onAbandon = nil
		in.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
		close(in.abandoned)
	case <-in.done:
	}
}

// atAbandon registers fn to run on the second signal, before the command
// returns.
func (in *interrupts) atAbandon(fn func()) {
	in.mu.Lock()
	in.onAbandon = append(in.onAbandon, fn)
	in.mu.Unlock()
}

// signal returns the first signal received, nil if none.
func (in *interrupts) signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.first
}

// stop stops listening; signals get their default action again.
func (in *interrupts) stop() {
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

func (e *Interrupted) Error() string {
	name := signalName(e.Signal)
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

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
