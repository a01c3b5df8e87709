package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// DefaultInterval is how often the monitor samples when Options.Interval
// is zero.
const DefaultInterval = time.Second

// Options says how often and what to sample.
type Options struct {
	// Interval is the length of one interval (1 s when zero), the same as
	// the runner's tick so that the two series can be read side by side.
	Interval time.Duration
	// WaitSamples is how many times per interval the database is asked what
	// its sessions wait on (10 when zero). Waits are instants, so a share
	// is only as good as the number of instants behind it.
	WaitSamples int
	// Host samples this machine's CPUs, disks and memory; set it when the
	// database runs here, since otherwise the figures describe the wrong
	// machine.
	Host bool
	// Origin is the instant interval boundaries are counted from (the time
	// Start is called when zero). Pass the runner's origin (the whole
	// second before its start) so that the intervals of both end on the
	// same seconds.
	Origin time.Time
	// Describe says an error in a note's words (err.Error() when nil):
	// the caller's way to keep a password out of a note while the
	// monitor's own words stay (driver.Target.ScrubError).
	Describe func(error) string
	// DescribeText does the same for what the driver's monitor says it
	// cannot see (driver.Monitor's Unavailable), which may quote a
	// library (driver.Target.Scrub).
	DescribeText func(string) string
}

// describe says err as Describe does, after its code and the code's name
// as every result shows them ("ERROR(57P01 admin_shutdown) terminating
// connection…") when the driver gave one.
func (o Options) describe(err error) string {
	s := err.Error()
	if o.Describe != nil {
		s = o.Describe(err)
	}
	if l := driver.Label(err); l != "" {
		s = "ERROR(" + l + ") " + s
	}
	return s
}

// Interval is the monitor's figures for one interval. Start and End are the
// interval's boundaries (Origin + k×Interval; the last interval ends when
// Stop was called); rates are computed over the time between the readings
// actually taken, which the loop keeps as close to the boundaries as it can.
type Interval struct {
	Start, End time.Time
	// Metrics holds the figures by name (see the package documentation).
	// The map is the receiver's to keep.
	Metrics map[string]float64
}

// Monitor is a running sampling loop, started by Start.
type Monitor struct {
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	// dbCtx is what readings of the database run under; Abandon cancels
	// it and sets abandoned, so that the loop neither waits on a database
	// that stopped answering nor reads it again.
	dbCtx     context.Context
	abandonDB context.CancelFunc
	abandoned atomic.Bool

	alignMu sync.Mutex
	alignTo time.Time          // an origin Align asked for, not yet taken
	wake    context.CancelFunc // ends the loop's current sleep

	mu      sync.Mutex
	dbNotes []string // the database monitor's Unavailable, copied
	notes   []string // the monitor's own: failures, host, client
}

// queryTimeout bounds each reading of the database. Stop does not cancel a
// reading in progress: drivers such as go-sql-driver/mysql close the
// connection under a cancelled query, which would lose the final reading.
// A database that does not answer within this must not hold up the run's
// result either.
const queryTimeout = 5 * time.Second

// databaseContext is what a reading of the database runs under: the loop's
// values without its cancellation (Stop waits for it), bounded by
// queryTimeout and ended by Abandon.
func (l *loop) databaseContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(l.m.dbCtx, queryTimeout)
}

// Start takes a first reading of everything it samples and starts the loop
// that calls onInterval (from the loop's goroutine) at the end of every
// interval. When db implements driver.Monitorable, its database is sampled
// too; otherwise, or when the database monitor cannot be opened, only the
// host and the client are, and Notes says why. Start fails only on invalid
// options or a context that is already done; the loop ends when Stop is
// called or ctx is done.
func Start(ctx context.Context, db driver.DB, opts Options, onInterval func(Interval)) (*Monitor, error) {
	return start(ctx, db, opts, onInterval, env{clock: newRealClock()})
}

// env holds what tests replace: the clock and the root of /proc.
type env struct {
	clock    clock
	procRoot string // "" is the real root
}

func start(ctx context.Context, db driver.DB, opts Options, onInterval func(Interval), e env) (*Monitor, error) {
	if onInterval == nil {
		return nil, errors.New("monitor: onInterval is nil")
	}
	if opts.Interval < 0 || opts.WaitSamples < 0 {
		return nil, fmt.Errorf("monitor: interval %v and wait samples %d must not be negative", opts.Interval, opts.WaitSamples)
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.WaitSamples == 0 {
		opts.WaitSamples = 10
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	loopCtx, cancel := context.WithCancel(ctx)
	m := &Monitor{cancel: cancel, done: make(chan struct{})}
	m.dbCtx, m.abandonDB = context.WithCancel(context.WithoutCancel(ctx))
	l := &loop{m: m, opts: opts, clock: e.clock, onInterval: onInterval}
	l.waits.init()

	now := e.clock.Now()
	origin := opts.Origin
	if origin.IsZero() || origin.After(now) {
		origin = now
	}
	l.origin = origin

	if mon, ok := db.(driver.Monitorable); ok {
		dm, err := mon.Monitor(ctx)
		if err != nil {
			m.note(fmt.Sprintf("database monitor could not be opened, so only the host and the client are sampled: %s", opts.describe(err)))
		} else {
			l.source = mon
			l.db, l.dbOpen = dm, dm
			l.baseDatabase(ctx)
		}
	}
	if opts.Host {
		l.host = newHostSampler(e.procRoot, m.note)
		if l.host != nil {
			l.host.sample(e.clock.Now(), nil)
		}
	}
	l.client = newClientSampler(e.procRoot, m.note)
	l.client.sample(e.clock.Now(), nil)

	go l.run(loopCtx, now)
	return m, nil
}

// Stop ends the loop after it has reported the interval in progress (cut
// short at this instant) and closed the database monitor. It may be called
// more than once.
func (m *Monitor) Stop() {
	m.stopOnce.Do(func() {
		m.cancel()
		<-m.done
	})
}

// Abandon is Stop for a phase that ended because the database stopped
// answering (a server that did not come back, a cut network): the reading
// of the database in progress is cancelled rather than waited for (up to
// queryTimeout, and a driver's cancel request that cannot reach the server
// adds its own wait), and the last interval has host and client figures
// only. It may be called more than once, and after Stop.
func (m *Monitor) Abandon() {
	if m.abandoned.CompareAndSwap(false, true) {
		m.note("the database was not read at the end: it had stopped answering")
	}
	m.abandonDB()
	m.Stop()
}

// Align moves the interval boundaries to origin + k×Interval from now on:
// the runner's origin (the whole second before its start), known only once
// its sessions are open, so that the intervals of the monitor and of the
// runner end on the same seconds. The interval in progress ends now (it
// covered the setup); the next one ends at the first new boundary.
func (m *Monitor) Align(origin time.Time) {
	if origin.IsZero() {
		return
	}
	m.alignMu.Lock()
	m.alignTo = origin
	wake := m.wake
	m.alignMu.Unlock()
	if wake != nil {
		wake()
	}
}

// Notes lists what the monitor could not see and why, one line each: the
// database monitor's Unavailable lines, then the monitor's own (a failed
// connection, a host file that could not be read).
func (m *Monitor) Notes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(slices.Clone(m.dbNotes), m.notes...)
}

func (m *Monitor) note(s string) {
	m.mu.Lock()
	m.notes = append(m.notes, s)
	m.mu.Unlock()
}

// loop is the sampling goroutine's state; only that goroutine touches it
// once Start has returned.
type loop struct {
	m          *Monitor
	opts       Options
	clock      clock
	onInterval func(Interval)
	origin     time.Time

	dbOpen driver.Monitor // to close at the end, even after a failure
	// source reopens the database monitor after its connection failed (a
	// restart, a failover); nil when it never opened.
	source   driver.Monitorable
	lost     time.Time      // when the database monitor failed; zero while it works
	db       driver.Monitor // nil once sampling the database stopped
	prev     driver.Sample
	prevTime time.Time
	waits    waitCounts

	host   *hostSampler
	client *clientSampler
}

// boundary is the end of interval k (counting from 1 after Origin).
func (l *loop) boundary(k int64) time.Time {
	return l.origin.Add(time.Duration(k) * l.opts.Interval)
}

// waitTime is when the j-th wait sample of the interval ending at
// boundary(k) is taken: evenly spaced, half a step away from either
// boundary so that it never competes with the interval's counter reading.
func (l *loop) waitTime(k int64, j int) time.Time {
	step := l.opts.Interval / time.Duration(l.opts.WaitSamples)
	return l.boundary(k - 1).Add(step/2 + time.Duration(j)*step)
}

func (l *loop) run(ctx context.Context, started time.Time) {
	defer close(l.m.done)
	ivStart := started
	k := int64(started.Sub(l.origin)/l.opts.Interval) + 1
	j := l.nextWait(k, 0, started)
	for {
		tick := l.boundary(k)
		next := tick
		sampleWaits := l.db != nil && j < l.opts.WaitSamples
		if sampleWaits {
			next = l.waitTime(k, j)
		}
		woke := l.sleepUntil(ctx, next)
		if woke == stopped {
			break
		}
		now := l.clock.Now()
		if woke == aligned {
			l.m.alignMu.Lock()
			origin := l.m.alignTo
			l.m.alignTo = time.Time{}
			l.m.alignMu.Unlock()
			if now.After(ivStart) {
				l.emit(ctx, ivStart, now)
				ivStart = now
			}
			if origin.After(now) {
				origin = now // an origin to come would leave the interval in progress unbounded
			}
			l.origin = origin
			k = int64(now.Sub(l.origin)/l.opts.Interval) + 1
			j = l.nextWait(k, 0, now)
			continue
		}
		if !now.Before(tick) {
			// When the loop fell behind (a slow database reading), the
			// interval spans the boundaries it missed rather than
			// reporting empty ones.
			for !l.boundary(k + 1).After(now) {
				k++
			}
			end := l.boundary(k)
			l.emit(ctx, ivStart, end)
			ivStart = end
			k++
			j = l.nextWait(k, 0, l.clock.Now())
			continue
		}
		if sampleWaits {
			l.sampleWaits(ctx)
			j = l.nextWait(k, j+1, l.clock.Now())
		}
	}

	// The run is over: report the interval in progress with a reading of
	// its own.
	if end := l.clock.Now(); end.After(ivStart) {
		l.emit(ctx, ivStart, end)
	}
	if l.dbOpen != nil && l.m.abandoned.Load() {
		// Closing may wait on the network that stopped answering.
		l.copyUnavailable()
		go l.dbOpen.Close()
	} else if l.dbOpen != nil {
		l.copyUnavailable()
		if err := l.dbOpen.Close(); err != nil {
			l.m.note(fmt.Sprintf("database monitor: close: %s", l.opts.describe(err)))
		}
	}
}

// How a sleep of the loop ended.
const (
	slept   = iota // the time came
	aligned        // Align asked for new boundaries
	stopped        // Stop, or the context ended
)

// sleepUntil sleeps until t, unless Align wakes it or it is stopped.
func (l *loop) sleepUntil(ctx context.Context, t time.Time) int {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.m.alignMu.Lock()
	pending := !l.m.alignTo.IsZero()
	l.m.wake = cancel
	l.m.alignMu.Unlock()
	woke := slept
	if pending {
		woke = aligned
	} else if !l.clock.SleepUntil(sctx, t) {
		woke = stopped
		if ctx.Err() == nil {
			woke = aligned
		}
	}
	l.m.alignMu.Lock()
	l.m.wake = nil
	l.m.alignMu.Unlock()
	return woke
}

// nextWait skips the wait samples whose time has passed: a late sample
// would bunch up with the next one and weigh one instant twice.
func (l *loop) nextWait(k int64, j int, now time.Time) int {
	for j < l.opts.WaitSamples && !l.waitTime(k, j).After(now) {
		j++
	}
	return j
}

// emit reads everything and reports the interval.
func (l *loop) emit(ctx context.Context, start, end time.Time) {
	metrics := make(map[string]float64, 32)
	if l.m.abandoned.Load() {
		l.db = nil
	} else if l.db == nil && l.source != nil {
		l.reopenDatabase(ctx)
	}
	l.sampleDatabase(ctx, metrics)
	l.waits.report(metrics)
	l.waits.reset()
	if l.host != nil {
		l.host.sample(l.clock.Now(), metrics)
	}
	l.client.sample(l.clock.Now(), metrics)
	l.onInterval(Interval{Start: start, End: end, Metrics: metrics})
}

// baseDatabase takes the reading the first interval's rates start from.
func (l *loop) baseDatabase(ctx context.Context) {
	s, err := l.db.Sample(ctx)
	if err != nil {
		l.databaseFailed(err)
		return
	}
	l.prev, l.prevTime = s, l.sampleTime(s)
	l.copyUnavailable()
}

func (l *loop) sampleDatabase(ctx context.Context, metrics map[string]float64) {
	if l.db == nil {
		return
	}
	dctx, cancel := l.databaseContext()
	s, err := l.db.Sample(dctx)
	cancel()
	if err != nil {
		l.databaseFailed(err)
		return
	}
	t := l.sampleTime(s)
	if secs := t.Sub(l.prevTime).Seconds(); secs > 0 {
		for name, v := range s.Counters {
			p, ok := l.prev.Counters[name]
			// A counter that went down was reset (a restart, a stats
			// reset): the interval's true count is unknown, and a
			// negative rate would be a figure the database never had.
			if !ok || v < p {
				continue
			}
			metrics["db."+name+"/s"] = (v - p) / secs
		}
	}
	for name, v := range s.Gauges {
		metrics["db."+name] = v
	}
	l.prev, l.prevTime = s, t
}

// sampleTime is when the sample was read: the driver's time when it gives
// one (taken next to the query), else the monitor's.
func (l *loop) sampleTime(s driver.Sample) time.Time {
	if s.Time.IsZero() {
		return l.clock.Now()
	}
	return s.Time
}

func (l *loop) sampleWaits(ctx context.Context) {
	dctx, cancel := l.databaseContext()
	ws, err := l.db.Waits(dctx)
	cancel()
	if err != nil {
		l.databaseFailed(err)
		return
	}
	l.waits.add(ws)
}

// reopenDatabase tries once, at an interval's end, to open the database
// monitor again after it failed. Its first reading is a base: the interval
// has no database rates.
func (l *loop) reopenDatabase(ctx context.Context) {
	dctx, cancel := l.databaseContext()
	defer cancel()
	dm, err := l.source.Monitor(dctx)
	if err != nil {
		return // still unreachable; the failure was noted once
	}
	l.db, l.dbOpen = dm, dm
	l.baseDatabase(dctx)
	if l.db == nil {
		return // failed again at once: databaseFailed closed it
	}
	now := l.clock.Now()
	l.m.note(fmt.Sprintf("database monitor reconnected %v into the run, after %v without database samples",
		now.Sub(l.origin).Round(time.Millisecond), now.Sub(l.lost).Round(time.Millisecond)))
	l.lost = time.Time{}
}

// databaseFailed stops sampling the database until it can be reopened at
// the end of an interval: retrying within the interval would add load and
// noise to the run it is watching. The failure is noted once per loss.
func (l *loop) databaseFailed(err error) {
	l.db = nil
	if l.dbOpen != nil {
		l.copyUnavailable()
		_ = l.dbOpen.Close()
		l.dbOpen = nil
	}
	if !l.lost.IsZero() {
		return
	}
	l.lost = l.clock.Now()
	after := l.lost.Sub(l.origin).Round(time.Millisecond)
	l.m.note(fmt.Sprintf("database monitor lost its connection %v into the run (it reconnects at the next interval; the host and the client are still sampled): %s", after, l.opts.describe(err)))
}

func (l *loop) copyUnavailable() {
	u := slices.Clone(l.dbOpen.Unavailable())
	if l.opts.DescribeText != nil {
		for i := range u {
			u[i] = l.opts.DescribeText(u[i])
		}
	}
	l.m.mu.Lock()
	l.m.dbNotes = u
	l.m.mu.Unlock()
}

// waitCounts counts wait samples over one interval. Counting allocates
// nothing once an event has been seen: the maps keep their keys and only
// the counts are reset.
type waitCounts struct {
	samples     int
	own, other  int
	ownEvents   map[string]int
	otherEvents map[string]int
	// seen is set once any sample had an active session. Until then an
	// empty answer may mean that the database has no view of its waits
	// (Waits returns nil, nil) rather than that nothing was active, so no
	// session count is reported.
	seen bool
}

func (w *waitCounts) init() {
	w.ownEvents = map[string]int{}
	w.otherEvents = map[string]int{}
}

func (w *waitCounts) add(ws []driver.Wait) {
	w.samples++
	for i := range ws {
		if ws[i].Own {
			w.own++
			w.ownEvents[ws[i].Event]++
		} else {
			w.other++
			w.otherEvents[ws[i].Event]++
		}
	}
	if len(ws) > 0 {
		w.seen = true
	}
}

// report adds the interval's shares. An event seen in an earlier interval
// and not in this one is reported as 0, so that its series has no gaps.
func (w *waitCounts) report(metrics map[string]float64) {
	if w.samples == 0 || !w.seen {
		return
	}
	metrics["db.sessions.active"] = float64(w.own) / float64(w.samples)
	metrics["db.sessions.other.active"] = float64(w.other) / float64(w.samples)
	if w.own > 0 {
		for event, n := range w.ownEvents {
			metrics["db.wait."+eventName(event)] = float64(n) / float64(w.own)
		}
	}
	if w.other > 0 {
		for event, n := range w.otherEvents {
			metrics["db.wait.other."+eventName(event)] = float64(n) / float64(w.other)
		}
	}
}

func (w *waitCounts) reset() {
	w.samples, w.own, w.other = 0, 0, 0
	for event := range w.ownEvents {
		w.ownEvents[event] = 0
	}
	for event := range w.otherEvents {
		w.otherEvents[event] = 0
	}
}

// eventName names a wait event in a metric: a session waiting on nothing
// is running, on CPU.
func eventName(event string) string {
	if event == "" {
		return "CPU"
	}
	return event
}

// clock is the loop's time source, replaced in tests so that intervals can
// be stepped through without waiting.
type clock interface {
	Now() time.Time
	// SleepUntil returns true at t, or false as soon as ctx is done.
	SleepUntil(ctx context.Context, t time.Time) bool
}

// realClock sleeps on one timer, reused so that waiting allocates nothing.
type realClock struct{ timer *time.Timer }

func newRealClock() *realClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &realClock{timer: t}
}

func (*realClock) Now() time.Time { return time.Now() }

func (c *realClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	// Since Go 1.23 Reset discards a stale expiry, so no drain is needed.
	c.timer.Reset(d)
	select {
	case <-ctx.Done():
		c.timer.Stop()
		return false
	case <-c.timer.C:
		return true
	}
}
