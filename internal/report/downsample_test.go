package report_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/synth"
)

func f64(v float64) *float64 { return &v }

// line is a chart over 1..n seconds with one line, y(i) given.
func line(n int, y func(i int) *float64) report.Chart {
	c := report.Chart{Title: "t", Series: []report.Series{{Label: "a"}}}
	for i := 1; i <= n; i++ {
		c.Xs = append(c.Xs, float64(i))
		c.Series[0].Y = append(c.Series[0].Y, y(i))
	}
	return c
}

func onlyChart(t *testing.T, r *report.Report) report.Chart {
	t.Helper()
	for _, b := range r.Sections[0].Blocks {
		if c, ok := b.(report.Chart); ok {
			return c
		}
	}
	t.Fatal("no chart")
	return report.Chart{}
}

// TestDownsampleKeepsExtremes checks what a reader must still see in a
// summarised hour: a one-second spike and a one-second stall, each at
// its own second; a span without values is a gap; the chart and the page
// say it was summarised.
func TestDownsampleKeepsExtremes(t *testing.T) {
	c := line(3600, func(i int) *float64 {
		switch {
		case i == 1234:
			return f64(900) // a spike
		case i == 2345:
			return f64(1) // a stall
		case i > 3000 && i <= 3100:
			return nil // no interval: a gap of 100 s
		}
		return f64(100 + float64(i%7))
	})
	r := &report.Report{Sections: []report.Section{{Title: "s", Blocks: []report.Block{c}}}}
	d := r.Downsample(100)
	got := onlyChart(t, r)
	if d.Charts != 1 || len(got.Xs) > 2*101 || len(got.Xs) < 150 {
		t.Fatalf("downsampled %+v to %d points, want at most %d", d, len(got.Xs), 2*101)
	}
	if len(got.Series[0].Y) != len(got.Xs) {
		t.Fatalf("%d values for %d xs", len(got.Series[0].Y), len(got.Xs))
	}
	var hi, lo float64 = 0, math.Inf(1)
	var hiX, loX float64
	gapAt := -1.0
	for i, v := range got.Series[0].Y {
		if v == nil {
			gapAt = got.Xs[i]
			continue
		}
		if *v > hi {
			hi, hiX = *v, got.Xs[i]
		}
		if *v < lo {
			lo, loX = *v, got.Xs[i]
		}
	}
	// Each is drawn at an end of its span of 36 s.
	if hi != 900 || math.Abs(hiX-1234) >= 36 || lo != 1 || math.Abs(loX-2345) >= 36 {
		t.Errorf("spike %v at %v, stall %v at %v; want 900 near 1234 and 1 near 2345", hi, hiX, lo, loX)
	}
	if gapAt < 3000 || gapAt > 3101 {
		t.Errorf("the gap from 3001 to 3100 s is not a gap in the summary (a gap at %v)", gapAt)
	}
	for i := 1; i < len(got.Xs); i++ {
		if got.Xs[i] <= got.Xs[i-1] {
			t.Fatalf("x not increasing at %d: %v then %v", i, got.Xs[i-1], got.Xs[i])
		}
	}
	if !strings.Contains(got.Note, "3600 intervals drawn as spans of 36 s") {
		t.Errorf("chart note %q", got.Note)
	}
	if len(r.Notices) != 1 || !strings.Contains(r.Notices[0], "lowest and highest") {
		t.Errorf("notices %q", r.Notices)
	}
}

// TestDownsampleLeavesShortCharts: a chart within the bound and a chart
// over something else than time are drawn as they are.
func TestDownsampleLeavesShortCharts(t *testing.T) {
	short := line(150, func(i int) *float64 { return f64(float64(i)) })
	other := line(1000, func(i int) *float64 { return f64(float64(i)) })
	other.X = report.XNumber
	r := &report.Report{Sections: []report.Section{{Title: "s", Blocks: []report.Block{short, report.Group{Blocks: []report.Block{other}}}}}}
	if d := r.Downsample(100); d.Charts != 0 || len(r.Notices) != 0 {
		t.Errorf("downsampled %+v, notices %q; want nothing", d, r.Notices)
	}
}

// TestDownsampleOnLogScale: a zero on a log scale is a gap, never a
// span's lowest value (it would hide the span's real low).
func TestDownsampleOnLogScale(t *testing.T) {
	c := line(1000, func(i int) *float64 {
		if i%10 == 0 {
			return f64(0)
		}
		return f64(50)
	})
	c.LogY = true
	r := &report.Report{Sections: []report.Section{{Title: "s", Blocks: []report.Block{c}}}}
	r.Downsample(50)
	for _, v := range onlyChart(t, r).Series[0].Y {
		if v == nil || *v != 50 {
			t.Fatalf("a span's value %v, want 50", v)
		}
	}
}

// TestAutoBuckets: one hour's page is drawn second by second; a hundred
// are cut to the budget, and the page that results keeps to it.
func TestAutoBuckets(t *testing.T) {
	one := synthetic(t, synth.Options{Duration: 4 * time.Minute, Seed: 9})
	r := report.Build([]report.Input{{Name: "a.jsonl", File: one}})
	if b := r.AutoBuckets(0); b != 0 {
		t.Errorf("one 4-minute result: %d buckets, want 0 (every second)", b)
	}
	var inputs []report.Input
	for range 20 {
		inputs = append(inputs, report.Input{Name: "a.jsonl", File: one})
	}
	r = report.Build(inputs)
	const budget = 150_000
	b := r.AutoBuckets(budget)
	if b < report.MinBuckets || b >= 120 {
		t.Fatalf("20 results of 240 s, budget %d: %d buckets", budget, b)
	}
	d := r.Downsample(b)
	total := 0
	for _, s := range r.Sections {
		total += values(s.Blocks)
	}
	if total > budget || d.After > budget || d.Charts == 0 {
		t.Errorf("after downsampling to %d buckets: %d values (%+v), want at most %d", b, total, d, budget)
	}
	// One bucket more would have gone past the budget: the page is as
	// fine as the budget allows.
	if d.After+2*d.Charts < budget/2 {
		t.Errorf("only %d of %d values used", d.After, budget)
	}
}

func values(bs []report.Block) int {
	n := 0
	for _, b := range bs {
		switch b := b.(type) {
		case report.Chart:
			if b.X == report.XSeconds {
				n += len(b.Xs) * len(b.Series)
			}
		case report.Group:
			n += values(b.Blocks)
		}
	}
	return n
}
