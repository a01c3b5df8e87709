package measure

import (
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The histogram range and precision.
const (
	// HighestMicros is the largest value a histogram holds exactly: 1 hour.
	HighestMicros = int64(time.Hour / time.Microsecond)
	// SignificantFigures is the precision of every recorded value.
	SignificantFigures = 3
)

// DefaultPercentiles are the percentiles reported when none are asked for.
var DefaultPercentiles = []float64{50, 95, 99, 99.9}

func newHistogram() *hdr.Histogram {
	return hdr.New(1, HighestMicros, SignificantFigures)
}

// Set holds the recorders of one run phase and the views merged from them.
type Set struct {
	names     []string
	countsOK  []bool
	retryable []bool
	index     map[string]int

	mu         sync.Mutex // guards everything below; never taken on the hot path
	recorders  []*Recorder
	cumulative []*hdr.Histogram
	overflow   []int64
	statuses   map[StatusKey]int64
	retries    []int64
	retryCodes map[StatusKey]int64
	codes      map[string]int64
	ops        int64
	last       time.Time
	start      time.Time
}

// StatusKey names one Return= counter: a series and a status such as
// "NOT_FOUND" or "ERROR(23505)". Retries per code are keyed the same way,
// by series and the error code ("40001").
type StatusKey struct {
	Series int
	Status string
}

// NewSet returns a Set whose series are the given names, in order: a
// series is then addressed by its index. countsOK[i] says whether series i
// is an operation whose recorded values are its successes, so that its
// count is reported as Return=OK (READ does; READ-FAILED and Intended-READ
// do not).
func NewSet(names []string, countsOK []bool, start time.Time) *Set {
	s := &Set{
		names:      append([]string(nil), names...),
		countsOK:   append([]bool(nil), countsOK...),
		retryable:  make([]bool, len(names)),
		index:      make(map[string]int, len(names)),
		cumulative: make([]*hdr.Histogram, len(names)),
		overflow:   make([]int64, len(names)),
		statuses:   map[StatusKey]int64{},
		retries:    make([]int64, len(names)),
		retryCodes: map[StatusKey]int64{},
		codes:      map[string]int64{},
		last:       start,
		start:      start,
	}
	for i, n := range names {
		s.index[n] = i
	}
	return s
}

// MarkRetryable says that series i is an operation a retry policy may
// repeat, so its summaries carry a retry count even when it is zero. Call
// it before recording.
func (s *Set) MarkRetryable(i int) { s.retryable[i] = true }

// Series returns the index of a series name, or -1.
func (s *Set) Series(name string) int {
	if i, ok := s.index[name]; ok {
		return i
	}
	return -1
}

// Names returns the series names in index order.
func (s *Set) Names() []string { return s.names }

// NewRecorder returns a recorder for one worker.
func (s *Set) NewRecorder() *Recorder {
	r := &Recorder{
		hists:    make([]*hdr.Histogram, len(s.names)),
		pending:  make([][]int64, len(s.names)),
		overflow: make([]int64, len(s.names)),
		statuses: map[StatusKey]int64{},
		retries:  make([]int64, len(s.names)),
		retryBy:  map[StatusKey]int64{},
		codes:    map[string]int64{},
	}
	s.mu.Lock()
	s.recorders = append(s.recorders, r)
	s.mu.Unlock()
	return r
}

// Recorder is one worker's histograms. Its lock is taken by its worker on
// every record and by the Set once per tick, so it is never contended on
// the hot path.
//
// A worker's latencies of one interval first go to a short list (pending)
// and only past maxPending of them into its histogram: merging a
// histogram into the interval's walks every bucket up to its largest
// value and emptying it clears them all, which for a worker doing a few
// hundred operations a second cost more than recording them (measured: 32
// workers' ticks took 8–10 ms each, 3% of the client's CPU on PostgreSQL
// at 16,000 operations a second). The values of the list are recorded
// into the interval's histogram one by one, exactly as they would have
// been into the worker's.
type Recorder struct {
	mu       sync.Mutex
	hists    []*hdr.Histogram // allocated on first use: most series stay empty
	pending  [][]int64        // values not yet in hists, at most maxPending per series
	overflow []int64
	statuses map[StatusKey]int64
	retries  []int64
	retryBy  map[StatusKey]int64
	codes    map[string]int64
	ops      int64
}

// Record adds one latency in microseconds to a series.
func (r *Recorder) Record(series int, micros int64) { r.RecordN(series, micros, 1) }

// RecordN adds n values of the same latency to a series: the rows of one
// batch, which are all acknowledged when the batch commits.
func (r *Recorder) RecordN(series int, micros, n int64) {
	r.mu.Lock()
	if micros > HighestMicros {
		r.overflow[series] += n
		micros = HighestMicros
	} else if micros < 0 {
		micros = 0
	}
	if p := r.pending[series]; n == 1 && len(p) < maxPending {
		if p == nil {
			p = make([]int64, 0, maxPending)
		}
		r.pending[series] = append(p, micros)
		r.mu.Unlock()
		return
	}
	h := r.hists[series]
	if h == nil {
		h = newHistogram()
		r.hists[series] = h
	}
	_ = h.RecordValues(micros, n) // cannot fail: micros is within range
	r.mu.Unlock()
}

// maxPending is how many values a series of a Recorder holds before it
// records into its histogram: 32 KB, a second of up to 4,096 operations,
// below which the list costs less to merge than a histogram does.
const maxPending = 4096

// Error counts one failure by the database's error code (or its class
// when the database gave no code), for the result's error table.
func (r *Recorder) Error(code string) {
	r.mu.Lock()
	r.codes[code]++
	r.mu.Unlock()
}

// Status counts one operation that ended with a status other than OK.
// OK is implied by the operation's own series count, as in YCSB.
func (r *Recorder) Status(series int, status string) {
	r.mu.Lock()
	r.statuses[StatusKey{series, status}]++
	r.mu.Unlock()
}

// Retry counts one retry of an operation of a series: an attempt that
// failed with a retryable error and was repeated. code is the error's
// code ("40001"), so that the retries can be told apart by cause: a
// serialization failure and a deadlock call for different fixes.
func (r *Recorder) Retry(series int, code string) {
	r.mu.Lock()
	r.retries[series]++
	r.retryBy[StatusKey{series, code}]++
	r.mu.Unlock()
}

// Done counts n finished transactions (a read-modify-write is one).
func (r *Recorder) Done(n int64) {
	r.mu.Lock()
	r.ops += n
	r.mu.Unlock()
}

// View is what was recorded over some span, per series: histograms,
// overflows, non-OK statuses and retries, and failures by error code.
type View struct {
	// Histograms holds one histogram per series, nil where nothing was recorded.
	Histograms []*hdr.Histogram
	Overflow   []int64
	Statuses   map[StatusKey]int64
	// Retries counts, per series, attempts that were repeated.
	Retries []int64
	// RetryCodes splits Retries by series and the code of the error that
	// caused the retry.
	RetryCodes map[StatusKey]int64
	// Codes counts failures by error code.
	Codes map[string]int64
}

func newView(series int) View {
	return View{
		Histograms: make([]*hdr.Histogram, series),
		Overflow:   make([]int64, series),
		Statuses:   map[StatusKey]int64{},
		Retries:    make([]int64, series),
		RetryCodes: map[StatusKey]int64{},
		Codes:      map[string]int64{},
	}
}

// Interval is what the workers recorded between two ticks.
type Interval struct {
	Start, End time.Time
	// Ops is the number of transactions finished in the interval.
	Ops int64
	View
}

// Tick collects what every recorder holds since the last tick into an
// Interval, resets the recorders, and adds the interval to the cumulative
// view unless keep is false (the warm-up).
func (s *Set) Tick(now time.Time, keep bool) Interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	iv := Interval{Start: s.last, End: now, View: newView(len(s.names))}
	for _, r := range s.recorders {
		r.mu.Lock()
		for i, p := range r.pending {
			h := r.hists[i]
			used := h != nil && h.TotalCount() > 0
			if len(p) == 0 && !used {
				continue
			}
			if iv.Histograms[i] == nil {
				iv.Histograms[i] = newHistogram()
			}
			for _, v := range p {
				_ = iv.Histograms[i].RecordValue(v) // within range: RecordN clamped it
			}
			r.pending[i] = p[:0]
			if used {
				iv.Histograms[i].Merge(h)
				h.Reset()
			}
			iv.Overflow[i] += r.overflow[i]
			r.overflow[i] = 0
		}
		for k, n := range r.statuses {
			iv.Statuses[k] += n
			delete(r.statuses, k)
		}
		for i, n := range r.retries {
			iv.Retries[i] += n
			r.retries[i] = 0
		}
		for k, n := range r.retryBy {
			iv.RetryCodes[k] += n
			delete(r.retryBy, k)
		}
		for k, n := range r.codes {
			iv.Codes[k] += n
			delete(r.codes, k)
		}
		iv.Ops += r.ops
		r.ops = 0
		r.mu.Unlock()
	}
	s.last = now
	if !keep {
		s.start = now
		return iv
	}
	for i, h := range iv.Histograms {
		if h == nil {
			continue
		}
		if s.cumulative[i] == nil {
			s.cumulative[i] = newHistogram()
		}
		s.cumulative[i].Merge(h)
		s.overflow[i] += iv.Overflow[i]
	}
	for k, n := range iv.Statuses {
		s.statuses[k] += n
	}
	for i, n := range iv.Retries {
		s.retries[i] += n
	}
	for k, n := range iv.RetryCodes {
		s.retryCodes[k] += n
	}
	for k, n := range iv.Codes {
		s.codes[k] += n
	}
	s.ops += iv.Ops
	return iv
}

// Total is the cumulative view of everything kept.
type Total struct {
	// Start is when the kept measurement began (after any warm-up).
	Start time.Time
	Ops   int64
	View
}

// Total returns a copy of the cumulative view. Call Tick first to include
// what the recorders hold.
func (s *Set) Total() Total {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Total{Start: s.start, Ops: s.ops, View: newView(len(s.names))}
	copy(t.Overflow, s.overflow)
	copy(t.Retries, s.retries)
	for k, n := range s.retryCodes {
		t.RetryCodes[k] = n
	}
	for k, n := range s.codes {
		t.Codes[k] = n
	}
	for i, h := range s.cumulative {
		if h != nil {
			t.Histograms[i] = h.Clone()
		}
	}
	for k, n := range s.statuses {
		t.Statuses[k] = n
	}
	return t
}

// Summary describes one series: the figures YCSB prints for it.
type Summary struct {
	Name        string       `json:"name"`
	Count       int64        `json:"count"`
	MeanMicros  float64      `json:"mean_us"`
	MinMicros   int64        `json:"min_us"`
	MaxMicros   int64        `json:"max_us"`
	Percentiles []Percentile `json:"percentiles"`
	// Overflow counts values above one hour, recorded as one hour.
	Overflow int64 `json:"overflow,omitempty"`
	// Statuses counts the Return= lines: "OK" and every failure status.
	Statuses []StatusCount `json:"statuses"`
	// Retries counts attempts that failed with a retryable error and were
	// repeated; the operation's latency includes them and their waits. It
	// is nil for series that are not operations (Intended-, -FAILED,
	// VERIFY, CLEANUP).
	Retries *int64 `json:"retries,omitempty"`
	// RetriesByCode splits Retries by the code of the error that caused
	// each retry ("40001": 2401); its counts add up to Retries. Absent
	// when nothing was retried.
	RetriesByCode map[string]int64 `json:"retries_by_code,omitempty"`
	// Histogram is the series' HDR histogram, encoded as HdrHistogram's
	// compressed V2 in base64 (as in .hlog files); empty when nothing was
	// recorded. It lets summaries of intervals be merged exactly later
	// (Merger), e.g. by dbprobe recover after a killed run.
	Histogram string `json:"histogram,omitempty"`
	// HDR is the series' histogram itself in the runner's per-interval
	// summaries, for an output that reads it as they are handed out (the
	// live metrics) without the cost of encoding and decoding it. It is
	// the runner's: an output must not change it or keep it past the
	// call. Never written to a file; nil in summaries read back.
	HDR *hdr.Histogram `json:"-"`
}

// Percentile is one percentile of a series.
type Percentile struct {
	Percentile float64 `json:"p"`
	Micros     int64   `json:"us"`
}

// StatusCount is one Return= line.
type StatusCount struct {
	Status string `json:"status"`
	Count  int64  `json:"count"`
}

// Summarize turns a View (of an Interval or the Total) into summaries, in
// series order. A series appears when it recorded a value or a status.
func (s *Set) Summarize(v View, percentiles []float64) []Summary {
	return s.summarize(v, percentiles, false)
}

// SummarizeEncoded is Summarize with each series' histogram encoded in
// Summary.Histogram, for a result that is merged or recovered later.
// Encoding costs about 0.7 ms and 0.9 MB of garbage per series, so only a
// result that is kept asks for it.
func (s *Set) SummarizeEncoded(v View, percentiles []float64) []Summary {
	return s.summarize(v, percentiles, true)
}

func (s *Set) summarize(v View, percentiles []float64, encode bool) []Summary {
	var out []Summary
	hists, overflow, statuses := v.Histograms, v.Overflow, v.Statuses
	for i, name := range s.names {
		h := hists[i]
		var failures []StatusCount
		for k, n := range statuses {
			if k.Series == i {
				failures = append(failures, StatusCount{k.Status, n})
			}
		}
		if (h == nil || h.TotalCount() == 0) && len(failures) == 0 {
			continue
		}
		sort.Slice(failures, func(a, b int) bool { return failures[a].Status < failures[b].Status })
		sum := Summary{Name: name}
		if overflow != nil {
			sum.Overflow = overflow[i]
		}
		if s.retryable[i] {
			var n int64
			if v.Retries != nil {
				n = v.Retries[i]
			}
			sum.Retries = &n
			for k, c := range v.RetryCodes {
				if k.Series == i {
					if sum.RetriesByCode == nil {
						sum.RetriesByCode = map[string]int64{}
					}
					sum.RetriesByCode[k.Status] += c
				}
			}
		}
		if h != nil && h.TotalCount() > 0 {
			describe(&sum, h, percentiles)
			if encode {
				sum.Histogram = encodeHistogram(h)
			}
			if s.countsOK[i] {
				sum.Statuses = append(sum.Statuses, StatusCount{"OK", sum.Count})
			}
		}
		sum.Statuses = append(sum.Statuses, failures...)
		out = append(out, sum)
	}
	return out
}
