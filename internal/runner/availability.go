package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
)

// Outage is a span in which the database served no operation: it began
// with an operation that lost its connection or timed out, and ended with
// the first operation that started after that failure and succeeded.
type Outage struct {
	Start, End time.Time
	// Failed counts the operations (load rows) that failed in it with a
	// lost connection or a timeout.
	Failed int64
	// Ongoing is set when the phase ended before the database came back;
	// End is then the end of the phase.
	Ongoing bool
}

// Duration is how long the outage lasted.
func (o Outage) Duration() time.Duration { return o.End.Sub(o.Start) }

// MinOutage is the shortest span without service reported as an outage.
// A single connection killed while the others go on serving (a backend
// terminated by an administrator) is replaced within milliseconds: it
// counts as a reconnection, not as an outage.
const MinOutage = 100 * time.Millisecond

// Reconnection: a worker whose connection broke opens a new session,
// waiting between attempts as a RetryPolicy from reconnectBackoff doubling
// up to reconnectMaxBackoff, so that an outage's end is seen within half a
// second without hammering a database that is starting up.
const (
	reconnectBackoff    = 10 * time.Millisecond
	reconnectMaxBackoff = 500 * time.Millisecond
	// sessionTimeout bounds one attempt to open a session when no
	// operation timeout is set: a frozen server accepts connections into
	// its backlog and never answers them.
	sessionTimeout = 10 * time.Second
)

// codeTimeout is the code of an operation that outlived --op-timeout,
// whatever the driver made of the cancellation.
const codeTimeout = "timeout"

// errLate is an operation that succeeded after its timeout.
var errLate = driver.Classify(errors.New("the operation outlived --op-timeout: the database answered after the deadline"), codeTimeout, driver.ClassTimeout)

// errSessionLost fails the operations a step would send on a session
// that broke under an earlier one (the write of a read-modify-write whose
// read lost the connection); the worker reconnects before its next step.
var errSessionLost = driver.Classify(errors.New("the connection was lost under the previous operation"), "connection-lost", driver.ClassConnLost)

// availability follows whether the database is serving, from the outcomes
// of operations: it opens an outage at a failure that says the database
// is unreachable and closes it at the first later success.
type availability struct {
	open atomic.Bool // read on every success; the rest under mu

	mu        sync.Mutex
	begin     int64 // measure.Now start of the outage's first failure
	knownDown int64 // when that failure ended: later successes prove recovery
	failed    int64
	// recovered is when the last outage ended: a failure that began
	// before it (a reconnection attempt sent into the cut that gave up
	// after the service came back) belongs to that outage.
	recovered int64
	outages   []Outage
}

// since returns the start of the outage under way, and whether one is.
func (a *availability) since() (int64, bool) {
	if !a.open.Load() {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.begin, a.open.Load()
}

// failed records n operations (load rows) that failed for want of the
// database between start and end; n is 0 for a failed reconnection.
func (a *availability) fail(start, end, n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.open.Load() {
		if start < a.recovered {
			if k := len(a.outages) - 1; k >= 0 && a.outages[k].End.Equal(measure.Wall(a.recovered)) {
				a.outages[k].Failed += n
			}
			return
		}
		a.begin, a.knownDown, a.failed = start, end, 0
		a.open.Store(true)
	}
	a.failed += n
}

// succeed records an operation that succeeded; it ends an outage when it
// started after the outage's first failure was seen. An operation sent
// before that (a slow one on another connection) proves nothing.
func (a *availability) succeed(start, end int64) {
	if !a.open.Load() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.open.Load() || start < a.knownDown {
		return
	}
	a.open.Store(false)
	a.recovered = end
	a.record(end, false)
}

func (a *availability) record(end int64, ongoing bool) {
	if time.Duration(end-a.begin) < MinOutage {
		return
	}
	a.outages = append(a.outages, Outage{Start: measure.Wall(a.begin), End: measure.Wall(end), Failed: a.failed, Ongoing: ongoing})
}

// finish closes an outage still open at the end of the phase and returns
// them all.
func (a *availability) finish(end int64) []Outage {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.open.Load() {
		a.open.Store(false)
		a.record(end, true)
	}
	return a.outages
}

// unavailable reports whether err says the database could not serve the
// operation: the connection broke, the operation timed out, or the service
// said it is passing through a failover or reconfiguration (transient).
func unavailable(err error) bool {
	return connectionInDoubt(err) || driver.ClassOf(err) == driver.ClassTransient
}

// connectionInDoubt reports whether the session's connection may be gone:
// it broke, or an operation timed out on it. A transient failure is not
// one: its driver has already let go of that connection, so that a retry
// runs on a new one within the same session.
func connectionInDoubt(err error) bool {
	c := driver.ClassOf(err)
	return c == driver.ClassConnLost || c == driver.ClassTimeout
}

// guarded runs one call to the session under the phase's operation
// timeout, and marks the session broken when the call failed in a way that
// leaves the connection in doubt (lost, or timed out).
func (w *worker) guarded(ctx context.Context, call func(context.Context) error) error {
	err := w.withTimeout(ctx, call)
	if err != nil && connectionInDoubt(err) {
		w.broken = true
	}
	return err
}

// withTimeout runs call under the phase's operation timeout, when there is
// one, and names a failure it caused a timeout whatever the driver made of
// the cancellation.
func (w *worker) withTimeout(ctx context.Context, call func(context.Context) error) error {
	d := w.phase.opts.OpTimeout
	if d <= 0 {
		return call(ctx)
	}
	start := measure.Now()
	opCtx, cancel := context.WithTimeout(ctx, d)
	err := call(opCtx)
	// The clock decides, not only the context: Go's timer may fire up to a
	// millisecond late, and a driver that never looks at the context
	// (SQLite inside one read) returns before it does.
	expired := errors.Is(opCtx.Err(), context.DeadlineExceeded) || time.Duration(measure.Now()-start) >= d
	cancel()
	switch {
	case !expired || ctx.Err() != nil:
	case err == nil:
		// The driver could not abandon the operation in time (PostgreSQL
		// waits for its cancel request to land) and the database finished
		// it late: the caller had given up, so it counts as a timeout.
		err = errLate
	case driver.Code(err) != codeTimeout:
		err = driver.Classify(err, codeTimeout, driver.ClassTimeout)
	}
	return err
}

// reconnect replaces the worker's broken session. It tries until a
// session opens or the phase stops, and reports whether it has one. In a
// phase without MaxExecutionTime it tries for ReconnectTimeout from the
// start of the outage at most, then stops the phase (StopUnreachable): a
// load or a run by count has no end of its own to wait for, and a server
// that does not come back would keep it waiting until it is killed.
func (w *worker) reconnect(ctx context.Context) bool {
	p := w.phase
	if w.open {
		// The connection is gone; closing only frees what is left of it.
		_ = w.work.Close()
		w.open = false
	}
	timeout := sessionTimeout
	if p.opts.OpTimeout > 0 {
		timeout = max(p.opts.OpTimeout, time.Second)
	}
	backoff := RetryPolicy{Backoff: reconnectBackoff, MaxBackoff: reconnectMaxBackoff}
	deadline, since := p.reconnectDeadline(measure.Now())
	var err error
	for n := 0; ; n++ {
		if p.stop.Load() || ctx.Err() != nil {
			return false
		}
		attempt := timeout
		if deadline != 0 {
			left := time.Duration(deadline - measure.Now())
			if left <= 0 && n > 0 {
				p.unreachable(since, err)
				return false
			}
			// The last attempt ends with the wait.
			attempt = min(attempt, max(left, reconnectBackoff))
		}
		sctx, cancel := context.WithTimeout(ctx, attempt)
		t0 := measure.Now()
		err = w.work.Open(sctx)
		cancel()
		if err == nil {
			w.open, w.broken = true, false
			p.reconnects.Add(1)
			return true
		}
		p.avail.fail(t0, measure.Now(), 0)
		p.noteError("RECONNECT", "reconnect", err)
		if driver.IsFatal(err) && p.opts.OnError == OnErrorStop {
			// The server answers, and says no for good (the user may no
			// longer connect): waiting for it would only end in the
			// reconnect timeout, under a wrong cause.
			p.halt(Stop{Cause: StopFatal, Op: "RECONNECT", Err: err, At: time.Now()})
			return false
		}
		wait := backoff.wait(n, w.rng)
		if deadline != 0 {
			wait = min(wait, max(time.Duration(deadline-measure.Now()), 0))
		}
		if !w.sleep(ctx, wait) {
			return false
		}
	}
}
