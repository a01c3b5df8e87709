package measure

import (
	"errors"
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// encodeHistogram returns h in HdrHistogram's compressed V2 encoding,
// base64: the form .hlog lines carry, so other HdrHistogram tools read it
// too. A second of one operation takes 0.1–3 KB, whatever the count,
// because only the buckets in use are written.
func encodeHistogram(h *hdr.Histogram) string {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		// Encode writes to memory through zlib: it has nothing that can
		// fail. A histogram left out only costs a recovery its percentiles.
		return ""
	}
	return string(b)
}

// describe fills sum's latency figures from h: count, mean, min, max and
// the percentiles asked for, exact to the histogram's precision.
func describe(sum *Summary, h *hdr.Histogram, percentiles []float64) {
	sum.Count = h.TotalCount()
	sum.MeanMicros = h.Mean()
	sum.MinMicros = h.Min()
	sum.MaxMicros = h.Max()
	sum.Percentiles = nil
	for _, p := range percentiles {
		sum.Percentiles = append(sum.Percentiles, Percentile{p, h.ValueAtPercentile(p)})
	}
}

// Merger merges the histograms that summaries carry (Summary.Histogram)
// exactly, so summaries of intervals written to a file can be added up
// into the summary of the whole phase long after the run, with the very
// percentiles the run itself would have printed. The zero Merger is empty
// and ready.
type Merger struct {
	h *hdr.Histogram
}

// ErrNoHistogram is returned by Merger.Add for a summary that recorded
// values but carries no histogram (a file from before histograms were
// written): its percentiles cannot be merged.
var ErrNoHistogram = errors.New("the series carries no histogram")

// Add merges the histogram of one summary. A summary without values (a
// series of failure statuses only) adds nothing.
func (m *Merger) Add(s Summary) error {
	if s.Count == 0 && s.Histogram == "" {
		return nil
	}
	if s.Histogram == "" {
		return fmt.Errorf("%s: %w", s.Name, ErrNoHistogram)
	}
	// Decoded sparse: a dense histogram spanning an hour is 190 KB to
	// allocate and walk whatever it holds, where a second's histogram has
	// a few hundred buckets in use (dbprobe merge of 64 one-hour results
	// decodes 460,000 of them).
	h, err := hdr.DecodePacked([]byte(s.Histogram))
	if err != nil {
		return fmt.Errorf("%s: bad histogram: %w", s.Name, err)
	}
	if h.TotalCount() != s.Count {
		return fmt.Errorf("%s: the histogram holds %d values, the count says %d", s.Name, h.TotalCount(), s.Count)
	}
	if m.h == nil {
		m.h = newHistogram()
	}
	if dropped := h.MergeInto(m.h); dropped > 0 {
		return fmt.Errorf("%s: %d values outside the histogram range", s.Name, dropped)
	}
	return nil
}

// Count is the number of values merged so far.
func (m *Merger) Count() int64 {
	if m.h == nil {
		return 0
	}
	return m.h.TotalCount()
}

// Describe fills sum's count, mean, min, max, percentiles and histogram
// from what was merged, as Set.SummarizeEncoded does from a run's own
// view. It leaves them zero when nothing was merged.
func (m *Merger) Describe(sum *Summary, percentiles []float64) {
	if m.Count() == 0 {
		return
	}
	describe(sum, m.h, percentiles)
	sum.Histogram = encodeHistogram(m.h)
}
