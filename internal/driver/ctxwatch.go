package driver

import (
	"context"
	"sync"
)

// ContextWatch lets a connection that one goroutine uses watch the context
// of its operations once for many of them (context.AfterFunc), rather
// than once per operation: a worker passes the same context to every
// operation, and watching it per statement (a goroutine hand-over in
// database/sql and go-sql-driver, a timer and a registration in pgconn)
// was a large part of the client's CPU per operation.
//
// The end of the watched context matters only while an operation under it
// is in flight, between Busy and Idle: a context that ends between
// operations (an operation's own, under --op-timeout, cancelled once it
// is over) leaves the connection alone, and a callback that comes late,
// for a context no longer watched, does nothing. Watch, Unwatch, Busy,
// Idle and Current belong to the connection's goroutine.
type ContextWatch struct {
	// OnEnd runs, once, on a goroutine of its own, when a watched context
	// ends during an operation under it. Set it before the first Watch:
	// bound once, it costs no closure per operation.
	OnEnd func()

	current context.Context // what the owner last watched, read without the lock
	stop    func() bool
	// ended receives when an OnEnd that ran during an operation has
	// returned; Idle waits for it.
	ended chan struct{}

	mu       sync.Mutex // guards the fields below, shared with the callback
	watched  context.Context
	inFlight bool
	fired    bool // OnEnd ran during this operation
}

// Watch watches ctx, and stops watching the previous context, unless ctx
// is the one watched already. A context that cannot end is recorded but
// needs no watching.
func (w *ContextWatch) Watch(ctx context.Context) {
	if ctx == w.current {
		return
	}
	w.Unwatch()
	w.mu.Lock()
	w.watched = ctx
	w.mu.Unlock()
	w.current = ctx
	if ctx.Done() != nil {
		if w.ended == nil {
			w.ended = make(chan struct{}, 1)
		}
		ended, onEnd := w.ended, w.OnEnd
		w.stop = context.AfterFunc(ctx, func() {
			if w.claim(ctx) {
				onEnd()
				ended <- struct{}{}
			}
		})
	}
}

// Unwatch ends the watch of the current context: its end no longer
// concerns the connection.
func (w *ContextWatch) Unwatch() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.mu.Lock()
	w.watched = nil
	w.mu.Unlock()
	w.current = nil
}

// Current returns the context watched, nil if none.
func (w *ContextWatch) Current() context.Context { return w.current }

// Busy marks an operation under ctx in flight until Idle, and reports
// whether ctx is still live. It looks at ctx after marking, so that an
// end from then on runs OnEnd.
func (w *ContextWatch) Busy(ctx context.Context) bool {
	w.mu.Lock()
	w.inFlight = true
	w.mu.Unlock()
	return ctx.Err() == nil
}

// Idle ends what Busy began, and reports whether OnEnd ran meanwhile;
// when it did, Idle returns only once OnEnd has, so that the owner may
// undo what OnEnd did (a closed socket, a deadline) without a race.
func (w *ContextWatch) Idle() (fired bool) {
	w.mu.Lock()
	w.inFlight = false
	fired, w.fired = w.fired, false
	w.mu.Unlock()
	if fired {
		<-w.ended
	}
	return fired
}

// claim reports whether the end of ctx concerns an operation in flight,
// and records that it did.
func (w *ContextWatch) claim(ctx context.Context) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.inFlight || w.watched != ctx {
		return false
	}
	w.fired = true
	return true
}
