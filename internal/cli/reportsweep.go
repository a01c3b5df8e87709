package cli

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/compare"
	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/stats"
	"github.com/dbprobe/dbprobe/internal/sweep"
)

// sweepSection draws a sweep summary (the summary.json of dbprobe sweep)
// as a report section: the recap table, one column per variant; each
// curve as a chart, with the Universal Scalability Law fit over the same
// key as a dashed line; the fits and the conclusions (the drift check's
// among them) as verdicts, and the notes.
func sweepSection(name string, s *sweep.Summary) report.Section {
	sec := report.Section{Title: "Sweep " + name + ": dbprobe " + s.Experiment, Kind: "sweep"}
	var blocks []report.Block
	if s.Status != sweep.StatusComplete {
		blocks = append(blocks, report.Verdict{Label: "status", Text: "the sweep is " + s.Status + ": the figures are those of the runs that ended", Bad: true})
	}
	if t := sweep.RecapTable(s); len(t) > 0 {
		tab := report.Table{
			Caption: fmt.Sprintf("Recap: the median of each variant's runs (%d asked per variant)", s.Reps),
			Head:    t[0],
			Rows:    t[1:],
			Numeric: make([]bool, len(t[0])),
		}
		for i := 1; i < len(tab.Numeric); i++ {
			tab.Numeric[i] = true
		}
		blocks = append(blocks, tab)
	}
	for _, c := range s.Curves {
		blocks = append(blocks, curveChart(s, c))
	}
	// A fit's sentence says why there is no fit when there is none, and is
	// also among the conclusions, for the text recap: said once here.
	fitted := map[string]bool{}
	for _, f := range s.Fits {
		fitted[f.Sentence] = true
		blocks = append(blocks, report.Verdict{Label: "scalability over " + f.Key + fixedLabel(f.Fixed), Text: f.Sentence})
	}
	for _, c := range s.Conclusions {
		if !fitted[c] {
			blocks = append(blocks, report.Verdict{Label: "conclusion", Text: c})
		}
	}
	for _, n := range s.Notes {
		blocks = append(blocks, report.Paragraph{Text: "Note: " + n})
	}
	sec.Blocks = blocks
	return sec
}

// curveChart draws a curve's medians, and the USL fit over the same key
// and fixed settings when the curve is throughput.
func curveChart(s *sweep.Summary, c sweep.Curve) report.Chart {
	label := c.Metric
	for _, r := range s.Rows {
		if r.Key == c.Metric {
			label = r.Label
		}
	}
	ch := report.Chart{
		Title:  label + " over " + c.Key + fixedLabel(c.Fixed),
		XLabel: c.Key, YLabel: label,
		X: report.XNumber, Xs: c.X,
	}
	med := report.Series{Label: "median", Points: true}
	for _, y := range c.Y {
		med.Y = append(med.Y, ptr(y))
	}
	ch.Series = append(ch.Series, med)
	if c.Metric != sweep.MetricThroughput {
		return ch
	}
	for _, f := range s.Fits {
		if f.Key != c.Key || f.Error != "" || fixedLabel(f.Fixed) != fixedLabel(c.Fixed) {
			continue
		}
		u := stats.USL{Lambda: f.Lambda, Sigma: f.Sigma, Kappa: f.Kappa}
		fit := report.Series{Label: fmt.Sprintf("USL fit (R² %.2f)", f.R2), Dashed: true}
		for _, x := range c.X {
			fit.Y = append(fit.Y, ptr(u.Throughput(x)))
		}
		ch.Series = append(ch.Series, fit)
	}
	return ch
}

func fixedLabel(f []sweep.Setting) string {
	if len(f) == 0 {
		return ""
	}
	var parts []string
	for _, s := range f {
		parts = append(parts, s.Key+"="+s.Value)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func ptr(v float64) *float64 { return &v }

// sweepCompareSections compares the two variants of a sweep that has
// exactly two, each with at least four runs that ended well, as dbprobe
// compare does; nothing otherwise, or when the comparison cannot be made
// (a run's result is gone), which a paragraph then says.
func sweepCompareSections(name string, s *sweep.Summary) []report.Section {
	if len(s.Variants) != 2 || s.Variants[0].RunsOK < 4 || s.Variants[1].RunsOK < 4 {
		return nil
	}
	dir := filepath.Dir(name)
	var sides [2]compare.Side
	for i, v := range s.Variants {
		var paths []string
		for _, r := range s.Runs {
			if r.Variant == v.ID && r.Status == sweep.StatusOK && r.Path != "" {
				p := r.Path
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				paths = append(paths, p)
			}
		}
		side, err := compare.Load(v.Name, paths)
		if err != nil {
			return []report.Section{{Title: "Comparison of " + name + "'s two variants", Kind: "compare",
				Blocks: []report.Block{report.Paragraph{Text: "Not compared: " + err.Error()}}}}
		}
		sides[i] = side
	}
	c, err := compare.Run(sides[0], sides[1], compare.Options{})
	if err != nil {
		return []report.Section{{Title: "Comparison of " + name + "'s two variants", Kind: "compare",
			Blocks: []report.Block{report.Paragraph{Text: "Not compared: " + err.Error()}}}}
	}
	tab := report.Table{
		Caption: fmt.Sprintf("%s (A) against %s (B), per metric: medians, change, and the rank test's verdict", s.Variants[0].Name, s.Variants[1].Name),
		Head:    []string{"metric", "median A", "median B", "outcome", "verdict"},
		Numeric: []bool{false, true, true, false, false},
	}
	var blocks []report.Block
	for _, m := range c.Metrics {
		label := m.Label
		if m.Unit != "" {
			label += " (" + m.Unit + ")"
		}
		tab.Rows = append(tab.Rows, []string{label, strconv.FormatFloat(m.MedianA, 'g', 6, 64), strconv.FormatFloat(m.MedianB, 'g', 6, 64), string(m.Outcome), m.Verdict})
		if m.Outcome == compare.Better || m.Outcome == compare.Worse {
			blocks = append(blocks, report.Verdict{Label: m.Label, Text: m.Verdict, Bad: m.Outcome == compare.Worse})
		}
	}
	blocks = append(blocks, tab)
	return []report.Section{{Title: "Comparison of " + name + "'s two variants", Kind: "compare", Blocks: blocks}}
}
