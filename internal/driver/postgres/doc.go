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
// itself; see BenchmarkReadUpdate.
//
// The driver owns only the tables it creates: CreateTable records each in
// the marker table dbprobe_tables, Inspect reports from it, and DropTable
// refuses a table that is not recorded there and never cascades.
package postgres
