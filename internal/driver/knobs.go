package driver

import (
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// TableType is how the key-value table is stored: the knob the Azure SQL
// key-value test turned between disk and memory-optimized tables.
type TableType int

// The table types.
const (
	// TableDisk is the database's ordinary table (on disk and logged for
	// the SQL databases; Redis keeps every key in memory): the default.
	TableDisk TableType = iota
	// TableMemory is an in-memory table where the database has one
	// (SQL Server memory-optimized, MySQL ENGINE=MEMORY, SQLite in-memory
	// database). Whether its rows survive a restart depends on the database.
	TableMemory
	// TableNondurable is a table whose rows are not logged and may be lost
	// in a crash (PostgreSQL UNLOGGED, SQL Server SCHEMA_ONLY).
	TableNondurable
)

var tableTypeNames = [...]string{"disk", "memory", "nondurable"}

// String returns the name used on the command line and in results.
func (t TableType) String() string { return nameOf(tableTypeNames[:], int(t), "tabletype") }

// ParseTableType parses disk, memory or nondurable.
func ParseTableType(s string) (TableType, error) {
	return parseName[TableType](tableTypeNames[:], s, "table type")
}

// Durability is when a commit is acknowledged: after its log record is on
// disk (full) or before (delayed), trading the last commits on a crash for
// fewer log flushes.
type Durability int

// The durability modes.
const (
	// DurabilityServer leaves the server's setting as it is and reports it:
	// the default, so that a run changes nothing on the server unasked.
	DurabilityServer Durability = iota
	// DurabilityFull acknowledges a commit once its log record is flushed.
	DurabilityFull
	// DurabilityDelayed acknowledges a commit before its log record is flushed.
	DurabilityDelayed
)

var durabilityNames = [...]string{"server", "full", "delayed"}

// String returns the name used on the command line and in results.
func (d Durability) String() string { return nameOf(durabilityNames[:], int(d), "durability") }

// ParseDurability parses server, full or delayed.
func ParseDurability(s string) (Durability, error) {
	return parseName[Durability](durabilityNames[:], s, "durability")
}

// DurabilityScope is where delayed durability is switched on.
type DurabilityScope int

// The durability scopes.
const (
	// ScopeDatabase sets it for the database or the sessions as a whole
	// (SQL Server DELAYED_DURABILITY = FORCED, PostgreSQL per session,
	// MySQL server-wide): the default.
	ScopeDatabase DurabilityScope = iota
	// ScopeTransaction asks for it on each commit (SQL Server
	// COMMIT WITH (DELAYED_DURABILITY = ON), with the database ALLOWED).
	ScopeTransaction
)

var scopeNames = [...]string{"database", "transaction"}

// String returns the name used on the command line and in results.
func (s DurabilityScope) String() string { return nameOf(scopeNames[:], int(s), "scope") }

// ParseDurabilityScope parses database or transaction.
func ParseDurabilityScope(s string) (DurabilityScope, error) {
	return parseName[DurabilityScope](scopeNames[:], s, "durability scope")
}

// OpPath is how a session sends operations: as SQL statements, or as
// calls to stored procedures that dbprobe creates beside the table.
type OpPath int

// The operation paths.
const (
	// PathStatement sends prepared statements: the default.
	PathStatement OpPath = iota
	// PathProcedure calls stored procedures (functions on PostgreSQL,
	// natively compiled procedures on SQL Server memory-optimized tables).
	PathProcedure
)

var pathNames = [...]string{"statement", "procedure"}

// String returns the name used on the command line and in results.
func (p OpPath) String() string { return nameOf(pathNames[:], int(p), "oppath") }

// ParseOpPath parses statement or procedure.
func ParseOpPath(s string) (OpPath, error) {
	return parseName[OpPath](pathNames[:], s, "operation path")
}

// nameOf returns names[i], or kind(i) for a value outside the names.
func nameOf(names []string, i int, kind string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", kind, i)
}

// parseName finds s among names, without case or surrounding spaces; the
// error names what was being parsed and every choice.
func parseName[T ~int](names []string, s, kind string) (T, error) {
	for i, n := range names {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q; known: %s", kind, s, strings.Join(names, ", "))
}

// ProcedureNames are the stored procedures the procedure path creates for a
// table, one per operation, named after the table so that they are found
// and dropped with it.
type ProcedureNames struct {
	Read, Scan, Update, Insert, Delete string
}

// Procedures returns the procedure names for table t: dbprobe_<table>_read
// and so on.
func Procedures(t Table) ProcedureNames {
	p := "dbprobe_" + t.Name + "_"
	return ProcedureNames{Read: p + "read", Scan: p + "scan", Update: p + "update", Insert: p + "insert", Delete: p + "delete"}
}

// All lists the names in a fixed order.
func (p ProcedureNames) All() []string {
	return []string{p.Read, p.Scan, p.Update, p.Insert, p.Delete}
}

// Unsupported is the badinput error a driver returns for a knob its
// database does not have: it names the database, the knob and what to do
// instead, and Open returns it before changing anything on the server.
func Unsupported(database, knob, instead string) error {
	return badinput.New("%s has no %s; %s", database, knob, instead)
}
