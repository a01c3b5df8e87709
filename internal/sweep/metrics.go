package sweep

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// The metric keys of a run (RunRecord.Metrics) and of a variant's
// medians. Latencies are in milliseconds; a key is absent when the run
// had no such operation.
const (
	// MetricThroughput is operations per second: YCSB operations, stress
	// iterations, storage chunks.
	MetricThroughput = "ops_per_s"
	// MetricReadAvg and MetricReadP99 are the READ and SCAN series'
	// average and 99th percentile, merged.
	MetricReadAvg = "read_avg_ms"
	MetricReadP99 = "read_p99_ms"
	// MetricWriteAvg and MetricWriteP99 are the UPDATE, INSERT and
	// DELETE series', merged.
	MetricWriteAvg = "write_avg_ms"
	MetricWriteP99 = "write_p99_ms"
	// MetricIterationAvg and MetricIterationP99 are a stress run's
	// whole iterations.
	MetricIterationAvg = "iteration_avg_ms"
	MetricIterationP99 = "iteration_p99_ms"
	// MetricRate is a storage experiment's rate in bytes per second.
	MetricRate = "rate_bytes_per_s"
	// MetricErrors counts the failed operations.
	MetricErrors = "errors"
	// MetricOps counts the operations measured, MetricSeconds the
	// phase's run time: what the prices are computed from.
	MetricOps     = "ops"
	MetricSeconds = "run_s"
	// MetricBytes is what a storage run moved.
	MetricBytes = "bytes"
)

// readSeries and writeSeries are the YCSB series a "read" and a "write"
// latency are over, as the studies count them: a read-modify-write is
// neither (it is both).
var (
	readSeries  = []string{"READ", "SCAN"}
	writeSeries = []string{"UPDATE", "INSERT", "DELETE"}
)

// Measured is what the sweep reads from one run's result file.
type Measured struct {
	// Kind is the result's experiment kind (result.ExperimentYCSB…).
	Kind    string
	Metrics map[string]float64
	// Limit and Verdict are the monitor's diagnosis of the phase.
	Limit, Verdict string
	// Interrupted says the phase was stopped by a signal; Complete that
	// its summary was there (a killed run has none).
	Interrupted, Complete bool
	// Truncated says the file was cut short.
	Truncated bool
	// First is when the phase's first interval started (its first
	// operation), End when its last ended.
	First, End time.Time
}

// ReadRun reads a run's result file: the last phase in it, the one the
// run measured (a load before it, in a file of both, is not).
func ReadRun(path string) (Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return Measured{}, err
	}
	defer f.Close()
	rf, err := result.Read(f)
	if err != nil {
		return Measured{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(rf.Phases) == 0 {
		return Measured{Truncated: rf.Truncated}, fmt.Errorf("%s: no phase recorded", path)
	}
	m := measurePhase(rf.Phases[len(rf.Phases)-1])
	m.Truncated = rf.Truncated
	return m, nil
}

func measurePhase(ph result.Phase) Measured {
	m := Measured{Kind: ph.Header.Experiment, Metrics: map[string]float64{}, First: ph.Header.StartedAt}
	if n := len(ph.Intervals); n > 0 {
		m.First = ph.Intervals[0].Start
		m.End = ph.Intervals[n-1].End
	}
	s := ph.Summary
	if s == nil {
		return m
	}
	m.Complete = true
	m.Interrupted = s.Interrupted
	if m.End.IsZero() {
		m.End = m.First.Add(s.RunTime)
	}
	if s.Diagnosis != nil {
		m.Limit, m.Verdict = s.Diagnosis.Limit, s.Diagnosis.Verdict
	}
	m.Metrics[MetricThroughput] = s.Throughput
	m.Metrics[MetricOps] = float64(s.Ops)
	m.Metrics[MetricSeconds] = s.RunTime.Seconds()
	var errs int64
	for _, n := range s.Errors {
		errs += n
	}
	m.Metrics[MetricErrors] = float64(errs)
	switch {
	case s.Storage != nil:
		m.Metrics[MetricRate] = s.Storage.Rate
		m.Metrics[MetricBytes] = float64(s.Storage.Bytes)
		// A storage run judges its own limit ("log-bound: …") in its
		// verdict and carries no monitor diagnosis: without this, the
		// knee sentence of a logcopy sweep said the monitor gave none.
		if m.Verdict == "" && s.Storage.Verdict != "" {
			m.Verdict = s.Storage.Verdict
			m.Limit, _, _ = strings.Cut(s.Storage.Verdict, ":")
		}
	case m.Kind == result.ExperimentStress:
		latencies(m.Metrics, s.Series, []string{"ITERATION"}, MetricIterationAvg, MetricIterationP99)
	default:
		latencies(m.Metrics, s.Series, readSeries, MetricReadAvg, MetricReadP99)
		latencies(m.Metrics, s.Series, writeSeries, MetricWriteAvg, MetricWriteP99)
	}
	return m
}

// latencies sets the average and the 99th percentile over the named
// series, merged exactly from their histograms; the average alone, by
// count, when a series carries no histogram.
func latencies(out map[string]float64, series []measure.Summary, names []string, avgKey, p99Key string) {
	var mg measure.Merger
	var count int64
	var sum float64
	merged := true
	for _, s := range series {
		if !slices.Contains(names, s.Name) || s.Count == 0 {
			continue
		}
		count += s.Count
		sum += s.MeanMicros * float64(s.Count)
		if mg.Add(s) != nil {
			merged = false
		}
	}
	if count == 0 {
		return
	}
	out[avgKey] = sum / float64(count) / 1000
	if !merged {
		return
	}
	var d measure.Summary
	mg.Describe(&d, []float64{99})
	for _, p := range d.Percentiles {
		if p.Percentile == 99 {
			out[p99Key] = float64(p.Micros) / 1000
		}
	}
}

// medians are the per-metric medians over the runs' metrics.
func medians(runs []map[string]float64) map[string]float64 {
	vals := map[string][]float64{}
	for _, r := range runs {
		for k, v := range r {
			if !math.IsNaN(v) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	out := map[string]float64{}
	for k, v := range vals {
		out[k] = median(v)
	}
	return out
}
