package sqlite

import (
	"context"
	"path/filepath"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// SQLite has no connection limit to report: it is a library, and its
// connections are this process's. It is not a driver.ConnectionLimiter.
var _ driver.DataLocator = (*db)(nil)

// DataDirectory implements driver.DataLocator: the directory of the
// database file, where its journal or WAL lives too; "" for an in-memory
// database, which has no file.
func (d *db) DataDirectory(context.Context) (string, error) {
	if d.file == "" {
		return "", nil
	}
	return filepath.Dir(d.file), nil
}
