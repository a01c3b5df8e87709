package runner

import (
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// OnError is what a phase does when an operation fails in a way that more
// attempts cannot fix (driver.IsFatal: a disk or log full, a read-only
// database, a quota spent, a permission revoked).
type OnError int

// The policies on a fatal failure.
const (
	// OnErrorStop stops the phase at once: no step starts after the one
	// that met it, and the outcome says why (Outcome.Stopped). The
	// default: every later operation would fail the same way, and a load
	// that sends its 91 remaining batches into a full disk measures
	// nothing but the failure.
	OnErrorStop OnError = iota
	// OnErrorContinue counts the failure and goes on, for those who
	// measure the failure itself.
	OnErrorContinue
)

var onErrorNames = [...]string{"stop", "continue"}

// String returns "stop" or "continue", as --on-error takes them.
func (o OnError) String() string {
	if int(o) >= 0 && int(o) < len(onErrorNames) {
		return onErrorNames[o]
	}
	return fmt.Sprintf("onerror(%d)", int(o))
}

// ParseOnError reads "stop" or "continue"; the error names the choices.
func ParseOnError(s string) (OnError, error) {
	for i, n := range onErrorNames {
		if s == n {
			return OnError(i), nil
		}
	}
	return 0, fmt.Errorf("onerror=%q is not a choice: give stop (end the phase at the first failure more attempts cannot fix, such as a full disk) or continue (count such failures and go on) (--on-error)", s)
}

// StopCause is why a phase was stopped before its count or its time.
type StopCause int

// The causes of a stop.
const (
	// StopFatal: an operation failed in a way more attempts cannot fix,
	// under OnErrorStop.
	StopFatal StopCause = iota + 1
	// StopUnreachable: the database did not answer for ReconnectTimeout
	// in a phase without MaxExecutionTime.
	StopUnreachable
)

// String names the cause as the JSON result does.
func (c StopCause) String() string {
	switch c {
	case StopFatal:
		return "fatal"
	case StopUnreachable:
		return "unreachable"
	}
	return fmt.Sprintf("stopcause(%d)", int(c))
}

// Stop is why and when a phase was stopped early.
type Stop struct {
	Cause StopCause
	// Op names the operation that met the fatal failure; "RECONNECT" for
	// StopUnreachable.
	Op string
	// Err is the fatal failure, or the last failed attempt to reconnect.
	Err error
	// At is when the phase was stopped.
	At time.Time
	// Since is when the database stopped answering (the start of the
	// first operation of the outage) for StopUnreachable; zero otherwise.
	Since time.Time
	// Waited is how long the phase waited for it: ReconnectTimeout.
	Waited time.Duration
}

// halt stops the phase early for s, keeping the first cause; an abort
// (bad input) stands above it.
func (p *phase) halt(s Stop) {
	p.errMu.Lock()
	if p.stopped == nil && p.aborted == nil {
		p.stopped = &s
	}
	p.errMu.Unlock()
	p.stop.Store(true)
}

// reconnectDeadline is when a worker that lost its session at now stops
// waiting for the database (measure.Now's clock), and since when the
// database has not answered; deadline is 0 when the phase waits as long
// as it lasts (it has a MaxExecutionTime, or no ReconnectTimeout). The
// wait counts from the start of the outage when one is open: the workers
// that lose their sessions one after the other all give up at its
// timeout, not each at its own.
func (p *phase) reconnectDeadline(now int64) (deadline, since int64) {
	since = now
	if b, open := p.avail.since(); open && b < now {
		since = b
	}
	if p.opts.MaxExecutionTime > 0 || p.opts.ReconnectTimeout <= 0 {
		return 0, since
	}
	return since + int64(p.opts.ReconnectTimeout), since
}

// unreachable stops the phase: the database has not answered since since
// (measure.Now's clock).
func (p *phase) unreachable(since int64, err error) {
	p.halt(Stop{Cause: StopUnreachable, Op: "RECONNECT", Err: err, At: time.Now(), Since: measure.Wall(since), Waited: p.opts.ReconnectTimeout})
}

// fatal counts n units that failed with err, a failure more attempts
// cannot fix, and keeps the first such failure.
func (p *phase) fatal(n int64, err error) {
	p.errMu.Lock()
	p.fatalUnits += n
	if p.firstFatal == nil {
		p.firstFatal = err
	}
	p.errMu.Unlock()
}
