package sweep

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/price"
	"github.com/dbprobe/dbprobe/internal/report/stats"
	"github.com/dbprobe/dbprobe/internal/result"
)

// KneeGain is the least growth of median throughput from one measured
// concurrency to the next that counts as still scaling: a step (usually
// a doubling of workers) that adds less than 10% buys next to nothing.
const KneeGain = 0.10

// concurrencyKeys are the keys that count workers: the scalability fit is
// over them.
var concurrencyKeys = []string{"threads", "threadcount", "clients", "client-count", "dop", "parallel", "maxdop", "writers", "connections"}

// IsConcurrency reports whether a varied key is a number of workers.
func IsConcurrency(key string) bool { return slices.Contains(concurrencyKeys, strings.ToLower(key)) }

// rowsFor are the recap's metric rows for a result kind, as the studies
// print them: throughput, then read and write latency, then errors.
func rowsFor(kind string) []Row {
	switch kind {
	case result.ExperimentStorage:
		return []Row{{MetricRate, "rate"}, {MetricThroughput, "ops/s"}, {MetricErrors, "errors"}}
	case result.ExperimentStress:
		return []Row{{MetricThroughput, "iterations/s"}, {MetricIterationAvg, "iteration avg ms"}, {MetricIterationP99, "iteration p99 ms"}, {MetricErrors, "errors"}}
	}
	return []Row{{MetricThroughput, "ops/s"}, {MetricReadAvg, "read avg ms"}, {MetricReadP99, "read p99 ms"},
		{MetricWriteAvg, "write avg ms"}, {MetricWriteP99, "write p99 ms"}, {MetricErrors, "errors"}}
}

// headline is the metric scaling and drift are judged on.
func headline(kind string) (key, label string) {
	if kind == result.ExperimentStorage {
		return MetricRate, "rate"
	}
	return MetricThroughput, "throughput"
}

// PriceFor is the price that applies to a variant: of the prices whose
// selector it matches, the one that names the most settings. Two that
// name as many and differ are bad input, which CheckPrices reports
// before the sweep starts.
func PriceFor(prices []price.Selected, v Variant) (*price.Selected, error) {
	settings := map[string]string{}
	for _, s := range v.Settings {
		settings[s.Key] = s.Value
	}
	var best *price.Selected
	for i := range prices {
		p := &prices[i]
		if !p.Applies(settings) {
			continue
		}
		switch {
		case best == nil || len(p.Matches) > len(best.Matches):
			best = p
		case len(p.Matches) == len(best.Matches) && p.Rate.PerHour != best.Rate.PerHour:
			return nil, fmt.Errorf("--price %q and --price %q both apply to %s; make one name more settings", best.Given, p.Given, v.Name())
		}
	}
	return best, nil
}

// analyze fills the variants' figures and the sweep's conclusions from
// the runs done so far.
func analyze(s *Summary, variants []Variant, prices []price.Selected) {
	s.Rows = rowsFor(s.Kind)
	hkey, hlabel := headline(s.Kind)
	byVariant := map[int][]RunRecord{}
	for _, r := range s.Runs {
		if r.Status == StatusOK && r.Metrics != nil {
			byVariant[r.Variant] = append(byVariant[r.Variant], r)
		}
	}
	var driftPos, driftVal []float64
	s.Conclusions = nil
	for i := range s.Variants {
		vr := &s.Variants[i]
		runs := byVariant[vr.ID]
		vr.RunsOK = len(runs)
		ms := make([]map[string]float64, len(runs))
		for k, r := range runs {
			ms[k] = r.Metrics
		}
		vr.Medians, vr.Min, vr.Max = nil, nil, nil
		vr.Trend, vr.Cost = nil, nil
		if len(runs) == 0 {
			continue
		}
		vr.Medians = medians(ms)
		vr.Min, vr.Max = extremes(ms)
		vr.Limit, vr.Verdict = diagnosis(runs, hkey, vr.Medians[hkey])
		var pos, val []float64
		for _, r := range runs {
			if v, ok := r.Metrics[hkey]; ok {
				pos = append(pos, float64(r.Position))
				val = append(val, v)
				if med := vr.Medians[hkey]; med > 0 {
					driftPos = append(driftPos, float64(r.Position))
					driftVal = append(driftVal, v/med)
				}
			}
		}
		t := CheckTrend(pos, val)
		vr.Trend = &t
		if p, err := PriceFor(prices, variants[i]); err == nil && p != nil {
			vr.Cost = cost(p, vr.Medians, s.Kind)
		}
	}
	// The whole sweep's trend: each run against its variant's median,
	// so that the variants' own levels do not read as a trend.
	if len(driftVal) > 0 {
		t := CheckTrend(driftPos, driftVal)
		s.Drift = &t
	}
	s.Conclusions = append(s.Conclusions, driftSentences(s, hlabel)...)
	s.Curves, s.Fits = nil, nil
	for _, vy := range s.Vary {
		if !numeric(vy.Values) {
			continue
		}
		for _, g := range groups(s, vy.Key) {
			c := Curve{Key: vy.Key, Metric: hkey, Fixed: g.fixed}
			for _, x := range g.xs {
				if med, ok := g.byX[x].Medians[hkey]; ok {
					c.X = append(c.X, x)
					c.Y = append(c.Y, med)
				}
			}
			if len(c.X) >= 2 {
				s.Curves = append(s.Curves, c)
			}
			if vy.Concurrency && len(c.X) >= 2 {
				f := fit(s, vy.Key, g, c, hkey, hlabel)
				s.Fits = append(s.Fits, f)
				s.Conclusions = append(s.Conclusions, f.Sentence)
			}
		}
	}
	var gaps []float64
	for _, r := range s.Runs {
		if r.OverheadMS > 0 {
			gaps = append(gaps, r.OverheadMS)
		}
	}
	s.Overhead = nil
	if len(gaps) > 0 {
		_, hi := minMax(gaps)
		s.Overhead = &Overhead{Gaps: len(gaps), MedianMS: median(gaps), MaxMS: hi}
	}
}

func extremes(ms []map[string]float64) (lo, hi map[string]float64) {
	lo, hi = map[string]float64{}, map[string]float64{}
	for _, m := range ms {
		for k, v := range m {
			if old, ok := lo[k]; !ok || v < old {
				lo[k] = v
			}
			if old, ok := hi[k]; !ok || v > old {
				hi[k] = v
			}
		}
	}
	return lo, hi
}

// diagnosis is the limit most runs named, with the verdict of the run
// of that limit whose headline metric is nearest the median.
func diagnosis(runs []RunRecord, key string, med float64) (limit, verdict string) {
	count := map[string]int{}
	for _, r := range runs {
		if r.Limit != "" {
			count[r.Limit]++
		}
	}
	for l, n := range count {
		if n > count[limit] || n == count[limit] && l < limit {
			limit = l
		}
	}
	best := math.Inf(1)
	for _, r := range runs {
		if r.Limit == limit && limit != "" {
			if d := math.Abs(r.Metrics[key] - med); d < best {
				best, verdict = d, r.Verdict
			}
		}
	}
	return limit, verdict
}

func cost(p *price.Selected, med map[string]float64, kind string) *Cost {
	c := &Cost{Given: p.Given, PerHour: p.Rate.PerHour, Monthly: strings.Contains(strings.ToLower(p.Rate.Given), "/mo")}
	c.Run = p.Rate.PerHour * med[MetricSeconds] / 3600
	if kind == result.ExperimentStorage {
		if r := med[MetricRate]; r > 0 {
			c.PerGB = p.Rate.PerHour / 3600 / (r / 1e9)
		}
		return c
	}
	if x := med[MetricThroughput]; x > 0 {
		c.PerMillionOps = p.Rate.PerHour / (x * 3600) * 1e6
		per := p.Rate.PerHour
		if c.Monthly {
			per *= price.HoursPerMonth
		}
		c.Per1000OpsS = per / (x / 1000)
	}
	return c
}

func driftSentences(s *Summary, what string) []string {
	var out []string
	for _, v := range s.Variants {
		if v.Trend != nil && v.Trend.Drifts {
			out = append(out, fmt.Sprintf("drift: %s: %s; something changes as the sweep goes (bloat, autovacuum, a cache filling, a checkpoint): look at its runs in order, or add --between", v.Name, v.Trend.Sentence(what)))
		}
	}
	if d := s.Drift; d != nil && d.Drifts {
		out = append(out, fmt.Sprintf("drift over the whole sweep: relative to each variant's median, %s: later runs are %s whatever the variant", d.Sentence(what), map[bool]string{true: "faster", false: "slower"}[d.Change > 0]))
	}
	if len(out) == 0 && s.Drift != nil {
		few := ""
		for _, v := range s.Variants {
			if v.Trend != nil && v.Trend.Runs > 0 && v.Trend.Runs < DriftMinRuns {
				few = fmt.Sprintf(" (per variant it takes %d runs to tell; --reps %d)", DriftMinRuns, DriftMinRuns)
				break
			}
		}
		if s.Drift.Runs >= DriftMinRuns {
			out = append(out, fmt.Sprintf("no drift shown: %s did not move clearly with the position in the order (Spearman ρ = %.2f over %d runs, p = %s)%s", what, s.Drift.Rho, s.Drift.Runs, pText(s.Drift.P), few))
		}
	}
	return out
}

// group is the variants that differ only in one key's value.
type group struct {
	fixed []Setting
	xs    []float64
	byX   map[float64]*VariantRecord
	ids   map[int]float64
}

func numeric(values []string) bool {
	for _, v := range values {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return len(values) > 0
}

// groups splits the variants by the values of the keys other than key.
func groups(s *Summary, key string) []group {
	var out []group
	idx := map[string]int{}
	for i := range s.Variants {
		v := &s.Variants[i]
		var fixed []Setting
		var x float64
		for _, st := range v.Settings {
			if st.Key == key {
				x, _ = strconv.ParseFloat(st.Value, 64)
			} else {
				fixed = append(fixed, st)
			}
		}
		name := fmt.Sprint(fixed)
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, group{fixed: fixed, byX: map[float64]*VariantRecord{}, ids: map[int]float64{}})
		}
		out[k].xs = append(out[k].xs, x)
		out[k].byX[x] = v
		out[k].ids[v.ID] = x
	}
	for i := range out {
		sort.Float64s(out[i].xs)
	}
	return out
}

// fit fits the scalability law to every run of the group and says where
// scaling stops, with the monitor's verdict there.
func fit(s *Summary, key string, g group, c Curve, hkey, hlabel string) FitRecord {
	f := FitRecord{Key: key, Fixed: g.fixed}
	var n, x []float64
	for _, r := range s.Runs {
		if xv, ok := g.ids[r.Variant]; ok && r.Status == StatusOK {
			if v, ok := r.Metrics[hkey]; ok {
				n = append(n, xv)
				x = append(x, v)
			}
		}
	}
	var sentence string
	// The knee starts the trailing run of steps that add less than
	// KneeGain: on a noisy curve one flat step (1,428 → 3,808 → 4,044 →
	// 7,418) is not where scaling stops if later steps grow again.
	knee := -1
	for i := len(c.Y) - 2; i >= 0; i-- {
		if c.Y[i] <= 0 || c.Y[i+1]/c.Y[i]-1 >= KneeGain {
			break
		}
		knee = i
	}
	last := len(c.Y) - 1
	if knee >= 0 {
		f.Knee = c.X[knee]
		sentence = fmt.Sprintf("%s stops growing past %s=%s%s: %+.0f%% from %s to %s", hlabel, key, num(c.X[knee]), fixedText(g.fixed), 100*(c.Y[knee+1]/c.Y[knee]-1), num(c.X[knee]), num(c.X[knee+1]))
		if v := g.byX[c.X[knee]]; v != nil && v.Verdict != "" {
			sentence += fmt.Sprintf("; the monitor at %s=%s: %s", key, num(c.X[knee]), v.Verdict)
		} else {
			sentence += fmt.Sprintf("; the monitor gave no verdict at %s=%s", key, num(c.X[knee]))
		}
	} else {
		sentence = fmt.Sprintf("%s still grows at %s=%s%s: %+.0f%% from %s to %s", hlabel, key, num(c.X[last]), fixedText(g.fixed), 100*(c.Y[last]/c.Y[last-1]-1), num(c.X[last-1]), num(c.X[last]))
	}
	u, err := stats.FitUSL(n, x)
	if err != nil {
		f.Error = err.Error()
		f.Sentence = sentence + fmt.Sprintf("; no scalability fit: %d distinct %s values, 3 needed", len(c.X), key)
		return f
	}
	f.Lambda, f.Sigma, f.Kappa, f.R2, f.Points = u.Lambda, u.Sigma, u.Kappa, u.R2, u.Points
	fitText := fmt.Sprintf("USL fit over %d runs: contention σ = %.3g, coherency κ = %.3g", u.Points, u.Sigma, u.Kappa)
	if p, ok := u.Peak(); ok && u.R2 >= 0.9 {
		f.Peak = p
		fitText += fmt.Sprintf(", peak N* ≈ %s", num(math.Round(p)))
	} else if ok {
		f.Peak = p
	} else {
		fitText += ", no peak (κ = 0: it levels off)"
	}
	fitText += fmt.Sprintf(", R² = %.3f", u.R2)
	if u.R2 < 0.9 {
		fitText += " (a poor fit: read the curve, not the law)"
	}
	f.Sentence = sentence + ". " + fitText
	return f
}

// num prints a value as the command line gave it: 16, 0.5.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
