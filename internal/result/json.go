package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Writer appends the JSON result of a run, one record per line. Its methods
// are safe for concurrent use: the ticker writes intervals while the
// runner may write a summary on a signal.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	f      *os.File // nil when writing to a caller's io.Writer: nothing to sync or close
	closed bool
}

// Create creates (or truncates) the result file at path. Whether an
// existing result may be overwritten is the caller's decision, made before.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return &Writer{w: f, f: f}, nil
}

// NewWriter returns a Writer that appends records to w (stdout, a buffer
// in a test). It neither syncs nor closes w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Header appends a header record, which starts a phase, and syncs the
// file so the record of what ran survives a crash during the run. It
// refuses a header that names no experiment: the reader could not tell
// what its summary means.
func (w *Writer) Header(h Header) error {
	if h.Experiment == "" {
		return errors.New("result: header without an experiment kind")
	}
	return w.write(headerRecord{
		Type:          typeHeader,
		SchemaVersion: SchemaVersion,
		Experiment:    h.Experiment,
		Phase:         h.Phase,
		StartedAt:     h.StartedAt,
		Command:       h.Command,
		RunID:         h.RunID,
		Target:        h.Target,
		Settings:      h.Settings,
		Notes:         h.Notes,
		Environment:   h.Environment,
		Database:      h.Database,
		Client:        h.Client,
	}, true)
}

// Interval appends an interval record. It does not sync: a sync per
// second would cost the run more than the last few seconds of a crash are
// worth, and the operating system writes the data out soon anyway.
func (w *Writer) Interval(iv Interval) error {
	return w.write(intervalRecord{
		Type:      typeInterval,
		Phase:     iv.Phase,
		Start:     iv.Start,
		End:       iv.End,
		ElapsedMS: millis(iv.Elapsed),
		Ops:       iv.Ops,
		OpsPerSec: jsonFloat(iv.OpsPerSec),
		Warmup:    iv.Warmup,
		Series:    iv.Series,
	}, false)
}

// Monitor appends a monitor record. Values that are not finite
// numbers (which JSON cannot hold) are left out. Like intervals, it does
// not sync.
func (w *Writer) Monitor(m MonitorSample) error {
	metrics := make(map[string]float64, len(m.Metrics))
	for k, v := range m.Metrics {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			metrics[k] = v
		}
	}
	return w.write(monitorRecord{Type: typeMonitor, Phase: m.Phase, Start: m.Start, End: m.End, Metrics: metrics}, false)
}

// Cycle appends a durability check's cycle record and syncs the file: a
// cycle takes seconds and proves something, so a check killed later keeps
// it.
func (w *Writer) Cycle(c Cycle) error {
	return w.write(cycleRecord{
		Type:                  typeCycle,
		Phase:                 c.Phase,
		Cycle:                 c.Number,
		Start:                 c.Start,
		End:                   c.End,
		CrashAfterMS:          millis(c.CrashAfter),
		Acknowledged:          c.Acknowledged,
		Lost:                  c.Lost,
		Pattern:               c.Pattern,
		LostWindowMS:          millis(c.LostWindow),
		FirstLostPosition:     c.FirstLostPosition,
		UnacknowledgedPresent: c.UnacknowledgedPresent,
		EarlierLost:           c.EarlierLost,
		RecoveryMS:            millis(c.Recovery),
	}, true)
}

// Summary appends a summary record, which ends a phase, and syncs the
// file. A summary with Durability set is written as a durability check's
// summary, without the fields of operations and latencies.
func (w *Writer) Summary(s Summary) error {
	if d := s.Durability; d != nil {
		return w.write(durabilitySummaryRecord{
			Type:            typeSummary,
			Phase:           s.Phase,
			RunTimeMS:       millis(s.RunTime),
			Interrupted:     s.Interrupted,
			Recovered:       s.Recovered,
			Cycles:          d.Cycles,
			Acknowledged:    d.Acknowledged,
			Lost:            d.Lost,
			TailCycles:      d.TailCycles,
			ScatteredCycles: d.ScatteredCycles,
			Passed:          d.Passed,
			Verdict:         d.Verdict,
			Caveat:          d.Caveat,
			Notes:           s.Notes,
		}, true)
	}
	return w.write(summaryRecord{
		Type:         typeSummary,
		Phase:        s.Phase,
		RunTimeMS:    millis(s.RunTime),
		Ops:          s.Ops,
		Throughput:   jsonFloat(s.Throughput),
		Interrupted:  s.Interrupted,
		Recovered:    s.Recovered,
		WarmupMS:     millis(s.Warmup),
		RetryLimit:   s.RetryLimit,
		Series:       s.Series,
		Errors:       s.Errors,
		Notes:        s.Notes,
		Diagnosis:    s.Diagnosis,
		Availability: s.Availability,
		Ending:       s.Ending,
		Stopped:      s.Stopped,
		Stress:       s.Stress,
		Storage:      s.Storage,
		Merge:        s.Merge,
		Replica:      s.Replica,
		Shards:       s.Shards,
	}, true)
}

// Status writes nothing: status lines are for people watching a run.
func (w *Writer) Status(Status) error { return nil }

// Close syncs and closes the file created by Create; for a Writer from
// NewWriter it only stops further writes.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// write marshals rec and writes it with its newline in one Write call, so
// a record is never interleaved with another and a kill leaves at most the
// last line cut.
func (w *Writer) write(rec any, sync bool) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("result: encoding record: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("result: write after Close")
	}
	if _, err := w.w.Write(line); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if sync && w.f != nil {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("result: %w", err)
		}
	}
	return nil
}

// Record types, the "type" of each line.
const (
	typeHeader   = "header"
	typeInterval = "interval"
	typeSummary  = "summary"
	typeMonitor  = "monitor"
	typeCycle    = "cycle"
)

// The records as they are on disk. They are separate from the exported
// types so the file format is spelled out in one place and durations carry
// their unit in the key.

type headerRecord struct {
	Type          string      `json:"type"`
	SchemaVersion int         `json:"schema_version"`
	Experiment    string      `json:"experiment"`
	Phase         string      `json:"phase"`
	StartedAt     time.Time   `json:"started_at"`
	Command       string      `json:"command,omitempty"`
	RunID         string      `json:"run_id,omitempty"`
	Target        string      `json:"target,omitempty"`
	Settings      []Setting   `json:"settings,omitempty"`
	Notes         []string    `json:"notes,omitempty"`
	Environment   Environment `json:"environment"`
	Database      Database    `json:"database"`
	Client        *Client     `json:"client,omitempty"`
}

type intervalRecord struct {
	Type      string            `json:"type"`
	Phase     string            `json:"phase"`
	Start     time.Time         `json:"start"`
	End       time.Time         `json:"end"`
	ElapsedMS millis            `json:"elapsed_ms"`
	Ops       int64             `json:"ops"`
	OpsPerSec jsonFloat         `json:"ops_per_sec"`
	Warmup    bool              `json:"warmup"`
	Series    []measure.Summary `json:"series"`
}

type monitorRecord struct {
	Type    string             `json:"type"`
	Phase   string             `json:"phase"`
	Start   time.Time          `json:"start"`
	End     time.Time          `json:"end"`
	Metrics map[string]float64 `json:"metrics"`
}

type summaryRecord struct {
	Type         string            `json:"type"`
	Phase        string            `json:"phase"`
	RunTimeMS    millis            `json:"runtime_ms"`
	Ops          int64             `json:"ops"`
	Throughput   jsonFloat         `json:"throughput_ops_per_sec"`
	Interrupted  bool              `json:"interrupted"`
	Recovered    bool              `json:"recovered,omitempty"`
	WarmupMS     millis            `json:"warmup_ms"`
	RetryLimit   int               `json:"retry_limit"`
	Series       []measure.Summary `json:"series"`
	Errors       map[string]int64  `json:"errors,omitempty"`
	Notes        []string          `json:"notes,omitempty"`
	Diagnosis    *Diagnosis        `json:"diagnosis,omitempty"`
	Availability *Availability     `json:"availability,omitempty"`
	Ending       *Ending           `json:"ended,omitempty"`
	Stopped      *Stopped          `json:"stopped,omitempty"`
	Stress       *StressSummary    `json:"stress,omitempty"`
	Storage      *StorageSummary   `json:"storage,omitempty"`
	Merge        *MergeSummary     `json:"merge,omitempty"`
	Replica      *ReplicaSummary   `json:"replica,omitempty"`
	Shards       []ShardSummary    `json:"shards,omitempty"`
}

type cycleRecord struct {
	Type                  string    `json:"type"`
	Phase                 string    `json:"phase"`
	Cycle                 int       `json:"cycle"`
	Start                 time.Time `json:"start"`
	End                   time.Time `json:"end"`
	CrashAfterMS          millis    `json:"crash_after_ms"`
	Acknowledged          int       `json:"acknowledged"`
	Lost                  int       `json:"lost"`
	Pattern               string    `json:"pattern"`
	LostWindowMS          millis    `json:"lost_window_ms,omitempty"`
	FirstLostPosition     int       `json:"first_lost_position,omitempty"`
	UnacknowledgedPresent int       `json:"unacknowledged_present"`
	EarlierLost           int       `json:"earlier_lost,omitempty"`
	RecoveryMS            millis    `json:"recovery_ms"`
}

type durabilitySummaryRecord struct {
	Type            string   `json:"type"`
	Phase           string   `json:"phase"`
	RunTimeMS       millis   `json:"runtime_ms"`
	Interrupted     bool     `json:"interrupted"`
	Recovered       bool     `json:"recovered,omitempty"`
	Cycles          int      `json:"cycles_checked"`
	Acknowledged    int      `json:"acknowledged"`
	Lost            int      `json:"lost"`
	TailCycles      int      `json:"tail_cycles"`
	ScatteredCycles int      `json:"scattered_cycles"`
	Passed          bool     `json:"passed"`
	Verdict         string   `json:"verdict"`
	Caveat          string   `json:"caveat,omitempty"`
	Notes           []string `json:"notes,omitempty"`
}

// millis is a duration written as milliseconds with the nanoseconds as an
// exact decimal fraction ("10110.000123"), so a duration reads back equal
// to what was written however long it is.
type millis time.Duration

// MarshalJSON writes the exact decimal milliseconds.
func (m millis) MarshalJSON() ([]byte, error) {
	return []byte(formatMillis(time.Duration(m))), nil
}

func formatMillis(d time.Duration) string {
	sign := ""
	u := uint64(d)
	if d < 0 {
		sign = "-"
		u = -u // two's complement: exact even for math.MinInt64
	}
	whole, frac := u/1e6, u%1e6
	s := sign + strconv.FormatUint(whole, 10)
	if frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	return s
}

// UnmarshalJSON reads milliseconds: exactly when written as a plain
// decimal, else (another tool's "1e3") through a float rounded to the
// nanosecond.
func (m *millis) UnmarshalJSON(b []byte) error {
	d, err := parseMillis(string(b))
	if err != nil {
		return err
	}
	*m = millis(d)
	return nil
}

func parseMillis(s string) (time.Duration, error) {
	if s == "null" {
		return 0, nil // encoding/json's convention: null leaves the value alone
	}
	unsigned, neg := strings.CutPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(unsigned, ".")
	if isDigits(whole) && (!hasDot || isDigits(frac)) && len(frac) <= 6 {
		w, err := strconv.ParseInt(whole, 10, 64)
		f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64) // six digits at most
		if err != nil || w > (math.MaxInt64-f)/1e6 {
			return 0, fmt.Errorf("duration %s ms out of range", s)
		}
		d := w*1e6 + f
		if neg {
			d = -d
		}
		return time.Duration(d), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %s ms is not a number", s)
	}
	ns := math.Round(f * 1e6)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, fmt.Errorf("duration %s ms out of range", s)
	}
	return time.Duration(ns), nil
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// jsonFloat is a rate that may be undefined: JSON has no NaN or infinity,
// and encoding/json refuses them, which would lose the whole record. A
// non-finite rate (a zero run time) is written as null and read back as
// NaN.
type jsonFloat float64

// MarshalJSON writes null for NaN and the infinities.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads null as NaN.
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*f = jsonFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}
