package driver

import (
	"context"
	"time"
)

// ServerClock is the capability of a DB to read its server's clock, so
// that the clients of one run spread over several machines can each say
// how far their own clock is from the database's: their per-second series
// are merged by wall clock (dbprobe merge), which is only right when the
// clocks agree. Optional, found by type assertion as Monitorable is.
type ServerClock interface {
	// ServerTime reads the server's current time in one round trip.
	ServerTime(ctx context.Context) (time.Time, error)
	// ClockQuery names what ServerTime asks the server, in its own terms
	// ("SELECT clock_timestamp()", "TIME"), for the result.
	ClockQuery() string
}
