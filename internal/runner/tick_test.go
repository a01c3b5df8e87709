package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFirstBoundary(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	tests := []struct {
		start, want int // ms after 12:00:00
		tick        time.Duration
	}{
		{300, 1000, time.Second},
		{0, 1000, time.Second}, // a start on a second has a whole first interval
		{999, 1000, time.Second},
		{1250, 2000, time.Second},
		{250, 300, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := firstBoundary(at(tt.start), tt.tick); !got.Equal(at(tt.want)) {
			t.Errorf("firstBoundary(+%dms, %v) = %v, want +%dms", tt.start, tt.tick, got, tt.want)
		}
		if got := Origin(at(tt.start), tt.tick); !got.Equal(at(tt.want).Add(-tt.tick)) {
			t.Errorf("Origin(+%dms, %v) = %v, want +%v", tt.start, tt.tick, got, at(tt.want).Add(-tt.tick))
		}
	}
	// The boundary keeps the start's monotonic reading, so a change of the
	// wall clock does not move the ticker's waits: it prints with "m=".
	if b := firstBoundary(time.Now(), time.Second); !strings.Contains(b.String(), " m=") {
		t.Errorf("firstBoundary dropped the monotonic reading: %v", b)
	}
}

// Ticks end on the wall clock's boundaries, not at start + k×Tick: a
// phase started half way through a tick has a short first interval, then
// whole ones each ending just after a boundary, and a last one at its end.
// (Tick is 100 ms here so the test is quick; the runner's default is 1 s.)
func TestTicksEndOnWallClockBoundaries(t *testing.T) {
	const tick = 100 * time.Millisecond
	// Start half way through a tick, where start + k×Tick would end every
	// interval 50 ms off its boundary.
	now := time.Now()
	time.Sleep(now.Truncate(tick).Add(tick + tick/2).Sub(now))
	var mu sync.Mutex
	var ticks []Tick
	var started, origin time.Time
	db := &fakeDB{delay: 100 * time.Microsecond}
	out, err := Execute(context.Background(), db.plan(0, PerWorker), Options{Threads: 2, Tick: tick, MaxExecutionTime: 460 * time.Millisecond,
		OnStart: func(s, o time.Time) { started, origin = s, o },
		OnTick:  func(tk Tick) { mu.Lock(); ticks = append(ticks, tk); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if len(ticks) < 4 {
		t.Fatalf("%d ticks in %v at %v each", len(ticks), out.RunTime, tick)
	}
	if !ticks[0].Start.Equal(started) || !origin.Equal(started.Truncate(tick)) {
		t.Fatalf("first tick starts at %v, origin %v; the phase started at %v", ticks[0].Start, origin, started)
	}
	// On a busy machine the ticker may wake late; a quarter of a tick
	// still tells a boundary from start + k×Tick, 50 ms off.
	const late = tick / 4
	var ops int64
	for k, tk := range ticks {
		ops += tk.Ops
		if k > 0 && !tk.Start.Equal(ticks[k-1].End) {
			t.Fatalf("tick %d starts at %v, the previous one ended at %v", k, tk.Start, ticks[k-1].End)
		}
		if k == len(ticks)-1 {
			if !tk.End.Equal(out.End) || tk.Elapsed != out.RunTime {
				t.Fatalf("last tick ends at %v (%v in), the phase at %v (%v)", tk.End, tk.Elapsed, out.End, out.RunTime)
			}
			break
		}
		boundary := origin.Add(time.Duration(k+1) * tick)
		if d := tk.End.Sub(boundary); d < 0 || d > late {
			t.Fatalf("tick %d ends %v after its boundary %v (%v into the phase); want within %v", k, d, boundary, tk.Elapsed, late)
		}
	}
	if ops != out.Ops || out.RunTime != out.End.Sub(started) {
		t.Fatalf("ticks add up to %d ops, the outcome says %d; run time %v for %v … %v", ops, out.Ops, out.RunTime, started, out.End)
	}
}
