package fleet

import (
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// ParseStartAt reads --start-at: an RFC 3339 time ("2026-11-27T20:00:00Z",
// fractions of a second allowed) that must still be ahead of now, else
// clients told to start together would not.
func ParseStartAt(v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, badinput.New("--start-at %q is not an RFC 3339 time; give one such as %s (UTC) or with its offset, 2026-11-27T21:00:00+01:00",
			v, now.UTC().Add(2*time.Minute).Truncate(time.Minute).Format(time.RFC3339))
	}
	if !t.After(now) {
		return time.Time{}, badinput.New("--start-at %s is in the past (now is %s): give a time far enough ahead for every client to connect, e.g. %s",
			t.Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339), now.UTC().Add(2*time.Minute).Truncate(time.Minute).Format(time.RFC3339))
	}
	return t, nil
}
