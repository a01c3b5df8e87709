package mysql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Codes for failures that carry no server error number, so that results
// can still count them by code.
const (
	codeTimeout  = "timeout"
	codeCanceled = "canceled"
	// codeConnLost is CR_SERVER_LOST, the number MySQL's own client
	// library gives a connection that broke under a statement.
	codeConnLost = "2013"
)

// Server error numbers dbprobe acts on.
const (
	erAccessDenied        = 1045 // wrong user or password
	erDBAccessDenied      = 1044 // the user may not use the database
	erBadDB               = 1049 // unknown database
	erTooManyConnections  = 1040
	erHostNotPrivileged   = 1130
	erTableExists         = 1050
	erDupEntry            = 1062
	erSpecificAccess      = 1227 // needs SUPER, SYSTEM_VARIABLES_ADMIN, …
	erTableAccessDenied   = 1142 // a command refused on a table
	erColumnAccessDenied  = 1143 // a command refused on a column
	erLockWaitTimeout     = 1205
	erLockDeadlock        = 1213
	erUnknownSystemVar    = 1193
	erWrongValueForVar    = 1231
	erWrongTypeForVar     = 1232
	erSPAlreadyExists     = 1304
	erNotAllowedCommand   = 1148 // LOAD DATA LOCAL refused (MySQL 5.x, older MariaDB)
	erLocalInfileDisabled = 3948 // LOAD DATA LOCAL refused (MySQL 8)
	erLocalInfileMariaDB  = 4166 // LOAD DATA LOCAL refused (MariaDB 10.5 and later)
	erQueryTimeout        = 3024 // MySQL max_execution_time
	erStatementTimeout    = 1969 // MariaDB max_statement_time
	erServerShutdown      = 1053
	erConnectionKilled    = 1927 // MariaDB
	erClientInteraction   = 4031 // MySQL 8: disconnected for inactivity
	crServerGone          = 2006 // client numbers, which a proxy may pass on
	crServerLost          = 2013
)

// classify wraps err with its MySQL error number and class for the
// runner's policy. ErrNotFound and nil pass unchanged.
func classify(err error) error {
	if err == nil || errors.Is(err, driver.ErrNotFound) {
		return err
	}
	var de *driver.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		// The caller gave up (the run is stopping): not the database's fault.
		return driver.Classify(err, codeCanceled, driver.ClassOther)
	}
	var myErr *gomysql.MySQLError
	if errors.As(err, &myErr) {
		classified := driver.ClassifyNamed(err, strconv.Itoa(int(myErr.Number)), errorName(myErr.Number), classOfError(myErr))
		if myErr.Number == erTableAccessDenied || myErr.Number == erColumnAccessDenied {
			return driver.PermissionDenied("MySQL", fmt.Sprintf("%s (error %d)", myErr.Message, myErr.Number), classified)
		}
		return classified
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		return driver.Classify(err, codeTimeout, driver.ClassTimeout)
	case isConnLost(err):
		return driver.ClassifyNamed(err, codeConnLost, errorName(crServerLost), driver.ClassConnLost)
	}
	return driver.Classify(err, "", driver.ClassOther)
}

// Numbers of failures that no repeat fixes until someone acts (fatal).
const (
	eeWrite                = 3    // EE_WRITE: a file write failed (fatal on ENOSPC, below)
	eeDiskFull             = 20   // EE_DISK_FULL
	erDiskFull             = 1021 // ER_DISK_FULL
	erOpenAsReadonly       = 1036 // ER_OPEN_AS_READONLY: "Table … is read only"
	erGetErrno             = 1030 // ER_GET_ERRNO: "Got error N from storage engine"
	erRecordFileFull       = 1114 // ER_RECORD_FILE_FULL: "The table … is full"
	erProcAccessDenied     = 1370 // ER_PROCACCESS_DENIED_ERROR
	erOptionPrevents       = 1290 // ER_OPTION_PREVENTS_STATEMENT: --read-only, among others
	erReadOnlyTransaction  = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	erReadOnlyMode         = 1836 // ER_READ_ONLY_MODE
	erInnoDBReadOnly       = 1874 // ER_INNODB_READ_ONLY
	erTempFileWriteFailure = 1878 // ER_TEMP_FILE_WRITE_FAILURE
)

// classOfError maps a server error to a class: its number's, and fatal
// for a file write (EE_WRITE) or a storage engine error (ER_GET_ERRNO)
// whose operating-system error is ENOSPC, 28, as the message gives it
// ("Errcode: 28", "Got error 28 …"). Another errno there may be passing.
func classOfError(e *gomysql.MySQLError) driver.Class {
	switch e.Number {
	case eeWrite:
		if strings.Contains(e.Message, "Errcode: 28 ") || strings.Contains(e.Message, "No space left") {
			return driver.ClassFatal
		}
	case erGetErrno:
		if strings.Contains(e.Message, "error 28 ") || strings.Contains(e.Message, "No space left") {
			return driver.ClassFatal
		}
	}
	return classOfNumber(e.Number)
}

// classOfNumber maps a server error number to a class. A duplicate key
// (1062) and every other constraint error stay ClassOther: retrying cannot
// help.
//
// Fatal, as no repeat succeeds until someone acts: a disk or table full
// (EE_DISK_FULL, 1021, 1114, 1878 a temporary file that could not be
// written), a server, table or transaction that is read-only (1290, which
// other server options such as secure_file_priv also raise and which no
// repeat gets past either; 1036, 1792, 1836, 1874), and a privilege refused (1044,
// 1045 on a reconnection after a password change, 1142, 1143, 1227,
// 1370). Too many connections (1040) is not: others may leave.
func classOfNumber(n uint16) driver.Class {
	switch n {
	case eeDiskFull, erDiskFull, erRecordFileFull, erTempFileWriteFailure,
		erOptionPrevents, erOpenAsReadonly, erReadOnlyTransaction, erReadOnlyMode, erInnoDBReadOnly,
		erDBAccessDenied, erAccessDenied, erTableAccessDenied, erColumnAccessDenied, erSpecificAccess, erProcAccessDenied:
		return driver.ClassFatal
	case erLockDeadlock, erLockWaitTimeout:
		return driver.ClassConflict
	case erQueryTimeout, erStatementTimeout:
		return driver.ClassTimeout
	case erServerShutdown, erConnectionKilled, erClientInteraction, crServerGone, crServerLost:
		return driver.ClassConnLost
	}
	return driver.ClassOther
}

// errorName returns the symbol of an error number as MySQL's and MariaDB's
// headers name it, "" when the two servers do not agree on one.
func errorName(n uint16) string {
	if name, ok := serverErrorNames[n]; ok {
		return name
	}
	return otherErrorNames[n]
}

// otherErrorNames names numbers outside the servers' shared range
// (serverErrorNames) that a benchmark can meet: mysys's global errors
// (include/mysys_err.h, the same in both up to 33), which the server sends
// when a file operation fails; the client library's (errmsg.h), which a
// proxy may pass on and which stands for a connection lost here; and
// MySQL's own between 3061 and 3999, a range MariaDB leaves unused.
var otherErrorNames = map[uint16]string{
	1:    "EE_CANTCREATEFILE",
	2:    "EE_READ",
	3:    "EE_WRITE",
	4:    "EE_BADCLOSE",
	5:    "EE_OUTOFMEMORY",
	6:    "EE_DELETE",
	7:    "EE_LINK",
	9:    "EE_EOFERR",
	10:   "EE_CANTLOCK",
	11:   "EE_CANTUNLOCK",
	12:   "EE_DIR",
	13:   "EE_STAT",
	14:   "EE_CANT_CHSIZE",
	15:   "EE_CANT_OPEN_STREAM",
	20:   "EE_DISK_FULL",
	21:   "EE_CANT_MKDIR",
	23:   "EE_OUT_OF_FILERESOURCES",
	27:   "EE_SYNC",
	29:   "EE_FILENOTFOUND",
	33:   "EE_CANT_SEEK",
	2002: "CR_CONNECTION_ERROR",
	2003: "CR_CONN_HOST_ERROR",
	2006: "CR_SERVER_GONE_ERROR",
	2013: "CR_SERVER_LOST",
	2055: "CR_SERVER_LOST_EXTENDED",
	3024: "ER_QUERY_TIMEOUT",
	3572: "ER_LOCK_NOWAIT",
	3948: "ER_CLIENT_LOCAL_FILES_DISABLED",
}

// isNetTimeout reports a socket deadline that passed (read_timeout,
// write_timeout).
func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isConnLost reports an error of a connection that broke or was closed.
func isConnLost(err error) bool {
	return errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, gomysql.ErrMalformPkt) || errors.Is(err, gomysql.ErrPktSync) || errors.Is(err, gomysql.ErrPktSyncMul) ||
		driver.IsNetworkError(err)
}

// number returns the server error number err carries, or 0.
func number(err error) uint16 {
	var myErr *gomysql.MySQLError
	if errors.As(err, &myErr) {
		return myErr.Number
	}
	return 0
}

// isLoadRefused reports that the server or the client refused LOAD DATA
// LOCAL (local_infile=OFF), so that the batch can go through INSERT.
func isLoadRefused(err error) bool {
	switch number(err) {
	case erNotAllowedCommand, erLocalInfileDisabled, erLocalInfileMariaDB:
		return true
	}
	return false
}

// openError turns a failure to connect into a one-line message that says what
// to do, never holding the password. Errors the user can fix are badinput.
// The server's error numbers are mapped here; the rest is
// driver.Connecting's.
func openError(err error, target driver.Target, s *settings) error {
	user, database, addr := s.cfg.User, s.cfg.DBName, s.cfg.Addr
	c := driver.Connecting{Database: "MySQL", Addr: addr, Target: target, Closed: func(err error) bool {
		return errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, sqldriver.ErrBadConn)
	}}
	var myErr *gomysql.MySQLError
	if errors.As(err, &myErr) {
		cause := c.Cause(myErr.Message, err)
		switch myErr.Number {
		case erAccessDenied:
			return c.Refused(fmt.Sprintf("user %q", user), "access denied", err)
		case erDBAccessDenied:
			return badinput.New("MySQL at %s: %w; grant the user access to database %s or name another database in the URL", addr, cause, database)
		case erBadDB:
			return badinput.New("MySQL at %s: %w; create it with CREATE DATABASE %s or name another database in the URL",
				addr, &driver.Scrubbed{Msg: fmt.Sprintf("database %q does not exist", database), Err: err}, quote(database))
		case erHostNotPrivileged:
			return badinput.New("MySQL at %s: %w; create the user for this host, or connect from another", addr, cause)
		case erTooManyConnections:
			return badinput.New("MySQL at %s refused the connection: %w; raise max_connections or use fewer threads", addr, cause)
		case erUnknownSystemVar, erWrongValueForVar, erWrongTypeForVar, erSpecificAccess:
			// A session variable from the URL that this server lacks or refuses.
			return badinput.New("MySQL at %s rejected a setting from the URL: %w; fix or remove that option", addr, cause)
		}
		return c.Failed(err.Error(), err)
	}
	if u := c.Unreachable(err, ""); u != nil {
		return u
	}
	if isTLSError(err) {
		return c.TLS(driver.LastPart(err.Error()), "check tls= in the URL and the server's certificate (tls=false for a server without TLS; off loopback that also needs --allow-insecure-tls)", err)
	}
	return c.Failed(err.Error(), err)
}

// isTLSError reports a failed TLS handshake or a server without TLS.
func isTLSError(err error) bool {
	var recordErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	return errors.Is(err, gomysql.ErrNoTLS) || errors.As(err, &recordErr) || errors.As(err, &certErr) ||
		errors.As(err, &unknownAuth) || errors.As(err, &hostErr) || strings.Contains(err.Error(), "tls:")
}

// ddlError turns a refused privilege into a badinput error that says what
// dbprobe was doing; other errors are classified.
func ddlError(what string, err error) error {
	switch number(err) {
	case 1044, 1142, 1227, 1370: // access denied to the database, table, routine; needs a privilege
		var myErr *gomysql.MySQLError
		errors.As(err, &myErr)
		return badinput.New("MySQL refused to %s: %w; grant the user the privilege, or have someone who has it do this", what,
			&driver.Scrubbed{Msg: myErr.Message, Err: classify(err), Unchecked: true})
	}
	return fmt.Errorf("%s: %w", what, classify(err))
}

// slogLogger sends go-sql-driver's own complaints (a connection closed
// under it, a packet out of order) to the debug log rather than to stderr
// between the results: the error the operation returns says the same.
type slogLogger struct{}

// Print implements gomysql.Logger.
func (slogLogger) Print(v ...any) {
	slog.Debug("go-sql-driver/mysql: " + strings.TrimSpace(fmt.Sprint(v...)))
}
