package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// rawPool opens a database file through the library with SQLite's own URI
// options, outside the driver: how the tests meet errors the driver's URL
// cannot ask for.
func rawPool(t *testing.T, path, options string, setup ...string) *sql.DB {
	t.Helper()
	dsn := fileURI(path)
	if options != "" {
		dsn += "?" + options
	}
	pool := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: dsn, setup: setup})
	pool.SetMaxOpenConns(1)
	t.Cleanup(func() { pool.Close() })
	return pool
}

// Real errors from the library: a file opened read-only, a database at its
// page limit, a duplicate key and a busy lock, each with its name.
func TestRealErrorsAreNamed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fatal.db")
	rw := rawPool(t, path, "")
	if _, err := rw.ExecContext(ctx, "CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.ExecContext(ctx, "INSERT INTO t VALUES ('k', x'00')"); err != nil {
		t.Fatal(err)
	}

	_, err := rw.ExecContext(ctx, "INSERT INTO t VALUES ('k', x'00')")
	if err = classify(err); driver.Label(err) != "19 SQLITE_CONSTRAINT_PRIMARYKEY" || driver.ClassOf(err) != driver.ClassOther {
		t.Errorf("duplicate key: %v, label %q, class %v", err, driver.Label(err), driver.ClassOf(err))
	}

	// max_page_count caps the file where it is: the next page is refused
	// as a full disk would refuse it.
	if _, err := rw.ExecContext(ctx, "PRAGMA max_page_count = 1"); err != nil {
		t.Fatal(err)
	}
	_, err = rw.ExecContext(ctx, "INSERT INTO t VALUES ('big', zeroblob(100000))")
	if err = classify(err); driver.Label(err) != "13 SQLITE_FULL" || !driver.IsFatal(err) || driver.Code(err) != "13" {
		t.Errorf("past max_page_count: %v, label %q, class %v", err, driver.Label(err), driver.ClassOf(err))
	}

	ro := rawPool(t, path, "mode=ro")
	_, err = ro.ExecContext(ctx, "INSERT INTO t VALUES ('other', x'00')")
	if err = classify(err); driver.Code(err) != "8" || !strings.HasPrefix(driver.Label(err), "8 SQLITE_READONLY") || !driver.IsFatal(err) {
		t.Errorf("write to a read-only database: %v, label %q, class %v", err, driver.Label(err), driver.ClassOf(err))
	}

	busy := classify(fakeBusy(t))
	if driver.Label(busy) != "5 SQLITE_BUSY" || !driver.IsRetryable(busy) {
		t.Errorf("busy: label %q, class %v", driver.Label(busy), driver.ClassOf(busy))
	}
}

func TestClassOfCode(t *testing.T) {
	for _, tc := range []struct {
		code  int
		name  string
		class driver.Class
	}{
		{13, "SQLITE_FULL", driver.ClassFatal},
		{8, "SQLITE_READONLY", driver.ClassFatal},
		{8 | 4<<8, "SQLITE_READONLY_DBMOVED", driver.ClassFatal},
		{8 | 1<<8, "SQLITE_READONLY_RECOVERY", driver.ClassBusy},
		{23, "SQLITE_AUTH", driver.ClassFatal},
		{3, "SQLITE_PERM", driver.ClassFatal},
		{10 | 3<<8, "SQLITE_IOERR_WRITE", driver.ClassFatal},
		{10 | 4<<8, "SQLITE_IOERR_FSYNC", driver.ClassFatal},
		{10 | 19<<8, "SQLITE_IOERR_SHMSIZE", driver.ClassFatal},
		{10 | 1<<8, "SQLITE_IOERR_READ", driver.ClassOther},
		{10 | 2<<8, "SQLITE_IOERR_SHORT_READ", driver.ClassOther},
		{10, "SQLITE_IOERR", driver.ClassOther},
		{5, "SQLITE_BUSY", driver.ClassBusy},
		{5 | 2<<8, "SQLITE_BUSY_SNAPSHOT", driver.ClassBusy},
		{6, "SQLITE_LOCKED", driver.ClassBusy},
		{19 | 6<<8, "SQLITE_CONSTRAINT_PRIMARYKEY", driver.ClassOther},
		{11, "SQLITE_CORRUPT", driver.ClassOther},
		// An extended code this table does not know falls back on its
		// primary's name.
		{13 | 99<<8, "SQLITE_FULL", driver.ClassFatal},
		{200, "", driver.ClassOther},
	} {
		if got := resultCodeName(tc.code); got != tc.name {
			t.Errorf("resultCodeName(%d) = %q, want %q", tc.code, got, tc.name)
		}
		if got := classOfCode(tc.code); got != tc.class {
			t.Errorf("classOfCode(%d %s) = %v, want %v", tc.code, tc.name, got, tc.class)
		}
	}
}

func TestDataDirectory(t *testing.T) {
	dir := t.TempDir()
	file := openURL(t, "sqlite://"+filepath.Join(dir, "where.db"), driver.Options{})
	defer file.Close()
	got, err := file.(driver.DataLocator).DataDirectory(context.Background())
	if err != nil || got != dir {
		t.Errorf("file database: %q, %v; want %q", got, err, dir)
	}
	mem := openURL(t, "sqlite://:memory:", driver.Options{})
	defer mem.Close()
	if got, err := mem.(driver.DataLocator).DataDirectory(context.Background()); got != "" || err != nil {
		t.Errorf("in-memory database: %q, %v; want \"\"", got, err)
	}
	if _, ok := file.(driver.ConnectionLimiter); ok {
		t.Error("SQLite says it limits connections")
	}
}
