package report

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// latencyBlocks are a phase's operations: the summary table as the text
// output has it, throughput over time (when asked: a storage run's
// operations are chunks, its rate is drawn instead), latency percentiles
// over time per operation, the percentile spectrum, and the failures,
// retries and outages on the timeline.
func latencyBlocks(ru *run, throughput bool) []Block {
	var out []Block
	if ru.summary != nil && len(ru.summary.Series) > 0 {
		out = append(out, seriesTable(ru.summary))
	}
	ivs := ru.phase.Intervals
	if len(ivs) == 0 {
		if ru.phase.Header.Experiment != result.ExperimentDurability {
			out = append(out, Paragraph{Text: "No interval was written: nothing to draw over time."})
		}
		return out
	}
	bands := ru.bands()
	xs := make([]float64, len(ivs))
	for i, iv := range ivs {
		xs[i] = iv.End.Sub(ru.start).Seconds()
	}
	if throughput {
		c := Chart{Title: "Throughput over time", XLabel: "elapsed (s)", YLabel: "per second", Xs: xs, Bands: bands}
		// What the runner counts as done: a YCSB operation, a stress
		// iteration (its statements are series of their own).
		label := "all operations"
		if ru.phase.Header.Experiment == result.ExperimentStress {
			label = "iterations"
		}
		total := Series{Label: label}
		for _, iv := range ivs {
			total.Y = append(total.Y, val(iv.OpsPerSec))
		}
		c.Series = append(c.Series, total)
		if names := opNames(ivs); len(names) > 1 {
			for _, n := range names {
				s := Series{Label: n}
				for _, iv := range ivs {
					var v *float64
					if sum, ok := find(iv.Series, n); ok {
						if d := iv.End.Sub(iv.Start).Seconds(); d > 0 {
							v = val(float64(sum.Count) / d)
						}
					} else {
						v = val(0)
					}
					s.Y = append(s.Y, v)
				}
				c.Series = append(c.Series, s)
			}
		}
		out = append(out, c)
	}
	for _, n := range timedNames(ivs) {
		out = append(out, latencyChart(n, ivs, xs, bands))
	}
	if ru.summary != nil {
		labels := make([]string, len(ru.summary.Series))
		for i, s := range ru.summary.Series {
			labels[i] = s.Name
		}
		if c, ok := spectrumChart("Percentile spectrum", ru.summary.Series, labels); ok {
			out = append(out, c, Paragraph{Text: "The spectrum is read from each operation's HDR histogram over the whole phase (warm-up excluded): " +
				"the x axis is evenly spaced in nines (90, 99, 99.9…), and a line stops where its operation has too few values to tell the next percentile apart."})
		} else if slices.ContainsFunc(ru.summary.Series, func(s measure.Summary) bool { return s.Count >= minSpectrumCount }) {
			out = append(out, Paragraph{Text: "No percentile spectrum: this result's summary carries no histogram (it was written before summaries kept them), only the percentiles in the table."})
		}
	}
	out = append(out, failureBlocks(ru, xs, bands)...)
	return out
}

// seriesTable is the summary of every series, with the figures the
// text output prints, formatted as it prints them.
func seriesTable(s *result.Summary) Table {
	var ps []float64
	for _, ser := range s.Series {
		for _, p := range ser.Percentiles {
			if !slices.Contains(ps, p.Percentile) {
				ps = append(ps, p.Percentile)
			}
		}
	}
	slices.Sort(ps)
	head := []string{"series", "Operations", "AverageLatency(us)", "MinLatency(us)"}
	for _, p := range ps {
		head = append(head, percentileName(p)+"(us)")
	}
	head = append(head, "MaxLatency(us)", "failed", "Retries")
	t := Table{Caption: "Operations and latencies (µs), as the text output prints them", Head: head}
	for _, ser := range s.Series {
		row := []string{ser.Name, strconv.FormatInt(ser.Count, 10), result.Double(ser.MeanMicros), strconv.FormatInt(ser.MinMicros, 10)}
		for _, p := range ps {
			cell := ""
			for _, sp := range ser.Percentiles {
				if sp.Percentile == p {
					cell = strconv.FormatInt(sp.Micros, 10)
				}
			}
			row = append(row, cell)
		}
		retries := ""
		if ser.Retries != nil {
			retries = strconv.FormatInt(*ser.Retries, 10)
		}
		row = append(row, strconv.FormatInt(ser.MaxMicros, 10), strconv.FormatInt(failures(ser), 10), retries)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// percentileName names a percentile as a column: p99, p99.9.
func percentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// failures counts a series' failed operations: every status but OK,
// leaving out the per-code lines (ERROR(23505)) that split the ERROR
// total again.
func failures(s measure.Summary) int64 {
	var n int64
	for _, st := range s.Statuses {
		if st.Status != "OK" && !strings.HasPrefix(st.Status, "ERROR(") {
			n += st.Count
		}
	}
	return n
}

// find returns the series named name.
func find(ss []measure.Summary, name string) (measure.Summary, bool) {
	for _, s := range ss {
		if s.Name == name {
			return s, true
		}
	}
	return measure.Summary{}, false
}

// opNames are the operation series whose rate is drawn: those with
// values in two intervals or more, leaving out the failed and intended
// views of an operation (its rate is the operation's) and a series seen
// once (CLEANUP at the very end), which a line cannot show.
func opNames(ivs []result.Interval) []string {
	var out []string
	for _, n := range timedNames(ivs) {
		if !strings.HasPrefix(n, "Intended-") && !strings.HasSuffix(n, "-FAILED") {
			out = append(out, n)
		}
	}
	return out
}

// timedNames are the series with latencies in two intervals or more, in
// the order they first appear.
func timedNames(ivs []result.Interval) []string {
	seen := map[string]int{}
	var order []string
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if s.Count == 0 {
				continue
			}
			if seen[s.Name] == 0 {
				order = append(order, s.Name)
			}
			seen[s.Name]++
		}
	}
	var out []string
	for _, n := range order {
		if seen[n] >= 2 {
			out = append(out, n)
		}
	}
	return out
}

// latencyChart draws one series' percentiles per interval, and its
// maximum, on a logarithmic axis.
func latencyChart(name string, ivs []result.Interval, xs []float64, bands []Band) Chart {
	var ps []float64
	for _, iv := range ivs {
		if s, ok := find(iv.Series, name); ok {
			for _, p := range s.Percentiles {
				if !slices.Contains(ps, p.Percentile) {
					ps = append(ps, p.Percentile)
				}
			}
		}
	}
	slices.Sort(ps)
	what := name
	if strings.HasPrefix(name, "Intended-") {
		what += " (from each operation's intended start)"
	}
	c := Chart{Title: "Latency over time: " + what, XLabel: "elapsed (s)", YLabel: "µs (log scale)", LogY: true, Xs: xs, Bands: bands}
	for _, p := range ps {
		s := Series{Label: percentileName(p)}
		for _, iv := range ivs {
			var v *float64
			if sum, ok := find(iv.Series, name); ok && sum.Count > 0 {
				for _, sp := range sum.Percentiles {
					if sp.Percentile == p {
						v = val(float64(sp.Micros))
					}
				}
			}
			s.Y = append(s.Y, v)
		}
		c.Series = append(c.Series, s)
	}
	max := Series{Label: "max"}
	for _, iv := range ivs {
		var v *float64
		if sum, ok := find(iv.Series, name); ok && sum.Count > 0 {
			v = val(float64(sum.MaxMicros))
		}
		max.Y = append(max.Y, v)
	}
	c.Series = append(c.Series, max)
	return c
}

// spectrumStep is the spacing of the spectrum's points in nines: 20 a
// decade, smooth enough for a curve of a few hundred points.
const spectrumStep = 0.05

// minSpectrumCount is the fewest values a series needs for its spectrum
// to mean anything: with fewer, its top percentiles are its few largest
// values.
const minSpectrumCount = 20

// spectrumChart draws the percentile spectrum of each series that has
// enough values and a histogram, each labelled by its labels entry. It
// reports false when no series has one.
func spectrumChart(title string, series []measure.Summary, labels []string) (Chart, bool) {
	type curve struct {
		label string
		h     *hdr.Histogram
	}
	var curves []curve
	maxX := 0.0
	for i, s := range series {
		if s.Histogram == "" || s.Count < minSpectrumCount {
			continue
		}
		h, err := hdr.Decode([]byte(s.Histogram))
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		curves = append(curves, curve{labels[i], h})
		maxX = math.Max(maxX, math.Log10(float64(h.TotalCount())))
	}
	if len(curves) == 0 {
		return Chart{}, false
	}
	c := Chart{Title: title, XLabel: "percentile", YLabel: "µs (log scale)", X: XNines, LogY: true}
	for x := 0.0; x <= maxX+1e-9; x += spectrumStep {
		c.Xs = append(c.Xs, math.Round(x*100)/100)
	}
	for _, cv := range curves {
		s := Series{Label: cv.label}
		top := math.Log10(float64(cv.h.TotalCount()))
		for _, x := range c.Xs {
			if x > top+1e-9 {
				s.Y = append(s.Y, nil)
				continue
			}
			q := 100 * (1 - math.Pow(10, -x))
			s.Y = append(s.Y, val(float64(cv.h.ValueAtQuantile(q))))
		}
		c.Series = append(c.Series, s)
	}
	return c, true
}

// bands are the spans shaded on a phase's charts: the warm-up and every
// outage.
func (ru *run) bands() []Band {
	var out []Band
	last := -1.0
	for _, iv := range ru.phase.Intervals {
		if iv.Warmup {
			last = iv.Elapsed.Seconds()
		}
	}
	if last > 0 {
		out = append(out, Band{From: 0, To: last, Kind: "warmup", Label: "the warm-up (grey), excluded from the figures"})
	}
	if ru.summary != nil && ru.summary.Availability != nil {
		for _, o := range ru.summary.Availability.Outages {
			from := o.Start.Sub(ru.start).Seconds()
			to := o.End.Sub(ru.start).Seconds()
			label := "an outage (red) of " + strconv.FormatFloat(o.Duration().Seconds(), 'f', 1, 64) + " s from " +
				strconv.FormatFloat(from, 'f', 1, 64) + " s, " + result.Grouped(o.Failed) + " operations failed"
			if o.Ongoing {
				label += ", still down at the end"
			}
			out = append(out, Band{From: from, To: to, Kind: "outage", Label: label})
		}
	}
	return out
}

// failureBlocks are the failures and retries per interval on the
// timeline with the outages, and the failures by code; or a sentence
// saying there were none.
func failureBlocks(ru *run, xs []float64, bands []Band) []Block {
	ivs := ru.phase.Intervals
	failed := Series{Label: "failed operations"}
	retried := Series{Label: "retries"}
	any := false
	for _, iv := range ivs {
		var f, r int64
		for _, s := range iv.Series {
			if strings.HasPrefix(s.Name, "Intended-") {
				continue
			}
			f += failures(s)
			if s.Retries != nil {
				r += *s.Retries
			}
		}
		any = any || f > 0 || r > 0
		failed.Y = append(failed.Y, val(float64(f)))
		retried.Y = append(retried.Y, val(float64(r)))
	}
	var out []Block
	outages := 0
	var reconnects int64
	if ru.summary != nil && ru.summary.Availability != nil {
		outages = len(ru.summary.Availability.Outages)
		reconnects = ru.summary.Availability.Reconnects
	}
	if any || outages > 0 {
		out = append(out, Chart{Title: "Failures, retries and outages over time", XLabel: "elapsed (s)", YLabel: "per interval",
			Xs: xs, Series: []Series{failed, retried}, Bands: bands})
	}
	if ru.summary == nil {
		return out
	}
	s := ru.summary
	switch {
	case len(s.Errors) == 0 && !any && outages == 0 && reconnects == 0:
		out = append(out, Paragraph{Text: "No operation failed, none was retried, and the database never stopped answering."})
	case len(s.Errors) > 0:
		t := Table{Caption: "Failures by code over the phase", Head: []string{"code", "count"}}
		for _, code := range slices.Sorted(maps.Keys(s.Errors)) {
			t.Rows = append(t.Rows, []string{code, strconv.FormatInt(s.Errors[code], 10)})
		}
		out = append(out, t)
	}
	if outages > 0 || reconnects > 0 {
		out = append(out, Paragraph{Text: "Outages: " + strconv.Itoa(outages) + "; reconnections: " + strconv.FormatInt(reconnects, 10) + "."})
	}
	return out
}
