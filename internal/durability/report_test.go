package durability

import (
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
)

// A cycle's line counts rows in English: "1 unacknowledged row", "3
// unacknowledged rows", "1 row of earlier cycles is gone".
func TestCycleLineCountsRows(t *testing.T) {
	for _, tc := range []struct {
		c    result.Cycle
		want string
	}{
		{result.Cycle{Number: 1, Acknowledged: 10, UnacknowledgedPresent: 1, EarlierLost: 1, Recovery: time.Second},
			"cycle 1: killed after 0.00 s; 10 acknowledged, 0 lost; 1 row of earlier cycles is gone; 1 unacknowledged row committed anyway; restart and check 1.00 s\n"},
		{result.Cycle{Number: 2, Acknowledged: 10, UnacknowledgedPresent: 3, EarlierLost: 2},
			"cycle 2: killed after 0.00 s; 10 acknowledged, 0 lost; 2 rows of earlier cycles are gone; 3 unacknowledged rows committed anyway; restart and check 0.00 s\n"},
		{result.Cycle{Number: 3, Acknowledged: 10},
			"cycle 3: killed after 0.00 s; 10 acknowledged, 0 lost; 0 unacknowledged rows committed anyway; restart and check 0.00 s\n"},
	} {
		var b strings.Builder
		writeCycle(&b, tc.c)
		if b.String() != tc.want {
			t.Errorf("got  %q\nwant %q", b.String(), tc.want)
		}
	}
}
