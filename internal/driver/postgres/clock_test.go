package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// TestServerTime reads the clock of a server on this machine: the same
// clock as the test's, so its reading falls between the instants before
// and after the round trip (less the microsecond the server rounds to).
func TestServerTime(t *testing.T) {
	_, db, _ := setup(t, 1, driver.Options{Sessions: 1})
	c := db.(driver.ServerClock)
	for range 3 {
		before := time.Now().Round(0).Truncate(time.Microsecond)
		got, err := c.ServerTime(context.Background())
		after := time.Now().Round(0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Before(before) || got.After(after) {
			t.Fatalf("%s says %s, read between %s and %s", c.ClockQuery(), got.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
		}
	}
}
