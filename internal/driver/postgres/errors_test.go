package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestClassifyNamesAndFatal(t *testing.T) {
	for _, tc := range []struct {
		code, msg string
		label     string
		class     driver.Class
	}{
		{"23505", "duplicate key", "23505 unique_violation", driver.ClassOther},
		{"40001", "could not serialize", "40001 serialization_failure", driver.ClassConflict},
		{"40P01", "deadlock detected", "40P01 deadlock_detected", driver.ClassConflict},
		{"57P01", "terminating connection", "57P01 admin_shutdown", driver.ClassConnLost},
		{"53100", `could not extend file "base/1/2": No space left on device`, "53100 disk_full", driver.ClassFatal},
		{"25006", "cannot execute INSERT in a read-only transaction", "25006 read_only_sql_transaction", driver.ClassFatal},
		{"42501", "permission denied for table usertable", "42501 insufficient_privilege", driver.ClassFatal},
		{"58030", `could not write to file "pg_wal/xlogtemp.1": Input/output error`, "58030 io_error", driver.ClassFatal},
		{"58030", `could not fsync file "base/1/2": Input/output error`, "58030 io_error", driver.ClassFatal},
		{"58030", `could not read block 7 in file "base/1/2": Input/output error`, "58030 io_error", driver.ClassOther},
		// out_of_memory passes more often than not: not fatal.
		{"53200", "out of memory", "53200 out_of_memory", driver.ClassOther},
		{"25P04", "terminating connection due to transaction timeout", "25P04 transaction_timeout", driver.ClassOther},
		// A code PostgreSQL does not define keeps the code alone.
		{"ZZ999", "made up", "ZZ999", driver.ClassOther},
	} {
		t.Run(tc.code+" "+tc.msg, func(t *testing.T) {
			err := classify(fmt.Errorf("op: %w", &pgconn.PgError{Code: tc.code, Message: tc.msg}))
			if got := driver.Label(err); got != tc.label {
				t.Errorf("Label = %q, want %q", got, tc.label)
			}
			if got := driver.Code(err); got != tc.code {
				t.Errorf("Code = %q, want the plain %q", got, tc.code)
			}
			if got := driver.ClassOf(err); got != tc.class {
				t.Errorf("class = %v, want %v", got, tc.class)
			}
			if driver.IsFatal(err) && driver.IsRetryable(err) {
				t.Error("fatal and retryable at once")
			}
		})
	}
}

// A refused privilege stays bad input, as before, and is fatal too.
func TestInsufficientPrivilegeIsBadInputAndFatal(t *testing.T) {
	err := classify(&pgconn.PgError{Code: "42501", Message: "permission denied for table usertable"})
	if !badinput.Is(err) || !driver.IsFatal(err) {
		t.Fatalf("%v: bad input %v, fatal %v", err, badinput.Is(err), driver.IsFatal(err))
	}
}

// Errors without a SQLSTATE have no name: the code alone.
func TestClassifyWithoutSQLState(t *testing.T) {
	err := classify(errBroken)
	if driver.Label(err) != codeConnLost || !errors.Is(err, errBroken) {
		t.Fatalf("Label = %q", driver.Label(err))
	}
}

// Every SQLSTATE in the table is five characters of digits and capitals,
// and every name one lower-case token, as errcodes.txt writes them.
func TestConditionNamesWellFormed(t *testing.T) {
	if len(conditionNames) < 250 {
		t.Fatalf("only %d names: the table was cut short", len(conditionNames))
	}
	for code, name := range conditionNames {
		if len(code) != 5 {
			t.Errorf("code %q", code)
		}
		for _, r := range name {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
				t.Errorf("%s: name %q is not one lower-case token", code, name)
				break
			}
		}
	}
}

func TestUserConnectionLimit(t *testing.T) {
	for _, tc := range []struct {
		superuser, useReserved bool
		want                   int
	}{
		{true, false, 100},
		{false, true, 97},
		{false, false, 92},
	} {
		if got := userConnectionLimit(100, 3, 5, tc.superuser, tc.useReserved); got != tc.want {
			t.Errorf("superuser %v, pg_use_reserved_connections %v: %d, want %d", tc.superuser, tc.useReserved, got, tc.want)
		}
	}
	if got := userConnectionLimit(2, 3, 5, false, false); got != 0 {
		t.Errorf("more reserved than the limit: %d, want 0", got)
	}
}

// A session that cannot open its connection because the server is gone
// says so in one line, and stays a lost connection for the runner.
func TestSessionOpenErrorInOneLine(t *testing.T) {
	db := &DB{connecting: driver.Connecting{Database: "PostgreSQL", Addr: "127.0.0.1:5432"}}
	refused := fmt.Errorf("failed to connect to `user=bench database=x`:\n\t127.0.0.1:5432 (127.0.0.1): tls error: %w\n\t127.0.0.1:5432 (127.0.0.1): dial error: %w",
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	err := db.sessionOpenError(refused)
	if got, want := err.Error(), "cannot reach PostgreSQL at 127.0.0.1:5432: connection refused"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !driver.IsConnLost(err) || driver.Code(err) != codeConnLost {
		t.Errorf("class %v, code %q: want a lost connection", driver.ClassOf(err), driver.Code(err))
	}
	if err := db.sessionOpenError(context.DeadlineExceeded); driver.IsConnLost(err) {
		t.Errorf("a context that ended is %v, not a lost connection", driver.ClassOf(err))
	}
}
