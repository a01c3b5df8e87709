// Package redis is dbprobe's Redis driver (redigo): the specialised
// key-value baseline the SQL databases are compared with.
//
// --db redis://[user:password@]host:6379/DB, or rediss://… for TLS. The
// password may also come from DBPROBE_PASSWORD. The query options are
// those of go-redis's URLs that redigo can honour, under go-redis's names
// (db, client_name, dial_timeout, read_timeout, write_timeout, pool_size,
// pool_timeout, max_idle_conns, conn_max_idle_time, conn_max_lifetime,
// skip_verify), so that URLs written for dbprobe before it moved to
// redigo still work; go-redis's others are refused by name. dbprobe
// speaks RESP2, which carries everything it measures.
//
// Each session keeps one connection of its own for its reads, scans and
// single-record writes, rather than checking one out of the pool and
// back per operation, and dials a fresh one after an error that may have
// broken it. Its operations set no socket deadlines and start no
// goroutine: the session watches the caller's context once for many
// operations, and when that context ends (Ctrl-C, the run's end,
// --op-timeout) while an operation waits on the server, it closes the
// socket, so the operation ends at once, and reconnects. read_timeout
// and write_timeout in the URL add per-command deadlines. Load batches
// and the DB's own calls take connections from a pool, bounded by the
// caller's context (redigo's DoContext).
//
// # Data model
//
// A table is a set of keys in the URL's logical database:
//
//	<table>:<YCSB key>   a hash per record, one field per column (FIELD0…)
//	<table>#index        a sorted set of every record's YCSB key, all with
//	                     score 0, so ZRANGEBYLEX walks them in byte order
//	<table>#schema       a hash: the column list, the table type asked for,
//	                     when and by which dbprobe it was created
//	dbprobe#tables       the set of tables dbprobe created (ownership)
//
// dbprobe's own keys use '#', which a table name (a plain identifier) never
// holds, so that no YCSB key can collide with them: with "<table>:index" a
// record keyed "index" would be the index. A table's records are the only
// keys that start with "<table>:".
//
// # Operations
//
// Insert, Update and Delete are each one Lua script run on the server
// (EVALSHA), so that the existence check and the writes to the record and
// the index happen atomically: Insert fails with the code EXISTS on an
// existing key, Update and Delete return driver.ErrNotFound on a missing one.
// Read is HMGET; Scan is ZRANGEBYLEX on the index and then HMGET of each
// record, pipelined. InsertBatch is all-or-nothing on both paths: with
// Options.BulkLoad one script checks that no key exists and writes the whole
// batch; without it, Redis's ordinary optimistic transaction (WATCH the
// keys, EXISTS, MULTI, HSET and ZADD per record, EXEC), which fails as a
// retryable conflict (code WATCH) when another client writes one of the keys
// in between. An error reply's code is its first word, Redis's own name for
// it; OOM, READONLY, MISCONF and NOPERM are fatal (errors.go).
//
// # Settings
//
// Info reports, read with CONFIG GET, what decides when a write reaches
// the disk (appendonly, appendfsync, save) and whether a write may evict
// records or fail for memory (maxmemory, maxmemory-policy). A server that
// refuses CONFIG GET (an ACL without +config, a renamed command) gives
// appendonly and the memory settings through INFO, said so in the value,
// and each other setting says it was refused. Redis has no isolation
// level or transaction to set: "transaction_isolation" and "autocommit"
// say what each operation is instead (one command or one script, atomic
// on the server; a load batch all or nothing).
//
// # Knobs
//
// Redis keeps every key in memory: table types disk and memory are both its
// ordinary storage (Inspect reports the one asked for at creation, and the
// server's persistence). Persistence is server-wide, so there is no
// nondurable table. Durability full and delayed set appendfsync (always,
// everysec) with CONFIG SET when it differs, and Close puts the previous
// value back; they need appendonly yes. There are no stored procedures: each
// operation already runs as one script.
package redis
