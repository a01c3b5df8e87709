package sqlite

import (
	"context"
	"errors"
	"strconv"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// SQLite's primary result codes that the driver treats apart
// (https://sqlite.org/rescode.html).
const (
	codePerm     = 3
	codeBusy     = 5
	codeLocked   = 6
	codeReadonly = 8
	codeIOErr    = 10
	codeFull     = 13
	codeCantOpen = 14
	codeAuth     = 23
	codeNotADB   = 26
)

// Extended result codes the driver treats apart from their primary's.
const (
	codeIOErrWrite       = codeIOErr | 3<<8    // SQLITE_IOERR_WRITE
	codeIOErrFsync       = codeIOErr | 4<<8    // SQLITE_IOERR_FSYNC
	codeIOErrDirFsync    = codeIOErr | 5<<8    // SQLITE_IOERR_DIR_FSYNC
	codeIOErrTruncate    = codeIOErr | 6<<8    // SQLITE_IOERR_TRUNCATE
	codeIOErrShmSize     = codeIOErr | 19<<8   // SQLITE_IOERR_SHMSIZE
	codeReadonlyRecovery = codeReadonly | 1<<8 // SQLITE_READONLY_RECOVERY
)

// classify wraps a library error with SQLite's primary result code and its
// class. BUSY (another connection holds the write lock) and LOCKED (a
// shared-cache table lock) are the ones worth retrying; the primary code is
// kept rather than the extended one so that counts per code stay few, and
// code comparisons stay simple. The name is the extended code's when the
// library reports one ("19 SQLITE_CONSTRAINT_PRIMARYKEY", "10
// SQLITE_IOERR_FSYNC"), the primary's otherwise ("13 SQLITE_FULL").
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return driver.Classify(err, "", driver.ClassTimeout)
	}
	code, ok := errorCode(err)
	if !ok {
		return err
	}
	primary := code & 0xff
	return driver.ClassifyNamed(err, strconv.Itoa(primary), resultCodeName(code), classOfCode(code))
}

// resultCodeName names an extended result code, or its primary code when
// the extended one is unknown; "" when neither is.
func resultCodeName(code int) string {
	if name, ok := resultCodeNames[code]; ok {
		return name
	}
	return resultCodeNames[code&0xff]
}

// classOfCode maps an extended result code to a class.
//
// Fatal, as no repeat succeeds until someone acts: FULL (the disk, or
// max_page_count), READONLY (a file or directory that may not be written,
// a database moved or opened read-only), PERM and AUTH (refused access),
// and an IOERR where a write failed: WRITE, FSYNC, DIR_FSYNC, TRUNCATE,
// SHMSIZE (the WAL index could not grow, as on a full disk).
// After a failed write or fsync the file system has refused the database's
// pages, and a repeated fsync may report success for pages the kernel has
// already dropped, so going on would only pretend. Other IOERRs (a short
// or failed read, out of memory in the VFS) stay ClassOther.
// READONLY_RECOVERY is the exception among READONLY: another connection is
// recovering the WAL, and the write succeeds once it has, so it is busy.
func classOfCode(code int) driver.Class {
	switch code {
	case codeReadonlyRecovery:
		return driver.ClassBusy
	case codeIOErrWrite, codeIOErrFsync, codeIOErrDirFsync, codeIOErrTruncate, codeIOErrShmSize:
		return driver.ClassFatal
	}
	switch code & 0xff {
	case codeBusy, codeLocked:
		return driver.ClassBusy
	case codeFull, codeReadonly, codePerm, codeAuth:
		return driver.ClassFatal
	}
	return driver.ClassOther
}

// openError turns a failure to open the database file into bad input when
// the user can fix it: a file that cannot be created, is not a database, or
// may not be written.
func openError(cfg config, err error) error {
	code, ok := errorCode(err)
	if !ok {
		return err
	}
	switch code & 0xff {
	case codeCantOpen:
		return badinput.New("sqlite: cannot open or create %s (%v); check that its directory exists and is writable", cfg.path, err)
	case codeNotADB:
		return badinput.New("sqlite: %s is not a SQLite database (%v); point --db at a database file or a new file name", cfg.path, err)
	case codeReadonly, codePerm:
		return badinput.New("sqlite: %s cannot be written (%v); check its permissions and those of its directory", cfg.path, err)
	case codeBusy:
		if cfg.vfs == vfsExclusive {
			return badinput.New("sqlite: another process has %s open, and dbprobe opens the file for itself alone (vfs=%s); close the other program, or add ?vfs=%s to the URL to share the file", cfg.path, vfsExclusive, vfsShared)
		}
	}
	return classify(err)
}
