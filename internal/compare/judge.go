package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/report/stats"
)

// Outcome is what a comparison concluded about one metric.
type Outcome string

// The outcomes.
const (
	// Better and Worse: B differs from A, shown at the 5% level after the
	// Holm correction, by at least the minimum effect.
	Better Outcome = "better"
	Worse  Outcome = "worse"
	// NoDifference: the test did not show one.
	NoDifference Outcome = "no difference shown"
	// BelowMinEffect: a difference shown, smaller than --min-effect.
	BelowMinEffect Outcome = "below min effect"
	// TooFew: too few runs for the test to reach p < 0.05; no verdict.
	TooFew Outcome = "too few runs"
	// NotCompared: a side has no value, or the values cannot be put as a
	// ratio (A's median is 0).
	NotCompared Outcome = "not compared"
)

// Metric is one metric compared.
type Metric struct {
	// Name is what --metrics and --fail-if call it: "throughput",
	// "p99.read", "rate".
	Name string `json:"name"`
	// Label and Unit are how the text says it: "READ p99 latency", "µs".
	Label string `json:"label"`
	Unit  string `json:"unit"`
	// HigherIsBetter is true for throughput and rates, false for
	// latencies and costs.
	HigherIsBetter bool `json:"higher_is_better"`
	// A and B are each run's value, in Unit.
	A []float64 `json:"a"`
	B []float64 `json:"b"`
	// MedianA and MedianB are the sides' medians, in Unit.
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// Change is B against A as a fraction (+0.041 for 4.1% more), with
	// its confidence interval; nil when not compared.
	Change *Change `json:"change,omitempty"`
	// P is the rank test's two-sided p-value and PAdjusted the same
	// after the Holm correction over the metrics compared; nil when not
	// compared.
	P         *float64 `json:"p,omitempty"`
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// Exact says P is from the exact distribution.
	Exact   bool    `json:"exact,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Verdict says the outcome in a sentence.
	Verdict string `json:"verdict"`
	// Detectable is the smallest change (a fraction) these runs find 80%
	// of the time at their spread; nil when the spread is unknown or the
	// runs too few.
	Detectable *float64 `json:"detectable,omitempty"`
	// RunsNeeded, for too few runs, is how many per side would show the
	// change seen (or --min-effect, if larger) 80% of the time.
	RunsNeeded int `json:"runs_needed,omitempty"`

	// sd is the pooled spread of a run on the scale compared (natural
	// log, or relative to A's median).
	sd float64
	// logScale says the change was estimated on the log scale.
	logScale bool
}

// Change is a relative change of B against A, with its interval.
type Change struct {
	// Estimate is the Hodges–Lehmann shift as a fraction; Low and High
	// bound its interval, at the confidence Level achieved.
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Level    float64 `json:"level"`
	// Scale is "ratio" (the shift of the logarithms: the median B/A
	// ratio) or "difference" (of the values, over A's median, used where
	// a value is 0 or less and has no logarithm).
	Scale string `json:"scale"`
}

// Judge compares one metric on its own (no Holm correction, there being
// one): the verdict dbprobe compare gives for a single metric. It is
// what the synthetic checks of the verdicts' error rates run.
func Judge(a, b []float64, higherIsBetter bool, minEffect float64) *Metric {
	m := measureMetric(spec{name: "metric", label: "metric", scale: 1, higherBetter: higherIsBetter}, a, b)
	judge([]*Metric{m}, minEffect, sides{"A", "B"})
	return m
}

// measureMetric computes a metric's statistics before the Holm correction.
//
// Why the log scale: a run's spread grows with its level (a run at
// 50,000 ops/s wobbles by thousands, one at 500 by tens), so the sides
// differ by a factor, not by a fixed amount, and the Hodges–Lehmann
// shift's model (B is A moved by a constant) holds for the logarithms.
// Its estimate, the median of every log(b/a), is then the median ratio,
// and the interval's ends are ratios too: "4.1% faster (2.0–6.3%)" is
// exactly what the runs support, not a difference divided by a median
// after the fact. The rank test is the same on either scale.
func measureMetric(sp spec, a, b []float64) *Metric {
	m := &Metric{Name: sp.name, Label: sp.label, Unit: sp.unit, HigherIsBetter: sp.higherBetter}
	for _, v := range a {
		m.A = append(m.A, v*sp.scale)
	}
	for _, v := range b {
		m.B = append(m.B, v*sp.scale)
	}
	if len(a) == 0 || len(b) == 0 {
		m.Outcome = NotCompared
		m.Verdict = "not compared: a side has no value"
		return m
	}
	m.MedianA, m.MedianB = stats.Median(m.A), stats.Median(m.B)
	if hasNonFinite(a) || hasNonFinite(b) {
		m.Outcome = NotCompared
		m.Verdict = "not compared: a run's value is not a number (a run with no time measured)"
		return m
	}
	t, err := stats.MannWhitney(a, b)
	if err != nil {
		m.Outcome = NotCompared
		m.Verdict = "not compared: " + err.Error()
		return m
	}
	p := t.P
	m.P, m.Exact = &p, t.Exact
	if positive(a) && positive(b) {
		la, lb := logs(a), logs(b)
		s, _ := stats.HodgesLehmann(la, lb, Level)
		m.Change = &Change{Estimate: math.Expm1(s.Estimate), Low: math.Expm1(s.Low), High: math.Expm1(s.High), Level: s.Level, Scale: "ratio"}
		m.sd, m.logScale = stats.PooledSD(la, lb), true
		return m
	}
	base := stats.Median(a)
	if base <= 0 {
		m.P = nil
		m.Outcome = NotCompared
		m.Verdict = "not compared: A's median is 0 or less, so no change can be put relative to it"
		return m
	}
	s, _ := stats.HodgesLehmann(a, b, Level)
	m.Change = &Change{Estimate: s.Estimate / base, Low: s.Low / base, High: s.High / base, Level: s.Level, Scale: "difference"}
	m.sd = stats.PooledSD(a, b) / base
	return m
}

// judge applies the Holm correction over the metrics compared and words
// each verdict.
func judge(ms []*Metric, minEffect float64, n sides) {
	var ps []float64
	var idx []int
	for i, m := range ms {
		if m.P != nil {
			ps = append(ps, *m.P)
			idx = append(idx, i)
		}
	}
	adj := stats.Holm(ps)
	for j, i := range idx {
		v := adj[j]
		ms[i].PAdjusted = &v
	}
	for _, m := range ms {
		if m.P != nil {
			decide(m, minEffect, len(ps), n)
		}
	}
}

// fromLog turns a shift on the compared scale into a fraction.
func (m *Metric) fromScale(d float64) float64 {
	if m.logScale {
		return math.Expm1(d)
	}
	return d
}

// toScale turns a fraction into a shift on the compared scale.
func (m *Metric) toScale(f float64) float64 {
	if m.logScale {
		return math.Log1p(f)
	}
	return f
}

// shiftToShow is the shift, on the compared scale, that the runs needed
// are counted for: the change seen, or minEffect if larger. It is taken
// from the change itself, not from its size as a percentage: a fall of
// 67% (to a third) is as large on the log scale as a rise of 200%.
func (m *Metric) shiftToShow(minEffect float64) float64 {
	return math.Max(math.Abs(m.toScale(m.Change.Estimate)), m.toScale(minEffect))
}

// decide sets a compared metric's outcome and verdict; tested is how
// many metrics the Holm correction is over.
//
// What these runs "would detect" is computed at Alpha/tested, the level
// the Holm correction holds its strictest metric to: with one metric it
// is Alpha, with five it may be a fifth of it, and a sentence that
// ignored the correction would promise differences the comparison could
// not show.
func decide(m *Metric, minEffect float64, tested int, n sides) {
	na, nb := len(m.A), len(m.B)
	runs := n.runs(na, nb)
	alpha := Alpha / float64(max(1, tested))
	if stats.MinP(na, nb) >= Alpha {
		// No p-value these runs can give reaches 5%: a verdict either
		// way would be a guess.
		target := math.Max(math.Abs(m.Change.Estimate), minEffect)
		m.Outcome = TooFew
		m.RunsNeeded = stats.RunsNeeded(m.shiftToShow(minEffect), m.sd, alpha, Power)
		m.Verdict = fmt.Sprintf("no verdict: %s, too few for the rank test to reach p < 0.05 (it needs %d runs per side)", runs, minRuns())
		switch {
		case math.IsNaN(m.sd):
			m.Verdict += "; run at least " + strconv.Itoa(m.RunsNeeded) + " per side (one run per side shows no spread)"
		case target == 0:
			m.Verdict += "; run at least " + strconv.Itoa(m.RunsNeeded) + " per side"
		case m.RunsNeeded > stats.MaxRuns:
			m.Verdict += fmt.Sprintf("; with this spread, even %d runs per side would not show %s", stats.MaxRuns, pct(target))
		default:
			what := "the " + pct(target) + " seen here"
			if target == minEffect && minEffect > math.Abs(m.Change.Estimate) {
				what = pct(target) + " (--min-effect)"
			}
			m.Verdict += fmt.Sprintf("; with this spread, %d runs per side would show %s", m.RunsNeeded, what)
		}
		return
	}
	d := m.fromScale(stats.DetectableShift(na, nb, m.sd, alpha, Power))
	if !math.IsInf(d, 0) && !math.IsNaN(d) && d > 1e-9 {
		// With no spread at all (every run measured the same whole
		// microseconds) "would detect 0%" would promise what the
		// metric's resolution cannot give: said otherwise below.
		m.Detectable = &d
	}
	p := *m.PAdjusted
	c := m.Change
	if p >= Alpha {
		m.Outcome = NoDifference
		m.Verdict = fmt.Sprintf("no difference shown (%s)", pIs(p))
		switch {
		case allEqual(m.A, m.B):
			m.Verdict += ": every run of both sides measured the same"
		case m.Detectable != nil:
			m.Verdict += fmt.Sprintf(": with this spread, %s would detect %s", perSide(na, nb), detectText(m))
			if minEffect > 0 && *m.Detectable > minEffect {
				n := stats.RunsNeeded(m.toScale(minEffect), m.sd, alpha, Power)
				if n <= stats.MaxRuns {
					m.Verdict += fmt.Sprintf("; %s (--min-effect) would need %d per side", pct(minEffect), n)
				}
			}
		case stats.MinP(na, nb) >= alpha:
			// The runs could show a difference in one metric, not in
			// this many at once.
			m.Verdict += fmt.Sprintf(": %s cannot show a difference in %d metrics at once", runs, tested)
			target := math.Max(math.Abs(c.Estimate), minEffect)
			if n := stats.RunsNeeded(m.shiftToShow(minEffect), m.sd, alpha, Power); target > 0 && n <= stats.MaxRuns {
				m.RunsNeeded = n
				m.Verdict += fmt.Sprintf("; %d per side would show the %s seen here", n, pct(target))
			}
		}
		return
	}
	shown := shiftText(m, c, p, runs, n.b)
	if math.Abs(c.Estimate) < minEffect {
		m.Outcome = BelowMinEffect
		m.Verdict = fmt.Sprintf("no difference that matters: %s, less than --min-effect %s", shown, pct(minEffect))
		return
	}
	up := c.Estimate > 0
	if up == m.HigherIsBetter {
		m.Outcome = Better
	} else {
		m.Outcome = Worse
	}
	m.Verdict = shown
}

// shiftText words a shown shift: "B is 4.1% faster (95% CI 2.0–6.3%, p
// = 0.008, 5 runs each)" for a rate, "B is better: 7.6% lower (…)" for a
// latency or a cost, where lower is better. A rise to twice or more is
// said as a factor, "B is 15.9× as fast (95% CI 6.5–42.9×, …)": "1493%
// faster" is correct and hard to read.
func shiftText(m *Metric, c *Change, p float64, runs, b string) string {
	lo, hi := c.Low, c.High
	up := c.Estimate > 0
	size := math.Abs(c.Estimate)
	// The interval's ends in the direction of the change, smaller first.
	if !up {
		lo, hi = -c.High, -c.Low
	}
	ci := fmt.Sprintf("%.0f%% CI %s", 100*Level, rangeText(lo, hi))
	factor := c.Estimate >= 1
	if factor {
		ci = fmt.Sprintf("%.0f%% CI %s–%s×", 100*Level, times(1+c.Low), times(1+c.High))
	}
	tail := fmt.Sprintf("(%s, %s, %s)", ci, pIs(p), runs)
	if m.HigherIsBetter {
		if factor {
			return fmt.Sprintf("%s is %s× as fast %s", b, times(1+c.Estimate), tail)
		}
		word := "faster"
		if !up {
			word = "slower"
		}
		return fmt.Sprintf("%s is %s %s %s", b, pct(size), word, tail)
	}
	if factor {
		return fmt.Sprintf("%s is worse: %s× as high %s", b, times(1+c.Estimate), tail)
	}
	word, judgement := "lower", "better"
	if up {
		word, judgement = "higher", "worse"
	}
	return fmt.Sprintf("%s is %s: %s %s %s", b, judgement, pct(size), word, tail)
}

// times is a factor with three significant places: "15.9", "2.04".
func times(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	if f >= 10 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// sides are the names of the two sides, as the verdicts say them.
type sides struct{ a, b string }

// runs is "5 runs each" or "3 runs in A, 5 in B".
func (n sides) runs(na, nb int) string {
	if na == nb {
		return runsText(na, nb)
	}
	r := "runs"
	if na == 1 {
		r = "run"
	}
	return fmt.Sprintf("%d %s in %s, %d in %s", na, r, n.a, nb, n.b)
}

// rangeText is an interval of fractions: "2.0–6.3%", or with signs when
// it straddles zero ("−0.5% to +6.3%").
func rangeText(lo, hi float64) string {
	if lo >= 0 {
		return pctNum(lo) + "–" + pct(hi)
	}
	return signed(lo) + " to " + signed(hi)
}

// pct is a fraction as a percentage with one decimal: "4.1%".
func pct(f float64) string { return pctNum(f) + "%" }

func pctNum(f float64) string {
	v := 100 * f
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// signed is a fraction as a signed percentage: "+4.1%", "−2.0%".
func signed(f float64) string {
	s := pct(math.Abs(f))
	if f < 0 {
		return "−" + s
	}
	return "+" + s
}

// pText is a p-value as a reader takes it in: two significant places
// down to 0.001, then "< 0.001".
func pText(p float64) string {
	switch {
	case p < 0.001:
		return "< 0.001"
	case p < 0.01:
		return strconv.FormatFloat(p, 'f', 3, 64)
	}
	return strconv.FormatFloat(p, 'f', 2, 64)
}

// detectText says the detectable change: "6.0% or more", or, where a
// fall and a rise of the same size on the log scale differ much ("a
// fall of 92% or a rise of 1207%"), both.
func detectText(m *Metric) string {
	d := *m.Detectable
	if !m.logScale {
		return pct(d) + " or more"
	}
	down := -math.Expm1(-math.Log1p(d))
	if d-down < 0.1*d {
		return pct(d) + " or more"
	}
	return fmt.Sprintf("a fall of %s or a rise of %s", pct(down), pct(d))
}

// pIs is "p = 0.008" or "p < 0.001".
func pIs(p float64) string {
	if t := pText(p); strings.HasPrefix(t, "<") {
		return "p " + t
	}
	return "p = " + pText(p)
}

// runsText is "5 runs each" or "3 runs in A, 5 in B".
func runsText(na, nb int) string {
	if na == nb {
		if na == 1 {
			return "1 run each"
		}
		return strconv.Itoa(na) + " runs each"
	}
	r := "runs"
	if na == 1 {
		r = "run"
	}
	return fmt.Sprintf("%d %s in A, %d in B", na, r, nb)
}

// perSide is "5 runs per side" or "3 and 5 runs".
func perSide(na, nb int) string {
	if na == nb {
		return strconv.Itoa(na) + " runs per side"
	}
	return fmt.Sprintf("%d and %d runs", na, nb)
}

// minRuns is the fewest runs per side (equal sides) at which the rank
// test can reach p < Alpha: 4 at 0.05.
func minRuns() int {
	n := 1
	for stats.MinP(n, n) >= Alpha {
		n++
	}
	return n
}

// allEqual reports whether every value of a and b is the same.
func allEqual(a, b []float64) bool {
	for _, x := range append(append([]float64{}, a...), b...) {
		if x != a[0] {
			return false
		}
	}
	return true
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return true
}

func hasNonFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return true
		}
	}
	return false
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// changeText is a change as the table's column shows it: "+4.1%".
func changeText(m *Metric) string {
	if m.Change == nil {
		return "–"
	}
	if m.Change.Estimate == 0 {
		return "0.0%"
	}
	if m.Change.Estimate >= 1 {
		return "×" + times(1+m.Change.Estimate)
	}
	return signed(m.Change.Estimate)
}
