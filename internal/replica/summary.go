package replica

import (
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
)

// Summarize puts a run's stale reads and lag into the result: target is
// the replica's URL with its password hidden, c the tracker's counts (its
// seconds counted from the heartbeat's Origin) and lagSeconds each
// second's longest lag.
func Summarize(target string, c Counts, lag result.ReplicaLag, lagSeconds []time.Duration) *result.ReplicaSummary {
	s := &result.ReplicaSummary{
		Target: target, Reads: c.Reads, ReadsChecked: c.Checked, StaleReads: c.Stale, StaleMissing: c.Missing,
		KeysTracked: c.Keys, TrackedBytes: c.Bytes, Lag: lag,
	}
	if !lag.Start.IsZero() {
		s.SecondsFrom = Origin(lag.Start).UTC()
	}
	n := max(len(lagSeconds), len(c.SecondChecked))
	s.Seconds = make([]result.ReplicaSecond, n)
	for i := range s.Seconds {
		sec := result.ReplicaSecond{Second: i}
		if i < len(lagSeconds) {
			sec.LagMS = ms(lagSeconds[i])
		}
		if i < len(c.SecondChecked) {
			sec.Checked, sec.Stale = c.SecondChecked[i], c.SecondStale[i]
		}
		s.Seconds[i] = sec
	}
	return s
}
