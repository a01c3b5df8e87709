package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Condition is one --fail-if: a metric, a comparison and a relative
// change of B against A, "throughput<-5%" (B's throughput more than 5%
// below A's) or "p99.read>+10%" (B's p99 read latency more than 10%
// above A's).
type Condition struct {
	// Metric is the metric's name, lower case.
	Metric string `json:"metric"`
	// Op is "<", "<=", ">" or ">=".
	Op string `json:"op"`
	// Percent is the threshold in percent (−5 for "-5%").
	Percent float64 `json:"percent"`
	// Text is the condition as given.
	Text string `json:"text"`
}

// Check is a condition as judged on a comparison.
type Check struct {
	Condition Condition `json:"condition"`
	Tripped   bool      `json:"tripped"`
	// Why says what decided it.
	Why string `json:"why"`
}

// ParseConditions reads a --fail-if value: one condition or several
// separated by commas. The grammar is strict, METRIC OP NUMBER%, spaces
// allowed around the operator: a condition a CI pipeline misreads would
// pass a regression silently, so anything else is bad input.
func ParseConditions(s string) ([]Condition, error) {
	var out []Condition
	for _, part := range strings.Split(s, ",") {
		c, err := ParseCondition(part)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ParseCondition reads one condition: "throughput<-5%",
// "p99.read >= +10%".
func ParseCondition(s string) (Condition, error) {
	text := strings.TrimSpace(s)
	bad := func(why string) (Condition, error) {
		return Condition{}, badinput.New("--fail-if %q: %s; write METRIC<PERCENT or METRIC>PERCENT, e.g. 'throughput<-5%%' or 'p99.read>+10%%'", text, why)
	}
	if text == "" {
		return bad("empty condition")
	}
	i := strings.IndexAny(text, "<>")
	if i < 0 {
		return bad("no < or >")
	}
	metric := strings.ToLower(strings.TrimSpace(text[:i]))
	op := text[i : i+1]
	rest := text[i+1:]
	if strings.HasPrefix(rest, "=") {
		op += "="
		rest = rest[1:]
	}
	if metric == "" {
		return bad("no metric before " + op)
	}
	for _, r := range metric {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r)) {
			return bad(fmt.Sprintf("%q is not a metric name (letters, digits, . _ - /)", metric))
		}
	}
	rest = strings.TrimSpace(rest)
	num, ok := strings.CutSuffix(rest, "%")
	if !ok {
		return bad("the threshold must be a percentage ending in %")
	}
	if num == "" || strings.ContainsAny(num, " \t_eExXpPiInN") {
		return bad(fmt.Sprintf("%q is not a plain number", num))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad(fmt.Sprintf("%q is not a plain number", num))
	}
	if v <= -100 {
		return bad("a change cannot reach −100% (B at zero)")
	}
	if v > 1e6 {
		return bad("the threshold is more than 1000000%")
	}
	return Condition{Metric: metric, Op: op, Percent: v, Text: text}, nil
}

// holds reports whether a change in percent satisfies the condition.
func (c Condition) holds(changePct float64) bool {
	switch c.Op {
	case "<":
		return changePct < c.Percent
	case "<=":
		return changePct <= c.Percent
	case ">":
		return changePct > c.Percent
	}
	return changePct >= c.Percent
}

// check judges the condition on the metrics. It trips when B's change
// (the Hodges–Lehmann estimate) meets the condition and the difference
// is shown (Holm-adjusted p < 0.05): noise alone does not fail a
// pipeline. With too few runs for the test, the estimate alone decides,
// and the check says so; a pipeline that runs once per side gets a
// threshold on the ratio of the two runs. blind, when not "", says why
// no difference can be shown with these runs and this many metrics: a
// check that did not trip then says it could not have, so that a
// pipeline does not take a check that can never fail for one that held.
func (c Condition) check(ms []*Metric, n sides, blind string) Check {
	ch := Check{Condition: c}
	var m *Metric
	for _, x := range ms {
		if x.Name == c.Metric {
			m = x
		}
	}
	switch {
	case m == nil:
		ch.Why = "metric not compared"
		return ch
	case m.Change == nil:
		ch.Why = m.Verdict
		return ch
	}
	cannot := ""
	if blind != "" {
		cannot = fmt.Sprintf("; it could not have tripped: %s; add runs, or give --metrics %s", blind, m.Name)
	}
	est := 100 * m.Change.Estimate
	if !c.holds(est) {
		ch.Why = fmt.Sprintf("%s's %s changed by %s, which does not meet %s%s", n.b, m.Name, signed(m.Change.Estimate), c.Text, cannot)
		return ch
	}
	switch {
	case m.Outcome == TooFew:
		ch.Tripped = true
		ch.Why = fmt.Sprintf("%s's %s changed by %s; judged on that estimate alone: %s, too few for the rank test", n.b, m.Name, signed(m.Change.Estimate), n.runs(len(m.A), len(m.B)))
	case m.PAdjusted != nil && *m.PAdjusted < Alpha:
		ch.Tripped = true
		ch.Why = m.Verdict
	case cannot != "":
		ch.Why = fmt.Sprintf("%s's %s changed by %s, but no difference is shown (%s)%s", n.b, m.Name, signed(m.Change.Estimate), pIs(*m.PAdjusted), cannot)
	default:
		ch.Why = fmt.Sprintf("%s's %s changed by %s, but no difference is shown (%s): the runs' spread could give that by chance", n.b, m.Name, signed(m.Change.Estimate), pIs(*m.PAdjusted))
	}
	return ch
}
