package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// DefaultPointBudget is how many values, summed over every line of every
// chart over time, a page holds before AutoBuckets downsamples it: about
// 9 MB of chart data. A 1-hour result at one interval a second holds
// about 160,000, so one to nine of them are drawn second by second; 100
// hours are not, which would be a page of over 100 MB that a browser
// takes minutes to open.
const DefaultPointBudget = 1_500_000

// MinBuckets is the fewest buckets AutoBuckets gives a chart: below it a
// chart's shape is lost, so a page of very many results grows past the
// budget rather than draw lines of a dozen points.
const MinBuckets = 60

// Downsampled says what Downsample did to a page.
type Downsampled struct {
	// Buckets is the most buckets a chart was cut into.
	Buckets int
	// Charts is how many charts were downsampled.
	Charts int
	// Before and After are the values their lines held, summed.
	Before, After int
}

// timeCharts calls f with every chart over time (x in elapsed seconds)
// in the report, sections and groups alike, so that f can replace it.
func (r *Report) timeCharts(f func(c *Chart)) {
	var walk func(bs []Block)
	walk = func(bs []Block) {
		for i, b := range bs {
			switch b := b.(type) {
			case Chart:
				if b.X == XSeconds {
					f(&b)
					bs[i] = b
				}
			case Group:
				walk(b.Blocks)
			}
		}
	}
	for i := range r.Sections {
		walk(r.Sections[i].Blocks)
	}
}

// chartValues is how many values a chart's lines hold.
func chartValues(c *Chart) int { return len(c.Xs) * len(c.Series) }

// AutoBuckets returns the number of buckets per chart over time that
// keeps the page's lines within budget values (DefaultPointBudget when
// budget is 0), or 0 when the page fits at full resolution. It never
// returns fewer than MinBuckets.
func (r *Report) AutoBuckets(budget int) int {
	if budget <= 0 {
		budget = DefaultPointBudget
	}
	type size struct{ xs, series int }
	var sizes []size
	total := 0
	r.timeCharts(func(c *Chart) {
		sizes = append(sizes, size{len(c.Xs), len(c.Series)})
		total += chartValues(c)
	})
	if total <= budget {
		return 0
	}
	after := func(b int) int {
		n := 0
		for _, s := range sizes {
			n += min(s.xs, 2*b) * s.series
		}
		return n
	}
	// after grows with b: the largest b within budget, by bisection.
	lo, hi := MinBuckets, 1
	for _, s := range sizes {
		hi = max(hi, s.xs)
	}
	if after(lo) > budget {
		return MinBuckets
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if after(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Downsample cuts every chart over time with more than 2×buckets points
// into at most buckets spans of whole seconds, and keeps of each line in
// each span its lowest and its highest value, in the order they came:
// a one-second stall or a p99 spike survives, which keeping every n-th
// point would drop. A span where a line has no value is a gap in it;
// within a span that has values, a shorter gap is bridged. Bands (a
// warm-up, an outage) are kept as they are. Each chart so drawn says so
// under it, and the page's notices say it once; buckets <= 0 does
// nothing.
func (r *Report) Downsample(buckets int) Downsampled {
	var d Downsampled
	if buckets <= 0 {
		return d
	}
	r.timeCharts(func(c *Chart) {
		if len(c.Xs) <= 2*buckets {
			return
		}
		before := chartValues(c)
		width := downsampleChart(c, buckets)
		d.Charts++
		d.Before += before
		d.After += chartValues(c)
		d.Buckets = max(d.Buckets, int(math.Ceil((c.Xs[len(c.Xs)-1]-c.Xs[0])/width)))
		c.Note = fmt.Sprintf("Summarised: %s intervals drawn as spans of %s s, each line's lowest and highest value in each span kept.",
			strconv.Itoa(before/max(len(c.Series), 1)), strconv.FormatFloat(width, 'f', -1, 64))
	})
	if d.Charts > 0 {
		r.Notices = append(r.Notices, fmt.Sprintf("Summary mode: %d charts over time had more points than this page can hold and open quickly; each is drawn in at most %d spans of whole seconds, keeping each line's lowest and highest value in each span (a spike or a stall still shows; the average of a span does not). The tables, percentiles and verdicts are computed from every interval. dbprobe report --points all draws every interval.",
			d.Charts, buckets))
	}
	return d
}

// downsampleChart replaces c's points by at most two per span of width
// seconds and returns the width.
func downsampleChart(c *Chart, buckets int) float64 {
	x0, x1 := c.Xs[0], c.Xs[len(c.Xs)-1]
	width := math.Max(1, math.Ceil((x1-x0)/float64(buckets)))
	// Spans of whole seconds; one more than asked can come of rounding
	// up, never more than buckets+1.
	for math.Floor((x1-x0)/width) >= float64(buckets) {
		width++
	}
	type span struct{ from, to int } // indexes into Xs, to exclusive
	var spans []span
	for i := 0; i < len(c.Xs); {
		k := int(math.Floor((c.Xs[i] - x0) / width))
		end := float64(k+1)*width + x0
		j := i + sort.Search(len(c.Xs)-i, func(n int) bool { return c.Xs[i+n] >= end })
		spans = append(spans, span{i, j})
		i = j
	}
	var xs []float64
	ys := make([][]*float64, len(c.Series))
	for _, sp := range spans {
		if sp.to-sp.from == 1 {
			xs = append(xs, c.Xs[sp.from])
			for s := range c.Series {
				ys[s] = append(ys[s], at(c.Series[s].Y, sp.from))
			}
			continue
		}
		// Two points a span: its first and its last second.
		xs = append(xs, c.Xs[sp.from], c.Xs[sp.to-1])
		for s := range c.Series {
			lo, hi := -1, -1
			for i := sp.from; i < sp.to; i++ {
				v := at(c.Series[s].Y, i)
				// On a log scale a value <= 0 is drawn as a gap: it
				// cannot be a span's lowest.
				if v == nil || c.LogY && *v <= 0 {
					continue
				}
				if lo < 0 || *v < *c.Series[s].Y[lo] {
					lo = i
				}
				if hi < 0 || *v > *c.Series[s].Y[hi] {
					hi = i
				}
			}
			switch {
			case lo < 0:
				ys[s] = append(ys[s], nil, nil)
			case lo <= hi:
				ys[s] = append(ys[s], c.Series[s].Y[lo], c.Series[s].Y[hi])
			default:
				ys[s] = append(ys[s], c.Series[s].Y[hi], c.Series[s].Y[lo])
			}
		}
	}
	c.Xs = xs
	for s := range c.Series {
		c.Series[s].Y = ys[s]
	}
	return width
}

func at(y []*float64, i int) *float64 {
	if i < len(y) {
		return y[i]
	}
	return nil
}
