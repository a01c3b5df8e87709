package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// sessionState is what a new connection of the pool reports about its own
// session: the options in force for every worker's session, since each
// gets a connection opened with the same login and the same defaults.
//
// Which options, and why each decides a result:
//   - the isolation level: whether reads take shared locks (READ
//     COMMITTED, REPEATABLE READ, SERIALIZABLE) or read row versions
//     (READ COMMITTED with READ_COMMITTED_SNAPSHOT ON, SNAPSHOT), which
//     sets what readers and writers wait for;
//   - IMPLICIT_TRANSACTIONS: ON opens a transaction at the first statement
//     and keeps it, and every lock it took, until a COMMIT that an
//     autocommit write never sends;
//   - XACT_ABORT: whether an error rolls the whole transaction back, which
//     decides what a failed batch costs and leaves behind;
//   - LOCK_TIMEOUT: whether a lock wait is measured to its end or cut
//     short as error 1222 (retried as busy);
//   - NOCOUNT: OFF sends a row count after every statement, bytes on each
//     round trip of a multi-statement batch;
//   - ARITHABORT: part of the plan cache's key, so that a session with the
//     other value (SSMS sets it ON, drivers leave it OFF) gets, and
//     compiles, its own plans: a DBA comparing plans needs to know;
//   - DEADLOCK_PRIORITY: whose session a deadlock ends, dbprobe's (counted
//     as 1205 conflicts) or another workload's.
//
// Left out: the ANSI options and QUOTED_IDENTIFIER (they decide what a
// statement means, and the driver's defaults never change), TEXTSIZE
// (it only cuts VARBINARY(MAX) values) and ROWCOUNT (0 on a new session).
type sessionState struct {
	isolation        sql.NullInt64 // sys.dm_exec_sessions.transaction_isolation_level; NULL when it cannot be read
	options          int64         // @@OPTIONS
	lockTimeout      int64         // @@LOCK_TIMEOUT, ms; -1 waits without limit
	deadlockPriority sql.NullInt64 // sys.dm_exec_sessions.deadlock_priority
}

// sessionQuery reads a sessionState. sys.dm_exec_sessions shows a session
// its own row without VIEW SERVER STATE; sessionQueryNoDMV reads what it
// can without the view, for a login that may not read it at all.
const (
	sessionQuery = "SELECT CAST(s.transaction_isolation_level AS int), CAST(@@OPTIONS AS int), CAST(@@LOCK_TIMEOUT AS int), " +
		"CAST(s.deadlock_priority AS int) FROM sys.dm_exec_sessions AS s WHERE s.session_id = @@SPID"
	sessionQueryNoDMV = "SELECT CAST(NULL AS int), CAST(@@OPTIONS AS int), CAST(@@LOCK_TIMEOUT AS int), CAST(NULL AS int)"
)

// The bits of @@OPTIONS the header reports.
const (
	optImplicitTransactions = 2
	optArithAbort           = 64
	optNoCount              = 512
	optXactAbort            = 16384
)

// readSession runs sessionQuery, or sessionQueryNoDMV when the view is
// refused.
func readSession(ctx context.Context, q rowQuerier) (sessionState, error) {
	var ss sessionState
	scan := func(query string) error {
		return q.QueryRowContext(ctx, query).Scan(&ss.isolation, &ss.options, &ss.lockTimeout, &ss.deadlockPriority)
	}
	err := scan(sessionQuery)
	if err != nil && refused(err) {
		err = scan(sessionQueryNoDMV)
	}
	return ss, err
}

// isolationNames are transaction_isolation_level's values.
var isolationNames = map[int64]string{
	0: "unspecified", 1: "READ UNCOMMITTED", 2: "READ COMMITTED", 3: "REPEATABLE READ", 4: "SERIALIZABLE", 5: "SNAPSHOT",
}

// sessionSettings are the Info settings of a session, with the database's
// options that change what its isolation level means.
func sessionSettings(ss sessionState, st dbState, opts dbdriver.Options) []dbdriver.Setting {
	on := func(bit int64) string { return onOff(ss.options&bit != 0) }
	isolation := "not readable (sys.dm_exec_sessions refused)"
	if ss.isolation.Valid {
		isolation = isolationNames[ss.isolation.Int64]
		if isolation == "" {
			isolation = "level " + strconv.FormatInt(ss.isolation.Int64, 10)
		}
		if ss.isolation.Int64 == 2 {
			if st.readCommittedSnap {
				isolation += ", reading row versions (READ_COMMITTED_SNAPSHOT ON)"
			} else {
				isolation += ", with shared locks (READ_COMMITTED_SNAPSHOT OFF)"
			}
		}
	}
	if opts.TableType != dbdriver.TableDisk && st.elevateToSnapshot {
		isolation += "; SNAPSHOT on memory-optimized tables (MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT ON)"
	}
	autocommit := "on (IMPLICIT_TRANSACTIONS OFF)"
	if ss.options&optImplicitTransactions != 0 {
		autocommit = "off: IMPLICIT_TRANSACTIONS ON, each write stays in an open transaction until a COMMIT"
	}
	lock := "-1 (lock waits have no limit)"
	if ss.lockTimeout >= 0 {
		lock = fmt.Sprintf("%d ms (a longer lock wait fails with error 1222)", ss.lockTimeout)
	}
	priority := "not readable"
	if ss.deadlockPriority.Valid {
		priority = strconv.FormatInt(ss.deadlockPriority.Int64, 10)
		switch ss.deadlockPriority.Int64 {
		case -5:
			priority += " (LOW)"
		case 0:
			priority += " (NORMAL)"
		case 5:
			priority += " (HIGH)"
		}
	}
	return []dbdriver.Setting{
		{Name: "isolation_level", Value: isolation},
		{Name: "autocommit", Value: autocommit, KeyValue: true},
		{Name: "xact_abort", Value: on(optXactAbort)},
		{Name: "lock_timeout", Value: lock},
		{Name: "nocount", Value: on(optNoCount)},
		{Name: "arithabort", Value: on(optArithAbort)},
		{Name: "deadlock_priority", Value: priority},
	}
}
