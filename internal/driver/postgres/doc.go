// Package postgres is the PostgreSQL driver, registered as "postgres" and
// "postgresql": pgx v5 in its native mode.
//
// A DB parses the URL with pgxpool, proves at Open that the server answers
// and the credentials work, and runs the table lifecycle (Inspect,
// CreateTable, DropTable) and Info through the pool.
//
// Each Session has a connection of its own, opened and authenticated by
// pgconn with the same configuration and then taken over from it (wire.go):
// named prepared statements, text-format parameters taken from the caller's
// bytes, results copied out of the read buffer. The messages are encoded and
// decoded by pgproto3, pgx's protocol package; what the session does itself
// is the loop around them (one write per exchange, reading to
// ReadyForQuery) and cancellation, because pgconn's per-statement work (a
// deadline timer that wakes the network poller, locks, a context watcher)
// would put the client's CPU per operation above pgbench's. That CPU is
// part of what dbprobe must keep below the database's, or it measures
// itself; see BenchmarkReadUpdate. A prepared-protocol SQLConn (the stress
// experiment's) runs on a wire the same way (sqlwire.go); a
// simple-protocol one stays a pgx.Conn, which writes the values into the
// text as literals.
//
// The knobs (driver.Options): --table-type nondurable creates an UNLOGGED
// table, disk an ordinary one, and memory is refused from Open, as
// PostgreSQL has no in-memory table; Inspect reads the type back from
// pg_class.relpersistence. --durability full or delayed sets
// synchronous_commit on or off as a startup parameter of every connection
// the DB opens, so it is per session and nothing server-wide changes; it is
// read back on a connection opened as the sessions' are and reported in
// Info with fsync, wal_sync_method and full_page_writes, which decide what
// a flushed commit is worth. Either durability scope is served that way
// (see applyDurability). --op-path procedure runs the operations through
// functions named by driver.Procedures (dialect.createProcedures), created
// with the table or by the first session that finds them missing, and
// dropped with the table whatever the path.
//
// Info's settings are read on a connection opened as the sessions' are, so
// that they are the values dbprobe's operations run under: the server's
// configuration as the URL's startup parameters, dbprobe's, ALTER ROLE …
// SET and ALTER DATABASE … SET leave it for each session (settings.go lists
// them and why each is there). A value that is not the server's own says
// where it came from ("serializable (default_transaction_isolation, from
// ALTER DATABASE bench SET)"); one the server lacks or hides says so.
// autocommit says how each operation is committed: PostgreSQL has no such
// setting, and every operation is one statement outside BEGIN.
//
// The driver owns only the tables it creates: CreateTable records each in
// the marker table dbprobe_tables with its OID, Inspect reports from it,
// and DropTable refuses a table that is not recorded there with that OID (a
// table someone dropped and created again under the name has another, and
// a row an earlier dbprobe wrote has none) and never cascades.
//
// Errors carry their SQLSTATE as the code and its condition name as the
// name ("53100 disk_full", errnames.go); serialization failures and
// deadlocks are conflicts, a full disk, a read-only transaction, a refused
// privilege and a failed write are fatal (errors.go). faults.go says how
// many connections the server takes and where its data directory is.
//
// SQL text (sqlconn.go) runs on connections of its own, never the pool's:
// prepared on the server, or by the simple protocol with pgx writing the
// values into the text; EXPLAIN binds the values as Run does, and EXPLAIN
// (ANALYZE, BUFFERS) is rolled back. costs.go reads what statements cost
// from pg_stat_statements and pg_stat_database, and says which of them is
// missing and how to add it; where.go sends temporary files to a
// tablespace and finds a table's file on the server's host.
package postgres
