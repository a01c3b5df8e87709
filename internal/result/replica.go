package result

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReplicaSummary is what a run with reads sent to a replica (--read-db)
// measured beside the runner's series: stale reads, counted exactly where
// they can be proven, and the replica's lag by a heartbeat.
type ReplicaSummary struct {
	// Target is the replica's URL with its password hidden.
	Target string `json:"target"`
	// Reads are the reads sent to the replica; ReadsChecked those of a key
	// with an update (or insert) of this run acknowledged before the read
	// began, the only reads whose freshness can be judged.
	Reads        int64 `json:"reads"`
	ReadsChecked int64 `json:"reads_checked"`
	// StaleReads are checked reads that returned a version older than one
	// already acknowledged; StaleMissing are those of them that found no
	// row at all (an acknowledged insert not yet there).
	StaleReads   int64 `json:"stale_reads"`
	StaleMissing int64 `json:"stale_missing"`
	// KeysTracked is how many keys the run remembered a version of, and
	// TrackedBytes an estimate of the memory that took.
	KeysTracked  int64 `json:"keys_tracked"`
	TrackedBytes int64 `json:"tracked_bytes"`
	// Lag is the heartbeat's measure of the replica's lag.
	Lag ReplicaLag `json:"lag"`
	// Seconds are the run's seconds from SecondsFrom: each one's lag and
	// stale reads.
	Seconds []ReplicaSecond `json:"seconds"`
	// SecondsFrom is the whole second of the wall clock that Lag.Start
	// falls in: the seconds are the wall clock's, as the runner's
	// intervals are, so that they line up with those and with other
	// clients'; the first one is only partly measured.
	SecondsFrom time.Time `json:"seconds_from,omitzero"`
	// Clients is how many clients' figures dbprobe merge added up; 0 in a
	// client's own result.
	Clients int `json:"clients,omitempty"`
	// Shards holds each shard's replica's lag when the shards each had
	// one (--shard URL read=REPLICA_URL); the figures above are of them
	// all together.
	Shards []ReplicaShard `json:"shards,omitempty"`
}

// ReplicaLag is the replica's lag as a heartbeat measured it: a row the
// primary rewrote every Interval, looked for on the replica every Poll,
// and every FinePoll for FineFor after a write was acknowledged. A
// heartbeat's lag is the time from the primary acknowledging its write to
// the first look that found it on the replica, so it is exact to within
// FinePoll while it is under FineFor, and to within Poll above.
type ReplicaLag struct {
	// Table is the heartbeat table dbprobe created, and dropped after.
	Table string `json:"table"`
	// Start is when the measured part of the run began, after the
	// --start-at wait and the warm-up: the figures below are of the
	// heartbeats acknowledged from then on.
	Start      time.Time `json:"start"`
	IntervalMS float64   `json:"interval_ms"`
	PollMS     float64   `json:"poll_ms"`
	FinePollMS float64   `json:"fine_poll_ms"`
	FineForMS  float64   `json:"fine_for_ms"`
	// Written heartbeats were acknowledged by the primary; Seen of them
	// were found on the replica before the end; the rest count with the
	// time they had waited at the end, a lower bound of their lag.
	Written int64 `json:"written"`
	Seen    int64 `json:"seen"`
	// The heartbeats' lags: the longest, the median, the 99th
	// percentile and the mean.
	MaxMS  float64 `json:"max_ms"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MeanMS float64 `json:"mean_ms"`
	// Errors counts heartbeat writes and reads that failed.
	Errors int64 `json:"errors,omitempty"`
	// LagsMS is every written heartbeat's lag, in the order written (the
	// ones not seen with the time they had waited): the figures above are
	// of them, and dbprobe merge computes the clients' figures together
	// from theirs rather than from their percentiles.
	LagsMS []float64 `json:"lags_ms,omitempty"`
}

// SetLagFigures sets the lag's max, p50, p99 and mean from LagsMS: the
// percentiles by the nearest-rank method (the smallest lag with at least
// that share of the lags at or below it).
func (l *ReplicaLag) SetLagFigures() {
	l.MaxMS, l.P50MS, l.P99MS, l.MeanMS = 0, 0, 0, 0
	if len(l.LagsMS) == 0 {
		return
	}
	sorted := slices.Clone(l.LagsMS)
	slices.Sort(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	rank := func(q float64) float64 {
		i := int(math.Ceil(float64(len(sorted))*q)) - 1
		return sorted[min(max(i, 0), len(sorted)-1)]
	}
	l.MaxMS = sorted[len(sorted)-1]
	l.P50MS = rank(0.50)
	l.P99MS = rank(0.99)
	l.MeanMS = sum / float64(len(sorted))
}

// ReplicaSecond is one second of a run with a replica.
type ReplicaSecond struct {
	// Second counts from ReplicaSummary.SecondsFrom, from 0.
	Second int `json:"second"`
	// LagMS is the longest lag seen in the second: at each look, the time
	// since the oldest acknowledged heartbeat the replica did not show
	// yet was acknowledged (0 when it showed them all).
	LagMS float64 `json:"lag_ms"`
	// Checked and Stale are the second's checked and stale reads.
	Checked int64 `json:"checked"`
	Stale   int64 `json:"stale"`
}

// writeReplicaLines writes what the replica measured in YCSB's shape.
func writeReplicaLines(bw *bufio.Writer, r *ReplicaSummary) {
	line := func(measurement, value string) {
		bw.WriteString("[REPLICA], " + measurement + ", " + value + "\n")
	}
	line("Reads", strconv.FormatInt(r.Reads, 10))
	line("ReadsChecked", strconv.FormatInt(r.ReadsChecked, 10))
	line("StaleReads", strconv.FormatInt(r.StaleReads, 10))
	line("StaleMissing", strconv.FormatInt(r.StaleMissing, 10))
	l := &r.Lag
	line("Heartbeats", strconv.FormatInt(l.Written, 10))
	line("HeartbeatsSeen", strconv.FormatInt(l.Seen, 10))
	line("MaxLag(ms)", msText(l.MaxMS))
	line("50thPercentileLag(ms)", msText(l.P50MS))
	line("99thPercentileLag(ms)", msText(l.P99MS))
	line("AverageLag(ms)", msText(l.MeanMS))
}

// writeReplicaNotes says what the replica's figures mean.
func writeReplicaNotes(bw *bufio.Writer, r *ReplicaSummary) {
	share := ""
	if r.ReadsChecked > 0 {
		share = fmt.Sprintf(" (%.2f%% of checked reads)", 100*float64(r.StaleReads)/float64(r.ReadsChecked))
	}
	fmt.Fprintf(bw, "# replica: reads and scans went to %s; %d of %d reads were of a key whose update or insert by this run the primary had acknowledged before the read, %d of them stale%s\n",
		oneLine(r.Target), r.ReadsChecked, r.Reads, r.StaleReads, share)
	l := &r.Lag
	fmt.Fprintf(bw, "# replica lag: heartbeat %s written every %s and looked for every %s (every %s for the first %s): %d written, %d seen; max %s ms, p99 %s ms\n",
		oneLine(l.Table), shortDuration(msDuration(l.IntervalMS)), shortDuration(msDuration(l.PollMS)),
		shortDuration(msDuration(l.FinePollMS)), shortDuration(msDuration(l.FineForMS)), l.Written, l.Seen, msText(l.MaxMS), msText(l.P99MS))
	if l.Written > l.Seen {
		fmt.Fprintf(bw, "# replica lag: %d heartbeats were not on the replica by the end; their lag counts as the time they had waited, a lower bound\n", l.Written-l.Seen)
	}
	if l.Errors > 0 {
		fmt.Fprintf(bw, "# replica lag: heartbeat writes or reads that failed: %d\n", l.Errors)
	}
	for _, s := range r.Shards {
		fmt.Fprintf(bw, "# replica lag of shard %d (%s): %d written, %d seen; max %s ms, p50 %s ms, p99 %s ms\n",
			s.Shard, oneLine(s.Target), s.Lag.Written, s.Lag.Seen, msText(s.Lag.MaxMS), msText(s.Lag.P50MS), msText(s.Lag.P99MS))
		if s.Answered != nil {
			fmt.Fprintf(bw, "# replica of %s\n", oneLine(ShardNote(*s.Answered)))
		}
	}
	if r.Clients > 0 {
		fmt.Fprintf(bw, "# replica: the figures of %d clients added up: each ran its own heartbeat and judged its own reads over its measured part (after --start-at and the warm-up); the lag figures are of all their heartbeats together\n", r.Clients)
		fmt.Fprintf(bw, "# replica: %d keys' versions remembered by the clients together, about %s of memory in all\n", r.KeysTracked, byteText(r.TrackedBytes))
		return
	}
	fmt.Fprintf(bw, "# replica: %d keys' versions remembered, about %s of memory\n", r.KeysTracked, byteText(r.TrackedBytes))
}

// msText writes milliseconds with at most three decimals.
func msText(ms float64) string {
	return strconv.FormatFloat(math.Round(ms*1000)/1000, 'f', -1, 64)
}

// msDuration is ms milliseconds as a duration.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// byteText writes a byte count in binary units.
func byteText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ReplicaShard is the lag of one shard's replica, in a sharded run whose
// shards each had one (--shard URL read=REPLICA_URL).
type ReplicaShard struct {
	// Shard counts from 1, in the order the shards were given.
	Shard  int        `json:"shard"`
	Target string     `json:"target"`
	Lag    ReplicaLag `json:"lag"`
	// Answered is what the replica answered: its reads, scans and the
	// latency of its calls, as a shard's own figures are counted.
	Answered *ShardSummary `json:"answered,omitempty"`
}

// combineReplicas adds up replica figures measured side by side (the
// clients of one run, or the shards' replicas of one run): the counts
// summed, the lag figures from every heartbeat together, and each
// wall-clock second's checked and stale reads summed and its longest lag
// kept. Every summary must carry its LagsMS and SecondsFrom.
func combineReplicas(per []*ReplicaSummary) *ReplicaSummary {
	out := &ReplicaSummary{Target: per[0].Target}
	lags := make([]ReplicaLag, len(per))
	for i, r := range per {
		out.Reads += r.Reads
		out.ReadsChecked += r.ReadsChecked
		out.StaleReads += r.StaleReads
		out.StaleMissing += r.StaleMissing
		out.KeysTracked += r.KeysTracked
		out.TrackedBytes += r.TrackedBytes
		lags[i] = r.Lag
		if len(r.Seconds) > 0 && (out.SecondsFrom.IsZero() || r.SecondsFrom.Before(out.SecondsFrom)) {
			out.SecondsFrom = r.SecondsFrom
		}
	}
	out.Lag = combineLags(lags)
	for _, r := range per {
		// Both are whole seconds of the wall clock: the offset is too.
		off := int(r.SecondsFrom.Sub(out.SecondsFrom) / time.Second)
		for _, s := range r.Seconds {
			k := off + s.Second
			for len(out.Seconds) <= k {
				out.Seconds = append(out.Seconds, ReplicaSecond{Second: len(out.Seconds)})
			}
			m := &out.Seconds[k]
			m.LagMS = max(m.LagMS, s.LagMS)
			m.Checked += s.Checked
			m.Stale += s.Stale
		}
	}
	return out
}

// combineLags is several heartbeats' lags taken together: their counts
// summed, their tables listed, and the figures computed from all their
// heartbeats' lags.
func combineLags(ls []ReplicaLag) ReplicaLag {
	l0 := ls[0]
	out := ReplicaLag{IntervalMS: l0.IntervalMS, PollMS: l0.PollMS, FinePollMS: l0.FinePollMS, FineForMS: l0.FineForMS}
	var tables []string
	for _, l := range ls {
		out.Written += l.Written
		out.Seen += l.Seen
		out.Errors += l.Errors
		out.LagsMS = append(out.LagsMS, l.LagsMS...)
		if out.Start.IsZero() || !l.Start.IsZero() && l.Start.Before(out.Start) {
			out.Start = l.Start
		}
		if l.Table != "" && !slices.Contains(tables, l.Table) {
			tables = append(tables, l.Table)
		}
	}
	out.Table = strings.Join(tables, ", ")
	out.SetLagFigures()
	return out
}

// CombineShardReplicas is the replica figures of a sharded run whose
// shards each had a replica: per holds each shard's, in shard order, the
// tracker's counts in one of them (the reads are judged once, whatever
// the shard). target names the replicas together. Each shard's lag is
// kept apart in Shards too.
func CombineShardReplicas(target string, per []*ReplicaSummary) *ReplicaSummary {
	out := combineReplicas(per)
	out.Target = target
	for i, r := range per {
		out.Shards = append(out.Shards, ReplicaShard{Shard: i + 1, Target: r.Target, Lag: r.Lag})
	}
	return out
}

// mergeReplica adds up the replica figures of the clients of one run
// (dbprobe merge). Each client ran its own heartbeat (one per shard's
// replica in a sharded run) and judged its own reads, so the counts are
// the sums of the clients' over their measured parts (after the
// --start-at wait and the warm-up, as their other figures), the lag figures
// those of every client's heartbeats together (from their LagsMS, not
// from their percentiles), and each wall-clock second holds the clients'
// checked and stale reads of that second added up and the longest lag any
// of them saw in it. names are the clients' files, for messages; nil when
// no client had a replica.
func mergeReplica(names []string, per []*ReplicaSummary) (*ReplicaSummary, error) {
	var have []int
	for i, r := range per {
		if r != nil {
			have = append(have, i)
		}
	}
	switch {
	case len(have) == 0:
		return nil, nil
	case len(have) < len(per):
		without := 0
		for i, r := range per {
			if r == nil {
				without = i
				break
			}
		}
		return nil, refuse("%s has replica figures (--read-db) and %s none: merge the results of one run", names[have[0]], names[without])
	}
	for i, r := range per {
		if r.Lag.Written > 0 && int64(len(r.Lag.LagsMS)) != r.Lag.Written || r.SecondsFrom.IsZero() && len(r.Seconds) > 0 {
			return nil, refuse("%s: its replica figures carry neither each heartbeat's lag nor the wall-clock second they start at (written by an older dbprobe): they cannot be merged exactly", names[i])
		}
		if r.Target != per[0].Target {
			return nil, refuse("%s and %s are not the same experiment: the replica is %s in %s and %s in %s", names[0], names[i], per[0].Target, names[0], r.Target, names[i])
		}
		if len(r.Shards) != len(per[0].Shards) {
			return nil, refuse("%s has %d shards' replicas and %s %d: merge the results of one run", names[0], len(per[0].Shards), names[i], len(r.Shards))
		}
	}
	out := combineReplicas(per)
	out.Clients = len(per)
	answered := make([][]ShardSummary, len(per))
	for k, s0 := range per[0].Shards {
		lags := make([]ReplicaLag, len(per))
		for i, r := range per {
			lags[i] = r.Shards[k].Lag
			if a := r.Shards[k].Answered; a != nil {
				answered[i] = append(answered[i], *a)
			}
		}
		out.Shards = append(out.Shards, ReplicaShard{Shard: s0.Shard, Target: s0.Target, Lag: combineLags(lags)})
	}
	// What each shard's replica answered, added up as the shards' own
	// figures are.
	merged, err := mergeShards(names, answered)
	if err != nil {
		return nil, err
	}
	if len(merged) == len(out.Shards) {
		for k := range merged {
			out.Shards[k].Answered = &merged[k]
		}
	}
	return out, nil
}
