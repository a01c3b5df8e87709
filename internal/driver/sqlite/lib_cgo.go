//go:build cgo

package sqlite

import (
	sqldriver "database/sql/driver"
	"errors"
	"strconv"

	"github.com/mattn/go-sqlite3"
)

// With cgo the driver runs the C SQLite compiled into mattn/go-sqlite3: the
// reference implementation, and the faster of the two.
const (
	libraryModule = "github.com/mattn/go-sqlite3"
	libraryKind   = "cgo, C SQLite"
)

// libraryDSN holds the library's own DSN options. _mutex=no opens each
// connection without SQLite's per-connection mutex: database/sql hands a
// connection to one goroutine at a time, so that lock only costs. The
// library runs pragmas of its own as it opens a connection, some of which
// read the schema, under its own busy timeout of 5 s unless told the URL's.
func libraryDSN(cfg config) string {
	return "_mutex=no&_busy_timeout=" + strconv.Itoa(cfg.busyTimeoutMS)
}

// sharedCacheLockFails: mattn/go-sqlite3 (built without its
// sqlite_unlock_notify tag) returns SQLITE_LOCKED at once when another
// connection of an in-memory database holds the lock a statement needs.
const sharedCacheLockFails = true

func newLibraryDriver() sqldriver.Driver { return &sqlite3.SQLiteDriver{} }

// errorCode returns SQLite's extended result code carried by err.
func errorCode(err error) (int, bool) {
	var e sqlite3.Error
	if errors.As(err, &e) {
		return int(e.ExtendedCode), true
	}
	return 0, false
}
