package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
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

// MergeInput is one client's result, read as it is merged, and the name
// it is known by in messages (its path).
type MergeInput struct {
	Name   string
	Result io.Reader
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
//
// The results are read side by side, one interval of each at a time, and
// each second is merged once every client has gone past it: memory holds
// the merged series, not the clients' (64 clients' hours are half a
// gigabyte of histograms).
func Merge(in []MergeInput, command string) (phases []Phase, warnings []string, err error) {
	if len(in) < 2 {
		return nil, nil, refuse("merge needs the results of at least two clients, and got %d", len(in))
	}
	streams := make([]*stream, len(in))
	for k, c := range in {
		streams[k] = &stream{name: c.Name, br: bufio.NewReader(c.Result)}
	}
	for {
		headers := make([]Header, len(streams))
		ended := 0
		for k, st := range streams {
			h, ok, err := st.nextPhase()
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				ended++
				continue
			}
			headers[k] = h
		}
		switch {
		case ended == len(streams) && len(phases) == 0:
			return nil, nil, refuse("%s holds no phase: give the --out results of the clients", in[0].Name)
		case ended == len(streams):
			return phases, warnings, nil
		case ended > 0:
			for k, st := range streams {
				if headers[k].Phase == "" {
					return nil, nil, refuse("%s has %d phases and the others more: merge the results of one command (load or run) run by every client", st.name, len(phases))
				}
			}
		}
		order, err := checkClients(streams, headers)
		if err != nil {
			return nil, nil, err
		}
		if err := checkSameExperiment(streams, headers, order); err != nil {
			return nil, nil, err
		}
		merged, warn, err := mergePhase(streams, headers, order, command)
		if err != nil {
			return nil, nil, err
		}
		phases = append(phases, merged)
		warnings = append(warnings, warn...)
	}
}

// stream reads one client's result a record at a time. It decodes each
// line with the reader of whole files (File.add), on a File that it
// empties as it goes, so the checks of records out of place are Read's.
type stream struct {
	name string
	br   *bufio.Reader
	f    File
	line int
	eof  bool
	// pendingHeader is a phase's header read while looking for the end
	// of the phase before.
	pendingHeader bool
}

// record reads one line into s.f; false at the end of the file.
func (s *stream) record() (bool, error) {
	for !s.eof {
		line, err := s.br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return false, refuse("cannot read %s: %v", s.name, err)
		}
		s.line++
		complete := err == nil
		s.eof = !complete
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !complete && !json.Valid(line) && cutShort(line) {
			return false, refuse("%s ends in a cut record (its client was killed): run dbprobe recover %s first", s.name, s.name)
		}
		before := len(s.f.Phases)
		if err := s.f.add(line); err != nil {
			return false, refuse("%s is not a dbprobe result: line %d: %v", s.name, s.line, err)
		}
		if len(s.f.Phases) > before && before > 0 {
			// A new phase: keep only it.
			s.f.Phases = s.f.Phases[len(s.f.Phases)-1:]
			s.pendingHeader = true
		}
		return true, nil
	}
	return false, nil
}

// cur is the phase being read.
func (s *stream) cur() *Phase { return &s.f.Phases[len(s.f.Phases)-1] }

// nextPhase reads up to the next phase's header; ok is false at the end
// of the file. Whatever is left of the phase before is skipped.
func (s *stream) nextPhase() (Header, bool, error) {
	if s.pendingHeader {
		s.pendingHeader = false
		return s.cur().Header, true, nil
	}
	first := len(s.f.Phases) == 0
	for {
		ok, err := s.record()
		if err != nil || !ok {
			return Header{}, false, err
		}
		if first && len(s.f.Phases) == 1 {
			return s.cur().Header, true, nil
		}
		if s.pendingHeader {
			s.pendingHeader = false
			return s.cur().Header, true, nil
		}
	}
}

// next returns the phase's next interval, keeping its monitor samples
// when keepMonitor; nil at the end of the phase, whose summary is then
// in cur().Summary.
func (s *stream) next(keepMonitor bool, monitor *[]MonitorSample) (*Interval, error) {
	for {
		p := s.cur()
		if keepMonitor && len(p.Monitor) > 0 {
			*monitor = append(*monitor, p.Monitor...)
		}
		p.Monitor = p.Monitor[:0]
		if len(p.Intervals) > 0 {
			iv := p.Intervals[0]
			p.Intervals = p.Intervals[1:]
			if len(p.Intervals) == 0 {
				p.Intervals = nil
			}
			return &iv, nil
		}
		if p.Summary != nil || s.pendingHeader {
			return nil, nil
		}
		ok, err := s.record()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, nil
		}
	}
}

// checkClients checks that the phase's headers are every client of one
// run, once each, and returns the streams' order by client index.
func checkClients(streams []*stream, headers []Header) ([]int, error) {
	seen := map[int]int{}
	count := 0
	for k, h := range headers {
		name := streams[k].name
		if h.Client == nil {
			return nil, refuse("%s was not run as one of several clients (no --client-index and --client-count in its phase %s): only the results of one run's clients merge", name, h.Phase)
		}
		if k == 0 {
			count = h.Client.Count
		}
		if h.Client.Count != count {
			return nil, refuse("client counts differ: %s says --client-count %d, %s says %d; merge the results of one run", streams[0].name, count, name, h.Client.Count)
		}
		if other, dup := seen[h.Client.Index]; dup {
			return nil, refuse("%s and %s are both client %d: give each client's result once", streams[other].name, name, h.Client.Index)
		}
		seen[h.Client.Index] = k
	}
	var missing []string
	order := make([]int, 0, count)
	for i := range count {
		k, ok := seen[i]
		if !ok {
			missing = append(missing, strconv.Itoa(i))
			continue
		}
		order = append(order, k)
	}
	if len(missing) > 0 {
		return nil, refuse("the run had %d clients and the result of client %s is missing: give every client's result (a killed client's after dbprobe recover)", count, strings.Join(missing, ", "))
	}
	return order, nil
}

// checkSameExperiment checks that the clients' phases ran the same
// experiment: kind, phase, database, and every setting that is not a
// client's own.
func checkSameExperiment(streams []*stream, headers []Header, order []int) error {
	a, an := headers[order[0]], streams[order[0]].name
	for _, k := range order[1:] {
		b, bn := headers[k], streams[k].name
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

// mergeTick is the runner's interval, which every client's intervals
// end on the multiples of (runner.Origin).
const mergeTick = time.Second

// bin is one interval of the merged series: what every client measured
// in the same wall-clock interval.
type bin struct {
	start  time.Time // the wall clock's interval, runner.Origin's
	warmup bool
	// iv is the merged interval, its series' histograms encoded.
	iv Interval
	// clients holds, per client (by its place in order), the operations
	// and seconds it measured in the interval; nil where it measured
	// nothing.
	clients []*clientPart
	// whole says every client measured the whole interval.
	whole bool
}

type clientPart struct {
	ops     int64
	seconds float64
}

// binKey orders the bins: by second, a warm-up's before the measured one
// of the same second.
type binKey struct {
	start  int64
	warmup bool
}

func keyOf(iv *Interval) binKey {
	return binKey{iv.Start.Truncate(mergeTick).UnixNano(), !iv.Warmup}
}

func (a binKey) less(b binKey) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	return !a.warmup && b.warmup // warmup is stored negated: measured last
}

// mergePhase merges one phase of every client, reading their intervals
// side by side: the bin of the earliest second any client has not yet
// gone past is merged from every client's interval of that second, then
// let go but for its merged series.
func mergePhase(streams []*stream, headers []Header, order []int, command string) (Phase, []string, error) {
	n := len(order)
	h0 := headers[order[0]]
	monitorClient := -1
	for i, k := range order {
		if headers[k].Client.Monitors {
			monitorClient = i
			break
		}
	}
	var monitor []MonitorSample
	pending := make([]*Interval, n)
	type window struct {
		start, end time.Time
		ok         bool
		ops        int64
	}
	windows := make([]window, n)
	advance := func(i int) error {
		iv, err := streams[order[i]].next(i == monitorClient, &monitor)
		if err != nil {
			return err
		}
		pending[i] = iv
		if iv != nil && !iv.Warmup {
			w := &windows[i]
			if !w.ok {
				w.start, w.ok = iv.Start, true
			}
			w.end = iv.End
			w.ops += iv.Ops
		}
		return nil
	}
	for i := range n {
		if err := advance(i); err != nil {
			return Phase{}, nil, err
		}
	}
	var bins []*bin
	for {
		var cur *binKey
		for _, iv := range pending {
			if iv == nil {
				continue
			}
			if k := keyOf(iv); cur == nil || k.less(*cur) {
				cur = &k
			}
		}
		if cur == nil {
			break
		}
		b := &bin{start: time.Unix(0, cur.start).UTC(), warmup: !cur.warmup, clients: make([]*clientPart, n)}
		sums := newSeriesSums()
		for i := range n {
			for pending[i] != nil && keyOf(pending[i]) == *cur {
				iv := pending[i]
				if err := sums.add(iv.Series); err != nil {
					if errors.Is(err, measure.ErrNoHistogram) {
						return Phase{}, nil, refuse("%s: an interval carries no histogram (written by an older dbprobe): it cannot be merged exactly", streams[order[i]].name)
					}
					return Phase{}, nil, refuse("%s: interval ending %s: %v", streams[order[i]].name, iv.End.Format(time.RFC3339Nano), err)
				}
				if b.iv.Start.IsZero() || iv.Start.Before(b.iv.Start) {
					b.iv.Start = iv.Start
				}
				if iv.End.After(b.iv.End) {
					b.iv.End = iv.End
				}
				b.iv.Ops += iv.Ops
				if b.clients[i] == nil {
					b.clients[i] = &clientPart{}
				}
				b.clients[i].ops += iv.Ops
				b.clients[i].seconds += iv.End.Sub(iv.Start).Seconds()
				if err := advance(i); err != nil {
					return Phase{}, nil, err
				}
			}
		}
		for _, ss := range sums.byName {
			if ss.mergeErr != nil {
				return Phase{}, nil, refuse("an interval carries no histogram for [%s] (written by an older dbprobe): it cannot be merged exactly", ss.name)
			}
		}
		b.iv.Phase, b.iv.Warmup = h0.Phase, b.warmup
		b.iv.Series, _ = sums.summaries(map[string]int64{})
		if d := b.iv.End.Sub(b.iv.Start).Seconds(); d > 0 {
			b.iv.OpsPerSec = float64(b.iv.Ops) / d
		}
		bins = append(bins, b)
	}

	summaries := make([]*Summary, n)
	for i, k := range order {
		st := streams[k]
		summaries[i] = st.cur().Summary
		if summaries[i] == nil {
			return Phase{}, nil, refuse("%s has no summary for its phase %s (the client was killed?): run dbprobe recover %s first", st.name, h0.Phase, st.name)
		}
	}

	// The seconds every client measured whole.
	tol := mergeTick / mergeTolerance
	for _, b := range bins {
		if b.warmup {
			continue
		}
		b.whole = true
		for i := range n {
			w := windows[i]
			if b.clients[i] == nil || !w.ok || w.start.After(b.start.Add(tol)) || w.end.Before(b.start.Add(mergeTick-tol)) {
				b.whole = false
			}
		}
	}

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
	header.Settings = append(header.Settings, Setting{Key: "clients", Value: strconv.Itoa(n), Source: "dbprobe merge"})
	names := make([]string, n)
	for i, k := range order {
		names[i] = streams[k].name
		if headers[k].StartedAt.Before(header.StartedAt) {
			header.StartedAt = headers[k].StartedAt
		}
	}
	header.Notes = []string{fmt.Sprintf("merged from the results of %d clients: %s", n, strings.Join(names, ", "))}

	out := Phase{Header: header, Monitor: monitor}
	ms := &MergeSummary{MonitorClient: -1}
	common, all := newSeriesSums(), newSeriesSums()
	s0 := summaries[0]
	sum := Summary{Phase: h0.Phase, Errors: map[string]int64{}, Merge: ms, RetryLimit: s0.RetryLimit, Warmup: s0.Warmup}
	var phaseStart time.Time
	if len(bins) > 0 {
		phaseStart = bins[0].iv.Start
	}
	outside := make([]OutsideWindow, n)
	for _, b := range bins {
		b.iv.Elapsed = b.iv.End.Sub(phaseStart)
		out.Intervals = append(out.Intervals, b.iv)
		if b.warmup {
			continue
		}
		// The merged histograms, decoded again: exact, and one per
		// second rather than one per client and second.
		if err := all.add(b.iv.Series); err != nil {
			return Phase{}, nil, err
		}
		ms.AllOps += b.iv.Ops
		if b.whole {
			if err := common.add(b.iv.Series); err != nil {
				return Phase{}, nil, err
			}
			sum.Ops += b.iv.Ops
			if ms.WindowStart.IsZero() {
				ms.WindowStart = b.iv.Start
			}
			ms.WindowEnd = b.iv.End
			continue
		}
		for i, c := range b.clients {
			if c != nil {
				outside[i].Ops += c.ops
				outside[i].Seconds += c.seconds
			}
		}
	}
	for i := range n {
		outside[i].Client = headers[order[i]].Client.Index
		// A client's last interval, cut when its workers stopped, may be
		// a millisecond long with nothing in it: not worth a line.
		if outside[i].Ops > 0 || outside[i].Seconds >= 0.001 {
			ms.Outside = append(ms.Outside, outside[i])
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
	for i, k := range order {
		c := headers[k].Client
		s := summaries[i]
		mc := MergedClient{
			Index: c.Index, File: streams[k].name, Hostname: headers[k].Environment.Hostname,
			Ops: s.Ops, RunTimeMS: float64(s.RunTime) / float64(time.Millisecond), Throughput: s.Throughput,
			Start: windows[i].start, End: windows[i].end, Clock: c.Clock, Diagnosis: s.Diagnosis, Interrupted: s.Interrupted,
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
		if i == monitorClient {
			ms.MonitorClient = c.Index
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
		if windows[i].ops != s.Ops {
			sum.Notes = append(sum.Notes, fmt.Sprintf("client %d: its intervals add up to %d operations and its summary says %d", c.Index, windows[i].ops, s.Ops))
		}
		ms.Clients = append(ms.Clients, mc)
	}
	if len(avail.Outages) > 0 || avail.Reconnects > 0 {
		avail.Outages = unionOutages(avail.Outages)
		sum.Availability = avail
	}
	reps := make([]*ReplicaSummary, n)
	shards := make([][]ShardSummary, n)
	for i, s := range summaries {
		reps[i], shards[i] = s.Replica, s.Shards
	}
	var err error
	if sum.Replica, err = mergeReplica(names, reps); err != nil {
		return Phase{}, nil, err
	}
	if sum.Shards, err = mergeShards(names, shards); err != nil {
		return Phase{}, nil, err
	}
	for _, s := range sum.Shards {
		sum.Notes = append(sum.Notes, ShardNote(s))
	}
	var warnings []string
	if len(offsets) >= 2 {
		spread := slices.Max(offsets) - slices.Min(offsets)
		ms.ClockSpreadMicros = &spread
		if time.Duration(spread)*time.Microsecond > mergeTick {
			w := fmt.Sprintf("the clients' clocks disagree by %s against the database server's, more than one interval (%s): their per-second series are not aligned; synchronise the clients' clocks (NTP, chrony) and run again",
				shortDuration(time.Duration(spread)*time.Microsecond), shortDuration(mergeTick))
			warnings = append(warnings, w)
			sum.Notes = append(sum.Notes, w)
		}
	}
	if len(offsets) < n {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d of the %d clients have no reading of the database server's clock (the database cannot say its time, or it could not be read): their clocks are not checked", n-len(offsets), n))
	}
	if ms.MonitorClient < 0 {
		sum.Notes = append(sum.Notes, "no client monitored the database: no diagnosis")
	}
	out.Summary = &sum
	return out, warnings, nil
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
