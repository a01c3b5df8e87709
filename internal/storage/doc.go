// Package storage is the storage rate experiments (dbprobe storage scan,
// read, write, bulk, logcopy): how fast a database reads cold data from
// its storage, streams rows into a client, writes by large INSERT …
// SELECT chunks, loads through its bulk API and writes its transaction
// log, each rate with the database's and the host's own counters behind
// it, a per-second series, its spread and a verdict. Beside them, dbprobe
// storage cache (cache.go) finds the cache the database really gives:
// working sets of growing size read by key at random, each until the
// database's own hit share settles, and the size where it falls below
// 95%, with the OS page cache under it told apart from the device.
//
// Every experiment works on tables of its own (dbprobe_storage_<kind>,
// recorded as dbprobe's by the driver), made and filled on the server
// (driver.TableFiller) so that no row crosses the network, dropped at the
// end unless --keep — also after Ctrl-C, and by the next run after a
// kill -9, which says so. A table of that name dbprobe did not create is
// refused, never touched.
//
// Each measured part is one or more runner executions (experiment.go):
// a step of the runner is a chunk — a slice of the table scanned, a key
// range read, an INSERT … SELECT, a bulk batch, a table copy — so the
// runner paces, retries, cancels on the server and measures them as it
// does any operation. A scan repeats its pass, made cold again, until
// --duration is up; read and bulk run once per --threads value, logcopy
// once per --dop. Between two executions the table is made cold (cold.go)
// or a copy dropped, outside the measured time.
//
// The evidence (evidence.go) is read before and after each part, as
// differences of cumulative counters: the database's own by the standard
// names (driver.CounterLogBytes, CounterDeviceReadBytes, …) and the
// block device that holds the table's files (/proc/diskstats), when the
// database is on this machine. A scan whose bytes the device did not
// read is "not physical": its rate is a cache's.
//
// Nothing here names a database: what differs between them is in the
// drivers' capabilities and their notes, which the header prints.
package storage
