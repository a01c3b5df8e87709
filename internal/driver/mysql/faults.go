package mysql

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var (
	_ driver.ConnectionLimiter = (*DB)(nil)
	_ driver.DataLocator       = (*DB)(nil)
	_ driver.LogLocator        = (*DB)(nil)
)

// ConnectionRoom implements driver.ConnectionLimiter. Max is
// max_connections: both servers accept one connection more for a user
// with SUPER (CONNECTION_ADMIN in MySQL 8), which is not counted, so that
// the room is never overstated; nor is a per-account
// max_user_connections, which is rare on a benchmark's user.
// Threads_connected counts every client connection, this DB's own among
// them. SHOW GLOBAL STATUS reads it on both servers (MySQL 8 has no
// information_schema.GLOBAL_STATUS).
func (db *DB) ConnectionRoom(ctx context.Context) (driver.ConnectionRoom, error) {
	var maxConns int
	if err := db.pool.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&maxConns); err != nil {
		return driver.ConnectionRoom{}, classify(err)
	}
	var name string
	var inUse int
	if err := db.pool.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_connected'").Scan(&name, &inUse); err != nil {
		return driver.ConnectionRoom{}, classify(err)
	}
	return driver.ConnectionRoom{Max: maxConns, InUse: inUse, Setting: "max_connections"}, nil
}

// DataDirectory implements driver.DataLocator: the server's datadir,
// without the separator the server ends it with.
func (db *DB) DataDirectory(ctx context.Context) (string, error) {
	var dir string
	if err := db.pool.QueryRowContext(ctx, "SELECT @@datadir").Scan(&dir); err != nil {
		return "", classify(err)
	}
	if trimmed := strings.TrimRight(dir, `/\`); trimmed != "" {
		dir = trimmed
	}
	return dir, nil
}

// LogDirectory implements driver.LogLocator: InnoDB's redo log is in
// innodb_log_group_home_dir, which is the datadir when unset and read
// relative to it when relative ("./", the default).
func (db *DB) LogDirectory(ctx context.Context) (string, error) {
	var dir, home string
	if err := db.pool.QueryRowContext(ctx, "SELECT @@datadir, COALESCE(@@innodb_log_group_home_dir, '')").Scan(&dir, &home); err != nil {
		return "", classify(err)
	}
	return logDirectory(dir, home), nil
}

// logDirectory resolves innodb_log_group_home_dir against the datadir.
func logDirectory(datadir, home string) string {
	if home != "" && !filepath.IsAbs(home) {
		home = filepath.Join(datadir, home)
	}
	if home == "" {
		home = datadir
	}
	return filepath.Clean(home)
}
