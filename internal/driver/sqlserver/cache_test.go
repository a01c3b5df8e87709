package sqlserver

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// The Buffer Manager's two counters become the requests and misses; a
// view without them (no VIEW SERVER STATE) is bad input naming the grant.
func TestCacheCountsOf(t *testing.T) {
	c, err := cacheCountsOf([]string{"Page lookups/sec  ", "Page reads/sec"}, []int64{1000, 40})
	if err != nil || c.Requests != 1000 || c.Misses != 40 || c.PageBytes != 8192 || c.PerTable {
		t.Fatalf("%+v, %v", c, err)
	}
	if _, err := cacheCountsOf([]string{"Page lookups/sec"}, []int64{1000}); !badinput.Is(err) {
		t.Errorf("no Page reads/sec: %v, want bad input", err)
	}
	if _, err := cacheCountsOf(nil, nil); !badinput.Is(err) {
		t.Errorf("an empty view: %v, want bad input", err)
	}
}
