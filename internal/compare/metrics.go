package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

// spec describes a metric: its name, how it is printed, and which way is
// better.
type spec struct {
	name, label, unit string
	// scale turns the stored value into the unit printed (bytes/s into
	// GB/min); the statistics are on the stored value, and a ratio is
	// the same in either.
	scale        float64
	higherBetter bool
	// order sorts the metrics for printing.
	order int
}

// sample is one run's value of a metric.
type sample struct {
	spec  spec
	value float64
}

// skipSeries are series that are not operations worth comparing: the
// cleanup at a phase's end and the verification of data integrity.
var skipSeries = []string{"CLEANUP", "VERIFY"}

// extract reads each run's metrics: one map per run, by metric name.
func extract(runs []run) []map[string]sample {
	out := make([]map[string]sample, len(runs))
	for i, r := range runs {
		out[i] = runMetrics(r.phase)
	}
	return out
}

// runMetrics is one phase's metrics. Throughput and latencies are a YCSB
// or stress run's; a storage run's are its rates (its "operations" are
// chunks of its own choosing, whose count and latency say nothing a rate
// does not); a stress run adds the server's cost per iteration.
func runMetrics(p result.Phase) map[string]sample {
	m := map[string]sample{}
	s := p.Summary
	if s == nil || s.Durability != nil {
		return m
	}
	order := 0
	add := func(sp spec, v float64) {
		order++
		sp.order = order
		if sp.scale == 0 {
			sp.scale = 1
		}
		m[sp.name] = sample{sp, v}
	}
	if st := s.Storage; st != nil {
		scale, unit := result.RateIn(st.Experiment, 1)
		add(spec{name: "rate", label: st.Experiment + " rate", unit: unit, scale: scale, higherBetter: true}, st.Rate)
		if st.Headline != "" {
			for _, step := range st.Steps {
				add(spec{name: "rate." + metricWord(step.Label), label: st.Experiment + " rate at " + step.Label, unit: unit, scale: scale, higherBetter: true}, step.Rate)
			}
		}
		return m
	}
	what := "ops/s"
	if s.Stress != nil {
		what = "iterations/s"
	}
	add(spec{name: "throughput", label: "throughput", unit: what, higherBetter: true}, s.Throughput)
	for _, ser := range s.Series {
		if ser.Count == 0 || slices.Contains(skipSeries, ser.Name) || strings.HasSuffix(ser.Name, "-FAILED") {
			continue
		}
		for _, pc := range []float64{50, 99} {
			for _, q := range ser.Percentiles {
				if q.Percentile == pc {
					add(spec{
						name:  fmt.Sprintf("p%g.%s", pc, metricWord(ser.Name)),
						label: fmt.Sprintf("%s p%g latency", ser.Name, pc),
						unit:  "µs",
					}, float64(q.Micros))
				}
			}
		}
	}
	if st := s.Stress; st != nil && st.PerIteration != nil {
		c := st.PerIteration
		for _, f := range []struct {
			name, label, unit string
			v                 *float64
		}{
			{"server.logical-reads", "server logical reads per iteration", "reads", c.LogicalReads},
			{"server.physical-reads", "server physical reads per iteration", "reads", c.PhysicalReads},
			{"server.cpu", "server CPU per iteration", "µs", c.CPUMicros},
			{"server.elapsed", "server time per iteration", "µs", c.ElapsedMicros},
		} {
			if f.v != nil {
				add(spec{name: f.name, label: f.label, unit: f.unit}, *f.v)
			}
		}
	}
	return m
}

// metricWord is a series or step label as a metric name's part: lower
// case, spaces as dashes ("LOOP.SQL-3" → "loop.sql-3", "threads 4" →
// "threads-4").
func metricWord(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
}

// metricNames are the metrics of either side, in print order: by the
// place they have in the runs that have them.
func metricNames(sides ...[]map[string]sample) []string {
	first := map[string]spec{}
	for _, side := range sides {
		for _, run := range side {
			for name, s := range run {
				if f, ok := first[name]; !ok || s.spec.order < f.order {
					first[name] = s.spec
				}
			}
		}
	}
	names := sortedKeys(first)
	slices.SortStableFunc(names, func(x, y string) int { return first[x].order - first[y].order })
	return names
}

// selectMetrics applies --metrics and adds the metrics --fail-if names;
// a name neither side has is bad input listing those they have.
func selectMetrics(names []string, opts Options) ([]string, error) {
	if len(names) == 0 {
		return nil, badinput.New("these results hold no metric to compare (compare takes YCSB, stress and storage results; a durability check's are counts of lost writes)")
	}
	want := map[string]bool{}
	check := func(n, from string) error {
		n = strings.ToLower(n)
		if !slices.Contains(names, n) {
			return badinput.New("%s names the metric %q, which these results do not have; they have %s", from, n, strings.Join(names, ", "))
		}
		want[n] = true
		return nil
	}
	for _, n := range opts.Metrics {
		if err := check(n, "--metrics"); err != nil {
			return nil, err
		}
	}
	all := len(opts.Metrics) == 0
	for _, c := range opts.FailIf {
		if err := check(c.Metric, "--fail-if "+c.Text); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, n := range names {
		if all || want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// newMetric gathers one metric's values over both sides' runs; runs
// without it (a storage run rebuilt without its rate) are left out and
// noted.
func newMetric(name string, valsA, valsB []map[string]sample, runsA, runsB []run, notes *[]string) *Metric {
	var sp spec
	pick := func(vals []map[string]sample, runs []run) []float64 {
		var out []float64
		var missing []string
		for i, v := range vals {
			s, ok := v[name]
			if !ok {
				missing = append(missing, runs[i].path)
				continue
			}
			sp = s.spec
			if math.IsNaN(s.value) || math.IsInf(s.value, 0) {
				// A rate over no time (JSON null): no value to rank.
				missing = append(missing, runs[i].path+" (not a number)")
				continue
			}
			out = append(out, s.value)
		}
		if len(missing) > 0 {
			*notes = append(*notes, fmt.Sprintf("%s: not in %s", name, strings.Join(missing, ", ")))
		}
		return out
	}
	a, b := pick(valsA, runsA), pick(valsB, runsB)
	return measureMetric(sp, a, b)
}
