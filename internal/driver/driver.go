package driver

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Driver opens connections to one kind of database.
type Driver interface {
	// Open connects to the target and proves the server is reachable and the
	// credentials work, so that a wrong password fails before any work starts.
	// Errors the user can fix (unreachable, refused credentials, malformed
	// URL) are badinput errors whose message never holds the password.
	Open(ctx context.Context, target Target, opts Options) (DB, error)
}

// Options tunes how a DB is opened.
type Options struct {
	// Sessions is how many sessions will be open at once; pools size to it.
	Sessions int
	// BulkLoad lets InsertBatch use the database's bulk API (COPY, …);
	// when false it uses multi-row INSERT statements.
	BulkLoad bool
	// TableType is how CreateTable stores the table. A driver whose
	// database has no such table returns Unsupported from Open.
	TableType TableType
	// BucketCount is the hash index size of a SQL Server memory-optimized
	// table; the caller sets it (recordcount rounded up to a power of two
	// unless the user chose one). Other drivers ignore it.
	BucketCount int64
	// Durability is when commits are acknowledged. A driver sets it when
	// opening (per session, or server-wide with the previous value put back
	// by Close) and reports the value read back from the server in
	// Info.Settings. It returns Unsupported, or a badinput error naming the
	// missing privilege, before changing anything.
	Durability Durability
	// DurabilityScope is where delayed durability is asked for.
	DurabilityScope DurabilityScope
	// OpPath is whether sessions send statements or call the procedures
	// named by Procedures(table). With PathProcedure, CreateTable creates
	// them with the table, Session creates them when they are missing (a
	// table loaded on the statement path), and DropTable drops them.
	OpPath OpPath
	// Existing says the database must exist already, as for a run, which
	// reads what a load wrote: a driver that would create it (a SQLite
	// file) refuses with bad input instead of leaving an empty one behind.
	Existing bool
}

// DB is an open database: a pool of connections and the table lifecycle.
type DB interface {
	// Info describes the driver, the server and the settings in force, read
	// back from the server rather than assumed.
	Info() Info
	// Inspect reports whether the table exists, whether dbprobe created it,
	// and whether it holds rows.
	Inspect(ctx context.Context, t Table) (TableState, error)
	// CreateTable creates the table and records that dbprobe created it.
	CreateTable(ctx context.Context, t Table) error
	// DropTable drops a table dbprobe created, and forgets it. Callers must
	// have checked TableState.CreatedByDbprobe; drivers check again and
	// refuse otherwise.
	DropTable(ctx context.Context, t Table) error
	// Session returns a handle for one worker: its own connection and
	// prepared statements. Sessions are not safe for concurrent use.
	Session(ctx context.Context, t Table) (Session, error)
	// Close releases every connection.
	Close() error
}

// Session runs operations on one table for one worker. Keys and values are
// byte slices the caller owns and reuses; a driver must not keep them after
// the call returns.
type Session interface {
	// Read fetches one record. fields lists field indexes to read, or nil
	// for all of them; values has one slot per field read (len(fields), or
	// the table's field count when fields is nil), and each slot is
	// overwritten with append(values[i][:0], …). A missing row is ErrNotFound.
	Read(ctx context.Context, key []byte, fields []int, values [][]byte) error
	// Scan reads up to count records in key order starting at startKey
	// (inclusive) and returns how many it read. visit, when not nil, sees
	// each record; its arguments are valid only during the call.
	Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error)
	// Update sets the listed fields of one record. A missing row is ErrNotFound.
	Update(ctx context.Context, key []byte, fields []int, values [][]byte) error
	// Insert adds one record with every field.
	Insert(ctx context.Context, key []byte, values [][]byte) error
	// InsertBatch adds several records in one transaction, through the bulk
	// API when Options.BulkLoad allows it. values[i] holds record i's fields.
	InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error
	// Delete removes one record. A missing row is ErrNotFound.
	Delete(ctx context.Context, key []byte) error
	// Close returns the session's connection.
	Close() error
}

// Table is the key-value table a run uses: a key column and fields.
type Table struct {
	// Name is the table name, already validated as a plain identifier.
	Name string
	// KeyColumn is the primary key column, YCSB_KEY.
	KeyColumn string
	// KeyLength is the declared length of the key column (255).
	KeyLength int
	// Fields are the field column names, FIELD0…FIELDn-1.
	Fields []string
	// FieldLength is the declared length of every field column.
	FieldLength int
}

// TableState is what Inspect found.
type TableState struct {
	Exists           bool
	CreatedByDbprobe bool
	// OwnershipNote says why a table the marker table names is not
	// counted as dbprobe's (Ownership.Note), for the refusal to drop it.
	OwnershipNote string
	HasRows       bool
	// Columns lists the table's columns in order, when it exists.
	Columns []string
	// Type is how the existing table is stored, read from the catalog.
	Type TableType
	// Storage describes it in the database's own words (ENGINE=InnoDB,
	// UNLOGGED, MEMORY_OPTIMIZED SCHEMA_ONLY, …) for the run header.
	Storage string
	// Stateless says the driver keeps no rows at all (the null driver):
	// there is nothing to create, fill, find or drop, so every phase goes
	// ahead on the table as it is, load after load.
	Stateless bool
}

// Info describes an open DB for the run header and the result.
type Info struct {
	// Driver is the registered name: "sqlite", "postgres", "mysql",
	// "sqlserver", "redis", "null".
	Driver string `json:"driver"`
	// Product is the database as its users call it, for messages:
	// "PostgreSQL", "MariaDB", "Azure SQL Database"; "" for no database.
	Product string `json:"product,omitempty"`
	// Library names the client library and its version.
	Library string `json:"library"`
	// ServerVersion is what the server reports about itself.
	ServerVersion string `json:"server_version,omitempty"`
	// Settings are server settings that shape the numbers (journal mode,
	// synchronous_commit, …), read back from the server.
	Settings []Setting `json:"settings,omitempty"`
	// Placement is where the database runs relative to dbprobe, which
	// decides whose CPU the host's figures are.
	Placement Placement `json:"placement"`
}

// Placement is where a database runs relative to the dbprobe process.
type Placement int

// The placements. The zero value is a server, as most drivers have.
const (
	// PlacementServer is a database in a process of its own, on this
	// machine or another one.
	PlacementServer Placement = iota
	// PlacementEmbedded is a database that runs inside dbprobe's own
	// process and threads (SQLite): its work is the client's CPU too.
	PlacementEmbedded
	// PlacementNone is no database at all (the null driver): every figure
	// is dbprobe's own.
	PlacementNone
)

// String names the placement as the JSON result does.
func (p Placement) String() string {
	switch p {
	case PlacementEmbedded:
		return "embedded"
	case PlacementNone:
		return "none"
	}
	return "server"
}

// MarshalText writes the placement's name.
func (p Placement) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a name String writes.
func (p *Placement) UnmarshalText(b []byte) error {
	switch string(b) {
	case "server", "":
		*p = PlacementServer
	case "embedded":
		*p = PlacementEmbedded
	case "none":
		*p = PlacementNone
	default:
		return fmt.Errorf("unknown placement %q", b)
	}
	return nil
}

// Setting is one named server setting and its effective value.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// KeyValue says the setting describes how the key-value Sessions run
	// (their transactions, how their writes commit), not the SQL text a
	// SQLRunner runs on connections of its own: an experiment of SQL
	// text leaves it out of its header rather than say what its
	// statements do not do.
	KeyValue bool `json:"-"`
}

// ModuleVersion returns the version of a Go module compiled into this
// binary, or "unknown" when the build carries no module information.
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}

// SettingsRestorer is the capability of a DB that changes settings beyond
// its own connections (MySQL's innodb_flush_log_at_trx_commit, SQL
// Server's database options, Redis's appendfsync). RestoreSettings puts
// them back without closing anything, so that a command stopped at once (a
// second Ctrl-C) still leaves the server as it found it; Close does it
// too, and whichever comes second finds nothing left to do. ctx bounds the
// work; it is safe to call while sessions are in use.
type SettingsRestorer interface {
	RestoreSettings(ctx context.Context) error
}
