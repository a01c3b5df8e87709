package runner

import (
	"context"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// nopWorker's steps send a call that does nothing, through a closure as
// an experiment's would: what is left is the runner's own cost per step.
type nopWorker struct{ calls int }

func (*nopWorker) Open(context.Context) error { return nil }
func (*nopWorker) Close() error               { return nil }
func (w *nopWorker) Step(ctx context.Context, s *Step) {
	start := measure.Now()
	err := s.Call(ctx, &fakeOp, func(context.Context) error { w.calls++; return nil })
	end := measure.Now()
	if s.N() == 1 {
		s.Finish(&fakeOp, err, start, end, s.Intended())
		return
	}
	s.FinishN(&fakeOp, err, start, end, s.N())
	for i := range s.N() {
		s.RecordIntended(&fakeOp, err, s.Due(i), end)
	}
}

// A worker's turn (pacing, the step's call under the retry policy and the
// operation timeout's guard, recording, availability) allocates nothing:
// at millions of steps a second, garbage would put the collector's cost
// into every figure.
func TestATurnAllocatesNothing(t *testing.T) {
	tests := []struct {
		name   string
		split  Split
		target float64
		batch  int
		// warm turns come first, and runs are measured
		warm, runs int
	}{
		{"closed loop", PerWorker, 0, 1, 10_000, 2000},
		{"open loop, nanosleep", PerWorker, 50_000, 1, 10_000, 2000},
		// 3.3 ms apart: a timer, then the kernel's sleep. Few turns, so
		// that the recorder's lists (4,096 values) are not outgrown.
		{"open loop, timer", PerWorker, 300, 1, 5, 60},
		{"sequence, closed loop", Sequence, 0, 10, 10_000, 2000},
		{"sequence, open loop", Sequence, 500_000, 10, 10_000, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := (&fakeDB{}).plan(0, tt.split)
			plan.Worker = func(int) Worker { return &nopWorker{} }
			opts := Options{Threads: 1, Target: tt.target, BatchSize: tt.batch, Retry: RetryPolicy{Max: 3, Backoff: time.Millisecond, MaxBackoff: time.Second}}
			p, workers := newPhase(plan, opts)
			w := workers[0]
			w.open = true
			start := time.Now()
			p.begin(start, workers)
			w.startPacing(start)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			turn := func() {
				if !w.turn(ctx) {
					t.Fatal("the worker stopped")
				}
			}
			// Past the recorder's first allocations: its lists, then its
			// histograms once a series holds more than a list (4,096).
			for range tt.warm {
				turn()
			}
			if allocs := testing.AllocsPerRun(tt.runs, turn); allocs != 0 {
				t.Fatalf("%v allocations per turn, want 0", allocs)
			}
			if w.work.(*nopWorker).calls < tt.runs {
				t.Fatalf("%d calls: the turns did not step", w.work.(*nopWorker).calls)
			}
		})
	}
}

// A wait that ctx ended leaves the worker's timer fit for the next one,
// which lasts its full time.
func TestSleepReusesItsTimer(t *testing.T) {
	w := &worker{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if w.sleep(ctx, time.Hour) {
		t.Fatal("a sleep whose context ended reported it live")
	}
	began := time.Now()
	if !w.sleep(context.Background(), 30*time.Millisecond) {
		t.Fatal("a sleep reported a live context ended")
	}
	if d := time.Since(began); d < 30*time.Millisecond {
		t.Fatalf("slept %v of 30ms: the timer fired for an earlier wait", d)
	}
}
