package driver

// Standard counter names. Every Monitor's Sample carries the database's
// counters under the database's own names (wal_bytes,
// Innodb_os_log_written, log.bytes_written), so that a DBA recognises
// them; it also carries those that mean the same thing on every database
// under one of these names, so that an experiment reads "the log bytes"
// or "the physical reads" without knowing a dialect. A driver maps only
// what its database counts; what it cannot map it names in Unavailable.
// The monitor turns each into db.<name>/s like any other counter.
//
// What each driver maps them from:
//
//	                    PostgreSQL                MySQL / MariaDB                      SQL Server                          SQLite
//	log_bytes           pg_stat_wal.wal_bytes     Innodb_os_log_written                log files' num_of_bytes_written     —
//	logical_reads       blks_hit + blks_read      Innodb_buffer_pool_read_requests     Buffer Manager Page lookups/sec     —
//	physical_reads      blks_read                 Innodb_buffer_pool_reads             Buffer Manager Page reads/sec       —
//	cache_hits          blks_hit                  read_requests − reads                lookups − reads                     —
//	device_read_bytes   blks_read × block_size    Innodb_data_read                     files' num_of_bytes_read            the process's read_bytes
//	device_write_bytes  buffers written × block   Innodb_data_written                  data files' num_of_bytes_written    the process's write_bytes
//	page_bytes (gauge)  block_size                innodb_page_size                     8192                                page_size
//	commits             xact_commit               Handler_commit                       Transactions/sec (the database's)   the writer's commits
//	checkpoints         checkpoints_timed + _req  —                                    —                                   the checkpointer's passes
//	checkpoint_age      —                         Innodb_checkpoint_age (MariaDB),     —                                   —
//	  (gauge)                                     current − checkpoint LSN (MySQL 8.0.30+)
//	checkpoint_age_max  —                         Innodb_checkpoint_max_age (MariaDB), —                                   —
//	  (gauge)                                     Innodb_redo_log_capacity_resized (MySQL)
//
// Redis has no monitor, so none of these.
const (
	// CounterCommits is the transactions the database committed, a
	// statement in autocommit included: what a commit-bound workload is
	// bound by, and one figure a dashboard can show for every database.
	// (MySQL's Com_commit counts COMMIT statements only, never an
	// autocommit one, so Handler_commit it is.)
	CounterCommits = "commits"
	// CounterLogBytes is the bytes written to the transaction log (WAL,
	// redo log): what a log-bound workload is bound by.
	CounterLogBytes = "log_bytes"
	// CounterLogicalReads is the pages the database asked of its cache,
	// found there or not: SQL Server's "logical reads".
	CounterLogicalReads = "logical_reads"
	// CounterPhysicalReads is the pages the database had to read into its
	// cache because they were not there. It says where the database went,
	// not where the bytes came from: PostgreSQL's blks_read are reads from
	// the operating system, which its page cache may answer.
	CounterPhysicalReads = "physical_reads"
	// CounterCacheHits is the pages found in the database's cache:
	// logical reads less physical ones.
	CounterCacheHits = "cache_hits"
	// CounterDeviceReadBytes is the bytes the database read from its files.
	CounterDeviceReadBytes = "device_read_bytes"
	// CounterDeviceWriteBytes is the bytes the database wrote to its data
	// files; the log's are CounterLogBytes, so the two add up to what it
	// wrote. (MySQL's Innodb_data_written counts what InnoDB wrote to
	// every file it keeps.)
	CounterDeviceWriteBytes = "device_write_bytes"
	// CounterCheckpoints is the checkpoints the database ran: each writes
	// the pages changed since the last one to the data files, which is
	// where a write's bytes on the device beyond its log's come from.
	// PostgreSQL counts the timed ones it skipped for want of changes
	// too; InnoDB counts its (fuzzy, continuous) checkpoints only with
	// the metric log_checkpoints enabled; SQLite's are
	// the driver's background checkpointer's passes.
	CounterCheckpoints = "checkpoints"
	// GaugePageBytes is the database's page size in bytes, which turns
	// page counts into bytes.
	GaugePageBytes = "page_bytes"
	// GaugeCheckpointAge is the bytes of log written since the last
	// checkpoint: changes the log holds that the data files do not have
	// yet. The log is finite, so when this nears GaugeCheckpointAgeMax
	// the database must flush pages before it may log more, and a
	// write-heavy statement waits on its checkpoints however fast the
	// log's device is: the log is too small.
	GaugeCheckpointAge = "checkpoint_age"
	// GaugeCheckpointAgeMax is the age at which writes wait on a
	// checkpoint (the age overshoots it a little while they do):
	// MariaDB's own figure, or, on MySQL, the redo log's capacity (MySQL
	// starts to flush hard a little before it).
	GaugeCheckpointAgeMax = "checkpoint_age_max"
)

// LogSizer is implemented by a Monitor whose database bounds its
// checkpoint age (GaugeCheckpointAge) by the size of its log: a verdict
// that finds the log too small says which setting makes it larger.
type LogSizer interface {
	// LogSizeSetting names that setting as the database spells it
	// ("innodb_log_file_size").
	LogSizeSetting() string
}

// StandardCounters lists the standard counter names, in the order of the
// table above.
var StandardCounters = []string{
	CounterLogBytes, CounterLogicalReads, CounterPhysicalReads, CounterCacheHits,
	CounterDeviceReadBytes, CounterDeviceWriteBytes, CounterCheckpoints,
}

// SumCounters returns the sum of the named counters and true, or false
// when one of them is missing (a view the monitor may not read): a sum of
// what is there would be a figure the database never had.
func SumCounters(counters map[string]float64, names ...string) (float64, bool) {
	sum := 0.0
	for _, n := range names {
		v, ok := counters[n]
		if !ok {
			return 0, false
		}
		sum += v
	}
	return sum, true
}

// CopyCounter sets counters[to] to counters[from] when from is there.
func CopyCounter(counters map[string]float64, to, from string) {
	if v, ok := counters[from]; ok {
		counters[to] = v
	}
}
