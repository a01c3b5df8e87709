package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.ServerClock = (*DB)(nil)

// clockSQL reads the server's clock in seconds since the epoch with
// microseconds: UNIX_TIMESTAMP of NOW(6) undoes the session's time zone
// that NOW(6) applied, so the value is the same whatever time_zone is.
const clockSQL = "SELECT UNIX_TIMESTAMP(NOW(6))"

// ServerTime implements driver.ServerClock.
func (db *DB) ServerTime(ctx context.Context) (time.Time, error) {
	var s string
	if err := db.pool.QueryRowContext(ctx, clockSQL).Scan(&s); err != nil {
		return time.Time{}, classify(err)
	}
	return parseEpochMicros(s)
}

// ClockQuery implements driver.ServerClock.
func (db *DB) ClockQuery() string { return clockSQL }

// parseEpochMicros reads "1764265200.123456", seconds since the epoch
// with up to six decimals, exactly.
func parseEpochMicros(s string) (time.Time, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || len(frac) > 6 {
		return time.Time{}, fmt.Errorf("mysql: the server's clock %q is not seconds since the epoch", s)
	}
	var us int64
	if frac != "" {
		if us, err = strconv.ParseInt((frac + "000000")[:6], 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("mysql: the server's clock %q is not seconds since the epoch", s)
		}
	}
	return time.Unix(sec, us*1000).UTC(), nil
}
