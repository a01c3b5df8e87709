package result

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WriteMergeText writes, after a merged summary's YCSB lines, how it was
// made, as comments YCSB parsers skip: the common window; each client's
// own operations, clock and verdict; what was measured outside the
// window; and every operation of every client, in YCSB's shape with the
// prefix "# all " so that the window's lines stay the ones a parser reads.
func WriteMergeText(w io.Writer, m *MergeSummary) error {
	if m == nil {
		return nil
	}
	bw := bufio.NewWriter(w)
	put := func(format string, args ...any) {
		bw.WriteString("# " + oneLine(fmt.Sprintf(format, args...)) + "\n")
	}
	if m.WindowStart.IsZero() {
		put("window: none (the clients never measured a whole interval at the same time)")
	} else {
		put("window: %s to %s (%s), in which all %d clients were measuring; the figures above are of it",
			m.WindowStart.Format("15:04:05.000"), m.WindowEnd.Format("15:04:05.000"), shortDuration(m.WindowEnd.Sub(m.WindowStart).Round(time.Millisecond)), len(m.Clients))
	}
	for _, c := range m.Clients {
		parts := []string{fmt.Sprintf("%d operations in %s", c.Ops, shortDuration(time.Duration(c.RunTimeMS*float64(time.Millisecond)).Round(time.Millisecond)))}
		if c.Hostname != "" {
			parts = append(parts, "host "+c.Hostname)
		}
		if c.Clock != nil {
			parts = append(parts, fmt.Sprintf("the server's clock %s from its own (round trip %s)", signedMicros(c.Clock.OffsetMicros), shortDuration(time.Duration(c.Clock.RTTMicros)*time.Microsecond)))
		} else {
			parts = append(parts, "clock not measured")
		}
		if c.Diagnosis != nil {
			parts = append(parts, "its verdict: "+c.Diagnosis.Verdict)
		}
		if c.Outages > 0 {
			parts = append(parts, count(int64(c.Outages), "outage"))
		}
		if c.Interrupted {
			parts = append(parts, "interrupted")
		}
		put("client %d (%s): %s", c.Index, c.File, strings.Join(parts, "; "))
	}
	if m.ClockSpreadMicros != nil {
		put("clock spread: %s between the clients' offsets", shortDuration(time.Duration(*m.ClockSpreadMicros)*time.Microsecond))
	}
	for _, o := range m.Outside {
		put("outside the window: client %d measured %d operations over %.3f s", o.Client, o.Ops, o.Seconds)
	}
	if m.MonitorClient >= 0 {
		put("monitor: client %d's samples and diagnosis", m.MonitorClient)
	}
	put("all operations of all clients: %d", m.AllOps)
	for _, s := range m.AllSeries {
		ps := make([]string, len(s.Percentiles))
		for i, p := range s.Percentiles {
			ps[i] = fmt.Sprintf("p%s %d", strconv.FormatFloat(p.Percentile, 'f', -1, 64), p.Micros)
		}
		put("all [%s] Operations %d, AverageLatency(us) %s, MinLatency(us) %d, MaxLatency(us) %d; %s", s.Name, s.Count, javaDouble(s.MeanMicros), s.MinMicros, s.MaxMicros, strings.Join(ps, ", "))
	}
	if len(m.AllErrors) > 0 {
		codes := slices.Sorted(maps.Keys(m.AllErrors))
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = oneLine(c) + "=" + strconv.FormatInt(m.AllErrors[c], 10)
		}
		put("all errors: %s", strings.Join(parts, ", "))
	}
	return bw.Flush()
}

// signedMicros shows an offset with its sign: "+1.2 ms", "-350 µs".
func signedMicros(us int64) string {
	sign := "+"
	if us < 0 {
		sign, us = "-", -us
	}
	return sign + shortDuration(time.Duration(us)*time.Microsecond)
}
