package report

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// incidental are settings that differ between runs without changing what
// was measured (where the output went, the progress display, a random
// seed) or that only restate others (how the phase ends): naming a line
// by them would hide the setting that matters.
var incidental = map[string]bool{
	"out": true, "hlog": true, "influx-out": true, "metrics-addr": true, "metrics-linger": true,
	"metrics-allow-remote": true, "quiet": true, "status": true, "seed": true, "password-file": true,
	"ends": true, "mode": true, "keep-db": true,
}

// maxLabelSettings is how many differing settings a label names before
// it is cut with "…".
const maxLabelSettings = 4

// identity is what tells runs apart: their settings, target and
// database, by key.
func identity(h result.Header) ([]string, map[string]string) {
	keys := []string{"database", "server"}
	m := map[string]string{"database": h.Database.Driver, "server": h.Database.ServerVersion}
	for _, s := range h.Settings {
		if incidental[s.Key] {
			continue
		}
		if _, dup := m[s.Key]; !dup {
			keys = append(keys, s.Key)
		}
		m[s.Key] = s.Value
	}
	return keys, m
}

// differing returns the keys whose values are not the same in every run,
// in the order they first appear.
func differing(runs []*run) []string {
	var order []string
	vals := make([]map[string]string, len(runs))
	seen := map[string]bool{}
	for i, ru := range runs {
		keys, m := identity(ru.phase.Header)
		vals[i] = m
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
			}
		}
	}
	var out []string
	for _, k := range order {
		v0, ok0 := vals[0][k]
		for _, m := range vals[1:] {
			if v, ok := m[k]; ok != ok0 || v != v0 {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// labelRuns names each run by the settings that differ between the
// inputs (the first phase of each stands for it), or by its file when
// none do or two labels come out the same.
func labelRuns(inputs []Input, runs []*run) {
	if len(inputs) < 2 {
		for _, ru := range runs {
			ru.label = filepath.Base(inputs[ru.in].Name)
		}
		return
	}
	byPhase := map[string][]*run{}
	for _, ru := range runs {
		k := groupKey(ru)
		byPhase[k] = append(byPhase[k], ru)
	}
	for _, group := range byPhase {
		keys := differing(group)
		labels := map[string]int{}
		for _, ru := range group {
			_, m := identity(ru.phase.Header)
			var parts []string
			for i, k := range keys {
				if i == maxLabelSettings {
					parts = append(parts, "…")
					break
				}
				v := m[k]
				if len([]rune(v)) > 24 {
					v = string([]rune(v)[:23]) + "…"
				}
				parts = append(parts, k+"="+v)
			}
			ru.label = strings.Join(parts, ", ")
			labels[ru.label]++
		}
		for _, ru := range group {
			if ru.label == "" || labels[ru.label] > 1 {
				ru.label = filepath.Base(inputs[ru.in].Name)
			}
		}
	}
}

// groupKey is what runs must share to be drawn on one chart: the same
// experiment and phase (and the same storage experiment, whose rates
// have different units).
func groupKey(ru *run) string {
	k := ru.phase.Header.Experiment + "/" + ru.phase.Header.Phase
	if st := storageOf(ru); st != nil {
		k += "/" + st.Experiment
	}
	return k
}

// overlaySections draws the runs of several results that share an
// experiment and a phase on the same charts, a line per result, and
// sets their figures side by side.
func overlaySections(runs []*run) []Section {
	var order []string
	groups := map[string][]*run{}
	for _, ru := range runs {
		if ru.summary == nil || ru.phase.Header.Experiment == result.ExperimentDurability {
			continue
		}
		k := groupKey(ru)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ru)
	}
	var out []Section
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		h := g[0].phase.Header
		s := Section{Title: "Overlay: the " + h.Phase + " phase of " + strconv.Itoa(len(g)) + " results", Kind: "overlay"}
		keys := differing(g)
		if len(keys) > 0 {
			s.Blocks = append(s.Blocks, Paragraph{Text: "Each line is one result, named by what differs between them: " + strings.Join(keys, ", ") + "."})
		} else {
			s.Blocks = append(s.Blocks, Paragraph{Text: "No setting differs between these results: each line is named by its file."})
		}
		s.Blocks = append(s.Blocks, sideBySide(g, keys))
		if st := storageOf(g[0]); st != nil {
			var sts []*result.StorageSummary
			var labels []string
			for _, ru := range g {
				sts = append(sts, ru.summary.Storage)
				labels = append(labels, ru.label)
			}
			s.Blocks = append(s.Blocks, storageRateChart("Rate per second", sts, labels))
			out = append(out, s)
			continue
		}
		s.Blocks = append(s.Blocks, overlayThroughput(g))
		for _, name := range commonOps(g) {
			if c, ok := overlayP99(g, name); ok {
				s.Blocks = append(s.Blocks, c)
			}
			var series []measure.Summary
			var labels []string
			for _, ru := range g {
				if sum, ok := find(ru.summary.Series, name); ok {
					labels = append(labels, ru.label)
					series = append(series, sum)
				}
			}
			if c, ok := spectrumChart("Percentile spectrum: "+name, series, labels); ok && len(c.Series) > 1 {
				s.Blocks = append(s.Blocks, c)
			}
		}
		out = append(out, s)
	}
	return out
}

// sideBySide is the runs' figures in columns, one per run: the settings
// that differ, then throughput and each operation's latencies.
func sideBySide(g []*run, keys []string) Table {
	t := Table{Caption: "Side by side", Head: []string{"figure"}}
	for _, ru := range g {
		t.Head = append(t.Head, ru.label)
	}
	row := func(name string, cell func(ru *run) string) {
		r := []string{name}
		for _, ru := range g {
			r = append(r, cell(ru))
		}
		t.Rows = append(t.Rows, r)
	}
	for _, k := range keys {
		row(k, func(ru *run) string { _, m := identity(ru.phase.Header); return m[k] })
	}
	if storageOf(g[0]) != nil {
		_, unit := result.RateIn(g[0].summary.Storage.Experiment, 0)
		row("rate ("+unit+")", func(ru *run) string {
			v, _ := result.RateIn(ru.summary.Storage.Experiment, ru.summary.Storage.Rate)
			return strconv.FormatFloat(v, 'f', 3, 64)
		})
	}
	row("Throughput(ops/sec)", func(ru *run) string { return result.Double(ru.summary.Throughput) })
	row("RunTime(ms)", func(ru *run) string { return strconv.FormatInt(ru.summary.RunTime.Milliseconds(), 10) })
	var names []string
	var ps []float64
	for _, ru := range g {
		for _, s := range ru.summary.Series {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
			for _, p := range s.Percentiles {
				if !slices.Contains(ps, p.Percentile) {
					ps = append(ps, p.Percentile)
				}
			}
		}
	}
	slices.Sort(ps)
	for _, n := range names {
		get := func(ru *run) (measure.Summary, bool) { return find(ru.summary.Series, n) }
		row("["+n+"] Operations", func(ru *run) string {
			if s, ok := get(ru); ok {
				return strconv.FormatInt(s.Count, 10)
			}
			return ""
		})
		row("["+n+"] AverageLatency(us)", func(ru *run) string {
			if s, ok := get(ru); ok {
				return result.Double(s.MeanMicros)
			}
			return ""
		})
		for _, p := range ps {
			row("["+n+"] "+percentileName(p)+"(us)", func(ru *run) string {
				if s, ok := get(ru); ok {
					for _, sp := range s.Percentiles {
						if sp.Percentile == p {
							return strconv.FormatInt(sp.Micros, 10)
						}
					}
				}
				return ""
			})
		}
	}
	row("failed operations", func(ru *run) string {
		var n int64
		for _, s := range ru.summary.Series {
			n += failures(s)
		}
		return strconv.FormatInt(n, 10)
	})
	return t
}

// commonOps are the operation series timed in two runs or more.
func commonOps(g []*run) []string {
	count := map[string]int{}
	var order []string
	for _, ru := range g {
		for _, n := range opNames(ru.phase.Intervals) {
			if count[n] == 0 {
				order = append(order, n)
			}
			count[n]++
		}
	}
	var out []string
	for _, n := range order {
		if count[n] >= 2 {
			out = append(out, n)
		}
	}
	return out
}

// second is an interval's place on an overlay's x axis: its end to the
// whole second, so that the seconds of runs whose clocks ticked a few
// milliseconds apart share a point.
func second(iv result.Interval) float64 { return math.Round(iv.Elapsed.Seconds()) }

func overlayThroughput(g []*run) Chart {
	xss := make([][]float64, len(g))
	yss := make([][]float64, len(g))
	names := make([]string, len(g))
	for i, ru := range g {
		names[i] = ru.label
		for _, iv := range ru.phase.Intervals {
			xss[i] = append(xss[i], second(iv))
			yss[i] = append(yss[i], iv.OpsPerSec)
		}
	}
	xs, series := align(xss, yss, names)
	return Chart{Title: "Throughput over time", XLabel: "elapsed (s)", YLabel: "per second", Xs: xs, Series: series, SpanGaps: true}
}

// overlayP99 draws one operation's p99 per interval, a line per run; it
// reports false when no run kept the p99.
func overlayP99(g []*run, name string) (Chart, bool) {
	xss := make([][]float64, len(g))
	yss := make([][]float64, len(g))
	names := make([]string, len(g))
	any := false
	for i, ru := range g {
		names[i] = ru.label
		for _, iv := range ru.phase.Intervals {
			s, ok := find(iv.Series, name)
			if !ok || s.Count == 0 {
				continue
			}
			for _, p := range s.Percentiles {
				if p.Percentile == 99 {
					xss[i] = append(xss[i], second(iv))
					yss[i] = append(yss[i], float64(p.Micros))
					any = true
				}
			}
		}
	}
	if !any {
		return Chart{}, false
	}
	xs, series := align(xss, yss, names)
	return Chart{Title: "p99 latency over time: " + name, XLabel: "elapsed (s)", YLabel: "µs (log scale)", LogY: true, Xs: xs, Series: series, SpanGaps: true}, true
}

// align puts lines with their own x values on one x axis, the union of
// them all, with a gap where a line has no value; a line's later value
// at the same x replaces its earlier one.
func align(xss, yss [][]float64, names []string) ([]float64, []Series) {
	var xs []float64
	for _, x := range xss {
		xs = append(xs, x...)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	at := make(map[float64]int, len(xs))
	for i, x := range xs {
		at[x] = i
	}
	series := make([]Series, len(xss))
	for i := range xss {
		series[i] = Series{Label: names[i], Y: make([]*float64, len(xs))}
		for k, x := range xss[i] {
			series[i].Y[at[x]] = val(yss[i][k])
		}
	}
	return xs, series
}
