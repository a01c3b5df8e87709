package report

import (
	"slices"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
)

// The hit-share chart draws the measured shares as markers and the 95%
// threshold as the dashed line docs/report.md shows: a chart marked
// points-only as a whole draws the threshold as dots too.
func TestCacheChartDrawsTheThresholdAsALine(t *testing.T) {
	c := &result.CacheFigures{Threshold: 0.95, Points: []result.CachePoint{
		{Bytes: 8e6, HitShare: 1}, {Bytes: 16e6, HitShare: 0.99}, {Bytes: 32e6, HitShare: 0.9},
	}}
	for _, b := range cacheBlocks(c) {
		ch, ok := b.(Chart)
		if !ok || ch.Title != "Working-set size → hit share" {
			continue
		}
		hit, thr := ch.Series[0], ch.Series[1]
		if !ch.Points && hit.Points && !thr.Points && thr.Dashed {
			return
		}
		t.Fatalf("chart points %v, hit share points %v, threshold points %v dashed %v: want markers and a dashed line", ch.Points, hit.Points, thr.Points, thr.Dashed)
	}
	t.Fatal("no hit-share chart")
}

// A phase that runs several passes (storage cache's working sets, one
// after another) restarts its intervals' elapsed time at each: the charts
// over time place each interval by its end since the phase started, or
// the passes are drawn over one another and a line runs back in time.
func TestChartsOverTimeFollowTheClock(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	var ivs []result.Interval
	for pass := range 2 {
		for k := 1; k <= 2; k++ {
			end := t0.Add(time.Duration(pass*3+k) * time.Second)
			ivs = append(ivs, result.Interval{Start: end.Add(-time.Second), End: end, Elapsed: time.Duration(k) * time.Second, Ops: 10, OpsPerSec: 10})
		}
	}
	p := result.Phase{Intervals: ivs}
	ru := &run{phase: p, start: phaseStart(p)}
	for _, b := range latencyBlocks(ru, true) {
		ch, ok := b.(Chart)
		if !ok || ch.Title != "Throughput over time" {
			continue
		}
		want := []float64{1, 2, 4, 5}
		if !slices.Equal(ch.Xs, want) {
			t.Fatalf("x of the intervals %v, want %v (seconds since the phase started)", ch.Xs, want)
		}
		return
	}
	t.Fatal("no throughput chart")
}
