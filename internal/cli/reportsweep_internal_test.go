package cli

import (
	"testing"

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
