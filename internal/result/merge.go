package result

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// MergeSummary says how the summary of a run of several clients was made
// from the clients' own results (dbprobe merge).
//
// The summary's figures (Summary.Ops, Series, RunTime, Throughput) are
// those of the window in which every client was measuring: the intervals
// of the seconds every client measured from end to end. What clients
// measured outside it (a client that started late, or ran on after the
// others) is in Outside, and everything every client measured, window or
// not, in AllOps and AllSeries: their counts are the sums of the clients'
// own, their percentiles those of all the clients' histograms merged.
type MergeSummary struct {
	Clients []MergedClient `json:"clients"`
	// WindowStart and WindowEnd bound the common window; both zero when
	// the clients never measured at the same time.
	WindowStart time.Time `json:"window_start,omitzero"`
	WindowEnd   time.Time `json:"window_end,omitzero"`
	// Outside is what each client measured outside the window; absent
	// for a client that measured nothing there.
	Outside []OutsideWindow `json:"outside,omitempty"`
	// AllOps and AllSeries cover every measured interval of every client;
	// AllErrors adds up the clients' failures by code.
	AllOps    int64             `json:"all_ops"`
	AllSeries []measure.Summary `json:"all_series"`
	AllErrors map[string]int64  `json:"all_errors,omitempty"`
	// ClockSpreadMicros is how far apart the clients' clocks were against
	// the server's (the largest offset less the smallest); absent when
	// fewer than two clients could measure it.
	ClockSpreadMicros *int64 `json:"clock_spread_us,omitempty"`
	// MonitorClient is the client whose monitor samples and diagnosis
	// were kept; -1 when no client monitored.
	MonitorClient int `json:"monitor_client"`
}

// MergedClient is one client as the merge saw it.
type MergedClient struct {
	Index    int    `json:"index"`
	File     string `json:"file"`
	Hostname string `json:"hostname,omitempty"`
	// Ops, RunTimeMS and Throughput are the client's own summary's.
	Ops        int64   `json:"ops"`
	RunTimeMS  float64 `json:"runtime_ms"`
	Throughput float64 `json:"throughput_ops_per_sec"`
	// Start and End are when it measured: its first interval after the
	// warm-up to its last.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Clock is its clock against the server's, as its header says.
	Clock *ClockOffset `json:"clock,omitempty"`
	// Diagnosis is its own verdict, kept because a client that was itself
	// the limit ("client" bound) makes the merged figures a floor.
	Diagnosis   *Diagnosis `json:"diagnosis,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Ended       string     `json:"ended,omitempty"`
	Outages     int        `json:"outages,omitempty"`
}

// OutsideWindow is what one client measured outside the common window.
type OutsideWindow struct {
	Client  int     `json:"client"`
	Ops     int64   `json:"ops"`
	Seconds float64 `json:"seconds"`
}

// MergeInput is one client's result and the name it is known by in
// messages (its path).
type MergeInput struct {
	Name string
	File *File
}

// MergeError is a refusal to merge: results that are not the clients of
// one run, or that lack what an exact merge needs. Its message is one
// line saying what differs and what to do.
type MergeError struct{ msg string }

func (e *MergeError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &MergeError{fmt.Sprintf(format, args...)} }

// perClientSettings are the settings that differ between the clients of
// one run by design, and are not compared: each client's own slice,
// seed, outputs and monitor.
var perClientSettings = map[string]bool{
	"client-index": true, "seed": true, "ends": true, "monitor-client": true,
	"out": true, "hlog": true, "influx-out": true, "status": true, "quiet": true,
	"metrics-addr": true, "metrics-allow-remote": true, "metrics-linger": true,
	"password-file": true, "allow-insecure-tls": true, "no-monitor": true,
	"monitor-interval": true, "monitor-wait-samples": true, "drain-timeout": true, "keep-db": true,
}

// mergeTolerance is how much of an interval a client may miss at either
// end and the interval still count as one it measured whole: clients
// started by --start-at begin within milliseconds of one another, not at
// the same nanosecond.
const mergeTolerance = 20

// Merge combines the results of the clients of one run into one result,
// phase by phase: the histograms of each operation merged exactly, the
// per-second series aligned by wall clock (the intervals of every client
// end on the wall clock's whole seconds, runner.Origin), errors, retries
// and outages added up, the monitor's samples and diagnosis taken from the
// client that monitored. It refuses (*MergeError) results that are not the
// clients of one run: a result without a client index, client counts that
// differ, a client missing or given twice, settings that differ, a phase
// without its summary, an interval without its histograms. Warnings are
// what the merged result should be read with, such as clocks that
// disagree by more than one interval.
func Merge(in []MergeInput, command string) (phases []Phase, warnings []string, err error) {
	if len(in) < 2 {
		return nil, nil, refuse("merge needs the results of at least two clients, and got %d", len(in))
	}
	if err := checkClients(in); err != nil {
		return nil, nil, err
	}
	byIndex := slices.Clone(in)
	slices.SortFunc(byIndex, func(a, b MergeInput) int {
		return a.File.Phases[0].Header.Client.Index - b.File.Phases[0].Header.Client.Index
	})
	for p := range byIndex[0].File.Phases {
		clientPhases := make([]Phase, len(byIndex))
		for k, c := range byIndex {
			clientPhases[k] = c.File.Phases[p]
		}
		if err := checkSameExperiment(byIndex, clientPhases); err != nil {
			return nil, nil, err
		}
		merged, warn, err := mergePhase(byIndex, clientPhases, command)
		if err != nil {
			return nil, nil, err
		}
		phases = append(phases, merged)
		warnings = append(warnings, warn...)
	}
	return phases, warnings, nil
}

// checkClients checks that the inputs are every client of one run, once
// each, with the same phases, each phase summarized.
func checkClients(in []MergeInput) error {
	seen := map[int]string{}
	count := 0
	for i, c := range in {
		if len(c.File.Phases) == 0 {
			return refuse("%s holds no phase: give the --out results of the clients", c.Name)
		}
		for _, p := range c.File.Phases {
			h := p.Header
			if h.Client == nil {
				return refuse("%s was not run as one of several clients (no --client-index and --client-count in its phase %s): only the results of one run's clients merge", c.Name, h.Phase)
			}
			if i == 0 && count == 0 {
				count = h.Client.Count
			}
			if h.Client.Count != count {
				return refuse("client counts differ: %s says --client-count %d, %s says %d; merge the results of one run", in[0].Name, count, c.Name, h.Client.Count)
			}
			if h.Client.Index != p0(c).Header.Client.Index {
				return refuse("%s holds phases of different clients (%d and %d): give each client's own result", c.Name, p0(c).Header.Client.Index, h.Client.Index)
			}
			if p.Summary == nil {
				return refuse("%s has no summary for its phase %s (the client was killed?): run dbprobe recover %s first", c.Name, h.Phase, c.Name)
			}
		}
		idx := p0(c).Header.Client.Index
		if other, dup := seen[idx]; dup {
			return refuse("%s and %s are both client %d: give each client's result once", other, c.Name, idx)
		}
		seen[idx] = c.Name
		if len(c.File.Phases) != len(in[0].File.Phases) {
			return refuse("%s has %d phases and %s %d: merge the results of one command (load or run) run by every client", in[0].Name, len(in[0].File.Phases), c.Name, len(c.File.Phases))
		}
	}
	var missing []string
	for i := range count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return refuse("the run had %d clients and the result of client %s is missing: give every client's result (a killed client's after dbprobe recover)", count, strings.Join(missing, ", "))
	}
	return nil
}

func p0(c MergeInput) Phase { return c.File.Phases[0] }

// checkSameExperiment checks that the clients' phases ran the same
// experiment: kind, phase, database, and every setting that is not a
// client's own.
func checkSameExperiment(in []MergeInput, ps []Phase) error {
	a, an := ps[0].Header, in[0].Name
	for k := 1; k < len(ps); k++ {
		b, bn := ps[k].Header, in[k].Name
		differ := func(what, x, y string) error {
			return refuse("%s and %s are not the same experiment: %s is %s in %s and %s in %s", an, bn, what, x, an, y, bn)
		}
		switch {
		case a.Experiment != b.Experiment:
			return differ("the experiment", a.Experiment, b.Experiment)
		case a.Phase != b.Phase:
			return differ("the phase", a.Phase, b.Phase)
		case a.Database.Driver != b.Database.Driver:
			return differ("the database", a.Database.Driver, b.Database.Driver)
		case a.Database.ServerVersion != b.Database.ServerVersion:
			return differ("the server version", a.Database.ServerVersion, b.Database.ServerVersion)
		}
		if !a.Client.StartAt.Equal(b.Client.StartAt) {
			return differ("--start-at", startText(a.Client.StartAt), startText(b.Client.StartAt))
		}
		av, bv := settingMap(a), settingMap(b)
		for _, key := range slices.Sorted(maps.Keys(merged(av, bv))) {
			if perClientSettings[key] {
				continue
			}
			x, okx := av[key]
			y, oky := bv[key]
			if !okx {
				x = "not set"
			}
			if !oky {
				y = "not set"
			}
			if x != y {
				return differ(key, x, y)
			}
		}
	}
	return nil
}

func startText(t time.Time) string {
	if t.IsZero() {
		return "not given"
	}
	return t.Format(time.RFC3339Nano)
}

func settingMap(h Header) map[string]string {
	m := make(map[string]string, len(h.Settings))
	for _, s := range h.Settings {
		m[s.Key] = s.Value
	}
	return m
}

func merged(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// bin is one interval of the merged series: what every client measured
// in the same wall-clock interval.
type bin struct {
	start  time.Time // the wall clock's interval, runner.Origin's
	warmup bool
	first  time.Time // earliest start and latest end of what fell in it
	last   time.Time
	ops    int64
	ivs    []*Interval
	// clients counts intervals per client in it.
	clients map[int]int
	// whole says every client measured the whole interval.
	whole bool
}

// mergePhase merges one phase of every client. The intervals are first
// only sorted into bins; each bin's histograms are then decoded, merged
// and let go in turn, so that memory holds one bin's histograms at a time
// besides the totals (a histogram spanning an hour's latencies is 190 KB
// decoded, whatever it holds).
func mergePhase(in []MergeInput, ps []Phase, command string) (Phase, []string, error) {
	var warnings []string
	tick := time.Duration(0)
	for _, p := range ps {
		for _, iv := range p.Intervals {
			tick = max(tick, iv.End.Sub(iv.Start))
		}
	}
	tick = tick.Round(100 * time.Millisecond)
	if tick <= 0 {
		tick = time.Second
	}
	tol := tick / mergeTolerance

	type window struct {
		start, end time.Time
		ok         bool
	}
	windows := make([]window, len(ps))
	for k, p := range ps {
		s, e, ok := p.MeasuredWindow()
		windows[k] = window{s, e, ok}
	}

	bins := map[[2]int64]*bin{}
	owner := map[*Interval]int{}
	key := func(t time.Time, warm bool) [2]int64 {
		w := int64(0)
		if warm {
			w = 1
		}
		return [2]int64{t.Truncate(tick).UnixNano(), w}
	}
	for k := range ps {
		for i := range ps[k].Intervals {
			iv := &ps[k].Intervals[i]
			kk := key(iv.Start, iv.Warmup)
			b := bins[kk]
			if b == nil {
				b = &bin{start: iv.Start.Truncate(tick), warmup: iv.Warmup, first: iv.Start, last: iv.End, clients: map[int]int{}}
				bins[kk] = b
			}
			if iv.Start.Before(b.first) {
				b.first = iv.Start
			}
			if iv.End.After(b.last) {
				b.last = iv.End
			}
			b.ops += iv.Ops
			b.clients[k]++
			b.ivs = append(b.ivs, iv)
			owner[iv] = k
		}
	}
	for _, b := range bins {
		if b.warmup || len(b.clients) < len(ps) {
			continue
		}
		b.whole = true
		for k := range ps {
			w := windows[k]
			if !w.ok || w.start.After(b.start.Add(tol)) || w.end.Before(b.start.Add(tick-tol)) {
				b.whole = false
			}
		}
	}
	order := slices.Collect(maps.Values(bins))
	sort.Slice(order, func(i, j int) bool {
		if !order[i].start.Equal(order[j].start) {
			return order[i].start.Before(order[j].start)
		}
		return order[i].warmup && !order[j].warmup
	})

	h0 := ps[0].Header
	header := h0
	header.Client = nil
	header.Command = command
	header.Environment.Hostname = ""
	header.Settings = nil
	for _, s := range h0.Settings {
		if !perClientSettings[s.Key] {
			header.Settings = append(header.Settings, s)
		}
	}
	header.Settings = append(header.Settings, Setting{Key: "clients", Value: strconv.Itoa(len(ps)), Source: "dbprobe merge"})
	header.Notes = nil
	for _, p := range ps {
		if p.Header.StartedAt.Before(header.StartedAt) {
			header.StartedAt = p.Header.StartedAt
		}
	}
	names := make([]string, len(in))
	for k, c := range in {
		names[k] = c.Name
	}
	header.Notes = append(header.Notes, fmt.Sprintf("merged from the results of %d clients: %s", len(ps), strings.Join(names, ", ")))

	out := Phase{Header: header}
	ms := &MergeSummary{MonitorClient: -1}
	common := newSeriesSums()
	all := newSeriesSums()
	sum := Summary{Phase: h0.Phase, Errors: map[string]int64{}, Merge: ms, RetryLimit: ps[0].Summary.RetryLimit, Warmup: ps[0].Summary.Warmup}
	phaseStart := time.Time{}
	if len(order) > 0 {
		phaseStart = order[0].first
	}
	outside := make([]OutsideWindow, len(ps))
	for _, b := range order {
		sums := newSeriesSums()
		for _, civ := range b.ivs {
			if err := sums.add(civ.Series); err != nil {
				name := in[owner[civ]].Name
				if errors.Is(err, measure.ErrNoHistogram) {
					return Phase{}, nil, refuse("%s: an interval carries no histogram (written by an older dbprobe): it cannot be merged exactly", name)
				}
				return Phase{}, nil, refuse("%s: interval ending %s: %v", name, civ.End.Format(time.RFC3339Nano), err)
			}
		}
		for _, ss := range sums.byName {
			if ss.mergeErr != nil {
				return Phase{}, nil, refuse("an interval carries no histogram for [%s] (written by an older dbprobe): it cannot be merged exactly", ss.name)
			}
		}
		series, _ := sums.summaries(map[string]int64{})
		iv := Interval{Phase: h0.Phase, Start: b.first, End: b.last, Elapsed: b.last.Sub(phaseStart), Ops: b.ops, Warmup: b.warmup, Series: series}
		if d := b.last.Sub(b.first).Seconds(); d > 0 {
			iv.OpsPerSec = float64(b.ops) / d
		}
		out.Intervals = append(out.Intervals, iv)
		if b.warmup {
			continue
		}
		all.addSums(sums)
		ms.AllOps += b.ops
		if b.whole {
			common.addSums(sums)
			sum.Ops += b.ops
			if ms.WindowStart.IsZero() {
				ms.WindowStart = b.first
			}
			ms.WindowEnd = b.last
		}
	}
	// What each client measured outside the window, from its own
	// intervals.
	for k, p := range ps {
		outside[k].Client = p.Header.Client.Index
		for _, iv := range p.Intervals {
			if iv.Warmup {
				continue
			}
			if b := bins[key(iv.Start, false)]; b != nil && b.whole {
				continue
			}
			outside[k].Ops += iv.Ops
			outside[k].Seconds += iv.End.Sub(iv.Start).Seconds()
		}
		// A client's last interval, cut when its workers stopped, may be
		// a millisecond long with nothing in it: not worth a line.
		if outside[k].Ops > 0 || outside[k].Seconds >= 0.001 {
			ms.Outside = append(ms.Outside, outside[k])
		}
	}
	var notes []string
	sum.Series, notes = common.summaries(sum.Errors)
	sum.Notes = append(sum.Notes, notes...)
	ms.AllSeries, _ = all.summaries(map[string]int64{})
	if !ms.WindowStart.IsZero() {
		sum.RunTime = ms.WindowEnd.Sub(ms.WindowStart)
		sum.Throughput = float64(sum.Ops) / sum.RunTime.Seconds()
	} else {
		sum.Notes = append(sum.Notes, "the clients never measured a whole interval at the same time: the figures above are empty; see all operations below")
	}

	// The clients: their own figures, clocks, verdicts and outages.
	var offsets []int64
	avail := &Availability{}
	for k, p := range ps {
		c := p.Header.Client
		s := p.Summary
		mc := MergedClient{
			Index: c.Index, File: in[k].Name, Hostname: p.Header.Environment.Hostname,
			Ops: s.Ops, RunTimeMS: float64(s.RunTime) / float64(time.Millisecond), Throughput: s.Throughput,
			Start: windows[k].start, End: windows[k].end, Clock: c.Clock, Diagnosis: s.Diagnosis, Interrupted: s.Interrupted,
		}
		if s.Ending != nil {
			mc.Ended = s.Ending.Text
		}
		for code, n := range s.Errors {
			if ms.AllErrors == nil {
				ms.AllErrors = map[string]int64{}
			}
			ms.AllErrors[code] += n
		}
		if a := s.Availability; a != nil {
			mc.Outages = len(a.Outages)
			avail.Outages = append(avail.Outages, a.Outages...)
			avail.Reconnects += a.Reconnects
		}
		if c.Clock != nil {
			offsets = append(offsets, c.Clock.OffsetMicros)
		}
		if c.Monitors && ms.MonitorClient < 0 {
			ms.MonitorClient = c.Index
			out.Monitor = p.Monitor
			if s.Diagnosis != nil && s.Diagnosis.Limit != "client" {
				sum.Diagnosis = s.Diagnosis
			}
		}
		if s.Interrupted {
			sum.Interrupted = true
			sum.Notes = append(sum.Notes, fmt.Sprintf("client %d was interrupted", c.Index))
		}
		if s.Diagnosis != nil && s.Diagnosis.Limit == "client" {
			sum.Notes = append(sum.Notes, fmt.Sprintf("client %d was itself the limit: %s; the merged throughput is a floor", c.Index, s.Diagnosis.Verdict))
		}
		if got := sumIntervalOps(p); got != s.Ops {
			sum.Notes = append(sum.Notes, fmt.Sprintf("client %d: its intervals add up to %d operations and its summary says %d", c.Index, got, s.Ops))
		}
		ms.Clients = append(ms.Clients, mc)
	}
	if len(avail.Outages) > 0 || avail.Reconnects > 0 {
		avail.Outages = unionOutages(avail.Outages)
		sum.Availability = avail
	}
	if len(offsets) >= 2 {
		spread := slices.Max(offsets) - slices.Min(offsets)
		ms.ClockSpreadMicros = &spread
		if time.Duration(spread)*time.Microsecond > tick {
			w := fmt.Sprintf("the clients' clocks disagree by %s against the database server's, more than one interval (%s): their per-second series are not aligned; synchronise the clients' clocks (NTP, chrony) and run again",
				shortDuration(time.Duration(spread)*time.Microsecond), shortDuration(tick))
			warnings = append(warnings, w)
			sum.Notes = append(sum.Notes, w)
		}
	}
	if len(offsets) < len(ps) {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d of the %d clients have no reading of the database server's clock (the database cannot say its time, or it could not be read): their clocks are not checked", len(ps)-len(offsets), len(ps)))
	}
	if ms.MonitorClient < 0 {
		sum.Notes = append(sum.Notes, "no client monitored the database: no diagnosis")
	}
	out.Summary = &sum
	return out, warnings, nil
}

// sumIntervalOps adds up the operations of a phase's measured intervals.
func sumIntervalOps(p Phase) int64 {
	var n int64
	for _, iv := range p.Intervals {
		if !iv.Warmup {
			n += iv.Ops
		}
	}
	return n
}

// unionOutages merges outages that overlap (several clients saw the same
// one) into one span, their failures added up, in time order.
func unionOutages(os []Outage) []Outage {
	slices.SortFunc(os, func(a, b Outage) int { return a.Start.Compare(b.Start) })
	var out []Outage
	for _, o := range os {
		if n := len(out); n > 0 && !o.Start.After(out[n-1].End) {
			last := &out[n-1]
			if o.End.After(last.End) {
				last.End = o.End
			}
			last.Failed += o.Failed
			last.Ongoing = last.Ongoing || o.Ongoing
			continue
		}
		out = append(out, o)
	}
	return out
}

// addSums adds what another seriesSums holds, histograms merged exactly.
func (ss *seriesSums) addSums(o *seriesSums) {
	prev := -1
	for _, name := range o.order {
		src := o.byName[name]
		sum, ok := ss.byName[name]
		if !ok {
			sum = &seriesSum{name: name, statuses: map[string]int64{}, min: src.min}
			ss.byName[name] = sum
			ss.order = slices.Insert(ss.order, prev+1, name)
		}
		prev = slices.Index(ss.order, name)
		sum.count += src.count
		sum.overflow += src.overflow
		if src.retries != nil {
			if sum.retries == nil {
				sum.retries = new(int64)
			}
			*sum.retries += *src.retries
		}
		for code, n := range src.retryCodes {
			if sum.retryCodes == nil {
				sum.retryCodes = map[string]int64{}
			}
			sum.retryCodes[code] += n
		}
		if len(sum.percentiles) == 0 {
			sum.percentiles = src.percentiles
		}
		sum.hasOK = sum.hasOK || src.hasOK
		for st, n := range src.statuses {
			sum.statuses[st] += n
		}
		sum.min = min(sum.min, src.min)
		sum.max = max(sum.max, src.max)
		sum.weightSum += src.weightSum
		sum.merger.AddMerger(&src.merger)
		if src.mergeErr != nil && sum.mergeErr == nil {
			sum.mergeErr = src.mergeErr
		}
	}
}
