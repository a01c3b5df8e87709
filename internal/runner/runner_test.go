package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
)

func TestPerWorkerDoesEachWorkersShare(t *testing.T) {
	db := &fakeDB{}
	var ticks []Tick
	var tickMu sync.Mutex
	out, err := Execute(context.Background(), db.plan(1000, PerWorker), Options{Threads: 7,
		OnTick: func(tk Tick) { tickMu.Lock(); ticks = append(ticks, tk); tickMu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops != 1000 || summaryOf(out, "OP").Count != 1000 || len(db.done) != 1000 || out.EndedBy != EndedByCount {
		t.Fatalf("ops %d, OP %d, units %d, ended by %s; want 1000 by count", out.Ops, summaryOf(out, "OP").Count, len(db.done), out.EndedBy)
	}
	perWorker := map[int64]int64{}
	for key := range db.done {
		perWorker[key>>32]++
	}
	for i := range 7 {
		if perWorker[int64(i)] != quota(1000, 7, i) {
			t.Fatalf("worker %d did %d steps, want its quota %d", i, perWorker[int64(i)], quota(1000, 7, i))
		}
	}
	var tickOps int64
	for _, tk := range ticks {
		tickOps += tk.Ops
	}
	if tickOps != 1000 {
		t.Fatalf("ticks add up to %d ops, want 1000", tickOps)
	}
	if got := summaryOf(out, "CLEANUP").Count; got != 7 {
		t.Fatalf("CLEANUP %d, want one per thread", got)
	}
	if out.Failed != 0 || out.Throughput <= 0 || out.RunTime <= 0 {
		t.Fatalf("outcome %+v", out)
	}
}

// A Sequence hands every unit out once, in steps of BatchSize, and counts
// each unit of a step as done.
func TestSequenceTakesEveryUnitOnce(t *testing.T) {
	db := &fakeDB{}
	out, err := Execute(context.Background(), db.plan(1000, Sequence), Options{Threads: 4, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops != 1000 || summaryOf(out, "OP").Count != 1000 || len(db.done) != 1000 {
		t.Fatalf("ops %d, OP values %d, units %d; want 1000", out.Ops, summaryOf(out, "OP").Count, len(db.done))
	}
	for k, n := range db.done {
		if k < 0 || k >= 1000 || n != 1 {
			t.Fatalf("unit %d done %d times", k, n)
		}
	}
	// 1000 = 15×64 + 40: 16 calls.
	if db.calls.Load() != 16 {
		t.Fatalf("%d calls, want 16 steps of up to 64 units", db.calls.Load())
	}
}

// Did replaces the units a step counts as done.
func TestDidCountsWhatAStepDid(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(100, Sequence)
	plan.Worker = func(i int) Worker { return &fakeWorker{db: db, id: i, split: Sequence, did: 3} }
	out, err := Execute(context.Background(), plan, Options{Threads: 2, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops != 30 {
		t.Fatalf("ops %d, want 10 steps × 3 units done", out.Ops)
	}
}

// Prepare runs once every session is open and before the phase starts;
// when it fails, the sessions are closed and Execute returns its error.
func TestPrepare(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(10, PerWorker)
	var sessionsThen int64
	started := false
	plan.Prepare = func(context.Context) error { sessionsThen = db.sessions.Load(); return nil }
	if _, err := Execute(context.Background(), plan, Options{Threads: 3, OnStart: func(time.Time, time.Time) { started = sessionsThen == 3 }}); err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Fatalf("Prepare saw %d sessions open, or did not run before OnStart", sessionsThen)
	}

	closed := 0
	plan.Worker = func(i int) Worker { return &closeCounter{fakeWorker{db: db, id: i}, &closed} }
	boom := errors.New("boom")
	plan.Prepare = func(context.Context) error { return boom }
	out, err := Execute(context.Background(), plan, Options{Threads: 3})
	if !errors.Is(err, boom) || out != nil || closed != 3 || db.calls.Load() != 10 {
		t.Fatalf("Execute = %v, %v; %d sessions closed, %d calls; want Prepare's error, 3 closed, no call", out, err, closed, db.calls.Load()-10)
	}
}

type closeCounter struct {
	fakeWorker
	closed *int
}

func (c *closeCounter) Close() error { *c.closed++; return nil }

// A failed Open closes the sessions that did open.
func TestOpenFailureClosesTheOthers(t *testing.T) {
	db := &fakeDB{}
	plan := db.plan(10, PerWorker)
	var closed atomic.Int64
	plan.Worker = func(i int) Worker {
		if i == 2 {
			return &failOpen{}
		}
		return &closeCount{fakeWorker{db: db, id: i}, &closed}
	}
	out, err := Execute(context.Background(), plan, Options{Threads: 4})
	if err == nil || out != nil || closed.Load() != 3 {
		t.Fatalf("Execute = %v, %v; %d closed; want an error and the 3 open sessions closed", out, err, closed.Load())
	}
}

type closeCount struct {
	fakeWorker
	closed *atomic.Int64
}

func (c *closeCount) Close() error { c.closed.Add(1); return nil }

type failOpen struct{ fakeWorker }

func (*failOpen) Open(context.Context) error { return errRefused }

func TestFailuresAreCountedByStatusAndCode(t *testing.T) {
	conflict := driver.ClassifyNamed(errors.New("deadlock"), "40P01", "deadlock_detected", driver.ClassConflict)
	db := &fakeDB{fail: func(k int64) error {
		switch k & 0xffff % 4 {
		case 0:
			return driver.ErrNotFound
		case 1:
			return conflict
		}
		return nil
	}}
	var firstErrs atomic.Int64
	out, err := Execute(context.Background(), db.plan(2000, PerWorker), Options{Threads: 4,
		OnFirstError: func(string, string, error) { firstErrs.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed := summaryOf(out, "OP"), summaryOf(out, "OP-FAILED")
	if ok.Count != 1000 || failed.Count != 1000 || out.Ops != 2000 || out.Failed != 1000 {
		t.Fatalf("OP %d, OP-FAILED %d, ops %d, failed %d; want 1000, 1000, 2000, 1000", ok.Count, failed.Count, out.Ops, out.Failed)
	}
	if status(ok, "OK") != 1000 || status(ok, "NOT_FOUND") != 500 || status(ok, "ERROR") != 500 || status(ok, "ERROR(40P01 deadlock_detected)") != 500 {
		t.Fatalf("OP statuses %+v", ok.Statuses)
	}
	// The code first, so that parsers matching it still do, then its name.
	if out.Errors["ERROR(40P01 deadlock_detected)"] != 500 || out.Errors["NOT_FOUND"] != 500 || len(out.Errors) != 2 {
		t.Fatalf("errors by code %v", out.Errors)
	}
	if firstErrs.Load() != 2 {
		t.Fatalf("first-error reports %d, want one per code (2)", firstErrs.Load())
	}
	if out.Retries != 0 || ok.Retries == nil || *ok.Retries != 0 || failed.Retries != nil {
		t.Fatalf("retries %d without a retry policy, want 0 (YCSB's behaviour)", out.Retries)
	}
}

// failInTurn makes each unit's attempts fail with errs in turn, once
// each, and every later attempt succeed.
func failInTurn(errs ...error) func(int64) error {
	var mu sync.Mutex
	seen := map[int64]int{}
	return func(key int64) error {
		mu.Lock()
		defer mu.Unlock()
		n := seen[key]
		seen[key]++
		if n < len(errs) {
			return errs[n]
		}
		return nil
	}
}

// Call repeats retryable failures only, up to the policy's limit, and
// counts each retry by code.
func TestCallRetriesUnderThePolicy(t *testing.T) {
	conflict := driver.ClassifyNamed(errors.New("could not serialize access"), "40001", "serialization_failure", driver.ClassConflict)
	busy := driver.Classify(errors.New("database is locked"), "", driver.ClassBusy)
	duplicate := driver.Classify(errors.New("duplicate key"), "23505", driver.ClassOther)
	tests := []struct {
		name                    string
		max                     int
		errs                    []error
		wantFailed, wantRetries int64
		wantByCode              map[string]int64
		wantFailedCode          string
	}{
		{"failures within the limit succeed", 3, []error{conflict, busy, conflict}, 0, 300, map[string]int64{"40001 serialization_failure": 200, "busy": 100}, ""},
		{"failures beyond the limit fail", 1, []error{conflict, busy, conflict}, 100, 100, map[string]int64{"40001 serialization_failure": 100}, "ERROR(busy)"},
		{"other errors are never retried", 3, []error{duplicate}, 100, 0, nil, "ERROR(23505)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := &fakeDB{fail: failInTurn(tt.errs...)}
			policy := RetryPolicy{Max: tt.max, Backoff: time.Microsecond, MaxBackoff: 10 * time.Microsecond}
			out, err := Execute(context.Background(), db.plan(100, PerWorker), Options{Threads: 2, Retry: policy})
			if err != nil {
				t.Fatal(err)
			}
			op := summaryOf(out, "OP")
			if out.Failed != tt.wantFailed || out.Retries != tt.wantRetries || op.Retries == nil || *op.Retries != tt.wantRetries {
				t.Fatalf("failed %d, retries %d (OP %v); want %d, %d", out.Failed, out.Retries, op.Retries, tt.wantFailed, tt.wantRetries)
			}
			if len(op.RetriesByCode) != len(tt.wantByCode) {
				t.Fatalf("retries by code %v, want %v", op.RetriesByCode, tt.wantByCode)
			}
			for code, n := range tt.wantByCode {
				if op.RetriesByCode[code] != n {
					t.Fatalf("retries by code %v, want %v", op.RetriesByCode, tt.wantByCode)
				}
			}
			if tt.wantFailedCode != "" && out.Errors[tt.wantFailedCode] != tt.wantFailed {
				t.Fatalf("errors %v, want %d × %s", out.Errors, tt.wantFailed, tt.wantFailedCode)
			}
		})
	}
}

func TestRetryWaitsGrowAndStayBounded(t *testing.T) {
	p := RetryPolicy{Max: 10, Backoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond}
	rng := rand.New(rand.NewPCG(1, 2))
	for n, upper := range []time.Duration{1, 2, 4, 8, 8, 8} {
		upper *= time.Millisecond
		for range 100 {
			d := p.wait(n, rng)
			if d < upper/2 || d > upper {
				t.Fatalf("wait(%d) = %v, want within [%v, %v]", n, d, upper/2, upper)
			}
		}
	}
}

// In open loop a stall shows in the intended-start latency even though
// only the stalled operations' service time is long.
func TestOpenLoopIntendedLatencyShowsAStall(t *testing.T) {
	db := &fakeDB{stall: make(chan struct{})}
	time.AfterFunc(300*time.Millisecond, func() { close(db.stall) })
	out, err := Execute(context.Background(), db.plan(400, PerWorker), Options{Threads: 2, Target: 1000})
	if err != nil {
		t.Fatal(err)
	}
	intended, op := summaryOf(out, "Intended-OP"), summaryOf(out, "OP")
	if intended.Count != 400 || op.Count != 400 {
		t.Fatalf("Intended-OP %d, OP %d, want 400", intended.Count, op.Count)
	}
	// The first 300 ms of operations (~300 of 400) queued behind the stall:
	// their intended latency is large, their service time is not.
	if p := percentile(intended, 50); p < 50000 {
		t.Fatalf("intended p50 %d µs, want the stall (≥ 50 ms) to show", p)
	}
	if percentile(op, 50) > percentile(intended, 50)/2 {
		t.Fatalf("service p50 %d µs vs intended p50 %d µs: service time should not show the queueing", percentile(op, 50), percentile(intended, 50))
	}
	if out.RunTime < 350*time.Millisecond {
		t.Fatalf("400 ops at 1000/s took %s, want about 400 ms", out.RunTime)
	}
}

func percentile(s measure.Summary, q float64) int64 {
	for _, pc := range s.Percentiles {
		if pc.Percentile == q {
			return pc.Micros
		}
	}
	return -1
}

// In open loop a Sequence paces units, not steps: 400 units at 1000/s
// take about 400 ms however many workers hold a batch, and a unit's
// intended latency includes its wait in the batch for the units due
// after it.
func TestOpenLoopSequencePacesUnits(t *testing.T) {
	db := &fakeDB{}
	out, err := Execute(context.Background(), db.plan(400, Sequence), Options{Threads: 4, BatchSize: 100, Target: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// The last unit is due 399 ms after the start.
	if out.RunTime < 350*time.Millisecond || len(db.done) != 400 {
		t.Fatalf("400 units at 1000/s done in %s (%d units), want about 400 ms", out.RunTime, len(db.done))
	}
	intended := summaryOf(out, "Intended-OP")
	if intended.Count != 400 {
		t.Fatalf("Intended-OP has %d units, want 400", intended.Count)
	}
	// A batch's first unit is due 99 ms before its last, when it goes out;
	// pacing whole batches instead would send the first four at once.
	if intended.MaxMicros < 90000 {
		t.Errorf("Intended-OP max %d µs: the first unit of a batch waits about 99 ms for it", intended.MaxMicros)
	}
	if op := summaryOf(out, "OP"); op.Count != 400 || op.MaxMicros >= intended.MaxMicros {
		t.Errorf("OP: %d units, max %d µs; the service time should not include the wait for the batch (intended max %d µs)", op.Count, op.MaxMicros, intended.MaxMicros)
	}
}

func TestInterruptDrainsAndMarks(t *testing.T) {
	db := &fakeDB{delay: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	out, err := Execute(ctx, db.plan(0, PerWorker), Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || out.Ops == 0 || out.Failed != 0 {
		t.Fatalf("interrupted %v, ops %d, failed %d: want a clean drain", out.Interrupted, out.Ops, out.Failed)
	}
	if out.EndedBy != EndedByInterrupt {
		t.Errorf("ended by %s, want interrupt", out.EndedBy)
	}
}

func TestMaxExecutionTimeAndWarmup(t *testing.T) {
	db := &fakeDB{delay: 100 * time.Microsecond}
	var mu sync.Mutex
	var warmOps, keptOps int64
	out, err := Execute(context.Background(), db.plan(0, PerWorker), Options{Threads: 2, MaxExecutionTime: 700 * time.Millisecond,
		Warmup: 300 * time.Millisecond, Tick: 100 * time.Millisecond,
		OnTick: func(tk Tick) {
			mu.Lock()
			defer mu.Unlock()
			if tk.Warmup {
				warmOps += tk.Ops
			} else {
				keptOps += tk.Ops
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Interrupted || out.EndedBy != EndedByTime {
		t.Fatalf("interrupted %v, ended by %s: want a timed end", out.Interrupted, out.EndedBy)
	}
	if warmOps == 0 || keptOps != out.Ops {
		t.Fatalf("warm-up ops %d, kept ops %d, outcome ops %d", warmOps, keptOps, out.Ops)
	}
	if out.RunTime < 350*time.Millisecond || out.RunTime > 600*time.Millisecond {
		t.Fatalf("measured run time %s, want about 700 ms - 300 ms warm-up", out.RunTime)
	}
}

func TestFewerOperationsThanThreads(t *testing.T) {
	out, err := Execute(context.Background(), (&fakeDB{}).plan(3, PerWorker), Options{Threads: 8})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops != 3 {
		t.Fatalf("ops %d, want 3", out.Ops)
	}
	if out.EndedBy != EndedByCount {
		t.Errorf("ended by %s, want count", out.EndedBy)
	}
}

// A count done before the time runs out ends the phase by the count, and
// a time that runs out first ends it by the time.
func TestEndedByWhicheverBoundComesFirst(t *testing.T) {
	out, err := Execute(context.Background(), (&fakeDB{}).plan(50, PerWorker), Options{Threads: 2, MaxExecutionTime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops != 50 || out.EndedBy != EndedByCount {
		t.Errorf("ops %d, ended by %s; want 50 by count", out.Ops, out.EndedBy)
	}
	db := &fakeDB{delay: time.Millisecond}
	out, err = Execute(context.Background(), db.plan(1_000_000, PerWorker), Options{Threads: 2, MaxExecutionTime: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ops >= 1_000_000 || out.EndedBy != EndedByTime {
		t.Errorf("ops %d, ended by %s; want fewer than the count, by time", out.Ops, out.EndedBy)
	}
}

func TestQuotaSplitsOperations(t *testing.T) {
	var got []int64
	sum := int64(0)
	for i := range 7 {
		q := quota(100, 7, i)
		got = append(got, q)
		sum += q
	}
	sort.Slice(got, func(a, b int) bool { return got[a] < got[b] })
	if sum != 100 || got[0] != 14 || got[6] != 15 {
		t.Fatalf("quota split %v (sum %d)", got, sum)
	}
	// Fewer operations than threads: the idle workers do nothing, they do
	// not run unbounded.
	if quota(2, 4, 3) != 0 || quota(2, 4, 0) != 1 || quota(0, 4, 0) != -1 {
		t.Fatalf("quota(2, 4, ·) = %d, %d; quota(0, …) = %d", quota(2, 4, 0), quota(2, 4, 3), quota(0, 4, 0))
	}
}

func TestPlanChecks(t *testing.T) {
	db := &fakeDB{}
	for name, edit := range map[string]func(*Plan){
		"no worker":            func(p *Plan) { p.Worker = nil },
		"negative count":       func(p *Plan) { p.Count = -1 },
		"cleanup out of range": func(p *Plan) { p.Cleanup = len(p.Series) },
	} {
		plan := db.plan(10, PerWorker)
		edit(&plan)
		if out, err := Execute(context.Background(), plan, Options{Threads: 1}); err == nil || out != nil {
			t.Errorf("%s: Execute = %v, %v; want an error", name, out, err)
		}
	}
	if db.sessions.Load() != 0 {
		t.Errorf("%d sessions opened for plans that cannot run", db.sessions.Load())
	}
}
