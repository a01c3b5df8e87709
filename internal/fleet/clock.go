package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// ClockReadings is how many times the server's clock is read: the reading
// with the shortest round trip is kept, being the one least moved by
// queueing on either side.
const ClockReadings = 7

// Offset is how far the database server's clock is ahead of this
// client's, measured as NTP measures it: the server's time against the
// middle of the round trip that read it.
type Offset struct {
	// Offset is the server's clock minus the client's; its error is at
	// most half of RTT.
	Offset time.Duration
	RTT    time.Duration
	// Query is what read the server's clock ("SELECT clock_timestamp()").
	Query string
	// At is the client's time of the reading kept.
	At time.Time
}

// clockNow is the client's clock; a test replaces it.
var clockNow = time.Now

// MeasureOffset reads the server's clock ClockReadings times. ok is false
// when the database cannot say its time (SQLite, the null driver: on this
// machine, or no server at all).
func MeasureOffset(ctx context.Context, db driver.DB) (off Offset, ok bool, err error) {
	c, isClock := db.(driver.ServerClock)
	if !isClock {
		return Offset{}, false, nil
	}
	best := Offset{RTT: -1, Query: c.ClockQuery()}
	for range ClockReadings {
		t0 := clockNow()
		server, err := c.ServerTime(ctx)
		t1 := clockNow()
		if err != nil {
			return Offset{}, false, fmt.Errorf("reading the server's clock (%s): %w", c.ClockQuery(), err)
		}
		rtt := t1.Sub(t0) // monotonic
		if best.RTT >= 0 && rtt >= best.RTT {
			continue
		}
		mid := t0.Add(rtt / 2)
		best.RTT, best.At = rtt, mid
		// Wall clock against wall clock: Round(0) drops the monotonic
		// reading, which Sub would otherwise prefer.
		best.Offset = server.Sub(mid.Round(0))
	}
	return best, true, nil
}
