package cli

import (
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/sweep"
)

// The curve of throughput over a number of workers draws its medians as
// markers and the USL fit over them as a dashed line, as docs/report.md
// says: a chart drawn as markers only would draw the fit as dots too.
func TestCurveChartDrawsTheFitAsALine(t *testing.T) {
	s := &sweep.Summary{Fits: []sweep.FitRecord{{Key: "threads", Lambda: 1000, Sigma: 0.05, Kappa: 0.001, R2: 0.98}}}
	ch := curveChart(s, sweep.Curve{Key: "threads", Metric: sweep.MetricThroughput, X: []float64{1, 2, 4, 8}, Y: []float64{1000, 1900, 3500, 5100}})
	if len(ch.Series) != 2 {
		t.Fatalf("%d series, want the medians and the fit", len(ch.Series))
	}
	med, fit := ch.Series[0], ch.Series[1]
	if !med.Points {
		t.Errorf("the medians are drawn as a line, want markers")
	}
	if ch.Points || fit.Points || !fit.Dashed {
		t.Errorf("the fit is drawn with chart points %v, series points %v, dashed %v; want a dashed line", ch.Points, fit.Points, fit.Dashed)
	}
}

// Each fit's sentence is also among the sweep's conclusions (the text
// recap prints them all): the page says it once, under its fit's label,
// in the sentence's words rather than the fit's error.
func TestSweepSectionSaysEachFitOnce(t *testing.T) {
	fit := "ops/s still grows at threads=4: +233% from 1 to 4; no scalability fit: 2 distinct threads values, 3 needed"
	drift := "no drift shown: throughput did not move clearly with the position in the order"
	s := &sweep.Summary{
		Status:      sweep.StatusComplete,
		Fits:        []sweep.FitRecord{{Key: "threads", Sentence: fit, Error: "usl: 2 distinct concurrencies: too few points for a scalability fit"}},
		Conclusions: []string{drift, fit},
	}
	seen := map[string]int{}
	for _, b := range sweepSection("s.json", s).Blocks {
		if v, ok := b.(report.Verdict); ok {
			seen[v.Text]++
			if strings.HasPrefix(v.Text, "usl:") {
				t.Errorf("verdict %q: the fit's error, not its sentence", v.Text)
			}
		}
	}
	if seen[fit] != 1 || seen[drift] != 1 {
		t.Errorf("the fit's sentence is said %d times and the drift's %d, want once each: %v", seen[fit], seen[drift], seen)
	}
}
