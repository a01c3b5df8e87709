package runner

import (
	"context"
	"errors"
	"fmt"
)

// Plan is what an experiment gives the runner for one phase: the series
// its steps record into, how its units of work are shared out, and the
// worker that does each step.
type Plan struct {
	// Series are the phase's histogram series, in the order summaries
	// list them; Op and Cleanup address them by index.
	Series []Series
	// Cleanup is the series in which closing each worker's session is
	// timed at the end (YCSB's CLEANUP), or NoSeries.
	Cleanup int
	// Count is how many units the phase does in all; 0 sets no count, and
	// the phase ends on MaxExecutionTime or an interruption.
	Count int64
	// Split is how the units are shared among the workers and paced.
	Split Split
	// Worker makes worker i (0 ≤ i < Threads); Execute calls it once per
	// worker, before opening any session.
	Worker func(i int) Worker
	// Prepare, when set, runs once every session is open and before the
	// phase starts, for preparation that may take long (YCSB's latest
	// distribution sums ζ over every key first): cancelling ctx must end
	// it, and Execute returns its error.
	Prepare func(ctx context.Context) error
}

// Series is one histogram series of a phase.
type Series struct {
	Name string
	// CountsOK says the series' values are successes, so that its count
	// is reported as Return=OK (READ does; READ-FAILED and Intended-READ
	// do not).
	CountsOK bool
	// Retryable says the series is an operation the retry policy may
	// repeat: its summaries carry a retry count, zero included.
	Retryable bool
}

// NoSeries stands for a series an Op or a Plan does not have.
const NoSeries = -1

// Op is one kind of operation of an experiment (a YCSB READ, a statement
// of a stress script, a chunk of a storage test): the series its outcomes
// are recorded in, by index in Plan.Series.
type Op struct {
	// Name names the operation in first-error notes and in the error of a
	// phase that an operation stopped.
	Name string
	// OK receives the latencies of successes, and counts the operation's
	// retries; Failed those of failures.
	OK, Failed int
	// IntendedOK and IntendedFailed receive open-loop latencies measured
	// from the intended start; NoSeries when the operation has none.
	IntendedOK, IntendedFailed int
}

// Split says how a phase's units of work are shared among its workers and,
// in open loop, when each is due.
type Split int

const (
	// PerWorker gives each worker its own share of Count, one unit (one
	// transaction) per step, with no shared counter on the hot path. In
	// open loop each worker's steps are Threads/Target apart, the workers
	// staggered over one period.
	PerWorker Split = iota
	// Sequence has the workers take the next Options.BatchSize units of
	// one shared sequence 0 … Count−1 at each step, so faster workers do
	// more. In open loop unit k is due at start + k/Target, the target
	// holding for the phase as a whole whatever the threads and the batch,
	// and a step goes out when its last unit is due.
	Sequence
)

// Worker is what one worker of an experiment does. The runner calls its
// methods from the worker's goroutine only, so it needs no lock; its state
// (session, random source, buffers) is its own.
type Worker interface {
	// Open opens the worker's session: before the phase, and again
	// whenever a Step.Call left it in doubt. A failure is retried with a
	// backoff while the phase goes on, each attempt bounded in time.
	Open(ctx context.Context) error
	// Step does one step (the units that s covers), sending its
	// operations through s.Call and recording them through s.Finish. The
	// runner has paced it and counts its units once it returns.
	Step(ctx context.Context, s *Step)
	// Close closes the session Open opened: at the end of the phase, timed
	// in Plan.Cleanup, or before opening a new one.
	Close() error
}

// check reports what makes a plan unusable.
func (p *Plan) check() error {
	if p.Worker == nil {
		return errors.New("runner: the plan has no Worker")
	}
	if p.Count < 0 {
		return fmt.Errorf("runner: count %d", p.Count)
	}
	if p.Cleanup != NoSeries && (p.Cleanup < 0 || p.Cleanup >= len(p.Series)) {
		return fmt.Errorf("runner: cleanup series %d of %d", p.Cleanup, len(p.Series))
	}
	return nil
}
