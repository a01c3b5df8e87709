package mysql

import (
	"context"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.CacheCounter = (*DB)(nil)

// cacheStatusSQL reads InnoDB's buffer pool page requests and the reads
// it did because a page was not there. InnoDB counts them for the whole
// server, not per table.
const cacheStatusSQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_reads')"

// CacheCounts reads the server's buffer pool requests and misses
// (Innodb_buffer_pool_read_requests, Innodb_buffer_pool_reads: read-ahead
// is not in them) and how InnoDB reads its data files.
func (db *DB) CacheCounts(ctx context.Context, t driver.DataTable) (driver.CacheCounts, error) {
	if err := t.Check(); err != nil {
		return driver.CacheCounts{}, err
	}
	rows, err := db.pool.QueryContext(ctx, cacheStatusSQL)
	if err != nil {
		return driver.CacheCounts{}, classify(err)
	}
	c := driver.CacheCounts{Requests: -1, Misses: -1,
		How: "SHOW GLOBAL STATUS Innodb_buffer_pool_read_requests and Innodb_buffer_pool_reads: the whole server's, every table's"}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			rows.Close()
			return driver.CacheCounts{}, classify(err)
		}
		switch strings.ToLower(name) {
		case "innodb_buffer_pool_read_requests":
			c.Requests = v
		case "innodb_buffer_pool_reads":
			c.Misses = v
		}
	}
	if err := rows.Err(); err != nil {
		return driver.CacheCounts{}, classify(err)
	}
	if c.Requests < 0 || c.Misses < 0 {
		return driver.CacheCounts{}, badinput.New("%s shows no Innodb_buffer_pool_read_requests or Innodb_buffer_pool_reads in SHOW GLOBAL STATUS: is InnoDB its storage engine?", db.Capabilities().Database)
	}
	if err := db.pool.QueryRowContext(ctx, "SELECT @@innodb_page_size").Scan(&c.PageBytes); err != nil {
		return driver.CacheCounts{}, classify(err)
	}
	c.OSCache, c.OSCacheHow = db.dataFileBuffering(ctx)
	return c, nil
}

// dataFileBuffering says whether InnoDB reads its data files through
// the OS page cache: innodb_data_file_buffering where the server has it
// (MariaDB 11), else innodb_flush_method, whose O_DIRECT variants bypass
// it (MariaDB's default since 10.6, MySQL's since 8.4).
func (db *DB) dataFileBuffering(ctx context.Context) (driver.OSCacheUse, string) {
	var v string
	if err := db.pool.QueryRowContext(ctx, "SELECT @@innodb_data_file_buffering").Scan(&v); err == nil {
		if strings.EqualFold(v, "ON") || v == "1" {
			return driver.OSCacheThrough, "innodb_data_file_buffering = ON: InnoDB reads its data files through the OS page cache"
		}
		return driver.OSCacheBypassed, "innodb_data_file_buffering = OFF: InnoDB reads its data files with O_DIRECT, past the OS page cache"
	}
	if err := db.pool.QueryRowContext(ctx, "SELECT @@innodb_flush_method").Scan(&v); err != nil {
		return driver.OSCacheUnknown, "neither innodb_data_file_buffering nor innodb_flush_method could be read"
	}
	return osCacheOf(v)
}

// osCacheOf reads innodb_flush_method: the O_DIRECT variants open the
// data files with O_DIRECT; fsync, O_DSYNC, littlesync and nosync read
// them through the page cache.
func osCacheOf(method string) (driver.OSCacheUse, string) {
	m := strings.ToUpper(strings.TrimSpace(method))
	switch {
	case strings.Contains(m, "O_DIRECT"):
		return driver.OSCacheBypassed, "innodb_flush_method = " + method + ": InnoDB reads its data files with O_DIRECT, past the OS page cache"
	case m == "FSYNC" || m == "O_DSYNC" || m == "LITTLESYNC" || m == "NOSYNC" || m == "0" || m == "1":
		return driver.OSCacheThrough, "innodb_flush_method = " + method + ": InnoDB reads its data files through the OS page cache"
	}
	return driver.OSCacheUnknown, "innodb_flush_method = " + method + " does not say how InnoDB reads its data files"
}
