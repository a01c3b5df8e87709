package driver

import "context"

// Replicated is the capability of a DB whose database replicates, for
// reads sent to a replica (--read-db): it says what role a server plays,
// so that a replica that is not one, or is the primary itself, is refused
// before anything is written, and it keeps a heartbeat table, a row the
// primary rewrites every second and the replica is read for, so that lag
// is measured by dbprobe itself rather than taken from the server's own
// estimate. The SQL behind it (pg_is_in_recovery(), SHOW REPLICA STATUS)
// is the driver's; nothing above the driver names it.
//
// The heartbeat table is dbprobe's in the sense of the ownership rules:
// CreateHeartbeat records it as CreateTable records the key-value table,
// and DropHeartbeat drops it only when that record says so.
type Replicated interface {
	// Role reads what the server is: its identities and whether it
	// applies another server's changes.
	Role(ctx context.Context) (Role, error)
	// CreateHeartbeat creates the heartbeat table name (a plain
	// identifier) on a primary, with its one row at sequence 0.
	CreateHeartbeat(ctx context.Context, name string) error
	// WriteHeartbeat sets the row's sequence to seq, in a transaction of
	// its own that has committed when it returns.
	WriteHeartbeat(ctx context.Context, name string, seq int64) error
	// ReadHeartbeat reads the row's sequence, as a replica sees it now;
	// found is false while the replica has not yet replayed the table's
	// creation or its row, which is lag too, not an error.
	ReadHeartbeat(ctx context.Context, name string) (seq int64, found bool, err error)
	// DropHeartbeat drops the heartbeat table when dbprobe recorded
	// creating it, and refuses any other table.
	DropHeartbeat(ctx context.Context, name string) error
	// HeartbeatTables lists the tables whose names start with prefix,
	// where CreateHeartbeat would create one: the heartbeats of the runs
	// going now (and of runs killed before they dropped theirs).
	HeartbeatTables(ctx context.Context, prefix string) ([]string, error)
}

// Role is what a server is in replication, read from the server itself.
type Role struct {
	// Instance tells one running server from every other: a primary and
	// its replica never share it, and two URLs that reach one server
	// always do (PostgreSQL: system identifier and postmaster start time;
	// MySQL: server_uuid or server_id with the port).
	Instance string
	// Identity is what the server's replicas know it by (PostgreSQL: the
	// system identifier, which a physical standby shares; MySQL: its
	// server_id).
	Identity string
	// Replica says the server applies another server's changes.
	Replica bool
	// Upstream is, on a replica, the Identity of the server whose changes
	// it applies (a standby's system identifier, MySQL's
	// Master_Server_Id); "" when unknown.
	Upstream string
	// Evidence says in the database's words what Replica rests on, for
	// messages: "pg_is_in_recovery() is false".
	Evidence string
}
