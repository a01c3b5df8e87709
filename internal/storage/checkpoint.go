package storage

import (
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

// The monitor's metrics of the checkpoint age: the driver's standard
// gauges, as every gauge is named in an interval.
var (
	metricCheckpointAge    = "db." + driver.GaugeCheckpointAge
	metricCheckpointAgeMax = "db." + driver.GaugeCheckpointAgeMax
)

// checkpointAge finds the peak of the database's checkpoint age in the
// monitor's intervals within the steps' windows: a write whose log runs
// full of changes not yet checkpointed waits on the database's
// checkpoints, which is a log too small, not a log device too slow. nil
// for an experiment that does not write.
func (j *job) checkpointAge(intervals []monitor.Interval, monitorOff bool) *result.CheckpointAge {
	if !j.c.Kind.writesTable() || len(j.sum.Steps) == 0 {
		return nil
	}
	c := &result.CheckpointAge{Metric: metricCheckpointAge}
	origin := j.clockOrigin()
	peakShare := -1.0
	for _, w := range j.steps {
		for _, iv := range within(intervals, w) {
			age, ok := iv.Metrics[metricCheckpointAge]
			if !ok {
				continue
			}
			c.Samples++
			most := iv.Metrics[metricCheckpointAgeMax]
			// The peak is the fullest sample where the maximum is known
			// (it may change while the run goes: MySQL resizes its redo
			// log online), else the largest age.
			share := 0.0
			if most > 0 {
				share = age / most
			}
			if share > peakShare || share == peakShare && age > float64(c.PeakBytes) {
				peakShare = share
				c.PeakBytes, c.MaxBytes = int64(age), int64(most)
				c.PeakAt = round3(iv.End.Sub(origin).Seconds())
				c.Point = ""
				if j.pointed() && w.index < len(j.sum.Steps) {
					c.Point = j.sum.Steps[w.index].Label
				}
			}
		}
	}
	if c.Samples == 0 {
		why := j.noCheckpointAge(monitorOff)
		for _, iv := range intervals {
			if _, ok := iv.Metrics[metricCheckpointAge]; ok {
				// Sampled, but in none of the steps' windows.
				why = fmt.Sprintf("no monitor interval fell within the writes (%.1f s of them; give a longer --duration or a shorter --monitor-interval than %s)", j.sum.Seconds, j.c.Monitor.Interval)
				break
			}
		}
		return &result.CheckpointAge{NotSampled: why}
	}
	if c.MaxBytes > 0 {
		c.Share = round3(float64(c.PeakBytes) / float64(c.MaxBytes))
		c.Full = c.Share >= result.FullCheckpointShare
	}
	if j.ev != nil && j.ev.mon != nil {
		if s, ok := j.ev.mon.(driver.LogSizer); ok {
			c.Setting = s.LogSizeSetting()
		}
	}
	return c
}

// noCheckpointAge says why no checkpoint age was sampled.
func (j *job) noCheckpointAge(monitorOff bool) string {
	switch {
	case monitorOff:
		return "the monitor is off (--no-monitor), and it samples the checkpoint age"
	case j.ev == nil || j.ev.mon == nil:
		return j.caps.Database + " has no monitor here"
	}
	// The database's monitor says why, when it could have one.
	for _, u := range j.ev.mon.Unavailable() {
		if why, ok := strings.CutPrefix(u, "checkpoint age: "); ok {
			return why
		}
	}
	return j.caps.Database + " gives dbprobe no checkpoint age (" + driver.GaugeCheckpointAge + ")"
}

// checkpointVerdict is the verdict's sentence on a log that ran full of
// changes not yet checkpointed, "" when it did not (or was not seen).
func checkpointVerdict(kind Kind, c *result.CheckpointAge) string {
	if c == nil || !c.Full {
		return ""
	}
	what := map[Kind]string{Write: "the writes", Bulk: "the load", LogCopy: "the copy"}[kind]
	larger := "a larger log"
	if c.Setting != "" {
		larger = "a larger " + c.Setting
	}
	return fmt.Sprintf("the log was %.0f%% full of changes not yet checkpointed (checkpoint age %s of at most %s, at %.1f s): %s waited on the database's checkpoints, which a faster log device does not help; %s lets %s run further ahead of them",
		100*c.Share, result.BytesText(c.PeakBytes), result.BytesText(c.MaxBytes), c.PeakAt, what, larger, what)
}
