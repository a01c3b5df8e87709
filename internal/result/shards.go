package result

import (
	"fmt"
	"math"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// ShardSummary is what one shard of a sharded run (--shard) answered in a
// phase: its calls by kind, its errors, and the latency of its calls with
// their HDR histogram, so that dbprobe merge adds up the clients' shards
// exactly.
type ShardSummary struct {
	// Shard counts from 1, in the order the shards were given.
	Shard int `json:"shard"`
	// Target is the shard's URL with its password hidden; Range the
	// records it holds ("0-499999", "500000-").
	Target string `json:"target"`
	Range  string `json:"range"`
	// Reads, Updates and Deletes are calls; Inserts are rows; Scans are
	// the scans it answered (every scan asks every shard).
	Reads   int64 `json:"reads"`
	Updates int64 `json:"updates"`
	Inserts int64 `json:"inserts"`
	Deletes int64 `json:"deletes,omitempty"`
	Scans   int64 `json:"scans"`
	// Requests counts session calls (a load batch is one), Errors those
	// that failed, BusyNanos the time spent in them all.
	Requests  int64 `json:"requests"`
	Errors    int64 `json:"errors"`
	BusyNanos int64 `json:"busy_ns"`
	// Calls is the calls' latency: count, p50, p99, max in µs and the
	// HDR histogram they come from.
	Calls measure.Summary `json:"calls"`
}

// shardPercentiles are the percentiles a shard's line shows.
var shardPercentiles = []float64{50, 99}

// ShardNote is a shard's line in the summary's notes.
func ShardNote(s ShardSummary) string {
	mean := "no calls"
	if s.Requests > 0 {
		calls := "calls"
		if s.Requests == 1 {
			calls = "call"
		}
		var p50, p99 int64
		for _, p := range s.Calls.Percentiles {
			switch p.Percentile {
			case 50:
				p50 = p.Micros
			case 99:
				p99 = p.Micros
			}
		}
		// Whole microseconds, grouped, as the percentiles beside it are.
		mean = fmt.Sprintf("%s %s: mean %s µs, p50 %s µs, p99 %s µs, max %s µs", Grouped(s.Requests), calls,
			Grouped(int64(math.Round(float64(s.BusyNanos)/1e3/float64(s.Requests)))), Grouped(p50), Grouped(p99), Grouped(s.Calls.MaxMicros))
	}
	return fmt.Sprintf("shard %d (%s, records %s): %s reads, %s updates, %s inserted rows, %s scans answered, %s errors; %s",
		s.Shard, s.Target, s.Range, Grouped(s.Reads), Grouped(s.Updates), Grouped(s.Inserts),
		Grouped(s.Scans), Grouped(s.Errors), mean)
}

// DescribeShardCalls fills a shard's Calls from its histogram, encoded as
// measure.Summary.Histogram is: the count, mean, max, p50 and p99.
func DescribeShardCalls(s *ShardSummary, histogram string, count int64) error {
	var m measure.Merger
	if err := m.Add(measure.Summary{Name: fmt.Sprintf("shard %d calls", s.Shard), Count: count, Histogram: histogram}); err != nil {
		return err
	}
	s.Calls = measure.Summary{Name: "calls"}
	m.Describe(&s.Calls, shardPercentiles)
	return nil
}

// mergeShards adds up the clients' shards, shard by shard: the counts
// summed, the calls' histograms merged, so the percentiles are those of
// every call of every client. names are the clients' files, for messages.
func mergeShards(names []string, per [][]ShardSummary) ([]ShardSummary, error) {
	var out []ShardSummary
	var mergers []*measure.Merger
	for i, shards := range per {
		if i > 0 && len(shards) != len(out) {
			return nil, refuse("%s has %d shards and %s %d: merge the results of one run", names[0], len(out), names[i], len(shards))
		}
		for k, s := range shards {
			if i == 0 {
				o := s
				o.Calls = measure.Summary{Name: "calls"}
				out = append(out, o)
				mergers = append(mergers, &measure.Merger{})
			} else {
				o := &out[k]
				if s.Shard != o.Shard || s.Target != o.Target || s.Range != o.Range {
					return nil, refuse("%s and %s are not the same experiment: their shard %d is %s (records %s) and %s (records %s)",
						names[0], names[i], k+1, o.Target, o.Range, s.Target, s.Range)
				}
				o.Reads += s.Reads
				o.Updates += s.Updates
				o.Inserts += s.Inserts
				o.Deletes += s.Deletes
				o.Scans += s.Scans
				o.Requests += s.Requests
				o.Errors += s.Errors
				o.BusyNanos += s.BusyNanos
			}
			if err := mergers[k].Add(s.Calls); err != nil {
				return nil, refuse("%s: shard %d's calls cannot be merged exactly: %v", names[i], k+1, err)
			}
		}
	}
	for k := range out {
		mergers[k].Describe(&out[k].Calls, shardPercentiles)
	}
	return out, nil
}
