package result

import (
	"bufio"
	"strconv"
	"strings"
	"time"
)

// Availability is what a phase saw of the database's availability: the
// spans in which it served nothing, and how often workers reconnected.
type Availability struct {
	Outages []Outage `json:"outages,omitempty"`
	// Reconnects counts the sessions workers opened again after their
	// connection broke or an operation timed out.
	Reconnects int64 `json:"reconnects"`
}

// Outage is a span in which the database served no operation: from the
// start of the first operation that lost its connection or timed out to
// the end of the first later one that succeeded.
type Outage struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Failed counts the operations (load rows) that failed in it.
	Failed int64 `json:"failed"`
	// Ongoing is set when the phase ended before the database came back.
	Ongoing bool `json:"ongoing,omitempty"`
}

// Duration is how long the outage lasted.
func (o Outage) Duration() time.Duration { return o.End.Sub(o.Start) }

// writeAvailability writes the outage line: their count and total time,
// then each one with its times, failures and whether it was still going
// on at the end.
func writeAvailability(bw *bufio.Writer, a *Availability) {
	if a == nil || (len(a.Outages) == 0 && a.Reconnects == 0) {
		return
	}
	var total time.Duration
	parts := make([]string, len(a.Outages))
	for i, o := range a.Outages {
		total += o.Duration()
		p := seconds(o.Duration()) + " from " + o.Start.Format("15:04:05.0") + ", " + strconv.FormatInt(o.Failed, 10) + " operations failed"
		if o.Ongoing {
			p += ", still down at the end"
		}
		parts[i] = p
	}
	line := "# outage: " + strconv.Itoa(len(a.Outages)) + ", " + seconds(total)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, "; ") + ")"
	}
	bw.WriteString(line + "; reconnections: " + strconv.FormatInt(a.Reconnects, 10) + "\n")
}

// seconds formats d as seconds with one decimal: "5.2 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
