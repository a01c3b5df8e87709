package report

import (
	"testing"

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
