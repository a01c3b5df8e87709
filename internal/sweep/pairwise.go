package sweep

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/compare"
)

// Pairwise is each variant of a sweep held against its baseline, as
// dbprobe compare holds B against A, on the sweep's headline metric.
type Pairwise struct {
	// Baseline is the variant the others are compared against.
	Baseline VariantRecord
	// Metric is the compare metric compared ("throughput", or "rate"
	// for a storage sweep), Label how to say it.
	Metric, Label string
	// Comparisons are in the variants' order, the baseline left out;
	// each compares the baseline (side A) with one variant (side B).
	Comparisons []*compare.Comparison
	// Skipped names the variants not compared and why (no run ended
	// well).
	Skipped []string
}

// BaselineID finds the variant --baseline names: its ID ("3") or its
// name ("threads=4", "threads=4 durability=full"); 0 for an empty name.
func BaselineID(variants []Variant, name string) (int, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return 0, nil
	}
	var names []string
	for _, v := range variants {
		if strconv.Itoa(v.ID) == name || v.Name() == name || strings.ReplaceAll(v.Name(), " ", ",") == name {
			return v.ID, nil
		}
		names = append(names, v.Name())
	}
	return 0, fmt.Errorf("--baseline %q names no variant: give a variant's number (1 to %d) or its settings, one of %s", name, len(variants), strings.Join(names, "; "))
}

// ComparePairs holds every variant of a sweep of two or more against the
// baseline (the summary's Baseline, or the first variant), from the
// runs' results, which are relative to dir (the summary's directory):
// on the headline metric alone, throughput or a storage rate, because
// the Holm correction is over the comparisons, and every further metric
// would multiply them. It returns nil without two variants with a run
// that ended well.
func ComparePairs(s *Summary, dir string) (*Pairwise, error) {
	if len(s.Variants) < 2 {
		return nil, nil
	}
	p := &Pairwise{Metric: "throughput", Label: "throughput"}
	if s.Kind == "storage" {
		p.Metric, p.Label = "rate", "rate"
	}
	base := s.Variants[0]
	for _, v := range s.Variants {
		if v.ID == s.Baseline {
			base = v
		}
	}
	p.Baseline = base
	if base.RunsOK == 0 {
		return nil, fmt.Errorf("the baseline, variant %d (%s), has no run that ended well", base.ID, base.Name)
	}
	side := func(v VariantRecord) (compare.Side, error) {
		var paths []string
		for _, r := range s.Runs {
			if r.Variant == v.ID && r.Status == StatusOK && r.Path != "" {
				path := r.Path
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				paths = append(paths, path)
			}
		}
		return compare.Load(v.Name, paths)
	}
	a, err := side(base)
	if err != nil {
		return nil, err
	}
	var others []compare.Side
	for _, v := range s.Variants {
		if v.ID == base.ID {
			continue
		}
		if v.RunsOK == 0 {
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s: no run ended well", v.Name))
			continue
		}
		b, err := side(v)
		if err != nil {
			return nil, err
		}
		others = append(others, b)
	}
	if len(others) == 0 {
		return nil, nil
	}
	p.Comparisons, err = compare.RunAgainst(a, others, compare.Options{Metrics: []string{p.Metric}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Heading says what is compared, with what and how.
func (p *Pairwise) Heading() string {
	n := len(p.Comparisons)
	what := "against the baseline " + p.Baseline.Name + " (variant " + strconv.Itoa(p.Baseline.ID) + "), " + p.Label + " as dbprobe compare judges it"
	if n > 1 {
		what += fmt.Sprintf(", the Holm correction over the %d comparisons", n)
	}
	return what
}

// metric is the compared metric of one comparison.
func (p *Pairwise) metric(c *compare.Comparison) *compare.Metric {
	for _, m := range c.Metrics {
		if m.Name == p.Metric {
			return m
		}
	}
	return nil
}

// Verdicts are the comparisons' verdicts, one per compared variant, in
// order: the variant's name and the sentence.
func (p *Pairwise) Verdicts() [][2]string {
	var out [][2]string
	for _, c := range p.Comparisons {
		text := "not compared: no " + p.Label + " in its results"
		if m := p.metric(c); m != nil {
			text = m.Verdict
		}
		out = append(out, [2]string{c.B.Name, text})
	}
	return out
}

// Table is the comparisons as rows: variant, baseline's median, the
// variant's, the change with its interval, p adjusted, outcome.
func (p *Pairwise) Table() [][]string {
	rows := [][]string{{"variant", "baseline median", "median", "change (95% CI)", "p (Holm)", "outcome"}}
	for _, c := range p.Comparisons {
		m := p.metric(c)
		if m == nil {
			rows = append(rows, []string{c.B.Name, "", "", "", "", string(compare.NotCompared)})
			continue
		}
		change, pv := "", ""
		if ch := m.Change; ch != nil {
			change = fmt.Sprintf("%+.1f%% (%+.1f%% to %+.1f%%)", 100*ch.Estimate, 100*ch.Low, 100*ch.High)
		}
		if m.PAdjusted != nil {
			pv = strconv.FormatFloat(*m.PAdjusted, 'g', 2, 64)
		}
		// The medians as compare prints them: grouped, to what the runs
		// can tell (15,839, not 15838.9).
		medA, medB, _ := m.Cells()
		rows = append(rows, []string{c.B.Name, medA, medB, change, pv, string(m.Outcome)})
	}
	return rows
}

// WritePairwise prints the comparisons under the recap, as comment
// lines like the recap's own conclusions.
func WritePairwise(w io.Writer, p *Pairwise) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# compared %s:\n", p.Heading())
	for _, v := range p.Verdicts() {
		if strings.HasPrefix(v[1], v[0]+" ") {
			// "threads=8 is 41% faster …" names its variant already.
			fmt.Fprintf(&b, "#   %s\n", v[1])
		} else {
			fmt.Fprintf(&b, "#   %s: %s\n", v[0], v[1])
		}
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "#   not compared: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
