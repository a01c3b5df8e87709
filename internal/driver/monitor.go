package driver

import (
	"context"
	"time"
)

// Monitorable is the capability of a DB whose database can be watched
// while a run goes: it opens a Monitor on a connection of its own, so that
// sampling never takes a worker's connection. Drivers without it are run
// unmonitored (the host and the client are still sampled).
type Monitorable interface {
	Monitor(ctx context.Context) (Monitor, error)
}

// Monitor reads a database's own counters. It is used from one goroutine.
type Monitor interface {
	// Sample reads the counters now. Counters are cumulative as the
	// database keeps them (the caller takes deltas between samples);
	// gauges are values at this instant. A query the monitor cannot run
	// (no privilege, no such view) is left out of every sample and named
	// once in Unavailable, never returned as an error; an error means the
	// monitor's connection itself failed.
	Sample(ctx context.Context) (Sample, error)
	// Waits reports what the database's sessions are waiting on at this
	// instant: one entry per session that is active, with its wait (""
	// when it is running on CPU). The caller calls it several times per
	// interval and counts. Drivers whose database has no such view return
	// nil, nil.
	Waits(ctx context.Context) ([]Wait, error)
	// Unavailable lists what this monitor cannot see and why, one line
	// each ("pg_stat_wal: needs PostgreSQL 14", "performance_schema is
	// off"), for the run header and the JSON result.
	Unavailable() []string
	// Close releases the monitor's connection.
	Close() error
}

// Sample is one reading of a database's counters.
type Sample struct {
	Time time.Time
	// Counters are cumulative values by name, e.g. "xact_commit",
	// "wal_bytes", "Innodb_os_log_written". Names are the database's own,
	// so that a DBA recognises them.
	Counters map[string]float64
	// Gauges are instantaneous values by name, e.g. "wal_file_bytes".
	Gauges map[string]float64
}

// Wait is one active session's state at a sampling instant.
type Wait struct {
	// Event is the wait in the database's own words ("IO:WALSync",
	// "LWLock:WALWrite", "WRITELOG"), or "" when the session is on CPU.
	Event string
	// Own reports whether the session belongs to this dbprobe run, so that
	// dbprobe's own sessions can be told apart from the server's others.
	Own bool
}
