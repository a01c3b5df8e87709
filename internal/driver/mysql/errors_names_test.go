package mysql

import (
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestClassifyNamesAndFatal(t *testing.T) {
	for _, tc := range []struct {
		number uint16
		msg    string
		label  string
		class  driver.Class
	}{
		{1062, "Duplicate entry 'k' for key 'PRIMARY'", "1062 ER_DUP_ENTRY", driver.ClassOther},
		{1213, "Deadlock found", "1213 ER_LOCK_DEADLOCK", driver.ClassConflict},
		{1205, "Lock wait timeout exceeded", "1205 ER_LOCK_WAIT_TIMEOUT", driver.ClassConflict},
		{1969, "Query execution was interrupted (max_statement_time exceeded)", "1969 ER_STATEMENT_TIMEOUT", driver.ClassTimeout},
		{1040, "Too many connections", "1040 ER_CON_COUNT_ERROR", driver.ClassOther},
		{1114, "The table 'usertable' is full", "1114 ER_RECORD_FILE_FULL", driver.ClassFatal},
		{1021, "Disk full (./t.MYD); waiting for someone to free some space...", "1021 ER_DISK_FULL", driver.ClassFatal},
		{3, `Error writing file './dbprobe/usertable.MYD' (Errcode: 28 "No space left on device")`, "3 EE_WRITE", driver.ClassFatal},
		{3, `Error writing file './dbprobe/usertable.MYD' (Errcode: 5 "Input/output error")`, "3 EE_WRITE", driver.ClassOther},
		{1030, `Got error 28 "No space left on device" from storage engine InnoDB`, "1030 ER_GET_ERRNO", driver.ClassFatal},
		{1030, `Got error 168 "Unknown (generic) error from engine" from storage engine InnoDB`, "1030 ER_GET_ERRNO", driver.ClassOther},
		{1290, "The MariaDB server is running with the --read-only option so it cannot execute this statement", "1290 ER_OPTION_PREVENTS_STATEMENT", driver.ClassFatal},
		{1792, "Cannot execute statement in a READ ONLY transaction", "1792 ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION", driver.ClassFatal},
		{1836, "Running in read-only mode", "1836 ER_READ_ONLY_MODE", driver.ClassFatal},
		{1036, "Table 'usertable' is read only", "1036 ER_OPEN_AS_READONLY", driver.ClassFatal},
		{1874, "InnoDB is in read only mode", "1874 ER_INNODB_READ_ONLY", driver.ClassFatal},
		{1142, "INSERT command denied to user", "1142 ER_TABLEACCESS_DENIED_ERROR", driver.ClassFatal},
		{1143, "SELECT command denied to user for column", "1143 ER_COLUMNACCESS_DENIED_ERROR", driver.ClassFatal},
		{1044, "Access denied for user to database", "1044 ER_DBACCESS_DENIED_ERROR", driver.ClassFatal},
		{1045, "Access denied for user (using password: YES)", "1045 ER_ACCESS_DENIED_ERROR", driver.ClassFatal},
		{3024, "Query execution was interrupted, maximum statement execution time exceeded", "3024 ER_QUERY_TIMEOUT", driver.ClassTimeout},
		// From 4000 the servers disagree: the number alone.
		{4031, "The client was disconnected by the server because of inactivity", "4031", driver.ClassConnLost},
		{4166, "The used command is not allowed because the MariaDB server or client has disabled the local infile capability", "4166", driver.ClassOther},
	} {
		t.Run(fmt.Sprint(tc.number), func(t *testing.T) {
			err := classify(fmt.Errorf("op: %w", &gomysql.MySQLError{Number: tc.number, Message: tc.msg}))
			if got := driver.Label(err); got != tc.label {
				t.Errorf("Label = %q, want %q", got, tc.label)
			}
			if got := driver.Code(err); got != fmt.Sprint(tc.number) {
				t.Errorf("Code = %q, want the plain number", got)
			}
			if got := driver.ClassOf(err); got != tc.class {
				t.Errorf("class = %v, want %v", got, tc.class)
			}
		})
	}
}

// Refused privileges stay bad input, as before, and are fatal too.
func TestTableAccessDeniedIsBadInputAndFatal(t *testing.T) {
	err := classify(&gomysql.MySQLError{Number: 1142, Message: "INSERT command denied"})
	if !badinput.Is(err) || !driver.IsFatal(err) {
		t.Fatalf("%v: bad input %v, fatal %v", err, badinput.Is(err), driver.IsFatal(err))
	}
}

// A connection that broke is counted as CR_SERVER_LOST, named.
func TestConnLostIsNamed(t *testing.T) {
	if got := driver.Label(classify(gomysql.ErrInvalidConn)); got != "2013 CR_SERVER_LOST" {
		t.Fatalf("Label = %q", got)
	}
}

func TestErrorNamesWellFormed(t *testing.T) {
	if len(serverErrorNames) < 900 {
		t.Fatalf("only %d names: the table was cut short", len(serverErrorNames))
	}
	for _, names := range []map[uint16]string{serverErrorNames, otherErrorNames} {
		for n, name := range names {
			if strings.HasPrefix(name, "ER_UNUSED") || strings.ContainsAny(name, " \t") || name != strings.ToUpper(name) {
				t.Errorf("%d: name %q", n, name)
			}
			if n >= 4000 {
				t.Errorf("%d %s: the servers disagree from 4000 on", n, name)
			}
		}
	}
}
