package postgres

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Where temporary files and a table's rows live (driver.TempPlacer,
// driver.Locator).

// TempSetup sends a session's temporary files (sorts and hashes that
// spill, temporary tables) to l's tablespace. The server refuses the SET
// when the tablespace is gone or the user may not create in it, rather
// than ignore it as it does for a value in postgresql.conf.
func (db *DB) TempSetup(l driver.Location) ([]string, error) {
	if err := driver.CheckIdentifier("tablespace", l.Name); err != nil {
		return nil, err
	}
	return []string{"SET temp_tablespaces = " + quote(l.Name)}, nil
}

// tablePathSQL reads where a table's main file is: its path as
// pg_relation_filepath gives it, relative to the data directory, and its
// tablespace's location ("" for pg_default and pg_global, which are in
// the data directory; relative for an in-place tablespace).
const tablePathSQL = `SELECT pg_relation_filepath(c.oid),
	CASE WHEN c.reltablespace = 0 THEN '' ELSE pg_tablespace_location(c.reltablespace) END,
	c.reltablespace::text
	FROM pg_class c WHERE c.oid = to_regclass($1)`

// TablePath returns the absolute path of t's main file (its first
// segment: a table over 1 GB goes on in files .1, .2, … beside it). For a
// table in a tablespace of its own that is under the tablespace's
// location, which anyone may read; for one in the data directory it takes
// data_directory, which only a superuser or a member of
// pg_read_all_settings may read, and an error says so for anyone else.
func (db *DB) TablePath(ctx context.Context, t driver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	var rel, location, spc string
	err := db.pool.QueryRow(ctx, tablePathSQL, db.dataTable(t)).Scan(&rel, &location, &spc)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return "", badinput.New("PostgreSQL: there is no table %s", db.dataTable(t))
		}
		return "", classify(err)
	}
	if p, ok := underTablespace(rel, location, spc); ok {
		return p, nil
	}
	dir, err := db.DataDirectory(ctx)
	if err != nil {
		return "", err
	}
	if dir == "" {
		return "", fmt.Errorf("postgres: the absolute path of table %s is not known: data_directory is readable only by a superuser or a member of pg_read_all_settings (the file is %s under the data directory)",
			db.dataTable(t), rel)
	}
	return path.Join(dir, rel), nil
}

// underTablespace returns the path of a file pg_relation_filepath names
// pg_tblspc/OID/… under its tablespace's absolute location, and false
// when the file is in the data directory or the location is not absolute
// (pg_default, pg_global, an in-place tablespace).
func underTablespace(rel, location, spc string) (string, bool) {
	prefix := "pg_tblspc/" + spc + "/"
	if !strings.HasPrefix(location, "/") || !strings.HasPrefix(rel, prefix) {
		return "", false
	}
	return path.Join(location, strings.TrimPrefix(rel, prefix)), true
}

// cacheSizeSQL reads shared_buffers in bytes and as the server shows it.
const cacheSizeSQL = "SELECT pg_size_bytes(current_setting('shared_buffers')), current_setting('shared_buffers')"

// CacheSize reads shared_buffers: PostgreSQL's own cache of pages. The
// OS page cache beside it, which PostgreSQL reads through, is the host's
// (the scan evicts the table from it).
func (db *DB) CacheSize(ctx context.Context) (driver.CacheSize, error) {
	var n int64
	var text string
	if err := db.pool.QueryRow(ctx, cacheSizeSQL).Scan(&n, &text); err != nil {
		return driver.CacheSize{}, classify(err)
	}
	return driver.CacheSize{Bytes: n, How: "shared_buffers = " + text}, nil
}
