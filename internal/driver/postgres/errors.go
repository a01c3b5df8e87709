package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Codes for failures that carry no SQLSTATE, so that results can still
// count them by code.
const (
	codeTimeout  = "timeout"
	codeConnLost = "connection-lost"
	codeCanceled = "canceled"
	codeCopyIn   = "copy-from-stdin"
)

// codeInsufficientPrivilege is the SQLSTATE of a statement the user lacks a
// privilege for: bad input, which only a GRANT fixes.
const codeInsufficientPrivilege = "42501"

// classify wraps err with its SQLSTATE and class for the runner's policy.
// ErrNotFound and nil pass unchanged.
func classify(err error) error {
	if err == nil || errors.Is(err, driver.ErrNotFound) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		// The caller gave up (the run is stopping): not the database's
		// fault, even when the server answered the cancel with 57014.
		return driver.Classify(err, codeCanceled, driver.ClassOther)
	}
	if errors.Is(err, errCopyIn) {
		return driver.Classify(err, codeCopyIn, driver.ClassOther)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		classified := driver.ClassifyNamed(err, pgErr.Code, conditionNames[pgErr.Code], classOfError(pgErr))
		if pgErr.Code == codeInsufficientPrivilege {
			return driver.PermissionDenied("PostgreSQL", pgErr.Message+" (SQLSTATE "+pgErr.Code+")", classified)
		}
		return classified
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return driver.Classify(err, codeTimeout, driver.ClassTimeout)
	case isConnLost(err):
		return driver.Classify(err, codeConnLost, driver.ClassConnLost)
	}
	return driver.Classify(err, "", driver.ClassOther)
}

// classOfError maps a server error to a class: its SQLSTATE's, except an
// io_error (58030), which is fatal only when a write failed (the message
// says so, as PostgreSQL's md.c and fd.c word it: "could not write",
// "could not extend", "could not fsync", …). A failed write means the file
// system refuses the database's writes, and every later write meets it; a
// failed read names one block, and other rows may still be served.
func classOfError(e *pgconn.PgError) driver.Class {
	if e.Code == codeIOError {
		if isWriteFailure(e.Message) {
			return driver.ClassFatal
		}
		return driver.ClassOther
	}
	return classOfSQLState(e.Code)
}

// codeIOError is io_error, PostgreSQL's SQLSTATE for a failed system call
// on a file (EIO, and others errcode_for_file_access does not name).
const codeIOError = "58030"

// isWriteFailure reports a message of PostgreSQL's for a file it could not
// write, extend, flush, create or truncate.
func isWriteFailure(msg string) bool {
	for _, verb := range []string{"could not write", "could not extend", "could not fsync", "could not fdatasync",
		"could not create", "could not truncate", "could not zero", "could not flush"} {
		if strings.Contains(msg, verb) {
			return true
		}
	}
	return false
}

// classOfSQLState maps a SQLSTATE to a class. Unique violations (23505) and
// every other constraint error stay ClassOther: retrying cannot help.
//
// Fatal, as no repeat succeeds until someone acts: disk_full (53100),
// read_only_sql_transaction (25006: default_transaction_read_only, a hot
// standby), insufficient_privilege (42501: a privilege revoked). Not
// out_of_memory (53200): it is often one query's work_mem on a busy host,
// gone a moment later, and stays ClassOther.
func classOfSQLState(code string) driver.Class {
	switch code {
	case "53100", "25006", codeInsufficientPrivilege:
		return driver.ClassFatal
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return driver.ClassConflict
	case "57014": // query_canceled: statement_timeout or our cancel request
		return driver.ClassTimeout
	case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
		return driver.ClassConnLost
	}
	if strings.HasPrefix(code, "08") { // connection_exception
		return driver.ClassConnLost
	}
	return driver.ClassOther
}

// isConnLost reports an error of a connection that broke or was closed.
func isConnLost(err error) bool {
	return errors.Is(err, errBroken) || errors.Is(err, pgconn.ErrConnClosed) || driver.IsNetworkError(err)
}

// openError turns a failure to connect into a one-line message that says what
// to do, never holding the password. Errors the user can fix are badinput.
// PostgreSQL's own SQLSTATEs are mapped here; the rest is driver.Connecting's.
func openError(err error, target driver.Target, user, database, addr string) error {
	if badinput.Is(err) {
		return err // dbprobe's own words already
	}
	c := driver.Connecting{Database: "PostgreSQL", Addr: addr, Target: target, Timeout: pgconn.Timeout}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		cause := c.Cause(pgErr.Message, err)
		switch {
		case pgErr.Code == "28P01":
			return c.Refused(fmt.Sprintf("user %q", user), "password authentication failed", err)
		case pgErr.Code == "28000":
			return badinput.New("PostgreSQL at %s refused user %q: %w; check the user and password (URL, DBPROBE_PASSWORD) and the server's pg_hba.conf", addr, user, cause)
		case pgErr.Code == "3D000":
			return badinput.New("PostgreSQL at %s: %w; create it with `createdb %s` or name another database in the URL",
				addr, &driver.Scrubbed{Msg: fmt.Sprintf("database %q does not exist", database), Err: err}, database)
		case pgErr.Code == "53300":
			return badinput.New("PostgreSQL at %s refused the connection: %w; raise max_connections or use fewer threads", addr, cause)
		case pgErr.Code == "42704" || pgErr.Code == "22023" || pgErr.Code == "42501":
			// An option in the URL that the server rejects, or may not be set.
			return badinput.New("PostgreSQL at %s rejected a setting: %w; fix or remove it in the URL", addr, cause)
		case strings.HasPrefix(pgErr.Code, "28"):
			return badinput.New("PostgreSQL at %s refused user %q: %w; check the user and its rights", addr, user, cause)
		}
		return c.Failed(err.Error(), err)
	}
	if u := c.Unreachable(err, ""); u != nil {
		return u
	}
	if strings.Contains(err.Error(), "tls") || strings.Contains(err.Error(), "SSL") {
		return c.TLS(driver.LastPart(err.Error()), "check sslmode in the URL and the server's certificate (sslmode=disable for a server without TLS; off loopback that also needs --allow-insecure-tls)", err)
	}
	return c.Failed(err.Error(), err)
}
