package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var errDiskFull = driver.ClassifyNamed(errors.New("database or disk is full"), "13", "SQLITE_FULL", driver.ClassFatal)

// failFrom fails every unit from k on with err.
func failFrom(k int64, err error) func(int64) error {
	return func(unit int64) error {
		if unit >= k {
			return err
		}
		return nil
	}
}

// A fatal failure stops a load at once: the batch that met it is the last
// one sent, the rows before it are counted as loaded, and the outcome
// says why it stopped.
func TestFatalFailureStopsThePhase(t *testing.T) {
	db := &fakeDB{fail: failFrom(300, errDiskFull)}
	out, err := Execute(context.Background(), db.plan(1000, Sequence), Options{Threads: 1, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if db.calls.Load() != 4 {
		t.Fatalf("%d batches sent, want 4: three that succeeded and the one that met the full disk", db.calls.Load())
	}
	if out.Ops != 400 || out.Failed != 100 || summaryOf(out, "OP").Count != 300 {
		t.Fatalf("ops %d, failed %d, OP %d; want 400, 100, 300", out.Ops, out.Failed, summaryOf(out, "OP").Count)
	}
	if out.Errors["ERROR(13 SQLITE_FULL)"] != 100 {
		t.Fatalf("errors %v, want 100 × ERROR(13 SQLITE_FULL)", out.Errors)
	}
	s := out.Stopped
	if s == nil || s.Cause != StopFatal || s.Op != "OP" || !errors.Is(s.Err, errDiskFull) || s.At.IsZero() || out.EndedBy != EndedByError || out.Interrupted {
		t.Fatalf("stopped %+v, ended by %s, interrupted %v; want a fatal stop by OP", s, out.EndedBy, out.Interrupted)
	}
	if out.EndedBy.String() != "error" || s.Cause.String() != "fatal" {
		t.Fatalf("names %q, %q", out.EndedBy, s.Cause)
	}
}

// With several workers, each sends at most the batch it had already
// claimed when the first fatal failure came: nothing after that.
func TestFatalFailureStopsEveryWorker(t *testing.T) {
	const threads = 4
	db := &fakeDB{fail: failFrom(300, errDiskFull)}
	out, err := Execute(context.Background(), db.plan(100000, Sequence), Options{Threads: threads, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if calls := db.calls.Load(); calls > 3+threads {
		t.Fatalf("%d batches sent: want the 3 that succeeded and at most one failing batch per worker", calls)
	}
	if out.Stopped == nil || out.Stopped.Cause != StopFatal || out.Ops-out.Failed != 300 {
		t.Fatalf("stopped %+v, ops %d, failed %d", out.Stopped, out.Ops, out.Failed)
	}
}

// With OnErrorContinue, fatal failures are counted and the phase goes on
// to its count.
func TestOnErrorContinueGoesOn(t *testing.T) {
	db := &fakeDB{fail: failFrom(300, errDiskFull)}
	out, err := Execute(context.Background(), db.plan(1000, Sequence), Options{Threads: 2, BatchSize: 100, OnError: OnErrorContinue})
	if err != nil {
		t.Fatal(err)
	}
	if out.Fatal != 700 || !errors.Is(out.FirstFatal, errDiskFull) {
		t.Fatalf("fatal %d (%v), want 700 units that failed with the full disk", out.Fatal, out.FirstFatal)
	}
	if db.calls.Load() != 10 || out.Ops != 1000 || out.Failed != 700 || out.Stopped != nil || out.EndedBy != EndedByCount {
		t.Fatalf("calls %d, ops %d, failed %d, stopped %+v, ended by %s; want every batch sent, 700 failed, ended by count",
			db.calls.Load(), out.Ops, out.Failed, out.Stopped, out.EndedBy)
	}
}

// A fatal failure is never retried, whatever the retry policy.
func TestFatalFailureIsNotRetried(t *testing.T) {
	db := &fakeDB{fail: failFrom(0, errDiskFull)}
	out, err := Execute(context.Background(), db.plan(10, PerWorker), Options{Threads: 1, Retry: RetryPolicy{Max: 5, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	if db.calls.Load() != 1 || out.Retries != 0 || out.Stopped == nil {
		t.Fatalf("calls %d, retries %d, stopped %+v; want one call, no retry, a stop", db.calls.Load(), out.Retries, out.Stopped)
	}
}

func TestParseOnError(t *testing.T) {
	for _, o := range []OnError{OnErrorStop, OnErrorContinue} {
		if got, err := ParseOnError(o.String()); err != nil || got != o {
			t.Errorf("ParseOnError(%q) = %v, %v", o, got, err)
		}
	}
	for _, bad := range []string{"", "Stop", "ignore", "retry"} {
		if _, err := ParseOnError(bad); err == nil {
			t.Errorf("ParseOnError(%q) accepted", bad)
		}
	}
}

// goDown makes the fake database go away for good at unit k: the call
// that reaches it loses its connection, and no session opens again.
func goDown(db *fakeDB, k int64) func(int64) error {
	return func(unit int64) error {
		if unit >= k {
			db.down.Store(true)
			return errShutdown
		}
		return nil
	}
}

// A load (no MaxExecutionTime) whose database does not come back waits
// ReconnectTimeout from the start of the outage, then stops and says so.
func TestUnreachableDatabaseStopsAPhaseWithoutDuration(t *testing.T) {
	db := &fakeDB{}
	db.fail = goDown(db, 500)
	const timeout = 200 * time.Millisecond
	out, err := Execute(context.Background(), db.plan(100000, Sequence), Options{Threads: 3, BatchSize: 100, ReconnectTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Stopped
	if s == nil || s.Cause != StopUnreachable || out.EndedBy != EndedByUnreachable || s.Waited != timeout {
		t.Fatalf("stopped %+v, ended by %s; want unreachable after %v", s, out.EndedBy, timeout)
	}
	if !errors.Is(s.Err, errRefused) {
		t.Fatalf("stop error %v, want the last failed reconnection (%v)", s.Err, errRefused)
	}
	if len(out.Outages) != 1 || !out.Outages[0].Ongoing || !out.Outages[0].Start.Equal(s.Since) {
		t.Fatalf("outages %+v, stopped since %v: want one ongoing outage that began then", out.Outages, s.Since)
	}
	if s.At.Sub(s.Since) < timeout {
		t.Fatalf("stopped %v after the outage began, before the %v timeout", s.At.Sub(s.Since), timeout)
	}
	if out.Ops-out.Failed != 500 {
		t.Fatalf("ops %d, failed %d: want the 500 units before the outage done", out.Ops, out.Failed)
	}
}

// A phase with a MaxExecutionTime keeps trying until its end, whatever
// ReconnectTimeout says.
func TestUnreachableDatabaseWithDurationWaitsToTheEnd(t *testing.T) {
	db := &fakeDB{}
	db.fail = goDown(db, 50)
	out, err := Execute(context.Background(), db.plan(0, PerWorker), Options{Threads: 2, MaxExecutionTime: 400 * time.Millisecond, ReconnectTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != nil || out.EndedBy != EndedByTime || len(out.Outages) != 1 || !out.Outages[0].Ongoing {
		t.Fatalf("stopped %+v, ended by %s, outages %+v; want the phase to end on its time, the outage ongoing", out.Stopped, out.EndedBy, out.Outages)
	}
}

// Without ReconnectTimeout a phase waits as long as it takes: only an
// interruption ends it.
func TestNoReconnectTimeoutWaits(t *testing.T) {
	db := &fakeDB{}
	db.fail = goDown(db, 50)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, err := Execute(ctx, db.plan(100000, Sequence), Options{Threads: 2, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != nil || out.EndedBy != EndedByInterrupt {
		t.Fatalf("stopped %+v, ended by %s; want an interruption", out.Stopped, out.EndedBy)
	}
}

// A server that answers a reconnection with a failure more attempts
// cannot fix (the user may no longer connect) stops the phase at once,
// under that cause, without waiting for the reconnect timeout.
func TestFatalReconnectionStopsThePhase(t *testing.T) {
	revoked := driver.ClassifyNamed(errors.New("permission denied for database bench"), "42501", "insufficient_privilege", driver.ClassFatal)
	db := &fakeDB{openErr: revoked}
	db.fail = goDown(db, 50)
	out, err := Execute(context.Background(), db.plan(100000, Sequence), Options{Threads: 2, BatchSize: 10, ReconnectTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Stopped; s == nil || s.Cause != StopFatal || s.Op != "RECONNECT" || !errors.Is(s.Err, revoked) || out.EndedBy != EndedByError {
		t.Fatalf("stopped %+v, ended by %s; want a fatal stop at reconnection", out.Stopped, out.EndedBy)
	}
}
