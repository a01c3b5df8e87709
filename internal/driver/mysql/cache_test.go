package mysql

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// innodb_flush_method's O_DIRECT variants bypass the page cache, the
// others read through it; an unknown value says so.
func TestOSCacheOf(t *testing.T) {
	for _, c := range []struct {
		method string
		want   driver.OSCacheUse
	}{
		{"O_DIRECT", driver.OSCacheBypassed},
		{"O_DIRECT_NO_FSYNC", driver.OSCacheBypassed},
		{"o_direct", driver.OSCacheBypassed},
		{"fsync", driver.OSCacheThrough},
		{"O_DSYNC", driver.OSCacheThrough},
		{"littlesync", driver.OSCacheThrough},
		{"", driver.OSCacheUnknown},
		{"unbuffered", driver.OSCacheUnknown},
	} {
		if got, how := osCacheOf(c.method); got != c.want || how == "" {
			t.Errorf("%q: %v (%q), want %v", c.method, got, how, c.want)
		}
	}
}
