package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
)

// TestOutageIsMeasuredAndWorkersReconnect takes the database away for
// 400 ms in the middle of a run: the run goes on, every worker reconnects,
// and the outage is reported once, no shorter than the downtime.
func TestOutageIsMeasuredAndWorkersReconnect(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	ctx := context.Background()
	db.delay = 200 * time.Microsecond
	const threads = 4
	var downAt, upAt time.Time
	var callsAtUp int64
	go func() {
		time.Sleep(300 * time.Millisecond)
		downAt = time.Now()
		db.down.Store(true)
		time.Sleep(400 * time.Millisecond)
		upAt = time.Now()
		callsAtUp = db.calls.Load()
		db.down.Store(false)
	}()
	before := db.sessions.Load()
	out, err := Execute(ctx, plan, Options{Threads: threads, MaxExecutionTime: 1200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Outages) != 1 {
		t.Fatalf("outages %+v, want one", out.Outages)
	}
	o := out.Outages[0]
	down := upAt.Sub(downAt)
	// It cannot be shorter than the downtime (less one operation in flight
	// when it began), and the workers retry within half a second.
	if o.Duration() < down-50*time.Millisecond || o.Duration() > down+1500*time.Millisecond || o.Ongoing {
		t.Fatalf("outage %v (%+v), the database was down %v", o.Duration(), o, down)
	}
	if o.Failed < threads || o.Failed != out.Errors["ERROR(57P01)"] {
		t.Fatalf("outage counted %d failed operations, errors %v; want one per worker at least", o.Failed, out.Errors)
	}
	if out.Reconnects < threads || db.sessions.Load()-before != threads+out.Reconnects {
		t.Fatalf("%d reconnects, %d sessions opened", out.Reconnects, db.sessions.Load()-before)
	}
	if after := db.calls.Load() - callsAtUp; after < 100 {
		t.Fatalf("%d calls after the outage: the run did not go on (%+v)", after, out)
	}
}

// TestOneLostConnectionIsNoOutage loses one connection while the others
// go on serving, as pg_terminate_backend does: the worker reconnects and
// no outage is reported.
func TestOneLostConnectionIsNoOutage(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(4000, PerWorker)
	ctx := context.Background()
	var calls atomic.Int64
	db.fail = func(int64) error {
		if calls.Add(1) == 500 { // not a last operation: the worker goes on
			return errShutdown
		}
		return nil
	}
	out, err := Execute(ctx, plan, Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Outages) != 0 || out.Reconnects != 1 || out.Failed != 1 || out.Ops != 4000 {
		t.Fatalf("outages %+v, reconnects %d, failed %d, ops %d; want none, 1, 1, 4000", out.Outages, out.Reconnects, out.Failed, out.Ops)
	}
}

// TestOpTimeoutCountsTimeoutsAndRecovers freezes the database: operations
// fail with the code "timeout" after OpTimeout, workers reconnect, and
// once it thaws the run goes on.
func TestOpTimeoutCountsTimeoutsAndRecovers(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	ctx := context.Background()
	db.stall = make(chan struct{})
	time.AfterFunc(600*time.Millisecond, func() { close(db.stall) })
	out, err := Execute(ctx, plan, Options{Threads: 3, OpTimeout: 150 * time.Millisecond, MaxExecutionTime: 1200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	timeouts := out.Errors["ERROR(timeout)"]
	if timeouts < 3 || timeouts != out.Failed {
		t.Fatalf("errors %v, failed %d: want only timeouts, at least one per worker", out.Errors, out.Failed)
	}
	// Every timeout but those that ended the phase (one per worker at
	// most) is followed by a reconnection.
	if out.Reconnects < timeouts-3 {
		t.Fatalf("%d reconnects after %d timeouts", out.Reconnects, timeouts)
	}
	// The freeze is one outage; on a busy machine a worker descheduled
	// past the timeout may add a short one later, which is a timeout too.
	if len(out.Outages) == 0 || out.Outages[0].Duration() < 400*time.Millisecond || out.Outages[0].Ongoing {
		t.Fatalf("outages %+v, want the freeze, ended", out.Outages)
	}
	if out.Ops <= out.Failed {
		t.Fatalf("no operation succeeded after the freeze: %d ops, %d failed", out.Ops, out.Failed)
	}
}

// TestOpTimeoutCountsEveryLateOperation runs operations that outlive a
// short timeout without looking at their context, as SQLite does inside one
// read: each is a timeout, though the timer may not have fired when they
// returned.
func TestOpTimeoutCountsEveryLateOperation(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(200, PerWorker)
	ctx := context.Background()
	const work = 300 * time.Microsecond
	db.fail = func(int64) error {
		for start := measure.Now(); time.Duration(measure.Now()-start) < work; {
		}
		return nil
	}
	out, err := Execute(ctx, plan, Options{Threads: 1, OpTimeout: 50 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if timeouts := out.Errors["ERROR(timeout)"]; timeouts != 200 || out.Failed != 200 {
		t.Fatalf("errors %v, failed %d of 200 operations that each took %v against a timeout of 50µs", out.Errors, out.Failed, work)
	}
}

// TestOutageOngoingAtTheEnd ends the phase while the database is down:
// the outage is reported as ongoing and the phase still ends on time.
func TestOutageOngoingAtTheEnd(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	ctx := context.Background()
	time.AfterFunc(100*time.Millisecond, func() { db.down.Store(true) })
	out, err := Execute(ctx, plan, Options{Threads: 2, MaxExecutionTime: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Outages) != 1 || !out.Outages[0].Ongoing {
		t.Fatalf("outages %+v, want one ongoing", out.Outages)
	}
	if driver.ClassOf(errShutdown) != driver.ClassConnLost {
		t.Fatal("test error is not a lost connection")
	}
}

// TestBadInputStopsThePhase fails an operation with an error only the user
// can fix (a missing privilege): the phase stops and Execute returns it,
// rather than counting a run full of the same failure.
func TestBadInputStopsThePhase(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	ctx := context.Background()
	denied := driver.Classify(badinput.New("user bench lacks UPDATE on usertable; grant it"), "42501", driver.ClassOther)
	db.fail = func(int64) error { return denied }
	out, err := Execute(ctx, plan, Options{Threads: 4, MaxExecutionTime: time.Minute})
	if out != nil || !badinput.Is(err) || !strings.Contains(err.Error(), "lacks UPDATE") {
		t.Fatalf("outcome %v, err %v: want the bad input error and no outcome", out, err)
	}
}

// A privilege revoked in the middle of a phase is the user's to fix and
// fatal: it stops the phase as a fault, with its outcome kept, rather than
// as bad input that loses what the phase did.
func TestRevokedPrivilegeStopsAsAFault(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	revoked := driver.Classify(badinput.New("permission denied for table usertable; grant it"), "42501", driver.ClassFatal)
	var calls atomic.Int64
	db.fail = func(int64) error {
		if calls.Add(1) > 200 {
			return revoked
		}
		return nil
	}
	out, err := Execute(context.Background(), plan, Options{Threads: 2, MaxExecutionTime: time.Minute})
	if err != nil || out == nil {
		t.Fatalf("outcome %v, err %v: want an outcome stopped by the fault", out, err)
	}
	if out.Stopped == nil || out.Stopped.Cause != StopFatal || out.Ops < 200 {
		t.Fatalf("stopped %+v after %d operations: want a fatal stop after the first 200", out.Stopped, out.Ops)
	}
}

// TestOnStartGivesTheTicksOrigin: OnStart gets the phase's start, once the
// sessions are open and before any operation, and the origin of its
// ticks, the wall clock's whole second before it; the first tick starts
// at the start and ends on the next second.
func TestOnStartGivesTheTicksOrigin(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(500, Sequence)
	var started, origin time.Time
	var callsAtStart int64
	var first *Tick
	_, err := Execute(context.Background(), plan, Options{Threads: 2, BatchSize: 10,
		OnStart: func(start, o time.Time) { started, origin, callsAtStart = start, o, db.calls.Load() },
		OnTick: func(tk Tick) {
			if first == nil {
				first = &tk
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if started.IsZero() || callsAtStart != 0 || db.sessions.Load() != 2 {
		t.Fatalf("OnStart at %v after %d operations; %d sessions", started, callsAtStart, db.sessions.Load())
	}
	if !origin.Equal(started.Truncate(time.Second)) {
		t.Fatalf("origin %v for a start at %v, want the whole second before it", origin, started)
	}
	if first == nil || !first.Start.Equal(started) {
		t.Fatalf("first tick %+v, OnStart %v", first, started)
	}
}

// TestTransientFailuresAreAnOutage answers every operation with a
// transient error (an Azure SQL failover: 40613) for 300 ms: that span is
// an outage, the sessions stay (their driver already let the connection
// go), and the retry policy carries operations across it.
//
// The failover is timed by the calls themselves, from the first call it
// fails, not by timers set before the phase: on a loaded machine a timer
// fires late and a phase starts late, which shortened the span or moved it
// out of the phase. So the outage is at least the 300 ms whatever the load:
// it begins no later than the first failed call and ends no earlier than
// the first call answered after the span.
func TestTransientFailuresAreAnOutage(t *testing.T) {
	const span = 300 * time.Millisecond
	db := &fakeDB{}
	plan := db.plan(0, PerWorker)
	ctx := context.Background()
	failover := driver.Classify(errors.New("database is not currently available"), "40613", driver.ClassTransient)
	var (
		mu     sync.Mutex
		calls  int
		began  time.Time // the first failed call
		failed int
	)
	fails := func() bool {
		mu.Lock()
		defer mu.Unlock()
		calls++
		// Some calls served first, so that the outage begins within a
		// serving phase.
		if calls <= 200 {
			return false
		}
		if began.IsZero() {
			began = time.Now()
		}
		if time.Since(began) < span {
			failed++
			return true
		}
		return false
	}
	db.fail = func(int64) error {
		if fails() {
			time.Sleep(time.Millisecond)
			return failover
		}
		return nil
	}
	before := db.sessions.Load()
	out, err := Execute(ctx, plan, Options{Threads: 2, MaxExecutionTime: time.Second,
		Retry: RetryPolicy{Max: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if failed == 0 || time.Since(began) < span {
		t.Fatalf("%d calls, %d failed: the phase ended before the failover did", calls, failed)
	}
	if len(out.Outages) != 1 || out.Outages[0].Duration() < span || out.Outages[0].Ongoing {
		t.Fatalf("outages %+v, want the 300 ms failover, ended", out.Outages)
	}
	if out.Reconnects != 0 || db.sessions.Load() != before+2 {
		t.Errorf("%d reconnects: a transient failure must not throw the session away", out.Reconnects)
	}
	if out.Retries == 0 || out.Errors["ERROR(40613)"] == 0 {
		t.Errorf("retries %d, errors %v: want retried 40613s", out.Retries, out.Errors)
	}
}

// A failure that began during an outage and ended after the service came
// back (a reconnection attempt sent into a cut network) is part of that
// outage: it must not open a second one that overlaps the first.
func TestLateFailureOfAnOutageOpensNoOther(t *testing.T) {
	var a availability
	ms := int64(time.Millisecond)
	a.fail(0, 10*ms, 1)
	a.fail(100*ms, 200*ms, 0) // an attempt sent into the cut …
	a.succeed(300*ms, 301*ms) // … the service comes back …
	a.fail(250*ms, 900*ms, 2) // … and an attempt sent before it gives up
	a.succeed(950*ms, 951*ms)
	got := a.finish(1000 * ms)
	if len(got) != 1 || got[0].Failed != 3 || got[0].Duration() != 301*time.Millisecond {
		t.Fatalf("outages %+v, want one of 301ms with 3 failed", got)
	}
	// A failure that begins after the recovery is a new outage.
	a.fail(1100*ms, 1200*ms, 1)
	if got := a.finish(1500 * ms); len(got) != 2 || !got[1].Ongoing {
		t.Fatalf("outages %+v, want a second one, ongoing", got)
	}
}
