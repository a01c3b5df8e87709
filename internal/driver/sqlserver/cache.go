package sqlserver

import (
	"context"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

var _ dbdriver.CacheCounter = (*DB)(nil)

// cacheCountsSQL reads the Buffer Manager's page lookups and page reads:
// cumulative values since the server started, despite their "/sec" names
// (cntr_type 272696576, which a rate is computed from), for the whole
// instance. object_name is padded, and prefixed by the instance
// ("SQLServer:", "MSSQL$NAME:"), hence the LIKE.
const cacheCountsSQL = "SELECT RTRIM(counter_name), CAST(cntr_value AS bigint)\n" +
	"FROM sys.dm_os_performance_counters\n" +
	"WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name IN (N'Page lookups/sec', N'Page reads/sec')"

// CacheCounts reads the instance's buffer pool lookups and physical page
// reads (VIEW SERVER STATE; VIEW DATABASE STATE on Azure SQL Database).
// SQL Server reads its files unbuffered, so every page read is the
// storage's.
func (db *DB) CacheCounts(ctx context.Context, t dbdriver.DataTable) (dbdriver.CacheCounts, error) {
	if err := t.Check(); err != nil {
		return dbdriver.CacheCounts{}, err
	}
	rows, err := db.pool.QueryContext(ctx, cacheCountsSQL)
	if err != nil {
		return dbdriver.CacheCounts{}, classify(err)
	}
	defer rows.Close()
	var names []string
	var values []int64
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return dbdriver.CacheCounts{}, classify(err)
		}
		names, values = append(names, name), append(values, v)
	}
	if err := rows.Err(); err != nil {
		return dbdriver.CacheCounts{}, classify(err)
	}
	return cacheCountsOf(names, values)
}

// cacheCountsOf makes the counts of the rows of cacheCountsSQL.
func cacheCountsOf(names []string, values []int64) (dbdriver.CacheCounts, error) {
	c := dbdriver.CacheCounts{Requests: -1, Misses: -1, PageBytes: 8192,
		How:        "sys.dm_os_performance_counters, Buffer Manager: Page lookups and Page reads (the instance's, every database's)",
		OSCache:    dbdriver.OSCacheBypassed,
		OSCacheHow: "SQL Server reads its data files unbuffered (FILE_FLAG_NO_BUFFERING on Windows, O_DIRECT on Linux): a page read is the storage's"}
	for i, n := range names {
		switch strings.TrimSpace(n) {
		case "Page lookups/sec":
			c.Requests = values[i]
		case "Page reads/sec":
			c.Misses = values[i]
		}
	}
	if c.Requests < 0 || c.Misses < 0 {
		return dbdriver.CacheCounts{}, errNoBufferCounters
	}
	return c, nil
}

// errNoBufferCounters is the error of a server whose performance
// counters show no Buffer Manager lookups or reads: without VIEW SERVER
// STATE the view is empty.
var errNoBufferCounters = badinput.New("SQL Server shows no Buffer Manager Page lookups/sec or Page reads/sec in sys.dm_os_performance_counters: grant the user VIEW SERVER STATE (VIEW DATABASE STATE on Azure SQL Database)")
