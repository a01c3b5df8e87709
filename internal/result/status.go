package result

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// StatusPercentiles are the percentiles YCSB's status line shows. Ask
// measure for them when summarising an interval for StatusLine: it prints
// those of them it finds, in this order, and no others.
var StatusPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// StatusLine returns YCSB's periodic status line (without a newline):
//
//	2024-01-01 12:00:10:123 10 sec: 12345 operations; 1234.5 current ops/sec; est completion in 2 minutes [READ: Count=6000, Max=900, Min=14, Avg=33.88, 50=30, 90=50, 99=86, 99.9=400, 99.99=880] [UPDATE: …]
//
// now is printed in local time as YCSB's "yyyy-MM-dd HH:mm:ss:SSS"; elapsed
// is truncated to whole seconds; totalOps is cumulative while
// intervalOpsPerSec and series are the last interval's, as in YCSB. As in
// YCSB the current rate is left out while no operation has finished. A
// negative remaining means unknown (a run bounded by time, not by count)
// and leaves out the estimate; otherwise it is rounded up to whole seconds
// and worded as YCSB words it. Each series shows the StatusPercentiles
// found in its Percentiles.
//
// Unlike YCSB the line has no trailing space, and says "1 second" where
// YCSB says "1 seconds".
func StatusLine(now time.Time, elapsed time.Duration, totalOps int64, intervalOpsPerSec float64, remaining time.Duration, series []measure.Summary) string {
	var b strings.Builder
	now = now.Local()
	fmt.Fprintf(&b, "%s:%03d %d sec: %d operations;",
		now.Format("2006-01-02 15:04:05"), now.Nanosecond()/int(time.Millisecond),
		int64(elapsed/time.Second), totalOps)
	if totalOps != 0 {
		b.WriteString(" " + decimal2(intervalOpsPerSec) + " current ops/sec;")
	}
	if remaining >= 0 {
		b.WriteString(" est completion in " + remainingWords(remaining))
	}
	for _, s := range series {
		b.WriteString(" " + seriesStatus(s))
	}
	return b.String()
}

// seriesStatus is one "[READ: Count=…, Max=…, Min=…, Avg=…, 50=…, …]" block.
func seriesStatus(s measure.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s: Count=%d, Max=%d, Min=%d, Avg=%s", s.Name, s.Count, s.MaxMicros, s.MinMicros, decimal2(s.MeanMicros))
	for _, want := range StatusPercentiles {
		for _, p := range s.Percentiles {
			if p.Percentile == want {
				b.WriteString(", " + strconv.FormatFloat(want, 'f', -1, 64) + "=" + strconv.FormatInt(p.Micros, 10))
				break
			}
		}
	}
	b.WriteByte(']')
	return b.String()
}

// remainingWords words a remaining time as YCSB does: days and hours when
// there are any, minutes only below a day, seconds only below a minute
// ("1 day 2 hours", "2 hours 5 minutes", "45 seconds").
func remainingWords(d time.Duration) string {
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++ // YCSB rounds the estimate up
	}
	days := secs / 86400
	secs -= days * 86400
	hours := secs / 3600
	secs -= hours * 3600
	var parts []string
	if days > 0 {
		parts = append(parts, count(days, "day"))
	}
	if hours > 0 {
		parts = append(parts, count(hours, "hour"))
	}
	if days == 0 {
		if minutes := secs / 60; minutes > 0 {
			parts = append(parts, count(minutes, "minute"))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, count(secs, "second"))
	}
	return strings.Join(parts, " ")
}

func count(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.FormatInt(n, 10) + " " + word + "s"
}
