package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

var (
	_ dbdriver.ConnectionLimiter = (*DB)(nil)
	_ dbdriver.DataLocator       = (*DB)(nil)
)

// connectionLimitQuery reads the most user connections the instance takes
// (the 'user connections' option, 32767 when it is 0, the default) and
// whether this login sees every session: without VIEW SERVER STATE,
// sys.dm_exec_sessions shows a login its own sessions only (and Azure SQL
// Database, which has no server-level permission, refuses it).
const connectionLimitQuery = "SELECT @@MAX_CONNECTIONS, CAST(ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE'), 0) AS int)"

// userSessionsQuery counts the user sessions that hold a connection;
// system sessions are not counted against the limit.
const userSessionsQuery = "SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE is_user_process = 1"

// errSessionsHidden is ConnectionRoom's answer for a login that cannot see
// every session: the room is unknown.
var errSessionsHidden = errors.New("sqlserver: the login lacks VIEW SERVER STATE, so the user sessions cannot be counted")

// ConnectionRoom implements driver.ConnectionLimiter. SQL Server keeps no
// connections back from Max for administrators (the dedicated admin
// connection is apart).
func (db *DB) ConnectionRoom(ctx context.Context) (dbdriver.ConnectionRoom, error) {
	var maxConns, seesAll int
	if err := db.pool.QueryRowContext(ctx, connectionLimitQuery).Scan(&maxConns, &seesAll); err != nil {
		return dbdriver.ConnectionRoom{}, classify(err)
	}
	if seesAll == 0 {
		return dbdriver.ConnectionRoom{}, errSessionsHidden
	}
	var inUse int
	if err := db.pool.QueryRowContext(ctx, userSessionsQuery).Scan(&inUse); err != nil {
		return dbdriver.ConnectionRoom{}, classify(err)
	}
	return dbdriver.ConnectionRoom{Max: maxConns, InUse: inUse, Setting: "user connections"}, nil
}

// dataFileQuery reads the path of the database's first data file (type 0,
// ROWS), which every user of the database may see.
const dataFileQuery = "SELECT TOP (1) physical_name FROM sys.database_files WHERE type = 0 ORDER BY file_id"

// DataDirectory implements driver.DataLocator: the directory of the
// database's first data file, on the server's host.
func (db *DB) DataDirectory(ctx context.Context) (string, error) {
	var physical string
	err := db.pool.QueryRowContext(ctx, dataFileQuery).Scan(&physical)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", classify(err)
	}
	return directoryOf(physical), nil
}

// directoryOf returns the directory of a file path as the server writes
// it, Windows' (C:\data\x.mdf) or Linux's (/var/opt/mssql/data/x.mdf),
// whichever this machine is: "" for a name without a directory, as Azure
// SQL Database may report. A root keeps its separator.
func directoryOf(path string) string {
	i := strings.LastIndexAny(path, `/\`)
	switch {
	case i < 0:
		return ""
	case i == 0:
		return path[:1]
	case i == 2 && path[1] == ':':
		return path[:3] // C:\
	}
	return path[:i]
}
