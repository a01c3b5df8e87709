package sqlserver

import (
	"context"
	"time"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

var _ dbdriver.ServerClock = (*DB)(nil)

// clockSQL reads the server's clock in UTC as microseconds since the
// epoch: SYSUTCDATETIME() has 100 ns precision, and a bigint crosses the
// wire without a time zone to get wrong.
const clockSQL = "SELECT DATEDIFF_BIG(microsecond, '19700101', SYSUTCDATETIME())"

// ServerTime implements driver.ServerClock.
func (db *DB) ServerTime(ctx context.Context) (time.Time, error) {
	var us int64
	if err := db.pool.QueryRowContext(ctx, clockSQL).Scan(&us); err != nil {
		return time.Time{}, classify(err)
	}
	return time.UnixMicro(us).UTC(), nil
}

// ClockQuery implements driver.ServerClock.
func (db *DB) ClockQuery() string { return clockSQL }
