//go:build !cgo

package sqlite

import (
	sqldriver "database/sql/driver"
	"errors"

	msqlite "modernc.org/sqlite"
)

// Without cgo the driver runs modernc.org/sqlite, SQLite translated to Go,
// so that a static binary still has its default target.
const (
	libraryModule = "modernc.org/sqlite"
	libraryKind   = "pure Go"
)

// libraryDSN: modernc.org/sqlite always opens connections with SQLite's
// mutex and has no option to drop it, and runs no statement of its own
// before the setup pragmas.
func libraryDSN(config) string { return "" }

// sharedCacheLockFails: modernc.org/sqlite answers SQLITE_LOCKED on a
// shared-cache lock by waiting (sqlite3_unlock_notify) until the other
// connection lets go, so a statement never fails that way.
const sharedCacheLockFails = false

func newLibraryDriver() sqldriver.Driver { return &msqlite.Driver{} }

// errorCode returns SQLite's (extended) result code carried by err.
func errorCode(err error) (int, bool) {
	var e *msqlite.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}
