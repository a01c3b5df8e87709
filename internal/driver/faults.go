package driver

import "context"

// Capabilities an experiment asks before and after a fault. Both are
// optional, found by type assertion as Monitorable is.

// ConnectionRoom is how many more connections a server accepts, so that an
// experiment can refuse before its phase a thread count the server would
// turn away thread by thread.
type ConnectionRoom struct {
	// Max is the server's limit for this user's connections, in its own
	// setting's terms, less what it keeps for superusers.
	Max int
	// InUse is how many connections count against Max now, dbprobe's own
	// open ones among them.
	InUse int
	// Setting names what sets Max, as the user would change it:
	// "max_connections", "maxclients".
	Setting string
	// Limit says how Max follows from the settings when it is not the
	// setting's value: "max_connections 10 less 3 reserved"; "" when
	// Max is the setting.
	Limit string
}

// Free is how many more connections the server accepts now.
func (r ConnectionRoom) Free() int { return max(r.Max-r.InUse, 0) }

// ConnectionLimiter is the capability of a DB to say how many connections
// its server accepts.
type ConnectionLimiter interface {
	ConnectionRoom(ctx context.Context) (ConnectionRoom, error)
}

// DataLocator is the capability of a DB to say where its files are, so
// that a fatal "disk full" can be met with the file system and its free
// space now. The path is on the database's host: an experiment looks at it
// only when the database runs on this machine.
type DataLocator interface {
	// DataDirectory returns the directory that holds the database's data
	// (PostgreSQL data_directory, MySQL datadir, the SQLite file's
	// directory); "" with a nil error when the server will not say.
	DataDirectory(ctx context.Context) (string, error)
}

// LogLocator is the capability of a DB to say where its transaction log
// is written, which may be another device than its data's: an experiment
// that measures the log watches that device. The path is on the
// database's host, as DataLocator's.
type LogLocator interface {
	// LogDirectory returns the directory that holds the transaction log
	// (PostgreSQL's pg_wal, InnoDB's innodb_log_group_home_dir); "" with a
	// nil error when the server will not say.
	LogDirectory(ctx context.Context) (string, error)
}
