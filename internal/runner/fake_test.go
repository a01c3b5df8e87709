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

// fakeDB is the runner tests' database: each step of its plan sends one
// call, with injectable latency and errors, and each Open opens a session,
// so the runner's bookkeeping can be checked exactly without an
// experiment.
type fakeDB struct {
	delay time.Duration
	// fail decides a call's outcome by its unit (see unitKey).
	fail  func(unit int64) error
	stall chan struct{} // when set, calls wait for it to close
	calls atomic.Int64
	// down makes every call fail with a lost connection and every new
	// session fail to open, as a stopped server does.
	down     atomic.Bool
	sessions atomic.Int64
	// openErr, when set, is what a session that cannot open fails with
	// while the database is down (errRefused otherwise).
	openErr error

	mu   sync.Mutex
	done map[int64]int // units done, by unitKey
}

var (
	errRefused  = driver.Classify(errors.New("connection refused"), "connection-lost", driver.ClassConnLost)
	errShutdown = driver.Classify(errors.New("terminating connection due to administrator command"), "57P01", driver.ClassConnLost)
)

// The fake plan's series.
const (
	fakeOK = iota
	fakeFailed
	fakeIntendedOK
	fakeIntendedFailed
	fakeCleanup
)

var fakeOp = Op{Name: "OP", OK: fakeOK, Failed: fakeFailed, IntendedOK: fakeIntendedOK, IntendedFailed: fakeIntendedFailed}

// plan returns a plan of count units of the operation OP on db.
func (db *fakeDB) plan(count int64, split Split) Plan {
	return Plan{
		Series: []Series{
			{Name: "OP", CountsOK: true, Retryable: true},
			{Name: "OP-FAILED"},
			{Name: "Intended-OP"},
			{Name: "Intended-OP-FAILED"},
			{Name: "CLEANUP", CountsOK: true},
		},
		Cleanup: fakeCleanup,
		Count:   count,
		Split:   split,
		Worker:  func(i int) Worker { return &fakeWorker{db: db, id: i, split: split} },
	}
}

type fakeWorker struct {
	db    *fakeDB
	id    int
	split Split
	// did, when set, is what the worker tells the runner each step did.
	did int64
}

func (w *fakeWorker) Open(context.Context) error {
	if w.db.down.Load() {
		if w.db.openErr != nil {
			return w.db.openErr
		}
		return errRefused
	}
	w.db.sessions.Add(1)
	return nil
}

func (w *fakeWorker) Close() error { return nil }

// unitKey names unit k of worker id's steps: with Sequence the unit
// itself, with PerWorker the worker's k-th step.
func unitKey(split Split, id int, k int64) int64 {
	if split == Sequence {
		return k
	}
	return int64(id)<<32 | k
}

// Step sends one call for all of its units, as a load batch does.
func (w *fakeWorker) Step(ctx context.Context, s *Step) {
	key := unitKey(w.split, w.id, s.First())
	start := measure.Now()
	err := s.Call(ctx, &fakeOp, func(ctx context.Context) error { return w.db.call(ctx, key) })
	end := measure.Now()
	if s.N() == 1 {
		s.Finish(&fakeOp, err, start, end, s.Intended())
	} else {
		s.FinishN(&fakeOp, err, start, end, s.N())
		if s.Intended() != 0 {
			for i := range s.N() {
				s.RecordIntended(&fakeOp, err, s.Due(i), end)
			}
		}
	}
	w.db.mu.Lock()
	if w.db.done == nil {
		w.db.done = map[int64]int{}
	}
	for i := range s.N() {
		w.db.done[key+i]++
	}
	w.db.mu.Unlock()
	if w.did != 0 {
		s.Did(w.did)
	}
}

func (db *fakeDB) call(ctx context.Context, key int64) error {
	db.calls.Add(1)
	if db.down.Load() {
		return errShutdown
	}
	if db.stall != nil {
		select {
		case <-db.stall:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if db.delay > 0 {
		time.Sleep(db.delay)
	}
	if db.fail != nil {
		return db.fail(key)
	}
	return nil
}

func summaryOf(out *Outcome, name string) measure.Summary {
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
