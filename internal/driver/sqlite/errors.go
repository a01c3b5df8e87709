package sqlite

import (
	"context"
	"errors"
	"strconv"

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
)

// SQLite's primary result codes that the driver treats apart
// (https://sqlite.org/rescode.html).
const (
	codePerm     = 3
	codeBusy     = 5
	codeLocked   = 6
	codeReadonly = 8
	codeCantOpen = 14
	codeNotADB   = 26
)

// classify wraps a library error with SQLite's primary result code and its
// class. BUSY (another connection holds the write lock) and LOCKED (a
// shared-cache table lock) are the ones worth retrying; the primary code is
// kept rather than the extended one so that counts per code stay few.
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
	class := driver.ClassOther
	if primary == codeBusy || primary == codeLocked {
		class = driver.ClassBusy
	}
	return driver.Classify(err, strconv.Itoa(primary), class)
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
