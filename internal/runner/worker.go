package runner

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// worker is one goroutine's state: the experiment's Worker, its recorder
// and its pacing, so the hot path shares nothing.
type worker struct {
	id    int
	phase *phase
	work  Worker
	step  Step
	rec   *measure.Recorder
	quota int64      // PerWorker: this worker's share of Count, -1 for none
	rng   *rand.Rand // retry and reconnection jitter
	// open says the worker's session is open: Close is owed.
	open bool
	// broken is set when an operation lost the connection or timed out:
	// the session is replaced before the next step.
	broken bool

	// open loop, PerWorker: the intended start of the next step
	// (measure.Now) and the time between two steps
	period int64
	next   int64
	// open loop, Sequence: when the phase started (measure.Now), from
	// which each unit's due time is counted (see due)
	seqStart int64
	// timer serves every wait of the worker (pacing, backoff), so that a
	// wait allocates no timer.
	timer *time.Timer
}

func (w *worker) run(ctx context.Context, start time.Time) {
	w.startPacing(start)
	for w.turn(ctx) {
	}
	w.close()
}

// startPacing sets the open-loop schedule from the phase's start.
func (w *worker) startPacing(start time.Time) {
	p := w.phase
	if p.opts.Target <= 0 {
		return
	}
	if p.plan.Split == Sequence {
		w.seqStart = measure.FromTime(start)
		return
	}
	w.period = int64(float64(time.Second) * float64(p.opts.Threads) / p.opts.Target)
	// Stagger the workers over one period so they do not all fire at once.
	w.next = measure.FromTime(start) + w.period*int64(w.id)/int64(p.opts.Threads)
}

// turn does the worker's next step, once its session is sound and its
// time has come; it reports false when the worker has nothing left to do
// or the phase is stopping.
func (w *worker) turn(ctx context.Context) bool {
	p := w.phase
	if p.stop.Load() || (w.broken && !w.reconnect(ctx)) || !w.claim() {
		return false
	}
	w.pace(ctx)
	if p.stop.Load() {
		return false
	}
	w.step.did = w.step.n
	w.work.Step(ctx, &w.step)
	w.rec.Done(w.step.did)
	return true
}

// close closes the worker's session at the end of the phase, timed in the
// plan's cleanup series.
func (w *worker) close() {
	if !w.open {
		return // the phase stopped while the worker was reconnecting
	}
	p := w.phase
	t0 := measure.Now()
	err := w.work.Close()
	w.open = false
	if c := p.plan.Cleanup; c != NoSeries {
		w.record(c, c, p.plan.Series[c].Name, err, t0, measure.Now(), 1)
	}
}

// claim takes the units of the worker's next step into w.step; it reports
// false when there are none left.
func (w *worker) claim() bool {
	p := w.phase
	s := &w.step
	if p.plan.Split == PerWorker {
		if w.quota >= 0 && s.first+s.n >= w.quota {
			return false
		}
		s.first, s.n = s.first+s.n, 1
		return true
	}
	batch := int64(p.opts.BatchSize)
	first := p.seqNext.Add(batch) - batch
	if p.plan.Count > 0 && first >= p.plan.Count {
		return false
	}
	s.first, s.n = first, batch
	if p.plan.Count > 0 {
		s.n = min(batch, p.plan.Count-first)
	}
	return true
}

// pace waits for the intended start of the step claimed and sets it; in
// closed loop it sets 0 at once.
func (w *worker) pace(ctx context.Context) {
	s := &w.step
	switch {
	case w.period != 0:
		s.intended = w.next
		w.next += w.period
	case w.seqStart != 0:
		// A step goes out when its last unit is due, as YCSB's load sends
		// a batch once its last record has passed the throttle.
		s.intended = w.due(s.first + s.n - 1)
	default:
		s.intended = 0
		return
	}
	w.waitUntil(ctx, s.intended)
}

// due is when unit k of a Sequence is due in open loop: the target's rate
// holds for the phase as a whole, whatever the threads and the batch size.
func (w *worker) due(k int64) int64 {
	if w.period != 0 {
		return w.step.intended // PerWorker: a step is one unit
	}
	return w.seqStart + int64(float64(k)*float64(time.Second)/w.phase.opts.Target)
}

// timerSlack is how late a Go timer may fire: when every processor is
// idle, the runtime waits in the network poller with a timeout in whole
// milliseconds, so a timer wakes up to 1 ms after its time.
const timerSlack = 2 * time.Millisecond

// waitUntil waits until the instant at (measure.Now's clock), or until ctx
// is done. An open-loop operation's Intended- latency runs from that
// instant, so a late wake-up would be counted against the database: Go's
// timer alone put about half a millisecond on the mean Intended-READ of a
// --db null run. So a timer covers all but the last timerSlack and the
// kernel's sleep the rest (kernelSleep says how close it wakes).
func (w *worker) waitUntil(ctx context.Context, at int64) {
	if d := time.Duration(at-measure.Now()) - timerSlack; d > 0 && !w.sleep(ctx, d) {
		return
	}
	for {
		left := time.Duration(at - measure.Now())
		if left <= 0 {
			return
		}
		kernelSleep(left)
	}
}

// sleep waits for d, or until ctx is done; it reports whether ctx is
// still live. It reuses the worker's timer: a new one per wait was an
// allocation per operation in open loop below about 500 operations a
// second per worker, where waits outlast timerSlack.
func (w *worker) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		// Since Go 1.23 a Reset timer delivers no value of its past.
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		w.timer.Stop()
		return false
	}
}
