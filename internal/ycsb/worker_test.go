package ycsb

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
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// memDB is an in-memory driver.DB with injectable latency and errors, so
// the runner's bookkeeping can be checked exactly.
type memDB struct {
	mu      sync.Mutex
	rows    map[string][][]byte
	delay   time.Duration
	failKey func(key string) error
	stall   chan struct{} // when set, operations wait for it to close
	calls   atomic.Int64
	// down makes every operation fail with a lost connection and every
	// new session fail to open, as a stopped server does.
	down     atomic.Bool
	sessions atomic.Int64
}

func newMemDB() *memDB { return &memDB{rows: map[string][][]byte{}} }

func (m *memDB) Info() driver.Info { return driver.Info{Driver: "mem"} }
func (m *memDB) Inspect(context.Context, driver.Table) (driver.TableState, error) {
	return driver.TableState{Exists: true, CreatedByDbprobe: true}, nil
}
func (m *memDB) CreateTable(context.Context, driver.Table) error { return nil }
func (m *memDB) DropTable(context.Context, driver.Table) error   { return nil }
func (m *memDB) Close() error                                    { return nil }
func (m *memDB) Session(context.Context, driver.Table) (driver.Session, error) {
	if m.down.Load() {
		return nil, errRefused
	}
	m.sessions.Add(1)
	return &memSession{m}, nil
}

var (
	errRefused  = driver.Classify(errors.New("connection refused"), "connection-lost", driver.ClassConnLost)
	errShutdown = driver.Classify(errors.New("terminating connection due to administrator command"), "57P01", driver.ClassConnLost)
)

type memSession struct{ m *memDB }

func (s *memSession) enter(ctx context.Context, key []byte) error {
	s.m.calls.Add(1)
	if s.m.down.Load() {
		return errShutdown
	}
	if s.m.stall != nil {
		select {
		case <-s.m.stall:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if s.m.delay > 0 {
		time.Sleep(s.m.delay)
	}
	if s.m.failKey != nil {
		return s.m.failKey(string(key))
	}
	return nil
}

func (s *memSession) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := s.enter(ctx, key); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	row, ok := s.m.rows[string(key)]
	if !ok {
		return driver.ErrNotFound
	}
	if fields == nil {
		for i := range row {
			values[i] = append(values[i][:0], row[i]...)
		}
		return nil
	}
	for i, f := range fields {
		values[i] = append(values[i][:0], row[f]...)
	}
	return nil
}
func (s *memSession) Scan(ctx context.Context, start []byte, n int, fields []int, visit func([]byte, [][]byte)) (int, error) {
	return 0, s.enter(ctx, start)
}
func (s *memSession) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := s.enter(ctx, key); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	row, ok := s.m.rows[string(key)]
	if !ok {
		return driver.ErrNotFound
	}
	for i, f := range fields {
		row[f] = append([]byte(nil), values[i]...)
	}
	return nil
}
func (s *memSession) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if err := s.enter(ctx, key); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	row := make([][]byte, len(values))
	for i, v := range values {
		row[i] = append([]byte(nil), v...)
	}
	s.m.rows[string(key)] = row
	return nil
}

// InsertBatch is one call to the database, as a batch is one transaction:
// failures and delays are decided by its first key.
func (s *memSession) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := s.enter(ctx, keys[0]); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for i, key := range keys {
		row := make([][]byte, len(values[i]))
		for f, v := range values[i] {
			row[f] = append([]byte(nil), v...)
		}
		s.m.rows[string(key)] = row
	}
	return nil
}
func (s *memSession) Delete(ctx context.Context, key []byte) error { return s.enter(ctx, key) }
func (s *memSession) Close() error                                 { return nil }

func testSpec(records, ops int64) *workload.Spec {
	return &workload.Spec{
		RecordCount: records, OperationCount: ops, InsertCount: records,
		FieldCount: 10, FieldLength: 100, MinFieldLength: 1, FieldNamePrefix: "field",
		ReadAllFields: true, Proportions: [5]float64{0.5, 0.5, 0, 0, 0},
		RequestDistribution: workload.Zipfian, HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
		ExponentialPercentile: 95, ExponentialFrac: 0.8571428571, ZeroPadding: 1,
		MinScanLength: 1, MaxScanLength: 100, Table: "usertable",
	}
}

var testTable = driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}

func summaryOf(out *runner.Outcome, name string) measure.Summary {
	for _, s := range out.Series {
		if s.Name == name {
			return s
		}
	}
	return measure.Summary{}
}

func status(s measure.Summary, name string) int64 {
	for _, st := range s.Statuses {
		if st.Status == name {
			return st.Count
		}
	}
	return 0
}

func TestLoadThenRunCountsEveryOperation(t *testing.T) {
	db := newMemDB()
	spec := testSpec(1000, 5000)
	spec.DataIntegrity = true
	ctx := context.Background()
	var ticks []runner.Tick
	var tickMu sync.Mutex
	load, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 4, BatchSize: 64, Seed: 1,
		OnTick: func(tk runner.Tick) { tickMu.Lock(); ticks = append(ticks, tk); tickMu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if load.Ops != 1000 || len(db.rows) != 1000 || summaryOf(load, "INSERT").Count != 1000 {
		t.Fatalf("load: ops %d rows %d INSERT %d, want 1000", load.Ops, len(db.rows), summaryOf(load, "INSERT").Count)
	}
	var tickOps int64
	for _, tk := range ticks {
		tickOps += tk.Ops
	}
	if tickOps != 1000 {
		t.Fatalf("ticks add up to %d ops, want 1000", tickOps)
	}
	if got := summaryOf(load, "CLEANUP").Count; got != 4 {
		t.Fatalf("CLEANUP %d, want one per thread", got)
	}

	run, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 7, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	reads, updates := summaryOf(run, "READ").Count, summaryOf(run, "UPDATE").Count
	if run.Ops != 5000 || reads+updates != 5000 {
		t.Fatalf("run: ops %d, reads %d + updates %d, want 5000", run.Ops, reads, updates)
	}
	if reads < 2300 || reads > 2700 {
		t.Fatalf("reads %d of 5000 with readproportion 0.5", reads)
	}
	if v := summaryOf(run, "VERIFY"); v.Count != reads || status(v, "UNEXPECTED_STATE") != 0 || status(v, "OK") != reads {
		t.Fatalf("VERIFY %+v, want %d verified reads", v, reads)
	}
	if run.Failed != 0 || run.Throughput <= 0 || run.RunTime <= 0 {
		t.Fatalf("run outcome %+v", run)
	}
}

// A check that fails counts as UNEXPECTED_STATE and not also as OK, as in
// YCSB: each VERIFY has one Return.
func TestVerifyCountsEachCheckOnce(t *testing.T) {
	db := newMemDB()
	spec := testSpec(200, 1000)
	spec.DataIntegrity = true
	spec.Proportions = [5]float64{1, 0, 0, 0, 0}
	ctx := context.Background()
	if _, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range db.rows {
		if n%2 == 0 {
			row[0] = []byte("tampered")
		}
		n++
	}
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := summaryOf(out, "VERIFY")
	ok, bad := status(v, "OK"), status(v, "UNEXPECTED_STATE")
	if v.Count != 1000 || ok+bad != v.Count || bad == 0 || ok == 0 {
		t.Fatalf("VERIFY: %d checks, Return=OK %d, UNEXPECTED_STATE %d; want them to add up to 1000, some of each", v.Count, ok, bad)
	}
}
func TestFailuresAreCountedByStatusAndCode(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100, 2000)
	ctx := context.Background()
	if _, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
	// Delete some rows: reading them is NOT_FOUND. Fail every other op with a coded error.
	n := 0
	for k := range db.rows {
		if n%4 == 0 {
			delete(db.rows, k)
		}
		n++
	}
	var calls atomic.Int64
	conflict := driver.Classify(errors.New("deadlock"), "40P01", driver.ClassConflict)
	db.failKey = func(string) error {
		if calls.Add(1)%2 == 0 {
			return conflict
		}
		return nil
	}
	var firstErrs atomic.Int64
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 3,
		OnFirstError: func(string, string, error) { firstErrs.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	read, readFailed := summaryOf(out, "READ"), summaryOf(out, "READ-FAILED")
	update, updateFailed := summaryOf(out, "UPDATE"), summaryOf(out, "UPDATE-FAILED")
	if read.Count+readFailed.Count+update.Count+updateFailed.Count != 2000 || out.Ops != 2000 {
		t.Fatalf("ok+failed = %d, ops %d, want 2000", read.Count+readFailed.Count+update.Count+updateFailed.Count, out.Ops)
	}
	if status(read, "OK") != read.Count || status(read, "NOT_FOUND") == 0 || status(read, "ERROR") == 0 {
		t.Fatalf("READ statuses %+v", read.Statuses)
	}
	if status(read, "NOT_FOUND")+status(read, "ERROR") != readFailed.Count {
		t.Fatalf("READ failures by status %+v do not add up to READ-FAILED %d", read.Statuses, readFailed.Count)
	}
	if out.Errors["ERROR(40P01)"] == 0 || out.Errors["NOT_FOUND"] == 0 || out.Failed != readFailed.Count+updateFailed.Count {
		t.Fatalf("errors by code %v, failed %d", out.Errors, out.Failed)
	}
	if firstErrs.Load() != 2 {
		t.Fatalf("first-error reports %d, want one per code (2)", firstErrs.Load())
	}
	if status(read, "ERROR(40P01)") != status(read, "ERROR") || status(update, "ERROR(40P01)") != status(update, "ERROR") {
		t.Fatalf("per-code lines READ %+v UPDATE %+v: every ERROR here is 40P01", read.Statuses, update.Statuses)
	}
	if out.Retries != 0 || read.Retries == nil || *read.Retries != 0 || readFailed.Retries != nil {
		t.Fatalf("retries %d without a retry policy, want 0 (YCSB's behaviour)", out.Retries)
	}
}

// failTimes makes each key's first n attempts fail with err.
func failTimes(n int, err error) func(string) error {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(key string) error {
		mu.Lock()
		defer mu.Unlock()
		seen[key]++
		if seen[key] <= n {
			return err
		}
		return nil
	}
}
func TestRetriesRepeatRetryableFailuresOnly(t *testing.T) {
	spec := testSpec(50, 400)
	spec.RequestDistribution = workload.Uniform
	conflict := driver.Classify(errors.New("could not serialize access"), "40001", driver.ClassConflict)
	duplicate := driver.Classify(errors.New("duplicate key"), "23505", driver.ClassOther)
	policy := runner.RetryPolicy{Max: 3, Backoff: time.Microsecond, MaxBackoff: 10 * time.Microsecond}
	tests := []struct {
		name        string
		fail        error
		failures    int
		wantRetries bool
		wantFailed  bool
	}{
		{"conflicts within the limit succeed", conflict, 3, true, false},
		{"conflicts beyond the limit fail", conflict, 10, true, true},
		{"other errors are never retried", duplicate, 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newMemDB()
			ctx := context.Background()
			load, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 5})
			if err != nil || load.Failed != 0 {
				t.Fatalf("load: %v, %d failed", err, load.Failed)
			}
			db.failKey = failTimes(tt.failures, tt.fail)
			out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 2, Seed: 3, Retry: policy})
			if err != nil {
				t.Fatal(err)
			}
			if (out.Retries > 0) != tt.wantRetries || (out.Failed > 0) != tt.wantFailed {
				t.Fatalf("retries %d, failed %d; want retries %v, failures %v", out.Retries, out.Failed, tt.wantRetries, tt.wantFailed)
			}
			var perSeries int64
			for _, s := range out.Series {
				if s.Retries != nil {
					perSeries += *s.Retries
				}
			}
			if perSeries != out.Retries {
				t.Fatalf("series retries add up to %d, outcome says %d", perSeries, out.Retries)
			}
			if tt.wantFailed && tt.wantRetries {
				// Each key fails its first 10 attempts: an operation that
				// failed made 4 attempts, so 3 retries; at most 50×10 failures.
				if out.Retries < 3*out.Failed || out.Retries+out.Failed > 50*10 {
					t.Fatalf("retries %d, failed %d: each failed operation repeats 3 times first", out.Retries, out.Failed)
				}
			}
			if !tt.wantFailed {
				// Each key fails 3 times once; with at most 3 retries every
				// operation ends well, after 3 retries per key in all.
				if out.Retries != int64(len(db.rows))*3 {
					t.Fatalf("retries %d, want 3 for each of %d keys", out.Retries, len(db.rows))
				}
			}
		})
	}
}

// failInTurn makes each key's attempts fail with errs in turn, once each,
// and every later attempt succeed.
func failInTurn(errs ...error) func(string) error {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(key string) error {
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

// Retries are counted per error code as well as in total: each key's
// first operation meets a serialization failure, then a deadlock, then a
// busy lock without a code, and succeeds on its fourth attempt.
func TestRetriesAreCountedPerCode(t *testing.T) {
	spec := testSpec(50, 400)
	spec.RequestDistribution = workload.Uniform
	db := newMemDB()
	ctx := context.Background()
	if load, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 5}); err != nil || load.Failed != 0 {
		t.Fatalf("load: %v", err)
	}
	db.failKey = failInTurn(
		driver.Classify(errors.New("could not serialize access"), "40001", driver.ClassConflict),
		driver.Classify(errors.New("deadlock detected"), "40P01", driver.ClassConflict),
		driver.Classify(errors.New("database is locked"), "", driver.ClassBusy),
	)
	policy := runner.RetryPolicy{Max: 3, Backoff: time.Microsecond, MaxBackoff: 10 * time.Microsecond}
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 2, Seed: 3, Retry: policy})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 {
		t.Fatalf("%d failed: three retries cover the three failures of each key", out.Failed)
	}
	total := map[string]int64{}
	for _, s := range out.Series {
		var sum int64
		for code, n := range s.RetriesByCode {
			total[code] += n
			sum += n
		}
		if s.Retries == nil && s.RetriesByCode != nil || s.Retries != nil && *s.Retries != sum {
			t.Errorf("[%s] retries %v, by code %v: the codes must add up to the total", s.Name, s.Retries, s.RetriesByCode)
		}
	}
	keys := int64(len(db.rows))
	want := map[string]int64{"40001": keys, "40P01": keys, "busy": keys}
	if len(total) != len(want) || total["40001"] != keys || total["40P01"] != keys || total["busy"] != keys || out.Retries != 3*keys {
		t.Fatalf("retries by code %v (total %d), want %v: one of each code for each of %d keys", total, out.Retries, want, keys)
	}
	read, update := summaryOf(out, "READ"), summaryOf(out, "UPDATE")
	if len(read.RetriesByCode) != 3 || len(update.RetriesByCode) != 3 {
		t.Fatalf("READ retries %v, UPDATE retries %v: both operations met every code", read.RetriesByCode, update.RetriesByCode)
	}
}
func TestLoadRetriesAWholeBatch(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100, 0)
	busy := driver.Classify(errors.New("database is locked"), "SQLITE_BUSY", driver.ClassBusy)
	db.failKey = failTimes(1, busy)
	out, err := Execute(context.Background(), db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 1, BatchSize: 10,
		Retry: runner.RetryPolicy{Max: 1, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	// The fake fails a batch at its first key's first attempt; each of the
	// 10 batches is repeated once, and every row arrives.
	if out.Failed != 0 || len(db.rows) != 100 || out.Retries != 10 {
		t.Fatalf("failed %d, rows %d, retries %d; want 0, 100, 10", out.Failed, len(db.rows), out.Retries)
	}
}

// In open loop a stall shows in the intended-start latency even though
// only the stalled operations' service time is long.
func TestOpenLoopIntendedLatencyShowsAStall(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100, 400)
	ctx := context.Background()
	if _, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 1, BatchSize: 100}); err != nil {
		t.Fatal(err)
	}
	db.stall = make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(db.stall) })
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 2, Target: 1000})
	if err != nil {
		t.Fatal(err)
	}
	intended := summaryOf(out, "Intended-READ")
	read := summaryOf(out, "READ")
	if intended.Count != read.Count || intended.Count == 0 {
		t.Fatalf("Intended-READ %d, READ %d", intended.Count, read.Count)
	}
	p := func(s measure.Summary, q float64) int64 {
		for _, pc := range s.Percentiles {
			if pc.Percentile == q {
				return pc.Micros
			}
		}
		return -1
	}
	// The first 300 ms of operations (~300 of 400) queued behind the stall:
	// their intended latency is large, their service time is not.
	if p(intended, 50) < 50000 {
		t.Fatalf("intended p50 %d µs, want the stall (≥ 50 ms) to show", p(intended, 50))
	}
	if p(read, 50) > p(intended, 50)/2 {
		t.Fatalf("service p50 %d µs vs intended p50 %d µs: service time should not show the queueing", p(read, 50), p(intended, 50))
	}
	if out.RunTime < 350*time.Millisecond {
		t.Fatalf("400 ops at 1000/s took %s, want about 400 ms", out.RunTime)
	}
}

// In open loop the load paces rows, not batches: 400 rows at 1000/s take
// about 400 ms however many threads hold a batch, and a row's intended
// latency includes its wait in the batch for the rows due after it.
func TestOpenLoopLoadPacesRows(t *testing.T) {
	db := newMemDB()
	spec := testSpec(400, 0)
	out, err := Execute(context.Background(), db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 4, BatchSize: 100, Target: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.rows) != 400 {
		t.Fatalf("%d rows loaded, want 400", len(db.rows))
	}
	// The last row is due 399 ms after the start.
	if out.RunTime < 350*time.Millisecond {
		t.Fatalf("400 rows at 1000/s loaded in %s, want about 400 ms", out.RunTime)
	}
	intended := summaryOf(out, "Intended-INSERT")
	if intended.Count != 400 {
		t.Fatalf("Intended-INSERT has %d rows, want 400", intended.Count)
	}
	// A batch's first row is due 99 ms before its last, when it goes out;
	// pacing whole batches instead would send the first four at once.
	if intended.MaxMicros < 90000 {
		t.Errorf("Intended-INSERT max %d µs: the first row of a batch waits about 99 ms for it", intended.MaxMicros)
	}
	if ins := summaryOf(out, "INSERT"); ins.Count != 400 || ins.MaxMicros >= intended.MaxMicros {
		t.Errorf("INSERT: %d rows, max %d µs; the service time should not include the wait for the batch (intended max %d µs)", ins.Count, ins.MaxMicros, intended.MaxMicros)
	}
}

// An interrupt that comes before the generators are ready stops Execute
// rather than starting the phase. (It used to arrive during ζ's sum over
// 10^8 keys, which now takes microseconds: the test cancels first.)
func TestInterruptWhilePreparingGenerators(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100_000_000, 10)
	spec.RequestDistribution = workload.Latest
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute = %+v, %v; want it stopped by the cancellation", out, err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Execute returned %s after it began, want soon after the cancellation", d)
	}
}

// TestOneLostConnectionIsNoOutage loses one connection while the others
// go on serving, as pg_terminate_backend does: the worker reconnects and
// no outage is reported.
func TestOneLostConnectionIsNoOutage(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100, 4000)
	ctx := context.Background()
	if _, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	db.failKey = func(string) error {
		if calls.Add(1) == 500 { // not a last operation: the worker goes on
			return errShutdown
		}
		return nil
	}
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Outages) != 0 || out.Reconnects != 1 || out.Failed != 1 || out.Ops != 4000 {
		t.Fatalf("outages %+v, reconnects %d, failed %d, ops %d; want none, 1, 1, 4000", out.Outages, out.Reconnects, out.Failed, out.Ops)
	}
}

// TestBadInputStopsThePhase fails an operation with an error only the user
// can fix (a missing privilege): the phase stops and Execute returns it,
// rather than counting a run full of the same failure.
func TestBadInputStopsThePhase(t *testing.T) {
	db := newMemDB()
	spec := testSpec(100, 0)
	ctx := context.Background()
	if _, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
	denied := driver.Classify(badinput.New("user bench lacks UPDATE on usertable; grant it"), "42501", driver.ClassOther)
	db.failKey = func(string) error { return denied }
	out, err := Execute(ctx, db, testTable, spec, runner.Options{Phase: runner.Run, Threads: 4, MaxExecutionTime: time.Minute})
	if out != nil || !badinput.Is(err) || !strings.Contains(err.Error(), "lacks UPDATE") {
		t.Fatalf("outcome %v, err %v: want the bad input error and no outcome", out, err)
	}
}

// nopDB answers every operation at once: the runner's own cost.
type nopDB struct{ memDB }

func (*nopDB) Session(context.Context, driver.Table) (driver.Session, error) {
	return nopSession{}, nil
}

type nopSession struct{}

func (nopSession) Read(context.Context, []byte, []int, [][]byte) error { return nil }
func (nopSession) Scan(context.Context, []byte, int, []int, func([]byte, [][]byte)) (int, error) {
	return 0, nil
}
func (nopSession) Update(context.Context, []byte, []int, [][]byte) error   { return nil }
func (nopSession) Insert(context.Context, []byte, [][]byte) error          { return nil }
func (nopSession) InsertBatch(context.Context, [][]byte, [][][]byte) error { return nil }
func (nopSession) Delete(context.Context, []byte) error                    { return nil }
func (nopSession) Close() error                                            { return nil }

func BenchmarkRunWorkloadANop(b *testing.B) {
	spec := testSpec(100000, int64(b.N))
	b.ResetTimer()
	out, err := Execute(context.Background(), &nopDB{}, testTable, spec, runner.Options{Phase: runner.Run, Threads: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(out.Throughput, "ops/s")
}
