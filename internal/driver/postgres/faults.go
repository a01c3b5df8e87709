package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var (
	_ driver.ConnectionLimiter = (*DB)(nil)
	_ driver.DataLocator       = (*DB)(nil)
	_ driver.LogLocator        = (*DB)(nil)
)

// connectionRoomSQL reads the connection limit and the client backends
// that count against it. Slots kept back are subtracted by who the user
// is, simply: a superuser may use every slot; any other user loses
// superuser_reserved_connections, and on PostgreSQL 16 and later also
// reserved_connections unless it holds pg_use_reserved_connections. A
// role's or a database's own CONNECTION LIMIT is not read: rare on a
// benchmark's user, and the server's refusal names it should it bind.
// Background workers, autovacuum and WAL senders have slots of their own,
// so only client backends count. pg_stat_activity hides the type of other
// users' backends from a user without pg_read_all_stats, but still shows
// their database and user: a hidden backend with both is taken for a
// client (a parallel worker of another user's query would be too, for as
// long as it runs).
const connectionRoomSQL = `SELECT current_setting('max_connections')::int,
	current_setting('superuser_reserved_connections')::int,
	coalesce(current_setting('reserved_connections', true), '0')::int,
	(SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
	EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'pg_use_reserved_connections'
		AND pg_has_role(current_user, r.oid, 'MEMBER')),
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
		OR (backend_type IS NULL AND datid IS NOT NULL AND usesysid IS NOT NULL))::int`

// ConnectionRoom implements driver.ConnectionLimiter.
func (db *DB) ConnectionRoom(ctx context.Context) (driver.ConnectionRoom, error) {
	var maxConns, superuserReserved, reserved, inUse int
	var superuser, useReserved bool
	err := db.pool.QueryRow(ctx, connectionRoomSQL).Scan(&maxConns, &superuserReserved, &reserved, &superuser, &useReserved, &inUse)
	if err != nil {
		return driver.ConnectionRoom{}, classify(err)
	}
	room := driver.ConnectionRoom{
		Max:     userConnectionLimit(maxConns, superuserReserved, reserved, superuser, useReserved),
		InUse:   inUse,
		Setting: "max_connections",
	}
	if kept := maxConns - room.Max; kept > 0 {
		room.Limit = fmt.Sprintf("max_connections %d less %d reserved", maxConns, kept)
	}
	return room, nil
}

// userConnectionLimit is how many client connections a user may have in
// all: max_connections less the slots kept for others than it.
func userConnectionLimit(maxConns, superuserReserved, reserved int, superuser, useReserved bool) int {
	switch {
	case superuser:
		return maxConns
	case useReserved:
		return max(maxConns-superuserReserved, 0)
	}
	return max(maxConns-superuserReserved-reserved, 0)
}

// DataDirectory implements driver.DataLocator: the server's
// data_directory, which only a superuser or a member of
// pg_read_all_settings may read; "" for anyone else.
func (db *DB) DataDirectory(ctx context.Context) (string, error) {
	var dir string
	err := db.pool.QueryRow(ctx, "SHOW data_directory").Scan(&dir)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeInsufficientPrivilege {
		return "", nil
	}
	if err != nil {
		return "", classify(err)
	}
	return dir, nil
}

// LogDirectory implements driver.LogLocator: the WAL is in pg_wal under
// the data directory, often a link to another device (initdb --waldir),
// which the caller's stat follows; "" when the data directory may not be
// read.
func (db *DB) LogDirectory(ctx context.Context) (string, error) {
	dir, err := db.DataDirectory(ctx)
	if dir == "" || err != nil {
		return "", err
	}
	return dir + "/pg_wal", nil
}
