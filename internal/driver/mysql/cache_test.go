package mysql

import (
	"context"
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

// CacheCounts are the server's buffer pool requests and reads: a read of
// a table moves the requests; the reads never pass them, and the server
// says how InnoDB reads its files.
func TestCacheCounts(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	tb := driver.DataTable{Name: "cache_counts", PayloadBytes: 1000}
	if err := db.CreateDataTable(ctx, tb); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, tb, 1, 2000); err != nil {
		t.Fatal(err)
	}
	before, err := db.CacheCounts(ctx, tb)
	if err != nil || before.PerTable || before.PageBytes <= 0 || before.Requests < before.Misses {
		t.Fatalf("CacheCounts = %+v, %v", before, err)
	}
	var n int64
	if err := admin.QueryRow("SELECT count(*) FROM cache_counts WHERE payload <> ''").Scan(&n); err != nil || n != 2000 {
		t.Fatal(n, err)
	}
	after, err := db.CacheCounts(ctx, tb)
	if err != nil || after.Requests-before.Requests < 2000*1000/before.PageBytes || after.Misses < before.Misses {
		t.Errorf("a read of 2,000 rows moved the counts from %+v to %+v (%v)", before, after, err)
	}
	var method string
	if err := admin.QueryRow("SELECT @@innodb_flush_method").Scan(&method); err == nil {
		if want, _ := osCacheOf(method); after.OSCache != want {
			t.Errorf("innodb_flush_method %s: %v, want %v", method, after.OSCache, want)
		}
	}
}
