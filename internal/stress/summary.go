package stress

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// costReadTimeout bounds one reading of the server's cost counters.
const costReadTimeout = 30 * time.Second

// measureFrom is when, on measure.Now's clock, the measured part of a run
// that started at start begins.
func measureFrom(start time.Time, warmup time.Duration) int64 {
	return measure.FromTime(start.Add(warmup))
}

// costWindow reads the server's cost counters around the measured part:
// once before the run (or when its warm-up ends) and once after.
type costWindow struct {
	j      *job
	reader driver.CostReader
	texts  []string
	// first is the reading before the run, for its source and notes.
	first driver.Costs
	// unable says why there are no costs, for the header; "" when there
	// are.
	unable string

	mu     sync.Mutex
	before *driver.Costs
	// pending is closed once the reading at the warm-up's end is done, or
	// timer stopped before it began.
	pending   chan struct{}
	timer     *time.Timer
	lateNotes []string
}

func newCostWindow(j *job) *costWindow {
	w := &costWindow{j: j}
	reader, ok := j.db.(driver.CostReader)
	if !j.caps.OK(driver.CapCosts) || !ok {
		w.unable = fmt.Sprintf("server costs: %s has no %s here (%s); the monitor's host counters still show", j.caps.Database, driver.CapCosts, j.caps.Support(driver.CapCosts).Note)
		return w
	}
	for _, sc := range j.work.Scripts() {
		for _, st := range sc.Statements {
			w.texts = append(w.texts, st.Text)
		}
	}
	ctx, cancel := context.WithTimeout(j.stops.Context(), costReadTimeout)
	defer cancel()
	c, err := reader.Costs(ctx, w.texts)
	if err != nil {
		w.unable = "server costs: not read: " + j.target.ScrubError(err)
		return w
	}
	w.reader, w.first, w.before = reader, c, &c
	return w
}

// notes are the header's: where the costs come from and what is missing.
func (w *costWindow) notes() []string {
	if w.unable != "" {
		return []string{w.unable}
	}
	out := []string{"server costs: read from " + w.first.Source + " before and after the measured part"}
	for _, n := range w.first.Notes {
		out = append(out, "server costs: "+n)
	}
	return out
}

// start takes the reading the costs are counted from again when the
// warm-up ends, so that the warm-up's work is left out as its latencies
// are.
func (w *costWindow) start(ctx context.Context, start time.Time, warmup time.Duration) {
	if w.reader == nil || warmup <= 0 {
		return
	}
	w.pending = make(chan struct{})
	w.timer = time.AfterFunc(time.Until(start.Add(warmup)), func() {
		defer close(w.pending)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), costReadTimeout)
		defer cancel()
		c, err := w.reader.Costs(rctx, w.texts)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.before = nil
			w.lateNotes = append(w.lateNotes, "server costs: not read at the end of the warm-up: "+w.j.target.ScrubError(err))
			return
		}
		w.before = &c
	})
}

// delta reads the counters after the run and returns the difference with
// the reading before; ok is false when there is none.
func (w *costWindow) delta(ctx context.Context, out *runner.Outcome) (driver.Costs, bool) {
	if w.reader == nil {
		return driver.Costs{}, false
	}
	if w.pending != nil {
		if out.WarmupUnfinished && w.timer.Stop() {
			// Not read, and now never: the run is over.
			return driver.Costs{}, false
		}
		<-w.pending
		if out.WarmupUnfinished {
			return driver.Costs{}, false
		}
	}
	w.mu.Lock()
	before := w.before
	w.mu.Unlock()
	if before == nil {
		return driver.Costs{}, false
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), costReadTimeout)
	defer cancel()
	after, err := w.reader.Costs(rctx, w.texts)
	if err != nil {
		w.lateNotes = append(w.lateNotes, "server costs: not read after the run: "+w.j.target.ScrubError(err))
		return driver.Costs{}, false
	}
	d := driver.Costs{Source: after.Source, Database: after.Database.Sub(before.Database), PageBytes: after.PageBytes}
	for i := range after.Statements {
		b := driver.UnknownCost
		if i < len(before.Statements) {
			b = before.Statements[i]
		}
		d.Statements = append(d.Statements, after.Statements[i].Sub(b))
	}
	return d, true
}

// figures turns a Cost delta into averages over n calls.
func figures(c driver.Cost, n int64) *result.CostFigures {
	if n <= 0 {
		return nil
	}
	per := func(v int64, scale float64) *float64 {
		if v == driver.Unknown {
			return nil
		}
		x := float64(v) / scale / float64(n)
		return &x
	}
	return &result.CostFigures{
		Calls: n, LogicalReads: per(c.LogicalReads, 1), PhysicalReads: per(c.PhysicalReads, 1),
		Rows: per(c.Rows, 1), RowsExamined: per(c.RowsExamined, 1),
		CPUMicros: per(c.CPU, 1000), ElapsedMicros: per(c.Elapsed, 1000),
	}
}

// stressSummary gathers what the workers tallied, the server's costs and,
// with --explain, the plans at the end.
func (j *job) stressSummary(ctx context.Context, out *runner.Outcome, workers []*worker, costs *costWindow) *result.StressSummary {
	st := &result.StressSummary{}
	d, haveCosts := costs.delta(ctx, out)
	if haveCosts {
		st.CostSource = d.Source
		st.PerIteration = figures(d.Database, out.Ops)
	}
	var ends [][]*driver.Plan
	var changed [][]bool
	if j.c.Explain {
		ends, changed = j.explainAtEnd(ctx)
	}
	var unfound []string
	flat := 0
	for s, sc := range j.work.Scripts() {
		for k, stmt := range sc.Statements {
			ss := result.StressStatement{Label: stmt.Label, File: sc.Path, Line: stmt.Line, Text: stmt.Text, Affected: -1}
			var t tally
			for _, w := range workers {
				if w == nil {
					continue
				}
				wt := w.tallies[s][k]
				t.rows += wt.rows
				t.affected += wt.affected
				t.affectedKnown += wt.affectedKnown
				t.ran += wt.ran
			}
			ss.Rows = t.rows
			if t.affectedKnown > 0 {
				ss.Affected = t.affected
			}
			if p := j.plans[s][k]; p != nil {
				ss.Plan = &result.Plan{Text: p.Text, How: p.How}
			}
			if ends != nil && ends[s][k] != nil {
				ss.PlanEnd = &result.Plan{Text: ends[s][k].Text, How: ends[s][k].How}
				ss.PlanChanged = changed[s][k]
			}
			if haveCosts && flat < len(d.Statements) {
				c := d.Statements[flat]
				ss.Cost = figures(c, c.Calls)
				if c.Calls == 0 && t.ran > 0 {
					unfound = append(unfound, fmt.Sprintf("[%s] (ran %s times)", stmt.Label, result.Grouped(t.ran)))
				}
			}
			st.Statements = append(st.Statements, ss)
			flat++
		}
	}
	if haveCosts && len(unfound) == 0 {
		st.StatementsPerIteration = statementsPerIteration(d.Statements, out.Ops)
	}
	if len(unfound) > 0 {
		why := "the database records it where dbprobe does not find it, or its entry was evicted (the header's server costs notes say what the database does not count)"
		if j.c.Protocol == Prepared && j.caps.OK(driver.CapSimpleProtocol) {
			why += "; where they say statements run by the prepared protocol are not counted, run --protocol simple"
		}
		if j.c.Protocol == Simple {
			why = "by --protocol simple a statement with constants of its own (n + 1, LIMIT 10) may be recorded under another text; give it as a parameter, or run --protocol prepared"
		}
		j.endNotes = append(j.endNotes, fmt.Sprintf("server costs: the server counted no call of %s (%s): its costs are unknown; %s", strings.Join(unfound, ", "), d.Source, why))
	}
	return st
}

// statementsPerIteration adds up the statements' own costs and divides
// them by the iterations measured: what one iteration cost in the
// statements it ran, without the rest of the database's work. A figure
// unknown for one statement is unknown in the sum; nil when no statement
// was counted.
func statementsPerIteration(stmts []driver.Cost, iterations int64) *result.CostFigures {
	if len(stmts) == 0 {
		return nil
	}
	var sum driver.Cost
	for _, c := range stmts {
		if c.Calls == driver.Unknown {
			return nil
		}
		add := func(to *int64, v int64) {
			if *to == driver.Unknown || v == driver.Unknown {
				*to = driver.Unknown
				return
			}
			*to += v
		}
		add(&sum.Calls, c.Calls)
		add(&sum.LogicalReads, c.LogicalReads)
		add(&sum.PhysicalReads, c.PhysicalReads)
		add(&sum.Rows, c.Rows)
		add(&sum.RowsExamined, c.RowsExamined)
		add(&sum.CPU, c.CPU)
		add(&sum.Elapsed, c.Elapsed)
	}
	return figures(sum, iterations)
}

// explainAtEnd takes each statement's plan again without analyzing it, to
// compare its shape with the one at the start, then analyzes it once; a
// failure is a note, since the run's figures stand without it.
func (j *job) explainAtEnd(ctx context.Context) ([][]*driver.Plan, [][]bool) {
	if ctx.Err() != nil {
		return nil, nil
	}
	if !j.caps.OK(driver.CapExplain) {
		j.endNotes = append(j.endNotes, fmt.Sprintf("--explain: %s has no %s here (%s)", j.caps.Database, driver.CapExplain, j.caps.Support(driver.CapExplain).Note))
		return nil, nil
	}
	conn, err := j.control(ctx, false)
	if err != nil {
		j.endNotes = append(j.endNotes, "--explain: no plans at the end: "+j.target.ScrubError(err))
		return nil, nil
	}
	defer conn.Close()
	ex, ok := conn.(driver.Explainer)
	if !ok {
		return nil, nil
	}
	fail := func(label, what string, err error) {
		j.endNotes = append(j.endNotes, fmt.Sprintf("--explain [%s]: %s: %s", label, what, strings.Join(strings.Fields(j.target.ScrubError(err)), " ")))
	}
	index := j.shared.index
	var ends [][]*driver.Plan
	var changed [][]bool
	for s, sc := range j.work.Scripts() {
		ends = append(ends, make([]*driver.Plan, len(sc.Statements)))
		changed = append(changed, make([]bool, len(sc.Statements)))
		for k, stmt := range sc.Statements {
			if j.plans[s][k] == nil {
				continue // it had no plan at the start either
			}
			prepared, err := conn.Prepare(ctx, stmt.Text)
			if err != nil {
				fail(stmt.Label, "not prepared", err)
				continue
			}
			var args []any
			for _, n := range prepared.Params() {
				args = append(args, j.first[s][index[n]])
			}
			now, err := ex.Explain(ctx, prepared, args, false)
			if err != nil {
				fail(stmt.Label, "no plan to compare with the start's", err)
			} else {
				changed[s][k] = PlanShape(now.Text) != PlanShape(j.plans[s][k].Text)
			}
			if p, err := ex.Explain(ctx, prepared, args, true); err != nil {
				fail(stmt.Label, "not analyzed", err)
			} else {
				ends[s][k] = &p
			}
			prepared.Close()
		}
	}
	return ends, changed
}

var (
	parenthesized = regexp.MustCompile(`\([^()]*\)`)
	numbers       = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
)

// PlanShape is a plan's text without what changes from one EXPLAIN to the
// next of the same plan: estimates and figures in parentheses ("(cost=…
// rows=… width=…)"), numbers, and spacing. Two plans of one shape use the
// same steps in the same order on the same objects.
func PlanShape(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		for {
			s := parenthesized.ReplaceAllString(l, "")
			if s == l {
				break
			}
			l = s
		}
		l = strings.Join(strings.Fields(numbers.ReplaceAllString(l, "#")), " ")
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
