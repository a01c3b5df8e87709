package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Recovered is a phase whose summary was rebuilt from its intervals (a
// YCSB phase) or its cycles (a durability check).
type Recovered struct {
	// Header is the phase's header record, as read.
	Header Header
	// Intervals counts the interval records it was rebuilt from, warm-up
	// included.
	Intervals int
	// Cycles are the cycle records a durability check's summary was
	// rebuilt from.
	Cycles  []Cycle
	Summary Summary
}

// Finish completes a recovered summary with what this package cannot
// rebuild itself, such as the monitor's diagnosis of the phase.
type Finish func(p Phase, s *Summary)

// Repair rebuilds the summary of every phase of a result file that has
// none (its run was killed, or its machine crashed) and returns the file
// with those summary records added: each at the end of its phase, every
// complete line of data kept byte for byte. finish, when not nil, runs on
// each rebuilt summary before it is written. A last line cut by the kill
// is left out, and cut says so. It fails, naming the line, on anything
// else Read refuses.
func Repair(data []byte, finish Finish) (repaired []byte, recovered []Recovered, cut bool, err error) {
	f, err := Read(bytes.NewReader(data))
	if err != nil {
		return nil, nil, false, err
	}
	summaries := make([]*Summary, len(f.Phases))
	for i, p := range f.Phases {
		if p.Summary != nil {
			continue
		}
		s, err := RecoverSummary(p)
		if err != nil {
			return nil, nil, false, fmt.Errorf("result: phase %d (%s): %w", i+1, p.Header.Phase, err)
		}
		if finish != nil {
			finish(p, &s)
		}
		summaries[i] = &s
		recovered = append(recovered, Recovered{Header: p.Header, Intervals: len(p.Intervals), Cycles: p.Cycles, Summary: s})
	}
	if len(recovered) == 0 {
		return data, nil, f.Truncated, nil
	}

	var out bytes.Buffer
	w := NewWriter(&out)
	phase := -1
	endPhase := func() error {
		if phase >= 0 && summaries[phase] != nil {
			return w.Summary(*summaries[phase])
		}
		return nil
	}
	for rest := data; len(rest) > 0; {
		line, after, complete := bytes.Cut(rest, []byte("\n"))
		rest = after
		if !complete && f.Truncated {
			break // the cut record: nothing in it can be trusted
		}
		if isHeaderLine(line) {
			if err := endPhase(); err != nil {
				return nil, nil, false, err
			}
			phase++
		}
		out.Write(line)
		out.WriteByte('\n') // also after a whole last record whose newline was lost
	}
	if err := endPhase(); err != nil {
		return nil, nil, false, err
	}
	return out.Bytes(), recovered, f.Truncated, nil
}

// isHeaderLine reports whether a line Read accepted is a header record.
func isHeaderLine(line []byte) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	t, err := recordType(line)
	return err == nil && t == typeHeader
}

// RecoverSummary rebuilds the summary of a phase that has none: a YCSB
// phase's from its interval records, a durability check's from its cycle
// records (see recoverDurability). It refuses a phase of any other
// experiment kind, whose records it cannot add up.
//
// A YCSB phase's summary is the one the run would have written had it
// ended after its last complete interval: warm-up intervals left out;
// operations, Return= statuses, retries (in total and per code) and
// overflows added up; and each series' histograms merged, so the
// percentiles are exactly those the run would have printed. The summary
// is marked Recovered and Interrupted, with a note saying how much was
// lost.
//
// Failures by code (Summary.Errors) are taken from the Return= statuses,
// where the runner counts each failure once under its code ("NOT_FOUND",
// "ERROR(23505)", "UNEXPECTED_STATE") beside YCSB's plain "ERROR" total.
// The run's availability is not rebuilt: the intervals do not carry what
// it is made from. The diagnosis is the monitor's to make from the
// phase's monitor samples (see Repair's finish and MeasuredWindow).
func RecoverSummary(p Phase) (Summary, error) {
	switch p.Header.Experiment {
	case ExperimentYCSB:
		return recoverYCSB(p)
	case ExperimentStress:
		// Its intervals are a YCSB run's; what its summary adds (rows,
		// plans, server costs) is read at the end and is lost with it.
		s, err := recoverYCSB(p)
		s.Notes = append(s.Notes, "the statements' rows, plans and server-side costs are read at the end of a stress run and are not in a recovered summary")
		return s, err
	case ExperimentStorage:
		// Its intervals are a YCSB run's, counting chunks; its rate,
		// proof and verdict are made at the end and are lost with it.
		s, err := recoverYCSB(p)
		s.Notes = append(s.Notes, "the storage rate, its per-second series in bytes, its proof and its verdict are made at the end of a storage run and are not in a recovered summary: the chunks per interval above are what is left")
		return s, err
	case ExperimentDurability:
		return recoverDurability(p), nil
	}
	return Summary{}, fmt.Errorf("dbprobe recover rebuilds the summaries of %s, %s and %s runs and %s checks, not of a %q experiment; use a newer dbprobe",
		ExperimentYCSB, ExperimentStress, ExperimentStorage, ExperimentDurability, p.Header.Experiment)
}

// recoverDurability rebuilds a durability check's totals from its cycle
// records: each cycle is written once it was checked, so the totals are
// exact over the cycles it wrote; a cycle in progress at the kill proved
// nothing and is not counted. Whether the check passed, and what a kill
// cannot reveal, are the check's to judge (Repair's finish):
// DurabilitySummary.Passed is left false and Verdict empty.
func recoverDurability(p Phase) Summary {
	d := &DurabilitySummary{Cycles: len(p.Cycles)}
	for _, c := range p.Cycles {
		d.Acknowledged += c.Acknowledged
		d.Lost += c.Lost + c.EarlierLost
		switch c.Pattern {
		case PatternTail:
			d.TailCycles++
		case PatternScattered:
			d.ScatteredCycles++
		}
	}
	s := Summary{Phase: p.Header.Phase, Interrupted: true, Recovered: true, Durability: d}
	note := "recovered by dbprobe recover: the check wrote no summary; "
	if len(p.Cycles) == 0 {
		note += "it died before its first cycle was checked: nothing was measured"
	} else {
		last := p.Cycles[len(p.Cycles)-1]
		if !p.Header.StartedAt.IsZero() && last.End.After(p.Header.StartedAt) {
			s.RunTime = last.End.Sub(p.Header.StartedAt)
		}
		note += fmt.Sprintf("its totals are those of its %d checked cycles, up to cycle %d; a cycle in progress at the kill is lost", len(p.Cycles), last.Number)
	}
	s.Notes = []string{note}
	return s
}

// recoverYCSB rebuilds a YCSB phase's summary from its intervals.
func recoverYCSB(p Phase) (Summary, error) {
	s := Summary{
		Phase:       p.Header.Phase,
		Interrupted: true,
		Recovered:   true,
		Errors:      map[string]int64{},
		RetryLimit:  settingInt(p.Header, "retries"),
	}
	var kept []Interval
	firstKept := -1
	for i, iv := range p.Intervals {
		if !iv.Warmup {
			kept = append(kept, iv)
			if firstKept < 0 {
				firstKept = i
			}
		}
	}
	if d, ok := settingDuration(p.Header, "warmup"); ok {
		s.Warmup = d
	} else if len(kept) > 0 && len(kept) < len(p.Intervals) {
		s.Warmup = kept[0].Start.Sub(p.Intervals[0].Start)
	}
	if len(kept) == 0 {
		what := "the run died before its first interval ended: nothing was measured"
		if len(p.Intervals) > 0 {
			what = "the run died during its warm-up: nothing was measured"
		}
		s.Notes = append(s.Notes, "recovered by dbprobe recover; "+what)
		return s, nil
	}

	series := newSeriesSums()
	for _, iv := range kept {
		s.Ops += iv.Ops
		if err := series.add(iv.Series); err != nil {
			return Summary{}, fmt.Errorf("interval ending %s: %w", iv.End.Format(time.RFC3339Nano), err)
		}
	}
	s.Series, s.Notes = series.summaries(s.Errors)
	// From the elapsed times, which the run measured on the monotonic
	// clock as it measured its own run time; the wall-clock times written
	// beside them can differ by a few nanoseconds.
	last := kept[len(kept)-1]
	s.RunTime = last.Elapsed
	if firstKept > 0 { // measurement began where the warm-up's last interval ended
		s.RunTime -= p.Intervals[firstKept-1].Elapsed
	}
	if s.RunTime > 0 {
		s.Throughput = float64(s.Ops) / s.RunTime.Seconds()
	}
	from := fmt.Sprintf("its %d intervals", len(kept))
	if warm := len(p.Intervals) - len(kept); warm > 0 {
		from += fmt.Sprintf(" after the warm-up (%d warm-up intervals left out)", warm)
	}
	var tick time.Duration
	for _, iv := range p.Intervals {
		tick = max(tick, iv.End.Sub(iv.Start))
	}
	tick = tick.Round(100 * time.Millisecond)
	s.Notes = append([]string{fmt.Sprintf(
		"recovered by dbprobe recover from %s: the run wrote no summary; its figures end with its last complete interval, %s into the phase; what it did after that (up to one interval, about %s) is lost",
		from, shortDuration(last.Elapsed.Round(time.Millisecond)), shortDuration(tick))}, s.Notes...)
	return s, nil
}

// seriesSums adds up the summaries of the same series across intervals.
type seriesSums struct {
	order  []string
	byName map[string]*seriesSum
}

type seriesSum struct {
	name        string
	count       int64
	overflow    int64
	retries     *int64
	retryCodes  map[string]int64
	percentiles []float64
	hasOK       bool
	statuses    map[string]int64
	merger      measure.Merger
	mergeErr    error
	// Without histograms (a file from an older dbprobe) only these remain.
	min, max  int64
	weightSum float64
}

func newSeriesSums() *seriesSums {
	return &seriesSums{byName: map[string]*seriesSum{}}
}

// add adds one interval's summaries. A series seen for the first time is
// placed after the series before it in that interval, so the summaries
// keep the runner's order.
func (ss *seriesSums) add(sums []measure.Summary) error {
	prev := -1
	for _, m := range sums {
		sum, ok := ss.byName[m.Name]
		if !ok {
			sum = &seriesSum{name: m.Name, statuses: map[string]int64{}, min: math.MaxInt64}
			ss.byName[m.Name] = sum
			ss.order = slices.Insert(ss.order, prev+1, m.Name)
		}
		prev = slices.Index(ss.order, m.Name)
		if m.Count < 0 {
			return fmt.Errorf("%s: count %d", m.Name, m.Count)
		}
		sum.count += m.Count
		sum.overflow += m.Overflow
		if m.Retries != nil {
			if sum.retries == nil {
				sum.retries = new(int64)
			}
			*sum.retries += *m.Retries
		}
		for code, n := range m.RetriesByCode {
			if sum.retryCodes == nil {
				sum.retryCodes = map[string]int64{}
			}
			sum.retryCodes[code] += n
		}
		if len(sum.percentiles) == 0 {
			for _, p := range m.Percentiles {
				sum.percentiles = append(sum.percentiles, p.Percentile)
			}
		}
		for _, st := range m.Statuses {
			if st.Status == "OK" {
				sum.hasOK = true
			}
			sum.statuses[st.Status] += st.Count
		}
		if m.Count > 0 {
			sum.min = min(sum.min, m.MinMicros)
			sum.max = max(sum.max, m.MaxMicros)
			sum.weightSum += m.MeanMicros * float64(m.Count)
		}
		if sum.mergeErr == nil {
			if err := sum.merger.Add(m); errors.Is(err, measure.ErrNoHistogram) {
				sum.mergeErr = err
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

// summaries returns the merged summaries in order, adds each failure
// code's count to errs, and returns notes on what could not be merged.
func (ss *seriesSums) summaries(errs map[string]int64) ([]measure.Summary, []string) {
	var out []measure.Summary
	var notes []string
	for _, name := range ss.order {
		sum := ss.byName[name]
		m := measure.Summary{Name: name, Overflow: sum.overflow, Retries: sum.retries, RetriesByCode: sum.retryCodes}
		if sum.mergeErr == nil {
			sum.merger.Describe(&m, sum.percentiles)
		} else if sum.count > 0 {
			m.Count, m.MinMicros, m.MaxMicros = sum.count, sum.min, sum.max
			m.MeanMicros = sum.weightSum / float64(sum.count)
			notes = append(notes, fmt.Sprintf("[%s] percentiles not recovered: its intervals carry no histograms (written by an older dbprobe); count, min, max and average are exact", name))
		}
		// OK first, then the failures by name, as the runner orders them.
		if sum.hasOK {
			m.Statuses = append(m.Statuses, measure.StatusCount{Status: "OK", Count: sum.statuses["OK"]})
		}
		for _, st := range slices.Sorted(maps.Keys(sum.statuses)) {
			if st == "OK" {
				continue
			}
			n := sum.statuses[st]
			m.Statuses = append(m.Statuses, measure.StatusCount{Status: st, Count: n})
			if st != "ERROR" {
				errs[st] += n
			}
		}
		out = append(out, m)
	}
	return out, notes
}

// recordType returns the "type" of a record line.
func recordType(line []byte) (string, error) {
	var probe struct {
		Type string `json:"type"`
	}
	err := json.Unmarshal(line, &probe)
	return probe.Type, err
}

// MeasuredWindow returns the start of the first interval after the
// warm-up and the end of the last one: the part of the phase its figures
// cover. ok is false when no interval was measured.
func (p Phase) MeasuredWindow() (start, end time.Time, ok bool) {
	for _, iv := range p.Intervals {
		if iv.Warmup {
			continue
		}
		if !ok {
			start, ok = iv.Start, true
		}
		end = iv.End
	}
	return start, end, ok
}

// SettingInt returns the header setting key as an integer, 0 when absent
// or not a number.
func (h Header) SettingInt(key string) int { return settingInt(h, key) }

// settingInt returns the header setting key as an integer, 0 when absent
// or not a number.
func settingInt(h Header, key string) int {
	for _, s := range h.Settings {
		if s.Key == key {
			n, _ := strconv.Atoi(s.Value)
			return n
		}
	}
	return 0
}

// settingDuration returns the header setting key as a duration.
func settingDuration(h Header, key string) (time.Duration, bool) {
	for _, s := range h.Settings {
		if s.Key == key {
			d, err := time.ParseDuration(s.Value)
			return d, err == nil
		}
	}
	return 0, false
}
