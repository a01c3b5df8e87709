// Package sqlite is dbprobe's default target: an embedded SQLite database,
// so that a run needs no server.
//
// # Library
//
// With cgo the driver runs the C SQLite built into
// github.com/mattn/go-sqlite3; without cgo (CGO_ENABLED=0) it runs
// modernc.org/sqlite, SQLite translated to Go, so that a static binary
// keeps its default target. Build tags choose (lib_cgo.go, lib_purego.go);
// Info.Library names the one in the binary, its module version and the
// SQLite version, because the two differ several-fold in speed.
//
// # URLs
//
// Registered as "sqlite", with "sqlite3" as a second scheme:
//
//	sqlite:///abs/path.db       an absolute path
//	sqlite:/abs/path.db         the same
//	sqlite:rel/path.db          a path relative to the working directory
//	sqlite://./rel/path.db      the same: the "host" . starts the path
//	sqlite://bench.db           bench.db in the working directory: a host is
//	                            read as the first component of a relative path
//	sqlite::memory:             an in-memory database
//	sqlite://:memory:           the same
//
// A path may hold %-escapes (sqlite:my%20file.db). The file is created when
// it is missing; its directory must exist. A URL with a user, a password or
// a port is refused, as SQLite has no server to give them to. The absolute
// path is reported in Info as the setting "database".
//
// An in-memory database belongs to one DB: all its sessions see it (the
// connections share SQLite's cache, with read_uncommitted so that a reader
// does not fail on the writer's table lock), and it is gone when the DB
// closes. Two DBs opened on sqlite::memory: are two databases.
//
// Query options, all case-insensitive in their values; any other option is
// refused with the list of these:
//
//	synchronous=OFF|NORMAL|FULL|EXTRA (or 0–3)   default NORMAL
//	journal_mode=DELETE|TRUNCATE|PERSIST|MEMORY|WAL|OFF   default WAL
//	                                              (in-memory: left as MEMORY)
//	busy_timeout=milliseconds                     default 5000
//	vfs=unix-excl|unix                            default unix-excl (files only)
//
// vfs chooses how a database file is locked (SQLite's VFSs of those names).
// With unix-excl the process takes an exclusive lock on the file when it
// first opens it and keeps every other lock, and the WAL index, in its own
// memory: no -shm file and no fcntl call per transaction, which under
// workload A was an eighth of the process's time and a mutex its readers
// queued on. Another process cannot open the file meanwhile; Open refuses
// a file another process holds with bad input naming vfs=unix, SQLite's
// default, which shares the file through file locks and a -shm file. Info
// reports the VFS in force as the setting "vfs".
//
// WAL with NORMAL is what SQLite advises for speed with safety: a commit
// survives a crash of the process, not necessarily of the machine.
// synchronous=FULL makes every commit durable and is the setting to
// compare against. The settings are read back from SQLite after they are
// set and reported in Info.Settings (journal_mode, synchronous as
// "NORMAL (1)", busy_timeout, page_size, cache_size), so a result shows
// what was in force rather than what was asked. So are, from a connection
// opened as the sessions' are, the pragmas dbprobe leaves to SQLite that
// change what a read costs or sees (locking_mode, mmap_size, and
// read_uncommitted as "transaction_isolation": SERIALIZABLE, or READ
// UNCOMMITTED on an in-memory database's shared cache), and "autocommit",
// how reads and writes are committed.
//
// # Knobs
//
// --table-type memory puts the whole database in memory, as sqlite::memory:
// does (SQLite has no in-memory table inside a file database): with a file
// URL the file is neither opened nor created, and Info's "database" setting
// says so. The rows live only as long as the dbprobe process. A
// sqlite::memory: URL is an in-memory database whatever --table-type says,
// and Inspect reports the table as in memory (read from PRAGMA
// database_list), so the header shows what ran. --table-type nondurable,
// --op-path procedure and --durability-scope transaction are refused from
// Open with driver.Unsupported: SQLite has no such thing.
//
// --durability full sets synchronous=FULL, delayed synchronous=OFF, and
// server leaves the URL's level or the default NORMAL; a URL level that
// contradicts an explicit --durability is bad input naming both (EXTRA
// counts as full). The level is set on every connection, read back from
// the writer, whose commits it governs, and reported in Info with what it
// means for a commit in the journal mode in force ("durability").
//
// # Reads and writes
//
// Each session reads on a connection of its own, with prepared statements
// run through the library's database/sql/driver interfaces rather than
// through database/sql, whose per-query bookkeeping and allocations cost
// as much again as the read itself; in WAL mode readers never wait for
// the writer. Every write of every
// session goes through one writer connection driven by one goroutine,
// which commits the writes it finds waiting as one transaction (see
// writer). SQLite allows one writer at a time anyway; serializing in Go
// rather than in SQLite's busy handler, which sleeps and polls, is what
// makes a mixed workload fast. A write returns after its transaction
// committed. The Info setting "writes" says so, since it shapes every
// figure with writes in it.
//
// Two more choices take work off that single writer, both reported in
// Info.Settings: the writer connection has a 256 MiB page cache (no other
// connection writes, so its cache stays valid and updates find their pages
// in memory), and in WAL mode checkpoints run in the background on a
// connection of their own rather than inside the commit that crosses 1000
// pages; the writer only finishes one when the WAL reaches 16,000 pages,
// so that the WAL can start over (see checkpointer). Readers keep SQLite's default cache: in WAL mode
// a reader empties its cache whenever another connection has committed, so
// under writes a bigger one would only cost memory.
//
// Because the writes are serialized here, a BUSY error can only come from
// another process using the same file; it is classified driver.ClassBusy
// (retryable), as is LOCKED. A full disk, a read-only file, refused access
// and a failed write or fsync are fatal (errors.go); other SQLite errors
// are ClassOther. The code is SQLite's primary result code ("19" for a
// duplicate key), the name the extended code's (SQLITE_CONSTRAINT_PRIMARYKEY).
//
// InsertBatch runs the whole batch in one transaction, which is SQLite's
// bulk path: with Options.BulkLoad a prepared single-row INSERT per record,
// without it multi-row INSERT statements.
//
// # Tables
//
// CreateTable records each table it creates in dbprobe_tables (table_name,
// created_at, dbprobe_version, table_identity: its root page and CREATE
// statement, which carries a random id), in the same transaction; DropTable
// drops only a table listed there with that identity and refuses any other
// with bad input, so dbprobe never drops a table it did not create. A
// VACUUM may move a table's root page: the table then no longer counts as
// dbprobe's, and the refusal says to drop it by hand.
package sqlite
