package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Phase is the load or the run of a workload: the runner only labels its
// outcome with it.
type Phase int

// The phases.
const (
	Load Phase = iota
	Run
)

// String returns "load" or "run".
func (p Phase) String() string {
	if p == Load {
		return "load"
	}
	return "run"
}

// Options shape one phase.
type Options struct {
	// Phase labels the outcome; the plan decides what the workers do.
	Phase   Phase
	Threads int
	// Target paces the phase at this many steps per second in all, or
	// units with a Sequence plan (open loop); 0 runs closed loop.
	Target float64
	// MaxExecutionTime ends the phase after this long; 0 means no limit.
	MaxExecutionTime time.Duration
	// Warmup excludes the phase's first part from the statistics.
	Warmup time.Duration
	// BatchSize is how many units a step of a Sequence plan takes (the
	// rows a load inserts per transaction); 1 when zero.
	BatchSize int
	// Percentiles are reported per operation in summaries.
	Percentiles []float64
	// Seed seeds worker i's random source with Seed+i.
	Seed uint64
	// Tick is the interval of the per-second series (1 s when zero).
	// Intervals end on the wall clock's multiples of Tick, whole seconds
	// (see Origin), so the first one is cut short.
	Tick time.Duration
	// DrainTimeout bounds how long operations in flight may take to finish
	// once the phase is interrupted (10 s when zero).
	DrainTimeout time.Duration
	// StatusInterval is how often OnStatus is called (never when zero).
	StatusInterval time.Duration
	// OnStart is called with the phase's start, once its sessions are open
	// and before its first operation, and with the origin its intervals
	// are counted from (Origin): interval k ends at origin + k×Tick.
	OnStart func(start, origin time.Time)
	// OnTick is called after every tick from the ticking goroutine.
	OnTick func(Tick)
	// OnStatus is called every StatusInterval with the figures of the
	// interval since the previous call.
	OnStatus func(Status)
	// OnFirstError is called once per distinct error code with an example.
	OnFirstError func(op string, code string, err error)
	// Retry is what to do when an operation fails with a retryable error.
	Retry RetryPolicy
	// Histograms carries each series' encoded HDR histogram in the ticks'
	// and the outcome's summaries (measure.Summary.Histogram), for a result
	// that is kept: it costs the ticker about a millisecond per series.
	Histograms bool
	// StartAt, when set, holds the phase's start until then, its
	// sessions open and its generators ready: the clients of a run of
	// several start their measured phase together (--start-at).
	StartAt time.Time
	// OnError is what the phase does at a failure more attempts cannot
	// fix (driver.IsFatal); the zero value stops it.
	OnError OnError
	// ReconnectTimeout bounds how long a phase without MaxExecutionTime
	// waits for a database that stopped answering, from the start of the
	// outage, before it stops (StopUnreachable); 0 waits as long as it
	// takes. A phase with a MaxExecutionTime keeps trying until its end.
	ReconnectTimeout time.Duration
	// OpTimeout bounds each Step.Call (a load batch counts as one); 0
	// leaves them unbounded. An operation that outlives it fails with the
	// code "timeout", and its worker reconnects, since most drivers cannot
	// tell whether the connection survived the cancellation.
	OpTimeout time.Duration
}

// RetryPolicy repeats operations that failed with a retryable error (a
// conflict or a busy lock, per driver.IsRetryable). Each operation is its
// own transaction, so repeating the operation repeats the whole
// transaction; a load batch is repeated as a whole. The operation's latency
// includes every attempt and every wait, as its caller would see it.
type RetryPolicy struct {
	// Max is how many times an operation is repeated; 0 never repeats, as
	// YCSB does.
	Max int
	// Backoff is the wait before the first retry; each later wait doubles,
	// up to MaxBackoff. Every wait is drawn uniformly from its upper half so
	// that workers that collided do not retry in step.
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// wait returns how long to wait before retry number n (0 for the first).
func (r RetryPolicy) wait(n int, rng *rand.Rand) time.Duration {
	d := r.Backoff
	for i := 0; i < n && d < r.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.MaxBackoff)
	if d <= 1 {
		return d
	}
	return d/2 + time.Duration(rng.Int64N(int64(d/2)+1))
}

// Tick is one interval of the per-second series.
type Tick struct {
	// Start is the end of the previous interval, or the phase's start. End
	// is when the interval's figures were collected: a boundary (see
	// Origin) as closely as the ticker woke, the end of the warm-up, or
	// the end of the phase.
	Start, End time.Time
	// Elapsed is End minus the phase's start.
	Elapsed time.Duration
	Ops     int64
	// Warmup is true for intervals excluded from the statistics.
	Warmup bool
	Series []measure.Summary
}

// Status is what a status line shows: the interval since the last one.
type Status struct {
	Now      time.Time
	Elapsed  time.Duration
	TotalOps int64
	// Total is the count the phase is bounded by (the plan's Count), 0
	// when it is bounded by time alone.
	Total     int64
	OpsPerSec float64
	// Remaining estimates the time left; negative when unknown.
	Remaining time.Duration
	Series    []measure.Summary
}

// StatusPercentiles are the percentiles a status line shows.
var StatusPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// Ending is what ended a phase.
type Ending int

// The endings of a phase.
const (
	// EndedByCount: every unit of the plan's Count was done (in a YCSB
	// run every operation of operationcount, in a load every record of
	// insertcount inserted).
	EndedByCount Ending = iota
	// EndedByTime: MaxExecutionTime ran out first.
	EndedByTime
	// EndedByInterrupt: the context was cancelled (Ctrl-C).
	EndedByInterrupt
	// EndedByError: a failure more attempts cannot fix stopped it
	// (Outcome.Stopped, StopFatal).
	EndedByError
	// EndedByUnreachable: the database did not answer for
	// ReconnectTimeout (Outcome.Stopped, StopUnreachable).
	EndedByUnreachable
)

// String names the ending as the JSON result does.
func (e Ending) String() string {
	switch e {
	case EndedByTime:
		return "time"
	case EndedByInterrupt:
		return "interrupt"
	case EndedByError:
		return "error"
	case EndedByUnreachable:
		return "unreachable"
	}
	return "count"
}

// Outcome is what a phase measured, after any warm-up.
type Outcome struct {
	Phase Phase
	// EndedBy is what ended the phase.
	EndedBy Ending
	// Start is when measurement began (after the warm-up), End when the
	// last worker finished.
	Start, End time.Time
	RunTime    time.Duration
	Ops        int64
	Throughput float64
	Series     []measure.Summary
	// Errors counts failures by code, as "ERROR(23505)" or "NOT_FOUND".
	Errors map[string]int64
	// Failed counts failed operations of every kind.
	Failed int64
	// Retries counts repeated attempts of every kind.
	Retries int64
	// Overflow counts latencies above one hour, recorded as one hour.
	Overflow    int64
	Interrupted bool
	Warmup      time.Duration
	// WarmupUnfinished is set when the phase ended before its warm-up did.
	WarmupUnfinished bool
	// Outages are the spans in which the database served nothing, warm-up
	// included.
	Outages []Outage
	// Reconnects counts the sessions workers opened again after their
	// connection broke or an operation timed out.
	Reconnects int64
	// Stopped says why the phase stopped before its count or its time:
	// a fatal failure, or a database that did not come back; nil when it
	// was not stopped early.
	Stopped *Stop
	// Fatal counts the units (operations, load rows) that failed in a way
	// more attempts cannot fix, warm-up included; FirstFatal is the first
	// such failure. Under OnErrorContinue they are what the phase went on
	// past.
	Fatal      int64
	FirstFatal error
}

// retrySeedStream separates the retry jitter's random stream from the
// experiment's own, which may be seeded with the same Seed+i (YCSB's
// generators are).
const retrySeedStream = 0x7265747279

// Execute runs one phase of plan and returns what it measured. Cancelling
// ctx stops the phase gracefully: no new steps start, those in flight get
// DrainTimeout to finish, and the outcome is marked interrupted. An
// operation failing with a badinput error (the user lacks a privilege)
// stops the phase, and Execute returns that error.
func Execute(ctx context.Context, plan Plan, opts Options) (*Outcome, error) {
	if opts.Threads < 1 {
		return nil, fmt.Errorf("runner: %d threads", opts.Threads)
	}
	if err := plan.check(); err != nil {
		return nil, err
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	if opts.BatchSize < 1 {
		opts.BatchSize = 1
	}
	if len(opts.Percentiles) == 0 {
		opts.Percentiles = measure.DefaultPercentiles
	}

	p, workers := newPhase(plan, opts)
	if err := openSessions(ctx, workers); err != nil {
		return nil, err
	}
	opCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()

	if plan.Prepare != nil {
		if err := plan.Prepare(ctx); err != nil {
			closeSessions(workers)
			return nil, err
		}
	}
	if err := waitStart(ctx, opts.StartAt); err != nil {
		closeSessions(workers)
		return nil, err
	}
	start := time.Now()
	if opts.OnStart != nil {
		opts.OnStart(start, Origin(start, opts.Tick))
	}
	p.begin(start, workers)

	// Interruption: stop issuing operations at once, cancel those in flight
	// only if they outlast the drain timeout.
	var interrupted atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
			interrupted.Store(true)
			p.stop.Store(true)
			select {
			case <-time.After(opts.DrainTimeout):
				cancelOps()
			case <-opCtx.Done():
			}
		case <-opCtx.Done():
		}
	}()
	var wg sync.WaitGroup
	done := make(chan struct{})
	var timeUp atomic.Bool
	if opts.MaxExecutionTime > 0 {
		t := time.AfterFunc(opts.MaxExecutionTime, func() {
			select {
			case <-done:
				// The count was done first; the timer only lost the race
				// to be stopped.
			default:
				timeUp.Store(true)
				p.stop.Store(true)
			}
		})
		defer t.Stop()
	}

	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(opCtx, start)
		}()
	}
	var ended time.Time // written before done is closed
	go func() { wg.Wait(); ended = time.Now(); close(done) }()

	end, warm := p.tickUntil(done, &ended, start)
	cancelOps()
	p.errMu.Lock()
	aborted, stopped, fatalUnits, firstFatal := p.aborted, p.stopped, p.fatalUnits, p.firstFatal
	p.errMu.Unlock()
	if aborted != nil {
		return nil, aborted
	}

	total := p.set.Total()
	out := &Outcome{
		Outages:          p.avail.finish(measure.FromTime(end)),
		Reconnects:       p.reconnects.Load(),
		Phase:            opts.Phase,
		Start:            total.Start,
		End:              end,
		Ops:              total.Ops,
		Series:           p.summarize(total.View),
		Errors:           total.Codes,
		Interrupted:      interrupted.Load(),
		Warmup:           opts.Warmup,
		WarmupUnfinished: warm,
		Stopped:          stopped,
		Fatal:            fatalUnits,
		FirstFatal:       firstFatal,
	}
	switch {
	case stopped != nil && stopped.Cause == StopFatal:
		out.EndedBy = EndedByError
	case stopped != nil:
		out.EndedBy = EndedByUnreachable
	case out.Interrupted:
		out.EndedBy = EndedByInterrupt
	case timeUp.Load():
		out.EndedBy = EndedByTime
	}
	out.RunTime = end.Sub(out.Start)
	if out.RunTime > 0 {
		out.Throughput = float64(out.Ops) / out.RunTime.Seconds()
	}
	for _, n := range total.Retries {
		out.Retries += n
	}
	for _, n := range total.Overflow {
		out.Overflow += n
	}
	for _, n := range total.Codes {
		out.Failed += n
	}
	return out, nil
}

// newPhase makes a phase of plan and its workers, sessions not yet open.
func newPhase(plan Plan, opts Options) (*phase, []*worker) {
	p := &phase{opts: opts, plan: plan, firstErrors: map[string]bool{}}
	workers := make([]*worker, opts.Threads)
	for i := range workers {
		w := &worker{
			id:    i,
			phase: p,
			work:  plan.Worker(i),
			quota: quota(plan.Count, opts.Threads, i),
			rng:   rand.New(rand.NewPCG(opts.Seed+uint64(i), retrySeedStream)),
		}
		w.step.w = w
		workers[i] = w
	}
	return p, workers
}

// begin starts measuring at start: the series' set, and a recorder for
// each worker.
func (p *phase) begin(start time.Time, workers []*worker) {
	names := make([]string, len(p.plan.Series))
	countsOK := make([]bool, len(p.plan.Series))
	for i, s := range p.plan.Series {
		names[i], countsOK[i] = s.Name, s.CountsOK
	}
	p.set = measure.NewSet(names, countsOK, start)
	for i, s := range p.plan.Series {
		if s.Retryable {
			p.set.MarkRetryable(i)
		}
	}
	for _, w := range workers {
		w.rec = p.set.NewRecorder()
	}
}

// quota is worker i's share of n operations; -1 when n is 0, which means
// no count limit (the phase ends on time or interruption).
func quota(n int64, threads, i int) int64 {
	if n == 0 {
		return -1
	}
	q := n / int64(threads)
	if int64(i) < n%int64(threads) {
		q++
	}
	return q
}

// openSessions opens every worker's session, several at a time, and
// closes them all if any fails.
func openSessions(ctx context.Context, workers []*worker) error {
	errs := make([]error, len(workers))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = w.work.Open(ctx)
			w.open = errs[i] == nil
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeSessions(workers)
		return fmt.Errorf("opening %d sessions: %w", len(workers), firstError(errs))
	}
	return nil
}

// closeSessions closes the sessions of a phase that does not start.
func closeSessions(workers []*worker) {
	for _, w := range workers {
		if w.open {
			// Nothing was measured on them; a failed close has no one to tell.
			_ = w.work.Close()
			w.open = false
		}
	}
}

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// phase is the state the workers and the ticker share.
type phase struct {
	opts Options
	plan Plan
	set  *measure.Set
	stop atomic.Bool
	// seqNext is the next unit of a Sequence plan that no worker took.
	seqNext atomic.Int64

	avail      availability
	reconnects atomic.Int64

	errMu       sync.Mutex
	firstErrors map[string]bool
	// aborted is the first error the user must fix (a privilege the user
	// lacks): it stops the phase, and Execute returns it.
	aborted error
	// stopped is why the phase was stopped early (see halt); the outcome
	// carries it.
	stopped *Stop
	// fatalUnits counts the units that failed in a way more attempts
	// cannot fix, firstFatal is the first such failure (see fatal).
	fatalUnits int64
	firstFatal error
}

// abort stops the phase on an error that no further operation can get
// past, keeping the first one.
func (p *phase) abort(op string, err error) {
	p.errMu.Lock()
	if p.aborted == nil {
		p.aborted = fmt.Errorf("%s: %w", op, err)
	}
	p.errMu.Unlock()
	p.stop.Store(true)
}

// Origin is the instant a phase that started at start counts its ticks
// from: the wall clock's last multiple of tick (a whole second) at or
// before start. Interval k ends at origin + k×tick, the first one cut short
// at the phase's start, so that the intervals of clients started apart
// cover the same seconds and merge second by second.
func Origin(start time.Time, tick time.Duration) time.Time {
	return start.Truncate(tick)
}

// firstBoundary is where a phase's first interval ends: origin + tick,
// counted on start's monotonic clock (Truncate drops it) so that the
// ticker's waits are not moved by a change of the wall clock.
func firstBoundary(start time.Time, tick time.Duration) time.Time {
	return start.Add(tick - start.Sub(Origin(start, tick)))
}

// tickUntil ticks on every boundary (see Origin), and once more at the end
// of the warm-up so that it is cut exactly, until done is closed; *ended
// is then when the last worker finished. It returns the end of the phase
// and whether the warm-up was still going on then.
func (p *phase) tickUntil(done <-chan struct{}, ended *time.Time, start time.Time) (time.Time, bool) {
	opts := p.opts
	warmEnd := start.Add(opts.Warmup)
	warm := opts.Warmup > 0
	nextTick := firstBoundary(start, opts.Tick)
	last := start // the end of the last interval emitted
	var totalOps int64
	lastStatus := start
	statusHists := make([]*hdr.Histogram, len(p.plan.Series))
	statusStatuses := map[measure.StatusKey]int64{}
	var statusOps int64

	emit := func(now time.Time, final bool) {
		last = now
		keep := !warm
		iv := p.set.Tick(now, keep)
		totalOps += iv.Ops
		if opts.OnTick != nil {
			series := p.summarize(iv.View)
			for k := range series {
				if i := p.set.Series(series[k].Name); i >= 0 {
					series[k].HDR = iv.Histograms[i]
				}
			}
			opts.OnTick(Tick{
				Start: iv.Start, End: iv.End, Elapsed: iv.End.Sub(start), Ops: iv.Ops, Warmup: !keep,
				Series: series,
			})
		}
		if opts.OnStatus == nil || opts.StatusInterval <= 0 {
			return
		}
		for i, h := range iv.Histograms {
			if h == nil {
				continue
			}
			if statusHists[i] == nil {
				statusHists[i] = h
			} else {
				statusHists[i].Merge(h)
			}
		}
		for k, n := range iv.Statuses {
			statusStatuses[k] += n
		}
		statusOps += iv.Ops
		if final || now.Sub(lastStatus) >= opts.StatusInterval-opts.Tick/2 {
			span := now.Sub(lastStatus).Seconds()
			st := Status{
				Now: now, Elapsed: now.Sub(start), TotalOps: totalOps, Total: p.plan.Count, Remaining: -1,
				Series: p.set.Summarize(measure.View{Histograms: statusHists, Statuses: statusStatuses}, StatusPercentiles),
			}
			if span > 0 {
				st.OpsPerSec = float64(statusOps) / span
			}
			st.Remaining = p.remaining(now.Sub(start), totalOps)
			opts.OnStatus(st)
			lastStatus, statusOps = now, 0
			clear(statusHists)
			clear(statusStatuses)
		}
	}

	wake := nextTick
	if warm && warmEnd.Before(wake) {
		wake = warmEnd
	}
	// A timer covers all but the last timerSlack of each wait and the
	// kernel's sleep the rest, so that an interval ends within tens of
	// microseconds of its second rather than up to a millisecond after it
	// (see waitUntil).
	timer := time.NewTimer(time.Until(wake) - timerSlack)
	defer timer.Stop()
	for {
		select {
		case <-done:
			// What the workers did ends when the last of them did, even
			// when that was inside the interval just emitted.
			now := *ended
			if now.Before(last) {
				now = last
			}
			stillWarm := warm
			emit(now, true)
			return now, stillWarm
		case <-timer.C:
		}
		for left := time.Until(wake); left > 0; left = time.Until(wake) {
			kernelSleep(left)
		}
		now := time.Now()
		if warm && !now.Before(warmEnd) {
			// Cut the warm-up exactly: what was recorded until now is
			// discarded; measurement starts here.
			emit(now, false)
			warm = false
		} else if !now.Before(nextTick) {
			emit(now, false)
		}
		for !nextTick.After(now) {
			nextTick = nextTick.Add(opts.Tick)
		}
		wake = nextTick
		if warm && warmEnd.Before(wake) {
			wake = warmEnd
		}
		timer.Reset(time.Until(wake) - timerSlack)
	}
}

// summarize summarizes a view for a tick or the outcome, with histograms
// when the options ask for them.
func (p *phase) summarize(v measure.View) []measure.Summary {
	if p.opts.Histograms {
		return p.set.SummarizeEncoded(v, p.opts.Percentiles)
	}
	return p.set.Summarize(v, p.opts.Percentiles)
}

// remaining estimates how long the phase has left from its progress.
func (p *phase) remaining(elapsed time.Duration, ops int64) time.Duration {
	est := time.Duration(-1)
	if total := p.plan.Count; total > 0 && ops > 0 {
		est = time.Duration(float64(elapsed) * float64(total-ops) / float64(ops))
	}
	if m := p.opts.MaxExecutionTime; m > 0 {
		if left := m - elapsed; est < 0 || left < est {
			est = max(left, 0)
		}
	}
	return est
}

// noteError reports the first error of each code once.
func (p *phase) noteError(op, code string, err error) {
	if p.opts.OnFirstError == nil {
		return
	}
	p.errMu.Lock()
	seen := p.firstErrors[code]
	p.firstErrors[code] = true
	p.errMu.Unlock()
	if !seen {
		p.opts.OnFirstError(op, code, err)
	}
}

// waitStart returns at at (at once when it is zero or past), or with an
// error when ctx ends first: an interrupt while the clients wait. As the
// ticker does, a timer covers all but the last timerSlack and the
// kernel's sleep the rest, so that clients on several machines start
// within tens of microseconds of the instant, not a timer's millisecond.
func waitStart(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if at.IsZero() || d <= 0 {
		return nil
	}
	t := time.NewTimer(max(d-timerSlack, 0))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("stopped while waiting for the start at %s: %w", at.Format(time.RFC3339Nano), ctx.Err())
	}
	for left := time.Until(at); left > 0; left = time.Until(at) {
		kernelSleep(left)
	}
	return nil
}
