package replica

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// HeartbeatPrefix starts the name of every heartbeat table; the run's
// epoch ends it, so that clients running together never share one, a run
// never touches another's, and a later run can tell from the tables on
// the primary which runs are going (Tracker.Settle).
const HeartbeatPrefix = "dbprobe_heartbeat_"

// HeartbeatName is the heartbeat table of the run of epoch e.
func HeartbeatName(e Epoch) string { return HeartbeatPrefix + e.String() }

// LiveEpochs reads the epochs of the heartbeat tables on the primary: the
// runs going now, and those killed before they could drop theirs.
func LiveEpochs(ctx context.Context, primary driver.Replicated) ([]Epoch, error) {
	names, err := primary.HeartbeatTables(ctx, HeartbeatPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing the heartbeat tables: %w", err)
	}
	var live []Epoch
	for _, n := range names {
		if e, ok := ParseEpoch(strings.TrimPrefix(n, HeartbeatPrefix)); ok {
			live = append(live, e)
		}
	}
	return live, nil
}

// Heartbeat writes a row on the primary every Interval and looks for it
// on the replica every Poll, and keeps each second's lag.
type Heartbeat struct {
	primary, replica driver.Replicated
	name             string
	o                Options
	start            time.Time
	cancel           context.CancelFunc
	done             sync.WaitGroup
	// acks wakes the looks when a heartbeat is acknowledged, so that the
	// first look for it comes at once rather than after a poll's wait.
	acks chan struct{}

	mu sync.Mutex
	// from is when the measured part of the run begins (MeasureFrom);
	// zero until then, when the heartbeat's start stands for it.
	from time.Time
	// acked[k-1] is when the primary acknowledged heartbeat k.
	acked []time.Time
	// seen[k-1] is when heartbeat k was first found on the replica.
	seen []time.Time
	// visible is the highest heartbeat the replica has shown.
	visible int64
	// lag is each second's longest lag.
	lag    []time.Duration
	errors int64

	// waited is how long StartHeartbeat waited for the replica to catch
	// up, and applied whether it did.
	waited  time.Duration
	applied bool
}

// Options are a heartbeat's intervals.
type Options struct {
	// Interval is how often the primary's row is written (1 s).
	Interval time.Duration
	// Poll is how often the replica is looked at; a heartbeat's lag is
	// exact to within it. For FineFor after a heartbeat is acknowledged,
	// until the replica shows it, it is looked at every FinePoll.
	Poll, FinePoll, FineFor time.Duration
	// CatchUp, when above 0, makes StartHeartbeat wait, up to that long,
	// for the replica to show the new heartbeat table before it starts:
	// the table is created after everything written before, so a replica
	// that shows it has applied a load just done.
	CatchUp time.Duration
}

// DefaultOptions writes a heartbeat every second and looks for it every
// millisecond for 20 ms, then every 10 ms: about 120 one-row reads a
// second, nothing a replica notices, for lags exact to 1 ms while they
// are under 20 ms and to 10 ms above.
var DefaultOptions = Options{Interval: time.Second, Poll: 10 * time.Millisecond, FinePoll: time.Millisecond, FineFor: 20 * time.Millisecond}

// StartHeartbeat creates the heartbeat table name on the primary and
// starts writing and looking. Stop ends it; Drop drops the table.
func StartHeartbeat(ctx context.Context, primary, replica driver.Replicated, name string, o Options) (*Heartbeat, error) {
	if err := primary.CreateHeartbeat(ctx, name); err != nil {
		return nil, fmt.Errorf("creating the heartbeat table %s: %w", name, err)
	}
	h := &Heartbeat{primary: primary, replica: replica, name: name, o: o, acks: make(chan struct{}, 1)}
	if o.CatchUp > 0 {
		if err := h.catchUp(ctx); err != nil {
			return h, err
		}
	}
	h.start = time.Now()
	ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	h.done.Add(2)
	go h.write(ctx)
	go h.look(ctx)
	return h, nil
}

// catchUp waits for the replica to show the heartbeat table, up to
// o.CatchUp; ctx ending ends the wait with its error.
func (h *Heartbeat) catchUp(ctx context.Context) error {
	began := time.Now()
	for {
		_, found, err := h.replica.ReadHeartbeat(ctx, h.name)
		if err == nil && found {
			h.waited, h.applied = time.Since(began), true
			return nil
		}
		if time.Since(began) >= h.o.CatchUp {
			h.waited = time.Since(began)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for the replica to apply the load: %w", ctx.Err())
		case <-time.After(h.o.Poll):
		}
	}
}

// CaughtUp says how long StartHeartbeat waited for the replica
// (Options.CatchUp) and whether the replica showed the table by then.
func (h *Heartbeat) CaughtUp() (waited time.Duration, applied bool) { return h.waited, h.applied }

// Start is when the heartbeat began.
func (h *Heartbeat) Start() time.Time { return h.start }

// MeasureFrom keeps, of what the heartbeat measures, only what comes at
// from or later, as the runner's figures leave out the --start-at wait
// and the warm-up: the heartbeats acknowledged from then on, the lag of
// the looks from then on, and the seconds counted from Origin(from). The
// heartbeat goes on writing and looking before it, so that the lag is
// known from the first measured second.
func (h *Heartbeat) MeasureFrom(from time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.from = from
	// What was kept so far came before from, and its seconds counted
	// from the heartbeat's start.
	h.lag, h.errors = nil, 0
}

// measuredFrom is from, or the heartbeat's start before MeasureFrom.
// h.mu is held.
func (h *Heartbeat) measuredFrom() time.Time {
	if h.from.IsZero() {
		return h.start
	}
	return h.from
}

// Origin is the wall clock's whole second start falls in, which a
// heartbeat's seconds count from: the runner's intervals end on whole
// seconds too (runner.Origin), so the seconds of the lag, the stale reads
// and the operations line up, and so do those of several clients.
func Origin(start time.Time) time.Time {
	// Subtracting keeps the monotonic reading that Truncate drops.
	return start.Add(-start.Sub(start.Truncate(time.Second)))
}

// Origin is the origin of the heartbeat's seconds: Origin of its start,
// or of MeasureFrom's from once it was called.
func (h *Heartbeat) Origin() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Origin(h.measuredFrom())
}

// write writes heartbeat 1, 2, … every interval, each acknowledged before
// the next.
func (h *Heartbeat) write(ctx context.Context) {
	defer h.done.Done()
	tick := time.NewTicker(h.o.Interval)
	defer tick.Stop()
	for seq := int64(1); ; seq++ {
		err := h.primary.WriteHeartbeat(ctx, h.name, seq)
		now := time.Now()
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		if err != nil {
			if !now.Before(h.measuredFrom()) {
				h.errors++
			}
			seq--
		} else {
			h.acked = append(h.acked, now)
		}
		h.mu.Unlock()
		if err == nil {
			select {
			case h.acks <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// look reads the replica's heartbeat every poll, at once when a
// heartbeat is acknowledged, and every fine poll after that until the
// replica shows it (for FineFor).
func (h *Heartbeat) look(ctx context.Context) {
	defer h.done.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		seq, found, err := h.replica.ReadHeartbeat(ctx, h.name)
		now := time.Now()
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		switch {
		case err != nil:
			if !now.Before(h.measuredFrom()) {
				h.errors++
			}
		case found:
			h.observe(seq, now)
		default:
			h.observe(0, now)
		}
		wait := h.o.Poll
		if h.visible < int64(len(h.acked)) && now.Sub(h.acked[h.visible]) < h.o.FineFor {
			wait = h.o.FinePoll
		}
		h.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-h.acks:
			// Go 1.23 on, a stopped timer delivers nothing stale after
			// Reset; before, a stale tick would only bring a look early.
			timer.Stop()
		}
	}
}

// observe records that the replica showed heartbeat seq at now, and,
// from the measured part on, the lag at now: the time since the oldest
// acknowledged heartbeat it did not show was acknowledged. h.mu is held.
func (h *Heartbeat) observe(seq int64, now time.Time) {
	for k := h.visible + 1; k <= seq; k++ {
		h.seen = append(h.seen, now)
	}
	h.visible = max(h.visible, seq)
	from := h.measuredFrom()
	if now.Before(from) {
		return
	}
	var lag time.Duration
	if h.visible < int64(len(h.acked)) {
		lag = max(now.Sub(h.acked[h.visible]), 0)
	}
	sec := int(now.Sub(Origin(from)) / time.Second)
	for len(h.lag) <= sec {
		h.lag = append(h.lag, 0)
	}
	h.lag[sec] = max(h.lag[sec], lag)
}

// Stop ends the writes and the looks and returns what they measured from
// the measured part on (MeasureFrom), the heartbeats the replica had not
// shown counted with the time they had waited.
func (h *Heartbeat) Stop() (result.ReplicaLag, []time.Duration) {
	if h.cancel == nil {
		return result.ReplicaLag{Table: h.name}, nil
	}
	h.cancel()
	h.done.Wait()
	end := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	from := h.measuredFrom()
	l := result.ReplicaLag{
		Table: h.name, Start: from,
		IntervalMS: ms(h.o.Interval), PollMS: ms(h.o.Poll), FinePollMS: ms(h.o.FinePoll), FineForMS: ms(h.o.FineFor),
		Errors: h.errors,
	}
	for i, a := range h.acked {
		if a.Before(from) {
			continue
		}
		l.Written++
		var lag time.Duration
		if i < len(h.seen) {
			l.Seen++
			// Seen before its acknowledgement reached dbprobe: no lag.
			lag = max(h.seen[i].Sub(a), 0)
		} else {
			lag = end.Sub(a)
		}
		l.LagsMS = append(l.LagsMS, ms(lag))
	}
	l.SetLagFigures()
	return l, slices.Clone(h.lag)
}

// Drop drops the heartbeat table.
func (h *Heartbeat) Drop(ctx context.Context) error {
	if err := h.primary.DropHeartbeat(ctx, h.name); err != nil {
		return fmt.Errorf("dropping the heartbeat table %s: %w", h.name, err)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
