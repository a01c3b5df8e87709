package replica

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var fastOptions = Options{Interval: 20 * time.Millisecond, Poll: 2 * time.Millisecond, FinePoll: time.Millisecond, FineFor: 5 * time.Millisecond}

func pair() (*fakeServer, *fakeDB, *fakeDB) {
	s := newFakeServer()
	info := driver.Info{Driver: "fake", Product: "Fake"}
	p := &fakeDB{s: s, info: info, role: driver.Role{Instance: "p", Identity: "sys1"}}
	r := &fakeDB{s: s, info: info, role: driver.Role{Instance: "r", Identity: "sys1", Replica: true, Upstream: "sys1"}}
	return s, p, r
}

// waitWritten waits until the heartbeat has written n heartbeats.
func waitWritten(t *testing.T, h *Heartbeat, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := len(h.acked)
		h.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d heartbeats written in 30 s", n)
}

func TestHeartbeatHealthyAndPaused(t *testing.T) {
	for _, paused := range []bool{false, true} {
		s, p, r := pair()
		e, err := NewEpoch(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		name := HeartbeatName(e)
		if !strings.HasPrefix(name, HeartbeatPrefix) || driver.CheckIdentifier("table", name) != nil {
			t.Fatalf("heartbeat name %q is not a plain identifier with the prefix", name)
		}
		s.paused = paused
		h, err := StartHeartbeat(context.Background(), p, r, name, fastOptions)
		if err != nil {
			t.Fatal(err)
		}
		waitWritten(t, h, 5)
		if live, err := LiveEpochs(context.Background(), p); err != nil || len(live) != 1 || live[0] != e {
			t.Fatalf("LiveEpochs: %v, %v; want [%s]", live, err, e)
		}
		lag, seconds := h.Stop()
		if err := h.Drop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(s.created) != 1 || len(s.dropped) != 1 || s.created[0] != name || s.dropped[0] != name {
			t.Errorf("paused=%v: created %v, dropped %v; want %s once each", paused, s.created, s.dropped, name)
		}
		if lag.Written < 5 || lag.Table != name || len(seconds) == 0 {
			t.Errorf("paused=%v: %+v with %d seconds", paused, lag, len(seconds))
		}
		if paused && lag.Seen != 0 {
			t.Errorf("paused replica: %d heartbeats seen, want 0", lag.Seen)
		}
		// The fake replica replays each write as it is made, so every
		// heartbeat is found at the first look after it.
		if !paused && lag.Seen < lag.Written-1 {
			t.Errorf("healthy replica: %d of %d heartbeats seen", lag.Seen, lag.Written)
		}
		// A paused replica's heartbeats wait from their write to the end:
		// the first of them waited longest, the others less.
		if paused && !(lag.MaxMS > lag.P50MS && lag.P50MS > 0) {
			t.Errorf("paused replica: max %v ms, p50 %v ms; want max above the median above 0", lag.MaxMS, lag.P50MS)
		}
		// Every written heartbeat's lag is kept, for dbprobe merge.
		if int64(len(lag.LagsMS)) != lag.Written || len(lag.LagsMS) > 0 && slices.Max(lag.LagsMS) != lag.MaxMS {
			t.Errorf("lags %v for %d written, max %v", lag.LagsMS, lag.Written, lag.MaxMS)
		}
	}
}

// With CatchUp, the heartbeat waits for the replica to show its table;
// a replica that never does is waited for up to the limit.
func TestHeartbeatCatchUp(t *testing.T) {
	for _, paused := range []bool{false, true} {
		s, p, r := pair()
		s.paused = paused
		o := fastOptions
		o.CatchUp = 50 * time.Millisecond
		e, _ := NewEpoch(time.Now())
		h, err := StartHeartbeat(context.Background(), p, r, HeartbeatName(e), o)
		if err != nil {
			t.Fatal(err)
		}
		waited, applied := h.CaughtUp()
		h.Stop()
		if applied == paused || paused && waited < o.CatchUp {
			t.Errorf("paused=%v: waited %v, applied %v", paused, waited, applied)
		}
	}
	// Stopped while waiting: the error says so, and the table can go.
	s, p, r := pair()
	s.paused = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := fastOptions
	o.CatchUp = time.Hour
	h, err := StartHeartbeat(ctx, p, r, "dbprobe_heartbeat_x", o)
	if err == nil || h == nil {
		t.Fatalf("StartHeartbeat with a cancelled wait: %v, %v", h, err)
	}
	if err := h.Drop(context.Background()); err != nil || len(s.dropped) != 1 {
		t.Fatalf("Drop after a cancelled wait: %v, dropped %v", err, s.dropped)
	}
	h.Stop()
}

// After MeasureFrom, the figures are of the heartbeats acknowledged from
// then on, the seconds count from its whole second, and Start says when
// it was: with replay paused, no lag kept is longer than the time since.
func TestHeartbeatMeasuresFrom(t *testing.T) {
	s, p, r := pair()
	s.paused = true
	e, _ := NewEpoch(time.Now())
	h, err := StartHeartbeat(context.Background(), p, r, HeartbeatName(e), fastOptions)
	if err != nil {
		t.Fatal(err)
	}
	waitWritten(t, h, 3)
	from := time.Now()
	h.MeasureFrom(from)
	if !h.Origin().Equal(Origin(from)) {
		t.Errorf("Origin %s, want %s", h.Origin(), Origin(from))
	}
	h.mu.Lock()
	before := len(h.acked)
	h.mu.Unlock()
	waitWritten(t, h, before+3)
	lag, seconds := h.Stop()
	since := time.Since(from)
	h.mu.Lock()
	var after int64
	for _, a := range h.acked {
		if !a.Before(from) {
			after++
		}
	}
	total := len(h.acked)
	h.mu.Unlock()
	if lag.Written != after || after < 3 || int64(total) <= after || int64(len(lag.LagsMS)) != lag.Written {
		t.Errorf("%d written of %d (%d lags), want the %d acknowledged from MeasureFrom on", lag.Written, total, len(lag.LagsMS), after)
	}
	if !lag.Start.Equal(from) {
		t.Errorf("lag.Start %s, want %s", lag.Start, from)
	}
	if limit := ms(since); lag.MaxMS > limit {
		t.Errorf("max lag %v ms, longer than the %v ms since MeasureFrom: an earlier heartbeat counted", lag.MaxMS, limit)
	}
	if n := int(since/time.Second) + 2; len(seconds) > n {
		t.Errorf("%d seconds of lag, want at most %d from %s", len(seconds), n, Origin(from))
	}
	h.Drop(context.Background())
}
