package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbprobe/dbprobe/internal/compare"
	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/stats"
	"github.com/dbprobe/dbprobe/internal/result"
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
	// A storage rate is kept in bytes a second; the chart shows it in
	// the unit the experiment's text output uses (MB/s, GB/min), not as
	// "280M" with no unit.
	scale, headline := 1.0, sweep.MetricThroughput
	if s.Kind == result.ExperimentStorage {
		headline = sweep.MetricRate
	}
	if f := strings.Fields(s.Experiment); c.Metric == sweep.MetricRate && len(f) == 2 {
		var unit string
		scale, unit = result.RateIn(f[1], 1)
		label += " (" + unit + ")"
	}
	ch := report.Chart{
		Title:  label + " over " + c.Key + fixedLabel(c.Fixed),
		XLabel: c.Key, YLabel: label,
		X: report.XNumber, Xs: c.X,
	}
	med := report.Series{Label: "median", Points: true}
	for _, y := range c.Y {
		med.Y = append(med.Y, ptr(y*scale))
	}
	ch.Series = append(ch.Series, med)
	// The fit is of the headline metric: throughput, or a storage rate.
	if c.Metric != headline {
		return ch
	}
	for _, f := range s.Fits {
		if f.Key != c.Key || f.Error != "" || fixedLabel(f.Fixed) != fixedLabel(c.Fixed) {
			continue
		}
		u := stats.USL{Lambda: f.Lambda, Sigma: f.Sigma, Kappa: f.Kappa}
		fit := report.Series{Label: fmt.Sprintf("USL fit (R² %.2f)", f.R2), Dashed: true}
		for _, x := range c.X {
			fit.Y = append(fit.Y, ptr(u.Throughput(x)*scale))
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

// sweepCompareSections compares the variants of a sweep. Two variants,
// each with at least four runs that ended well, are compared as dbprobe
// compare does, on every metric; three or more are each held against the
// baseline on the headline metric, Holm over the comparisons, as the
// sweep's text output does. A comparison that cannot be made (a run's
// result is gone) is said in a paragraph.
func sweepCompareSections(name string, s *sweep.Summary) []report.Section {
	title := "Comparison of " + name + "'s variants"
	notCompared := func(err error) []report.Section {
		return []report.Section{{Title: title, Kind: "compare",
			Blocks: []report.Block{report.Paragraph{Text: "Not compared: " + err.Error()}}}}
	}
	if len(s.Variants) > 2 {
		p, err := sweep.ComparePairs(s, filepath.Dir(name))
		if err != nil {
			return notCompared(err)
		}
		if p == nil {
			return nil
		}
		return []report.Section{pairwiseSection(title, p)}
	}
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
			return notCompared(err)
		}
		sides[i] = side
	}
	c, err := compare.Run(sides[0], sides[1], compare.Options{})
	if err != nil {
		return notCompared(err)
	}
	return []report.Section{{Title: "Comparison of " + name + "'s two variants", Kind: "compare", Blocks: compareBlocks(c, false)}}
}

// pairwiseSection draws each variant held against the baseline: a
// verdict for each difference shown, and the table of them all.
func pairwiseSection(title string, p *sweep.Pairwise) report.Section {
	blocks := []report.Block{report.Paragraph{Text: "Each variant " + p.Heading() + "."}}
	for i, v := range p.Verdicts() {
		m := p.Comparisons[i].Metrics
		if len(m) == 1 && (m[0].Outcome == compare.Better || m[0].Outcome == compare.Worse) {
			blocks = append(blocks, report.Verdict{Label: v[0], Text: v[1], Bad: m[0].Outcome == compare.Worse})
		}
	}
	t := p.Table()
	tab := report.Table{Caption: "Each variant against " + p.Baseline.Name + ", " + p.Label + ": medians, change (Hodges–Lehmann, 95% CI), p after Holm", Head: t[0], Rows: t[1:],
		Numeric: []bool{false, true, true, true, true, false}}
	for i, v := range p.Verdicts() {
		tab.Rows[i] = append(tab.Rows[i], v[1])
	}
	tab.Head = append(tab.Head, "verdict")
	tab.Numeric = append(tab.Numeric, false)
	blocks = append(blocks, tab)
	for _, s := range p.Skipped {
		blocks = append(blocks, report.Paragraph{Text: "Not compared: " + s + "."})
	}
	return report.Section{Title: title, Kind: "compare", Blocks: blocks}
}

// compareBlocks draws a comparison: a verdict for each metric that
// differs, the table of every metric and, when full, the settings that
// differ between the sides and the comparison's notes.
func compareBlocks(c *compare.Comparison, full bool) []report.Block {
	caption := fmt.Sprintf("%s (A) against %s (B), per metric: medians, change, and the rank test's verdict", c.A.Name, c.B.Name)
	if c.A.Name == "A" && c.B.Name == "B" {
		caption = "Side A against side B, per metric: medians, change, and the rank test's verdict (Holm over the metrics)"
	}
	tab := report.Table{
		Caption: caption,
		Head:    []string{"metric", "median A", "median B", "change", "outcome", "verdict"},
		Numeric: []bool{false, true, true, true, false, false},
	}
	var blocks []report.Block
	if full {
		blocks = append(blocks, report.Paragraph{Text: fmt.Sprintf("Side A: %s. Side B: %s. Phase %s of dbprobe %s.", strings.Join(c.A.Files, ", "), strings.Join(c.B.Files, ", "), c.Phase, c.Experiment)})
	}
	for _, m := range c.Metrics {
		label := m.Label
		if m.Unit != "" {
			label += " (" + m.Unit + ")"
		}
		medA, medB, change := m.Cells()
		tab.Rows = append(tab.Rows, []string{label, medA, medB, change, string(m.Outcome), m.Verdict})
		if m.Outcome == compare.Better || m.Outcome == compare.Worse {
			blocks = append(blocks, report.Verdict{Label: m.Label, Text: m.Verdict, Bad: m.Outcome == compare.Worse})
		}
	}
	blocks = append(blocks, tab)
	if !full {
		return blocks
	}
	if len(c.Differences) > 0 {
		d := report.Table{Caption: "Settings that differ between the sides", Head: []string{"setting", "A", "B"}, Numeric: []bool{false, false, false}}
		for _, x := range c.Differences {
			d.Rows = append(d.Rows, []string{x.Setting, strings.Join(x.A, ", "), strings.Join(x.B, ", ")})
		}
		blocks = append(blocks, d)
	} else {
		blocks = append(blocks, report.Paragraph{Text: "No setting differs between the sides."})
	}
	for _, n := range c.Notes {
		blocks = append(blocks, report.Paragraph{Text: "Note: " + n})
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, c); err == nil {
		blocks = append(blocks, report.Code{Caption: "The comparison as dbprobe compare prints it", Text: text.String(), Collapsed: true})
	}
	return blocks
}
