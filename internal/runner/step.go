package runner

import (
	"context"
	"errors"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
)

// Step is what the runner hands a Worker's Step: the units the step
// covers, when it was meant to start, and the calls that guard, retry and
// record its operations. It belongs to one worker and is reused for each
// of its steps, so a step costs no allocation. Times are measure.Now
// nanoseconds.
type Step struct {
	w *worker
	// first and n are the units the step covers; intended is its
	// intended start (0 in closed loop); did is how many units it did.
	first, n, intended, did int64
}

// First is the number of the step's first unit: with Sequence, its place
// in the shared sequence 0 … Count−1; with PerWorker, how many steps the
// worker did before this one.
func (s *Step) First() int64 { return s.first }

// N is how many units the step covers: 1 with PerWorker; with Sequence up
// to Options.BatchSize, fewer at the end of the sequence.
func (s *Step) N() int64 { return s.n }

// Intended is when the step was due in open loop, from which its
// latency as its caller would see it runs; 0 in closed loop. With
// Sequence it is when the step's last unit was due (see Due).
func (s *Step) Intended() int64 { return s.intended }

// Due is when unit First()+i was due in open loop (with Sequence, unit k
// is due at start + k/Target), 0 in closed loop: a unit that waited in
// its step for the later ones shows that wait in its intended latency.
func (s *Step) Due(i int64) int64 {
	if s.intended == 0 {
		return 0
	}
	return s.w.due(s.first + i)
}

// Did says the step did n units rather than N (a chunk cut short where
// its table ended); the phase counts them in its Ops and throughput.
func (s *Step) Did(n int64) { s.did = n }

// Recorder is the worker's own recorder, for series other than an Op's
// (YCSB's VERIFY); it takes no shared lock.
func (s *Step) Recorder() *measure.Recorder { return s.w.rec }

// Call sends one operation through call, on the worker's session: under
// the operation timeout, repeated under the retry policy while it fails
// with a retryable error (each repeat counted in op.OK's retries, by
// code), and with the session marked broken when a failure leaves its
// connection in doubt, so that the worker opens a new one before its next
// step. Once the session is broken, later calls in the same step fail
// without being sent. call must not keep the function it is given; as
// Call keeps neither, a closure passed here stays on the stack.
func (s *Step) Call(ctx context.Context, op *Op, call func(context.Context) error) error {
	w := s.w
	policy := w.phase.opts.Retry
	for n := 0; ; n++ {
		err := errSessionLost
		if !w.broken {
			err = w.guarded(ctx, call)
		}
		if err == nil || n >= policy.Max || !driver.IsRetryable(err) || !w.backoff(ctx, n) {
			return err
		}
		w.rec.Retry(op.OK, retryCode(err))
	}
}

// Finish records one operation's outcome: its service time from start to
// end, what it says of the database's availability, a failure by status
// and code, and in open loop (intended ≠ 0) its latency from the intended
// start as well.
func (s *Step) Finish(op *Op, err error, start, end, intended int64) {
	s.FinishN(op, err, start, end, 1)
	if intended != 0 {
		s.RecordIntended(op, err, intended, end)
	}
}

// FinishN records the outcome of an operation that carried n units
// acknowledged together (the rows of a load batch, which commit as one):
// n values of its service time, and n failures when it failed.
func (s *Step) FinishN(op *Op, err error, start, end, n int64) {
	s.w.record(op.OK, op.Failed, op.Name, err, start, end, n)
	s.w.available(err, start, end, n)
}

// RecordIntended records one unit's latency from its intended start to
// end in op's Intended- series, when it has them.
func (s *Step) RecordIntended(op *Op, err error, intended, end int64) {
	id := op.IntendedOK
	if err != nil {
		id = op.IntendedFailed
	}
	if id != NoSeries {
		s.w.rec.Record(id, (end-intended)/1000)
	}
}

// retryCode names what caused a retry: the database's error code and its
// name (driver.Label: "40001 serialization_failure"), as
// Return=ERROR(CODE NAME) names a failure, or the error's class ("busy")
// when the driver gave no code.
func retryCode(err error) string {
	if c := driver.Label(err); c != "" {
		return c
	}
	return driver.ClassOf(err).String()
}

// backoff waits before retry n; it reports false when the phase is
// stopping, so the failure stands.
func (w *worker) backoff(ctx context.Context, n int) bool {
	if w.phase.stop.Load() {
		return false
	}
	return w.sleep(ctx, w.phase.opts.Retry.wait(n, w.rng))
}

// available tells the phase's availability what an operation of n units
// found between start and end.
func (w *worker) available(err error, start, end, n int64) {
	if err == nil {
		w.phase.avail.succeed(start, end)
	} else if unavailable(err) {
		w.phase.avail.fail(start, end, n)
	}
}

// operation statuses, as YCSB names them; the JSON result and the text
// output of every experiment use them.
const (
	statusNotFound = "NOT_FOUND"
	statusError    = "ERROR"
)

// record adds n values of one latency to the op's series (or its failed
// series) and counts a failure by status and code. A failure the user
// must fix (badinput) stops the phase, and so does one that more attempts
// cannot fix (driver.IsFatal) under OnErrorStop.
func (w *worker) record(ok, failed int, name string, err error, start, end int64, n int64) {
	micros := (end - start) / 1000
	if err == nil {
		w.rec.RecordN(ok, micros, n)
		return
	}
	w.rec.RecordN(failed, micros, n)
	status, code := classify(err)
	for range n {
		w.rec.Status(ok, status)
		// YCSB's Return=ERROR line stays the total; a line per code,
		// Return=ERROR(41302), says which failures made it up.
		if code != status {
			w.rec.Status(ok, code)
		}
		w.rec.Error(code)
	}
	w.phase.noteError(name, code, err)
	// A fatal failure that is also the user's to fix (a privilege revoked
	// mid-run) stops the phase as a fault, keeping its summary: the phase
	// ran, and what it did before counts.
	switch {
	case driver.IsFatal(err):
		w.phase.fatal(n, err)
		if w.phase.opts.OnError == OnErrorStop {
			w.phase.halt(Stop{Cause: StopFatal, Op: name, Err: err, At: time.Now()})
		}
	case badinput.Is(err):
		w.phase.abort(name, err)
	}
}

// classify names a failure's status (YCSB's) and its code for counting:
// ERROR(CODE NAME) with the database's code first, so that a parser
// matching "ERROR(53100" still matches, and its name in the database's own
// words after it ("ERROR(53100 disk_full)"); ERROR(CODE) when the driver
// knows no name.
func classify(err error) (status, code string) {
	if errors.Is(err, driver.ErrNotFound) {
		return statusNotFound, statusNotFound
	}
	if c := driver.Label(err); c != "" {
		return statusError, statusError + "(" + c + ")"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return statusError, statusError + "(canceled)"
	}
	return statusError, statusError + "(" + driver.ClassOf(err).String() + ")"
}
