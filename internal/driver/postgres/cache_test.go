package postgres

import (
	"context"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// CacheCounts are the table's own: a read of every page of it moves its
// requests by at least its pages, published at once by
// pg_stat_force_next_flush; a missing table is bad input.
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
	if err != nil || !before.PerTable || before.PageBytes != 8192 || before.OSCache != driver.OSCacheThrough {
		t.Fatalf("CacheCounts = %+v, %v", before, err)
	}
	if _, err := admin.Exec(ctx, "SELECT count(*) FROM cache_counts WHERE payload <> ''"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	after, err := db.CacheCounts(ctx, tb)
	if err != nil {
		t.Fatal(err)
	}
	pages := count(t, admin, "SELECT pg_relation_size('cache_counts') / 8192")
	if got := after.Requests - before.Requests; got < pages || after.Misses < before.Misses || after.Misses-before.Misses > got {
		t.Errorf("a read of %d pages moved the counts from %+v to %+v", pages, before, after)
	}
	if _, err := db.CacheCounts(ctx, driver.DataTable{Name: "no_such_table", PayloadBytes: 1000}); !badinput.Is(err) {
		t.Errorf("a missing table: %v, want bad input", err)
	}
}
