package postgres

import (
	"context"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.ServerClock = (*DB)(nil)

// clockSQL reads the server's clock as it is when the statement runs:
// now() would be the start of the transaction, the same thing here, but
// clock_timestamp() says what is meant.
const clockSQL = "SELECT clock_timestamp()"

// ServerTime implements driver.ServerClock.
func (db *DB) ServerTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := db.pool.QueryRow(ctx, clockSQL).Scan(&t); err != nil {
		return time.Time{}, classify(err)
	}
	return t, nil
}

// ClockQuery implements driver.ServerClock.
func (db *DB) ClockQuery() string { return clockSQL }
