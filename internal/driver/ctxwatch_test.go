package driver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The end of the watched context runs onEnd only while an operation is in
// flight, and Idle says whether it did.
func TestContextWatch(t *testing.T) {
	ended := make(chan struct{}, 4)
	onEnd := func() { ended <- struct{}{} }
	ranWithin := func(d time.Duration) bool {
		select {
		case <-ended:
			return true
		case <-time.After(d):
			return false
		}
	}
	w := ContextWatch{OnEnd: onEnd}

	// Ends during an operation: onEnd runs, and Idle reports it.
	ctx, cancel := context.WithCancel(context.Background())
	w.Watch(ctx)
	if !w.Busy(ctx) {
		t.Fatal("Busy under a live context reported it ended")
	}
	cancel()
	if !ranWithin(5 * time.Second) {
		t.Fatal("onEnd did not run for a context that ended during an operation")
	}
	if !w.Idle() {
		t.Error("Idle did not report the end during the operation")
	}
	if w.Busy(ctx) {
		t.Error("Busy under an ended context reported it live")
	}
	w.Idle()

	// Ends between operations: nothing runs, the next operation is clean.
	ctx, cancel = context.WithCancel(context.Background())
	w.Watch(ctx)
	w.Busy(ctx)
	w.Idle()
	cancel()
	if ranWithin(100 * time.Millisecond) {
		t.Error("onEnd ran for a context that ended between operations")
	}
	next := context.Background()
	w.Watch(next)
	if w.Current() != next {
		t.Error("Current is not the context watched last")
	}
	w.Busy(next)
	if w.Idle() {
		t.Error("an operation after an earlier context's end reports it")
	}

	// Unwatched before it ends: nothing runs, even during an operation.
	ctx, cancel = context.WithCancel(context.Background())
	w.Watch(ctx)
	w.Unwatch()
	w.Busy(next)
	cancel()
	if ranWithin(100 * time.Millisecond) {
		t.Error("onEnd ran for a context no longer watched")
	}
	if w.Idle() || w.Current() != nil {
		t.Error("Unwatch left the context watched")
	}
}

// When the context ends during an operation, Idle returns only after
// onEnd has, so that the owner can undo what onEnd did.
func TestContextWatchIdleWaitsForOnEnd(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	w := ContextWatch{OnEnd: func() {
		close(started)
		<-release
		finished.Store(true)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	w.Watch(ctx)
	w.Busy(ctx)
	cancel()
	<-started
	time.AfterFunc(100*time.Millisecond, func() { close(release) })
	if !w.Idle() {
		t.Fatal("Idle did not report the end during the operation")
	}
	if !finished.Load() {
		t.Error("Idle returned while onEnd was still running")
	}
	w.Unwatch()
}
