package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.CacheCounter = (*DB)(nil)

// cacheCountsSQL reads a table's block hits and reads in shared_buffers,
// its heap, its indexes and its TOAST together: the pages a lookup by key
// asks for are the index's and the heap's. A backend publishes its counts
// when a transaction ends, at most once a second while it is busy, so a
// reading lags the reads by up to a second.
const cacheCountsSQL = `SELECT coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0) + coalesce(toast_blks_hit, 0) + coalesce(tidx_blks_hit, 0), ` +
	`coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0) + coalesce(toast_blks_read, 0) + coalesce(tidx_blks_read, 0), ` +
	`current_setting('block_size')::bigint ` +
	`FROM pg_statio_all_tables WHERE relid = to_regclass($1)`

// CacheCounts reads t's own hits and misses in shared_buffers from
// pg_statio_all_tables. A miss is a read() from the operating system,
// which its page cache may answer without the device.
func (db *DB) CacheCounts(ctx context.Context, t driver.DataTable) (driver.CacheCounts, error) {
	if err := t.Check(); err != nil {
		return driver.CacheCounts{}, err
	}
	var hits, reads, page int64
	err := db.pool.QueryRow(ctx, cacheCountsSQL, db.dataTable(t)).Scan(&hits, &reads, &page)
	if errors.Is(err, pgx.ErrNoRows) {
		return driver.CacheCounts{}, badinput.New("PostgreSQL: there is no table %s", db.dataTable(t))
	}
	if err != nil {
		return driver.CacheCounts{}, classify(err)
	}
	return driver.CacheCounts{
		Requests: hits + reads, Misses: reads, PageBytes: page, PerTable: true,
		How:        "pg_statio_all_tables: heap, index and TOAST blocks hit and read (blks_hit, blks_read) of the table",
		OSCache:    driver.OSCacheThrough,
		OSCacheHow: "PostgreSQL reads its files with buffered read(): a block read into shared_buffers may come from the OS page cache",
	}, nil
}
