package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.ServerClock = (*DB)(nil)

// ServerTime implements driver.ServerClock with TIME: seconds and
// microseconds of the server's clock.
func (db *DB) ServerTime(ctx context.Context) (time.Time, error) {
	t, err := db.client.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: TIME: %w", classify(err))
	}
	return t, nil
}

// ClockQuery implements driver.ServerClock.
func (db *DB) ClockQuery() string { return "TIME" }
