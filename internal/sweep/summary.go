package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// SchemaVersion is the version of the sweep summary this package writes
// and reads. A reader refuses any other rather than misread it.
const SchemaVersion = 1

// SummaryType is the "type" of a sweep summary document, which tells it
// from a run's JSON Lines result (whose records say "header", "interval"…).
const SummaryType = "sweep"

// The statuses of a sweep (Summary.Status) and of a run (RunRecord.Status).
const (
	// StatusRunning is a sweep still going (or killed while it went).
	StatusRunning = "running"
	// StatusComplete is a sweep that ran every run of its order.
	StatusComplete = "complete"
	// StatusInterrupted is a sweep or a run stopped by Ctrl-C or SIGTERM.
	StatusInterrupted = "interrupted"
	// StatusFailed is a run that failed, or a sweep with one, or one
	// stopped by a failed load or --between.
	StatusFailed = "failed"
	// StatusOK is a run that finished and wrote its summary.
	StatusOK = "ok"
	// StatusNotRun is a run of the order that a stop left undone.
	StatusNotRun = "not run"
)

// Summary is the sweep's one summary result: what was varied, the order,
// every run with its file and figures, and what the sweep concluded. It
// is rewritten whole after every run, so an interrupted or killed sweep
// leaves the runs it finished listed.
type Summary struct {
	Type          string `json:"type"`
	SchemaVersion int    `json:"schema_version"`
	// Command is the sweep's command line, secrets hidden.
	Command string `json:"command"`
	// Experiment is the experiment command the runs ran ("run",
	// "stress", "storage scan").
	Experiment string `json:"experiment"`
	// Kind is the runs' result kind ("ycsb", "stress", "storage"), from
	// the first run read; empty before.
	Kind      string    `json:"kind,omitempty"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Seed      uint64    `json:"seed"`
	Reps      int       `json:"reps"`
	// CooldownMS is --cooldown; Between is --between.
	CooldownMS float64         `json:"cooldown_ms,omitempty"`
	Between    string          `json:"between,omitempty"`
	Vary       []Vary          `json:"vary"`
	Shapes     []ShapeRecord   `json:"shapes"`
	Variants   []VariantRecord `json:"variants"`
	// Baseline is the ID of the variant the others are compared against
	// (--baseline); 0 for the first.
	Baseline int `json:"baseline,omitempty"`
	// Runs are in the order they ran (Position 1, 2, …), those not run
	// included.
	Runs []RunRecord `json:"runs"`
	// Rows are the recap table's metric rows, in order.
	Rows   []Row       `json:"rows"`
	Curves []Curve     `json:"curves,omitempty"`
	Fits   []FitRecord `json:"fits,omitempty"`
	// Drift is the trend of the throughput with the position, over the
	// whole sweep (each run relative to its variant's median).
	Drift *Trend `json:"drift,omitempty"`
	// Overhead is the time between runs that was the sweep's own.
	Overhead *Overhead `json:"overhead,omitempty"`
	// Conclusions are the sentences printed under the recap table.
	Conclusions []string `json:"conclusions,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Vary is one --vary: a key and its values, and what the key is to the
// experiment: "flag" (--threads) or "property" (-p recordcount=…).
type Vary struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
	As     string   `json:"as"`
	// Shaping says the key shapes the table, so each value has its load.
	Shaping bool `json:"shaping,omitempty"`
	// Concurrency says the key is a number of workers (threads, clients,
	// degree of parallelism): the scalability fit is over it.
	Concurrency bool `json:"concurrency,omitempty"`
}

// ShapeRecord is a shape and its load.
type ShapeRecord struct {
	ID       int       `json:"id"`
	Settings []Setting `json:"settings"`
	// Load is the load's result file and how it went; nil without one.
	Load *LoadRecord `json:"load,omitempty"`
}

// LoadRecord is one load of a shape's table.
type LoadRecord struct {
	Command string    `json:"command"`
	Path    string    `json:"path"`
	Text    string    `json:"text"`
	Status  string    `json:"status"`
	Start   time.Time `json:"start,omitzero"`
	End     time.Time `json:"end,omitzero"`
	Error   string    `json:"error,omitempty"`
}

// VariantRecord is a variant and what its runs came to.
type VariantRecord struct {
	ID       int       `json:"id"`
	Name     string    `json:"name"`
	Settings []Setting `json:"settings"`
	Shape    int       `json:"shape"`
	// Command is a run's command line, secrets hidden, --out left out.
	Command string `json:"command"`
	// RunsOK counts the runs that finished with a summary.
	RunsOK int `json:"runs_ok"`
	// Medians are the median of each metric over those runs.
	Medians map[string]float64 `json:"medians,omitempty"`
	// Min and Max are each metric's extremes over them.
	Min map[string]float64 `json:"min,omitempty"`
	Max map[string]float64 `json:"max,omitempty"`
	// Limit and Verdict are the monitor's diagnosis, the one most of
	// its runs gave (the verdict of the run nearest the median).
	Limit   string `json:"limit,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// Trend is the variant's throughput against its runs' positions.
	Trend *Trend `json:"trend,omitempty"`
	// Cost is what it cost at the --price that applies to it.
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is a variant at its price.
type Cost struct {
	// Given is the --price that applies, PerHour its hourly amount.
	Given   string  `json:"given"`
	PerHour float64 `json:"per_hour"`
	// Monthly says the price was given per month, so sustained figures
	// are per month too.
	Monthly bool `json:"monthly,omitempty"`
	// Run is the median run's wall time at the price; PerMillionOps the
	// cost of a million operations at the median throughput; Per1000OpsS
	// the price of 1,000 ops/s sustained, per hour or (Monthly) per month;
	// PerGB the cost of a GB moved, for storage runs.
	Run           float64 `json:"run"`
	PerMillionOps float64 `json:"per_million_ops,omitempty"`
	Per1000OpsS   float64 `json:"per_1000_ops_s,omitempty"`
	PerGB         float64 `json:"per_gb,omitempty"`
}

// RunRecord is one run of the order.
type RunRecord struct {
	// Position is its place in the order, from 1.
	Position int `json:"position"`
	// Variant is the variant's ID; Rep its repetition from 1.
	Variant int `json:"variant"`
	Rep     int `json:"rep"`
	// Path is the run's JSON result, Text its text output, both relative
	// to the summary's directory when beside it.
	Path   string `json:"path"`
	Text   string `json:"text"`
	Status string `json:"status"`
	// ExitCode is the run's exit status (0 ok, 1 failed, 2 bad input,
	// 130 interrupted).
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
	// Start and End bound the run's process.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// First and Last are its first operation and the end of its last
	// interval, from its result.
	First time.Time `json:"first_op,omitzero"`
	Last  time.Time `json:"last_op,omitzero"`
	// GapMS is the time from the previous run's last operation to this
	// one's first; OverheadMS that less the cooldown and the --between
	// command: the sweep's own cost (a process started, a connection
	// made, the table checked).
	GapMS      float64 `json:"gap_ms,omitempty"`
	OverheadMS float64 `json:"overhead_ms,omitempty"`
	// BetweenMS is how long --between took before it.
	BetweenMS float64            `json:"between_ms,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Limit     string             `json:"limit,omitempty"`
	Verdict   string             `json:"verdict,omitempty"`
}

// Row is a metric row of the recap table.
type Row struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// Curve is a metric's medians over a numeric key, the other varied keys
// held at Fixed.
type Curve struct {
	Key    string    `json:"key"`
	Metric string    `json:"metric"`
	Fixed  []Setting `json:"fixed,omitempty"`
	// X are the key's values in increasing order, Y the metric's
	// median at each.
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
}

// FitRecord is a Universal Scalability Law fit of throughput over a
// concurrency key, the other varied keys held at Fixed, to every run.
type FitRecord struct {
	Key    string    `json:"key"`
	Fixed  []Setting `json:"fixed,omitempty"`
	Lambda float64   `json:"lambda"`
	Sigma  float64   `json:"sigma"`
	Kappa  float64   `json:"kappa"`
	R2     float64   `json:"r2"`
	Points int       `json:"points"`
	// Peak is N* = sqrt((1−σ)/κ); 0 when κ is 0 or the fit is poor
	// (R² under 0.9).
	Peak float64 `json:"peak,omitempty"`
	// Knee is the last measured value past which the median throughput
	// grew less than KneeGain; 0 when it grew all along.
	Knee float64 `json:"knee,omitempty"`
	// Sentence says it plainly.
	Sentence string `json:"sentence"`
	Error    string `json:"error,omitempty"`
}

// Overhead sums up the gaps between runs that were the sweep's own.
type Overhead struct {
	Gaps     int     `json:"gaps"`
	MedianMS float64 `json:"median_ms"`
	MaxMS    float64 `json:"max_ms"`
}

// WriteFile writes the summary to path whole, through a temporary file
// renamed over it, so a reader never sees half of it.
func (s *Summary) WriteFile(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ErrNotSweep is returned (wrapped) by ReadSummary for JSON that is not a
// sweep summary, such as a run's result.
var ErrNotSweep = errors.New("not a sweep summary")

// ReadSummary reads a summary WriteFile wrote. It refuses another schema
// version, and JSON whose type is not SummaryType.
func ReadSummary(r io.Reader) (*Summary, error) {
	var s Summary
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("sweep summary: %w", err)
	}
	if s.Type != SummaryType {
		return nil, fmt.Errorf("sweep summary: type %q: %w", s.Type, ErrNotSweep)
	}
	if s.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("sweep summary: schema version %d: this dbprobe reads version %d", s.SchemaVersion, SchemaVersion)
	}
	return &s, nil
}
