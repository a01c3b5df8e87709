package driver

import (
	"context"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Access is the set of table privileges a phase needs: the load inserts,
// a run reads, and updates and inserts as its workload does.
type Access uint8

// The privileges a phase may need on the table.
const (
	AccessSelect Access = 1 << iota
	AccessInsert
	AccessUpdate
)

var accessNames = [...]string{"SELECT", "INSERT", "UPDATE"}

// String lists the privileges in SQL's words, "SELECT, UPDATE".
func (a Access) String() string {
	var names []string
	for i, n := range accessNames {
		if a&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Privileges lists each privilege in a, one per element.
func (a Access) Privileges() []Access {
	var out []Access
	for i := range accessNames {
		if p := Access(1 << i); a&p != 0 {
			out = append(out, p)
		}
	}
	return out
}

// PrivilegeChecker is implemented by a DB that can tell, before a phase
// starts, whether its user holds the privileges the phase needs on a table,
// so that a user without UPDATE ends with one line naming the GRANT, not
// with a run full of refused updates.
type PrivilegeChecker interface {
	// CheckPrivileges returns a badinput error naming the first privilege
	// in need that the user lacks on the table, and the GRANT that gives
	// it; nil when the user holds them all. It changes nothing.
	CheckPrivileges(ctx context.Context, t Table, need Access) error
}

// MissingPrivilege is the error CheckPrivileges returns: one line naming
// what is missing and how to grant it.
func MissingPrivilege(database, user, table string, missing, need Access, grant string) error {
	return badinput.New("%s user %s lacks %s on table %s (this phase needs %s on it); grant it with %s, or run as a user who has it",
		database, user, missing, table, need, grant)
}

// PermissionDenied marks an error the database raised because the user
// lacks a privilege (PostgreSQL 42501, MySQL 1142 and 1143, SQL Server 229
// and 230, Redis NOPERM) as bad input: no retry or reconnection can help,
// only a GRANT. classified is the driver's classified error, whose code the
// runner still counts; message is the server's own words, which whoever
// prints the error checks for the password (Target.ScrubError): here no
// Target is at hand.
func PermissionDenied(database, message string, classified error) error {
	return badinput.New("%s refused: %w; grant the user the privilege it names on the table (load needs INSERT; run needs SELECT, and UPDATE or INSERT as the workload does), or run as a user who has it",
		database, &Scrubbed{Msg: message, Err: classified, Unchecked: true})
}
