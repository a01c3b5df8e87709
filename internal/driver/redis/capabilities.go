package redis

import "github.com/dbprobe/dbprobe/internal/driver"

var _ driver.Describer = (*DB)(nil)

// Capabilities says Redis has none of the SQL capabilities: it is a
// key-value store without SQL, tables or a transaction log to copy into.
// Its monitor samples INFO under Redis's own names; none of them is a
// standard counter (no pages, no reads from a cache in front of a disk).
func (db *DB) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("Redis")
	const why = "Redis is a key-value store without SQL or tables; use a SQL database (sqlite, postgres, mysql, sqlserver)"
	for _, cap := range driver.AllCapabilities() {
		c.Lacks(cap, why)
	}
	c.Lacks(driver.CapCancel, "Redis runs one command at a time, with no statement to stop from another connection")
	c.Lacks(driver.CapCounters, "Redis keeps everything in memory: no log bytes written per commit, no pages, no cache in front of a disk")
	return c
}

// Profile says, before anything is opened, that Redis has none of the SQL
// capabilities, whatever the server.
func (Driver) Profile(driver.Target) driver.Profile {
	return driver.Profile{Database: "Redis", Lacks: driver.Lacking((*DB)(nil).Capabilities())}
}
