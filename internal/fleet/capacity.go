package fleet

import (
	"context"
	"fmt"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Capacity checks, before the phase, that the server accepts the
// connections every client of the run will open: threads per client times
// the clients, and monitors more for the one client (or those) that
// monitors. A server whose limit itself is too small is refused (every
// client would be turned away in part); one whose limit is enough but whose
// free connections now are not gets a warning, returned, since the
// connections in use may be other clients of this very run. where names
// the database for the message. A server that cannot say its limit is
// taken to have room.
func Capacity(ctx context.Context, db driver.DB, where string, s Slice, threads, monitors int) (warning string, err error) {
	if !s.Several() {
		return "", nil
	}
	lim, ok := db.(driver.ConnectionLimiter)
	if !ok {
		return "", nil
	}
	room, err := lim.ConnectionRoom(ctx)
	if err != nil || room.Max <= 0 {
		return "", nil // an unknown limit is no reason to refuse the run
	}
	need := threads*s.Count + monitors
	setting := room.Setting
	if setting == "" {
		setting = "the server's connection limit"
	}
	limit := room.Limit
	if limit == "" {
		limit = fmt.Sprintf("%s %d", setting, room.Max)
	}
	what := fmt.Sprintf("the %d clients need %d connections (%d × --threads %d", s.Count, need, s.Count, threads)
	if monitors > 0 {
		what += fmt.Sprintf(", and %d for the monitor", monitors)
	}
	what += ")"
	if need > room.Max {
		return "", badinput.New("%s, but %s accepts at most %d (%s); lower --threads or --client-count, or raise %s",
			what, where, room.Max, limit, setting)
	}
	if need > room.Free() {
		return fmt.Sprintf("%s, and %s accepts %d more now (%s, %d in use): unless the clients already connected are among those in use, some connections will be refused",
			what, where, room.Free(), limit, room.InUse), nil
	}
	return "", nil
}
