package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.ServerClock = (*DB)(nil)

// ServerTime implements driver.ServerClock with TIME: seconds and
// microseconds of the server's clock.
func (db *DB) ServerTime(ctx context.Context) (time.Time, error) {
	// TIME answers seconds and microseconds, as two bulk strings.
	parts, err := redis.Int64s(db.do(ctx, "TIME"))
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: TIME: %w", classify(err))
	}
	if len(parts) != 2 {
		return time.Time{}, fmt.Errorf("redis: TIME answered %d values, want seconds and microseconds", len(parts))
	}
	return time.Unix(parts[0], parts[1]*int64(time.Microsecond)), nil
}

// ClockQuery implements driver.ServerClock.
func (db *DB) ClockQuery() string { return "TIME" }
