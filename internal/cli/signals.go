package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext is cancelled by the first Ctrl-C (or SIGTERM): the phase
// drains and prints what it measured. Handling stops after that first
// signal, so a second Ctrl-C ends the process at once.
func signalContext(parent context.Context) (context.Context, func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			signal.Stop(ch)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}
