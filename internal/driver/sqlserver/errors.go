package sqlserver

import (
	"context"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// Codes for failures that carry no SQL Server error number, so that results
// can still count them by code.
const (
	codeTimeout  = "timeout"
	codeConnLost = "connection-lost"
	codeCanceled = "canceled"
)

// The numbers of a statement refused for a missing permission, on an
// object (229) or on a column (230): bad input, which only a GRANT fixes.
const (
	errPermissionDenied       = 229
	errColumnPermissionDenied = 230
)

// classOfNumber maps a SQL Server error number to a class.
//
// Conflicts, where repeating the whole transaction may succeed: 1205 (chosen
// as deadlock victim), 3960 (snapshot isolation update conflict on a disk
// table), and In-Memory OLTP's optimistic concurrency failures: 41302 (the
// row was updated since the transaction began), 41305 (repeatable read
// validation), 41325 (serializable validation), 41301 (a transaction it
// depended on failed), 41839 (too many commit dependencies).
//
// Busy, also retried: 1222 (lock request timeout), and Azure SQL's
// resource governance: 10928 and 10929 (resource limits reached), 49919
// and 49920 (too many operations).
//
// Transient, retried on a new connection (azure.go): the errors Microsoft
// lists as transient for Azure SQL — 4060 (cannot open the database,
// during a reconfiguration), 1204 (no lock resources for the moment),
// 40613 (database not currently available: failover, scaling, serverless
// resume), 40197 (the service had an error processing the request, as in
// an upgrade or failover), 40501 (the service is busy), 49918 (not enough
// resources to process the request). At Open, 4060 stays the user's
// missing database (openError) and 40613 gets a bounded retry.
//
// Connection lost: 233, 10053, 10054, 64 and 20 (the transport broke),
// 4221 (login to a read secondary failed while it caught up).
//
// Timeout: -2, the number ADO.NET gives a client command timeout; here a
// context deadline is the timeout and is classified before this.
//
// Fatal, as no repeat succeeds until someone acts: space (1105 a
// filegroup full, 1101 no disk space for a new page, 9002 the log full,
// Azure SQL's 40544 size quota and 40552 a transaction's log use past
// its limit, which the same transaction reaches again), the In-Memory
// OLTP storage quota (41823, 41840: azure.go), a read-only database
// (3906), and a permission refused (229, 230 on a column, 262 in the
// database).
//
// Duplicate keys (2627 primary key or unique constraint, 2601 unique index)
// and everything else are ClassOther: repeating cannot help.
func classOfNumber(n int32) dbdriver.Class {
	switch n {
	case 1205, 3960, 41302, 41305, 41325, 41301, 41839:
		return dbdriver.ClassConflict
	case 1222, 10928, 10929, 49919, 49920:
		return dbdriver.ClassBusy
	case errCannotOpenDatabase, 1204, errDatabaseUnavailable, 40197, 40501, 49918:
		return dbdriver.ClassTransient
	case 233, 10053, 10054, 64, 20, 4221:
		return dbdriver.ClassConnLost
	case -2:
		return dbdriver.ClassTimeout
	case 1105, 1101, 9002, 40544, 40552, errXTPQuotaDatabase, errXTPQuotaPool, 3906,
		errPermissionDenied, errColumnPermissionDenied, 262:
		return dbdriver.ClassFatal
	}
	return dbdriver.ClassOther
}

// classify wraps err with its SQL Server error number and class for the
// runner's policy. ErrNotFound and nil pass unchanged.
func classify(err error) error {
	if err == nil || errors.Is(err, dbdriver.ErrNotFound) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		// The caller gave up (the run is stopping): not the database's fault.
		return dbdriver.Classify(err, codeCanceled, dbdriver.ClassOther)
	}
	var fatal mssql.ServerError
	if errors.As(err, &fatal) {
		// A fatal error ends the server process and with it the connection,
		// whatever its number.
		code, name := codeConnLost, ""
		var inner mssql.Error
		if errors.As(err, &inner) {
			code, name = strconv.Itoa(int(inner.Number)), errorNames[inner.Number]
		}
		return dbdriver.ClassifyNamed(err, code, name, dbdriver.ClassConnLost)
	}
	var msErr mssql.Error
	if errors.As(err, &msErr) {
		n := significantNumber(msErr)
		classified := dbdriver.ClassifyNamed(err, strconv.Itoa(int(n)), errorNames[n], classOfNumber(n))
		if n == errPermissionDenied || n == errColumnPermissionDenied {
			return dbdriver.PermissionDenied("SQL Server", fmt.Sprintf("%s (error %d)", msErr.Message, n), classified)
		}
		if q := quotaError(n, classified); q != nil {
			return q
		}
		return classified
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return dbdriver.Classify(err, codeTimeout, dbdriver.ClassTimeout)
	case isConnLost(err):
		return dbdriver.Classify(err, codeConnLost, dbdriver.ClassConnLost)
	}
	return dbdriver.Classify(err, "", dbdriver.ClassOther)
}

// significantNumber is the error number that decides the class of a
// request that failed with several errors. go-mssqldb reports the last one,
// but the cause often comes first: a write conflict (41302) in a batch is
// followed by 3998 ("uncommittable transaction … rolled back") when the
// transaction is doomed, a deadlock inside a procedure by the procedure's
// own errors, a duplicate key (2627) by "the statement has been
// terminated" (3621). The first error that has a class of its own wins;
// when none has, the first error, the cause, names the failure.
func significantNumber(e mssql.Error) int32 {
	for _, one := range e.All {
		if classOfNumber(one.Number) != dbdriver.ClassOther {
			return one.Number
		}
	}
	if len(e.All) > 0 {
		return e.All[0].Number
	}
	return e.Number
}

// anyNumber reports whether err carries a SQL Server error whose number, or
// the number of any error sent with it, satisfies match. A failed ALTER
// DATABASE, for one, sends its cause (5011, no permission) before 5069
// ("ALTER DATABASE statement failed"), which go-mssqldb reports last.
func anyNumber(err error, match func(int32) bool) bool {
	var e mssql.Error
	if !errors.As(err, &e) {
		return false
	}
	if match(e.Number) {
		return true
	}
	for _, one := range e.All {
		if match(one.Number) {
			return true
		}
	}
	return false
}

// isConnLost reports an error of a connection that broke or was closed.
func isConnLost(err error) bool {
	var stream mssql.StreamError
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.As(err, &stream) ||
		dbdriver.IsNetworkError(err)
}

// Login failures the user can fix, by error number.
const (
	errLoginFailed        = 18456 // wrong login or password, or the login may not connect
	errCannotOpenDatabase = 4060  // the database in the URL does not exist or the login may not use it
	errLoginDisabled      = 18470
	errPasswordExpired    = 18487
	errPasswordMustChange = 18488
	errFirewall           = 40615 // Azure SQL: the client's address is not allowed by the firewall
	errCannotOpenServer   = 40532 // Azure SQL: the server in the login does not exist
	errTooManyLogins      = 17809 // no more user connections
)

// isPermissionError reports the errors of a missing permission that a
// database change can meet: no ALTER on the database (5011), permission
// denied (262, 229, 15247), no database or no permission to see it (15151).
func isPermissionError(n int32) bool {
	switch n {
	case 5011, 262, 229, 15247, 15151:
		return true
	}
	return false
}

// openError turns a failure to connect into a one-line message that says
// what to do, never holding the password. Errors the user can fix are
// badinput. The server's error numbers are mapped here; the rest is
// driver.Connecting's.
func openError(err error, target dbdriver.Target, c connConfig) error {
	conn := dbdriver.Connecting{Database: "SQL Server", Addr: c.addr, Target: target}
	var msErr mssql.Error
	if errors.As(err, &msErr) {
		cause := conn.Cause(strings.TrimPrefix(msErr.Message, "login error: "), err)
		switch msErr.Number {
		case errLoginFailed:
			if c.fedAuth != "" {
				return badinput.New("SQL Server at %s refused the Entra ID identity (fedauth=%s): %w; check that it is a user of database %q",
					c.addr, c.fedAuth, cause, c.database)
			}
			return conn.Refused(fmt.Sprintf("login %q", c.user), "login failed", err)
		case errCannotOpenDatabase:
			return badinput.New("SQL Server at %s: %w; create it (CREATE DATABASE %s) or name another with ?database=",
				c.addr, &dbdriver.Scrubbed{Msg: fmt.Sprintf("cannot open database %q (it does not exist, or login %q may not use it)", c.database, c.user), Err: err},
				quoteName(c.database))
		case errLoginDisabled, errPasswordExpired, errPasswordMustChange:
			return badinput.New("SQL Server at %s refused login %q: %w; fix the login or use another", c.addr, c.user, cause)
		case errFirewall, errCannotOpenServer:
			return badinput.New("Azure SQL at %s refused the connection: %w; allow this client's address in the server's firewall, or check the server name", c.addr, cause)
		case errTooManyLogins:
			return badinput.New("SQL Server at %s refused the connection: %w; raise its user connections or use fewer threads", c.addr, cause)
		}
		if anyNumber(err, isPermissionError) {
			return badinput.New("SQL Server at %s: %w; grant the login what it needs (VIEW DEFINITION on the database at least)", c.addr, cause)
		}
		return conn.Failed(firstLine(err.Error()), err)
	}
	if u := conn.Unreachable(err, ""); u != nil {
		return u
	}
	// The message is told apart by its words as the library wrote them,
	// and shown, or withheld, as the part of it that is shown.
	msg := firstLine(err.Error())
	var certErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	lower := strings.ToLower(msg)
	if errors.As(err, &certErr) || errors.As(err, &hostErr) || strings.Contains(lower, "tls") || strings.Contains(lower, "certificate") {
		return conn.TLS(dbdriver.LastPart(msg), "trust the server's certificate (TrustServerCertificate=true for a test server with a self-signed one) or set encrypt= in the URL", err)
	}
	if c.fedAuth != "" {
		// Anything else before the server answered is the token request.
		return badinput.New("cannot sign in to SQL Server at %s with Entra ID (fedauth=%s): %w; check the identity's credentials (az login, managed identity, environment, user and password)",
			c.addr, c.fedAuth, conn.Cause(msg, err))
	}
	return conn.Failed(msg, err)
}

// firstLine returns the first line of a message: go-mssqldb joins every
// error the server sent with newlines, and Azure's token errors run long.
func firstLine(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	return strings.TrimSpace(first)
}
