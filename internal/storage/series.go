package storage

import (
	"math"
	"slices"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
)

// span is what moved between two instants: a runner tick's chunks turned
// into bytes, or a monitor interval's log bytes.
type span struct {
	start, end time.Time
	bytes      float64
	// busy, when not zero, is the time within start…end spent moving
	// the bytes: a second that holds the gap between two passes (the
	// table made cold again) is rated over its working time only.
	busy time.Duration
}

// seconds is the time the span's rate is over.
func (s span) seconds() float64 {
	if s.busy > 0 {
		return s.busy.Seconds()
	}
	return s.end.Sub(s.start).Seconds()
}

// minSpanShare is the least part of a second a span must cover to count
// in the spread: a run's first and last ticks are cut short, and a 50 ms
// tick holding one chunk would read as a burst or a fall that never was.
const minSpanShare = 0.5

// fellBelow is the share of the median under which a second counts as a
// fall, as the consistency figures count them.
const fellBelow = 0.9

// perSecond turns spans into the per-second series, elapsed from origin,
// and marks the seconds below 90% of the median of the whole ones.
func perSecond(spans []span, origin time.Time) ([]result.RatePoint, *result.Consistency) {
	points := make([]result.RatePoint, 0, len(spans))
	var rates []float64
	for _, s := range spans {
		secs := s.seconds()
		if secs <= 0 {
			continue
		}
		p := result.RatePoint{Elapsed: round3(s.end.Sub(origin).Seconds()), Seconds: round3(secs), Bytes: int64(s.bytes), Rate: s.bytes / secs}
		points = append(points, p)
		if secs >= minSpanShare {
			rates = append(rates, p.Rate)
		}
	}
	c := consistency(rates)
	if c != nil {
		for i := range points {
			if points[i].Seconds >= minSpanShare && points[i].Rate < fellBelow*c.Median {
				points[i].Fell = true
			}
		}
	}
	return points, c
}

// perMinute adds the per-second points up by minute of elapsed time; the
// spread is over whole minutes (of at least 30 s measured) only.
func perMinute(points []result.RatePoint) ([]result.RatePoint, *result.Consistency) {
	var out []result.RatePoint
	for _, p := range points {
		minute := int(math.Max(0, p.Elapsed-p.Seconds/2) / 60)
		for len(out) <= minute {
			out = append(out, result.RatePoint{Elapsed: float64(60 * (len(out) + 1))})
		}
		out[minute].Bytes += p.Bytes
		out[minute].Seconds += p.Seconds
	}
	var rates []float64
	kept := out[:0]
	for _, m := range out {
		if m.Seconds <= 0 {
			continue
		}
		m.Rate = float64(m.Bytes) / m.Seconds
		m.Seconds = round3(m.Seconds)
		if m.Seconds >= 30 {
			rates = append(rates, m.Rate)
		}
		kept = append(kept, m)
	}
	if len(rates) < 2 {
		return kept, nil
	}
	return kept, consistency(rates)
}

// consistency is the spread of rates; nil when there are none.
func consistency(rates []float64) *result.Consistency {
	if len(rates) == 0 {
		return nil
	}
	sorted := slices.Clone(rates)
	slices.Sort(sorted)
	c := &result.Consistency{Points: len(rates), Min: sorted[0], Max: sorted[len(sorted)-1], Median: median(sorted)}
	var sum, sq float64
	for _, r := range rates {
		sum += r
	}
	mean := sum / float64(len(rates))
	for _, r := range rates {
		sq += (r - mean) * (r - mean)
	}
	if mean > 0 {
		c.CV = math.Sqrt(sq/float64(len(rates))) / mean
	}
	below := 0
	for _, r := range rates {
		if r < fellBelow*c.Median {
			below++
		}
	}
	c.BelowShare = float64(below) / float64(len(rates))
	return c
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// spread cuts spans (a scan chunk, a write chunk, a table copy) at the
// whole seconds from origin, each piece taking its share of the bytes,
// and adds up the pieces of each second, so that the per-second series
// is one of seconds, each rated over the time spent moving its bytes.
func spread(spans []span, origin time.Time) []span {
	var out []span
	for _, s := range spans {
		total := s.end.Sub(s.start)
		if total <= 0 {
			continue
		}
		from := s.start
		for from.Before(s.end) {
			k := from.Sub(origin).Truncate(time.Second) + time.Second
			to := origin.Add(k)
			if to.After(s.end) {
				to = s.end
			}
			out = append(out, span{start: from, end: to, bytes: s.bytes * float64(to.Sub(from)) / float64(total), busy: to.Sub(from)})
			from = to
		}
	}
	return mergeSeconds(out, origin)
}

// mergeSeconds adds up the spans that fall in the same second from
// origin.
func mergeSeconds(spans []span, origin time.Time) []span {
	var out []span
	for _, s := range spans {
		k := s.start.Sub(origin).Truncate(time.Second)
		if n := len(out); n > 0 && out[n-1].start.Sub(origin).Truncate(time.Second) == k {
			out[n-1].end = s.end
			out[n-1].bytes += s.bytes
			out[n-1].busy += s.busy
			continue
		}
		out = append(out, s)
	}
	return out
}
