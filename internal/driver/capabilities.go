package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Capabilities beyond key-value. A DB may implement any of the interfaces
// below beside the key-value Session, which stays as small as it is; an
// experiment finds them by type assertion, as the monitor finds
// Monitorable, and asks Describe first so that it can refuse with one line
// naming the database and what it lacks (Capabilities.Need).
//
// What every capability below promises:
//
//   - Cancellation. Every method that runs a statement stops it on the
//     server when its ctx ends — PostgreSQL a cancel request, MySQL KILL
//     QUERY from another connection, SQL Server an attention, SQLite
//     sqlite3_interrupt — waits for it to end, and returns an error for
//     which errors.Is(err, ctx.Err()) holds or that is classified
//     ClassTimeout (the server's own "canceled" answer). It never just
//     closes the socket and leaves the statement running.
//   - Ownership. Tables, tablespaces and filegroups these methods create
//     are recorded in the driver's marker table as dbprobe's, as
//     CreateTable records the key-value table, so that DropTable,
//     DropDataTable and DropLocation drop them and nothing else. A method
//     that writes into a table (FillTable, InsertSelect, a BulkWriter)
//     refuses one dbprobe did not create.
//   - Units. Sizes and counts are bytes and rows; identifiers are plain
//     (CheckIdentifier).

// DataTable is the table of the storage and stress experiments: a BIGINT
// key "id" and one column "payload" of PayloadBytes bytes per row, stored
// inline and uncompressed where the database lets dbprobe choose
// (PostgreSQL SET STORAGE PLAIN), so that a row's size on disk is what the
// experiment says it is.
type DataTable struct {
	// Name is the table's name, a plain identifier.
	Name string
	// PayloadBytes is the payload column's width, 1 to MaxPayloadBytes.
	PayloadBytes int
	// Where is the Location to create the table in; nil for the
	// database's default.
	Where *Location
}

// The DataTable's columns.
const (
	DataKeyColumn     = "id"
	DataPayloadColumn = "payload"
)

// MaxPayloadBytes is the widest payload a DataTable may have: 8000 bytes,
// SQL Server's widest CHAR and what fits in a PostgreSQL page without
// TOAST, so that a row is stored inline on every database.
const MaxPayloadBytes = 8000

// Check reports, as bad input, a DataTable whose name is not a plain
// identifier or whose payload is outside 1…MaxPayloadBytes.
func (t DataTable) Check() error {
	if err := CheckIdentifier("table", t.Name); err != nil {
		return err
	}
	if t.PayloadBytes < 1 || t.PayloadBytes > MaxPayloadBytes {
		return badinput.New("a row payload of %d bytes is outside 1…%d; rows wider than that leave the page (TOAST, row overflow) on some databases, and the experiment would not measure what it says",
			t.PayloadBytes, MaxPayloadBytes)
	}
	return nil
}

// Table returns the DataTable as the key-value lifecycle sees it (Inspect,
// DropTable): its key column and its one field.
func (t DataTable) Table() Table {
	return Table{Name: t.Name, KeyColumn: DataKeyColumn, KeyLength: 8, Fields: []string{DataPayloadColumn}, FieldLength: t.PayloadBytes}
}

// Location is a directory a database was given for tables (Placer): a
// PostgreSQL tablespace, a SQL Server filegroup with a file there, a MySQL
// DATA DIRECTORY, each recorded as dbprobe's.
type Location struct {
	// Dir is the directory as asked for, on the database server's host.
	Dir string
	// Name is the database's own object for it (the tablespace, the
	// filegroup); "" where the directory is named on each table (MySQL).
	Name string
	// Description says what was made, in the database's words, for the
	// run header.
	Description string
}

// SQLRunner runs SQL text a user wrote — the stress experiment's
// statements, its --setup and --teardown — on connections of its own.
type SQLRunner interface {
	// SQLConn opens a connection for one worker, as o asks. It is not
	// safe for concurrent use.
	SQLConn(ctx context.Context, o SQLOptions) (SQLConn, error)
	// SplitScript splits a script a user wrote into its statements, by
	// the database's own rules (sqlgen.Script): a semicolon ends one
	// outside strings, quoted names, comments, dollar quotes and BEGIN …
	// END or CASE … END blocks (not a transaction's BEGIN); on SQL Server
	// a line holding only GO ends a batch, which is one statement; on
	// MySQL a DELIMITER line changes what ends them. Blank statements and
	// comments alone are left out. A construct left open at the end is
	// bad input naming the line it starts on.
	SplitScript(text string) ([]ScriptStatement, error)
}

// SQLOptions are how a SQLConn talks to the server.
type SQLOptions struct {
	// Simple sends each statement as text, its parameters put into it by
	// the database's client library (PostgreSQL's simple query protocol,
	// as pgbench -M simple; MySQL's interpolateParams), instead of
	// preparing it on the server. A database without that path
	// (CapSimpleProtocol) returns Unsupported.
	Simple bool
	// Fresh opens a new connection to the server instead of taking one
	// from the DB's pool, and Close closes it, so that connecting is part
	// of what is measured (--connect-per-iteration).
	Fresh bool
	// Setup are statements run in order on the connection when it opens,
	// before any other: the session settings of the user's application
	// (--session-setup), or a TempPlacer's. A failure is the database's
	// own error; the connection is closed. A connection with Setup is
	// never handed back to a pool, where it would carry them to others.
	Setup []string
}

// ScriptStatement is one statement of a script.
type ScriptStatement struct {
	// Text is the statement, without the separator that ended it and
	// without the blank lines and comments around it.
	Text string
	// Line is the line of the script it starts on, from 1.
	Line int
}

// SQLConn is one connection running SQL text.
type SQLConn interface {
	// Prepare has the database check text and keep it ready to run. Its
	// parameters are written :name (sqlgen.Bind: not inside strings,
	// quoted names or comments, not PostgreSQL's ::cast) and are bound as
	// parameters, never spliced into the text. A syntax error is the
	// database's own error; SQL Server checks the text only when it runs.
	Prepare(ctx context.Context, text string) (Stmt, error)
	// Run executes st with args, one per name of st.Params() in that
	// order (nil, int64, float64, string, []byte, bool, time.Time), and
	// calls visit for each row it returns, when visit is not nil; the
	// row's values are valid only during the call. It runs in the
	// transaction Begin opened, or on its own (autocommit).
	Run(ctx context.Context, st Stmt, args []any, visit func(row []any) error) (Outcome, error)
	// Begin, Commit and Rollback delimit a transaction on the
	// connection; Rollback without one does nothing.
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	// Close releases the connection and its statements.
	Close() error
}

// RawRunner is a SQLConn that can hand a row's values over as the bytes
// the client library received, without decoding them: a reader that only
// counts bytes (storage read) saves a copy and an allocation per value,
// which were most of its CPU.
type RawRunner interface {
	// RunRaw is Run with each value as the database's own bytes for it
	// (its text form; nil for NULL), valid only during the call to
	// visit.
	RunRaw(ctx context.Context, st Stmt, args []any, visit func(row [][]byte) error) (Outcome, error)
}

// Stmt is SQL text a SQLConn prepared.
type Stmt interface {
	// Params names the parameters, each once, in the order Run takes
	// their values.
	Params() []string
	// Close releases the statement.
	Close() error
}

// Explainer is a SQLConn that shows how the database runs a statement:
// the stress experiment keeps each statement's plan, checked before the
// measurement and, with --explain, measured at its end.
type Explainer interface {
	// Explain returns st's plan with args, in the database's own text
	// format. Without analyze it does not run st (EXPLAIN, EXPLAIN QUERY
	// PLAN, SHOWPLAN). With analyze it runs st once and returns the plan
	// with what it did (PostgreSQL EXPLAIN (ANALYZE, BUFFERS), MariaDB
	// ANALYZE, MySQL EXPLAIN ANALYZE, SQL Server STATISTICS XML), inside
	// a transaction it rolls back, so that a statement that writes
	// leaves nothing behind; where the database cannot analyze st it
	// returns the plan without, and says so in Plan.How. A statement the
	// database runs but shows no plan for is an error wrapping ErrNoPlan.
	Explain(ctx context.Context, st Stmt, args []any, analyze bool) (Plan, error)
}

// Plan is a statement's plan as the database shows it.
type Plan struct {
	// Text is the plan, one line per step, as the database prints it.
	Text string
	// How names what produced it: "EXPLAIN (ANALYZE, BUFFERS)", "EXPLAIN
	// QUERY PLAN (SQLite has no ANALYZE)".
	How string
}

// Outcome is what running a statement did.
type Outcome struct {
	// Rows is how many rows it returned.
	Rows int64
	// Affected is how many rows it inserted, updated or deleted, or -1
	// when the database did not say (a statement that returned rows).
	Affected int64
	// Columns names the columns of the rows it returns, as the database
	// names them: an alias, a column's name, or the database's own name
	// for an expression without one (PostgreSQL "?column?", MySQL the
	// expression's text); nil for a statement that returns no rows (an
	// UPDATE without RETURNING). A SELECT that found no row still has
	// them. The slice is the statement's, the same for each Run: the
	// caller must not change it. It is what --params-query names its
	// parameters by.
	Columns []string
}

// Execer is a SQLConn that runs a statement once as written, without
// preparing it: the stress experiment's --setup and --teardown, whose
// statements a server may refuse to prepare (MySQL and MariaDB prepare no
// CREATE TRIGGER, CREATE PROCEDURE or CREATE EVENT).
type Execer interface {
	// Exec runs text once on the connection (the text protocol where
	// the database has one), in the transaction Begin opened or on its
	// own. Text with :name parameters is bad input naming them: there
	// is nothing to bind them to.
	Exec(ctx context.Context, text string) (Outcome, error)
}

// ErrNoPlan is the error, wrapped, that Explain returns for a statement
// the database runs but shows no plan for (PostgreSQL's EXPLAIN takes
// queries and DML, not CREATE INDEX, SET or CALL): the statement is
// fine, it has no plan.
var ErrNoPlan = errors.New("the database shows no plan for this kind of statement")

// TableFiller creates and fills DataTables on the server, so that no row
// crosses the network: the storage experiments' tables (scan, write,
// logcopy) and the stress experiment's OLTP mix.
type TableFiller interface {
	// CreateDataTable creates t, empty, in t.Where, and records it as
	// dbprobe's. A table of that name is bad input.
	CreateDataTable(ctx context.Context, t DataTable) error
	// FillTable inserts the rows whose id runs from first to last,
	// inclusive, each with a payload of t.PayloadBytes bytes made on the
	// server (generate_series, a recursive CTE, a cross join). It commits
	// in chunks of tens of megabytes, so that a large fill does not hold
	// one huge transaction; when ctx ends, the chunk in flight is stopped
	// and rolled back and the earlier ones stay. It returns the rows
	// inserted.
	FillTable(ctx context.Context, t DataTable, first, last int64) (int64, error)
	// DropDataTable drops t when dbprobe created it, and refuses
	// otherwise, as DropTable does.
	DropDataTable(ctx context.Context, t DataTable) error
}

// Settler brings a DataTable just filled to the state it is measured in,
// so that the fill's after-effects — a WAL still to copy into the data
// file, dirty pages still to write, rows whose hint bits, visibility and
// statistics autovacuum would see to — are done before the measured part
// instead of inside it. It is optional: a database without it is measured
// as the fill left it, and the experiment says so.
type Settler interface {
	// Settle does what the database can for t and says what it did, in
	// the database's words, and what it could not do and why (a
	// CHECKPOINT the role may not run), as one line for the run header.
	Settle(ctx context.Context, t DataTable) (string, error)
}

// TableSizer reports a table's size on disk as the database reports it:
// what the storage experiments' rates are counted in.
type TableSizer interface {
	TableSize(ctx context.Context, t DataTable) (TableSize, error)
}

// TableSize is a table's size on disk.
type TableSize struct {
	// Bytes is the table's size on disk: its rows, its indexes and
	// whatever else the database keeps for it.
	Bytes int64
	// How names where Bytes came from, in the database's words
	// ("pg_total_relation_size", "FILE_SIZE of its .ibd file").
	How string
}

// TableCopier copies a table on the server (CREATE TABLE AS, SELECT INTO):
// the logcopy experiment's measure of the transaction log's write rate.
type TableCopier interface {
	// CopyTable creates dst (in dst.Where), records it as dbprobe's and
	// fills it with src's rows in one statement and one transaction. The
	// copy has src's rows, not its primary key: what is measured is the
	// writing of the rows, as SELECT INTO does. degree is how many
	// processes or threads may read src at once, the leader included:
	// PostgreSQL's parallel workers plus one, SQL Server's MAXDOP; 0 or 1
	// copies serially, and more on a database that copies only serially
	// is Unsupported.
	CopyTable(ctx context.Context, src, dst DataTable, degree int) (CopyResult, error)
}

// CopyResult is what a table copy did.
type CopyResult struct {
	// Rows is how many rows were copied.
	Rows int64
	// Degree is the degree the copy ran at (PostgreSQL: its workers
	// launched, plus the leader; How says how many were planned), or the
	// degree asked for where it is not read back (SQL Server's MAXDOP is
	// a ceiling).
	Degree int
	// How says what ran, in the database's words.
	How string
}

// ChunkWriter copies rows from one table into another by INSERT … SELECT
// on the server: the write experiment's chunks.
type ChunkWriter interface {
	// InsertSelect inserts into dst the rows of src whose id runs from
	// first to last, inclusive, each with shift added to its id, in one
	// statement and one transaction, and returns how many it inserted.
	InsertSelect(ctx context.Context, src, dst DataTable, first, last, shift int64) (int64, error)
}

// TableScanner reads a table on the server without sending its rows: the
// scan experiment's cold read.
type TableScanner interface {
	// ScanTable reads the part-th of parts equal slices of t (by its
	// pages where the database can name them, PostgreSQL's ctid; by id
	// range elsewhere, which is the order the rows are stored in), every
	// row's payload included, and returns what it saw.
	ScanTable(ctx context.Context, t DataTable, part, parts int) (ScanResult, error)
}

// ScanSlice returns the part-th of parts equal ranges of lo…hi, inclusive,
// the slice a TableScanner reads by id or by page; an empty range (from >
// to) when there are fewer values than parts.
func ScanSlice(lo, hi int64, part, parts int) (from, to int64) {
	n := hi - lo + 1
	if n <= 0 {
		return lo, lo - 1
	}
	from = lo + n*int64(part)/int64(parts)
	to = lo + n*int64(part+1)/int64(parts) - 1
	return from, to
}

// ScanResult is what a scan read.
type ScanResult struct {
	// Rows is how many rows the scan read.
	Rows int64
	// PayloadBytes is the sum of their payloads' lengths: the data, not
	// the pages it sits in (TableSize has those).
	PayloadBytes int64
}

// BulkLoader loads rows through the database's bulk API: the bulk
// experiment's writers, one BulkWriter per writer goroutine.
type BulkLoader interface {
	// BulkWriter opens a writer of its own connection into t, which
	// dbprobe must have created.
	BulkWriter(ctx context.Context, t DataTable) (BulkWriter, error)
}

// BulkWriter loads batches of rows into one table. It is not safe for
// concurrent use; N writers load at once.
type BulkWriter interface {
	// Write loads one batch, row i being ids[i] and payloads[i], in one
	// transaction: every row or none.
	Write(ctx context.Context, ids []int64, payloads [][]byte) error
	// How names the path the rows take ("COPY FROM STDIN", "LOAD DATA
	// LOCAL INFILE", "multi-row INSERT: …"), which may change at the
	// first Write (a server that refuses LOAD DATA LOCAL).
	How() string
	// Close releases the writer's connection.
	Close() error
}

// Placer puts tables on a given directory: the stress experiment's
// --placement, where a DBA compares one disk with another.
type Placer interface {
	// CreateLocation makes dir, a directory on the database server's
	// host, ready to hold tables (a tablespace, a filegroup and its
	// file), recorded as dbprobe's. DataTables given the Location are
	// created there.
	CreateLocation(ctx context.Context, dir string) (Location, error)
	// DropLocation removes what CreateLocation made; its tables must be
	// dropped first (nothing is dropped with it).
	DropLocation(ctx context.Context, l Location) error
	// Leftovers returns the Locations the marker table records as
	// dbprobe's that are still there, as they were made (a run killed
	// before its end, or one that kept them with --keep), so that a new
	// run can drop them before it makes its own in the same directory.
	// A database whose Locations leave nothing behind (MySQL's DATA
	// DIRECTORY, named on each table) returns none.
	Leftovers(ctx context.Context) ([]Location, error)
}

// CostReader reads what statements cost the server, from its own
// cumulative counters: the stress experiment reads them before and after
// the measurement and reports the difference per statement and per
// iteration, as SQLQueryStress shows logical reads.
type CostReader interface {
	// Costs returns the counters now, for each of texts (statements as
	// the user wrote them, with :name parameters, which the driver binds
	// as it does when preparing them, to find the server's entry) and for
	// the whole database. Per-statement figures come from PostgreSQL's
	// pg_stat_statements, MySQL's and MariaDB's
	// performance_schema.events_statements_summary_by_digest, SQL
	// Server's sys.dm_exec_query_stats; where those are not there, the
	// database's figures still are (pg_stat_database, SHOW GLOBAL
	// STATUS), and Costs.Notes says what is missing and how to turn it on.
	//
	// A reading holds the work of every SQLConn of the DB closed before
	// it was asked for: where the server counts a connection's work only
	// when it reports it (PostgreSQL's pg_stat_database, up to a second
	// late, and at the latest when the connection ends), Costs waits,
	// bounded, for the server to end the connections closed since the
	// last reading, and says in Notes when it could not.
	Costs(ctx context.Context, texts []string) (Costs, error)
}

// Costs is a reading of the server's cost counters. Every figure is a
// running total: two readings are subtracted (Cost.Sub).
type Costs struct {
	// Source names where the figures came from, in the database's words:
	// "pg_stat_statements; pg_stat_database".
	Source string
	// Statements holds one Cost per text asked for, in order. Where the
	// per-statement source is on, a statement it has no entry for has
	// not run: zero for every figure the source counts, so that a first
	// reading taken before the statement ran subtracts; where the source
	// is off, every figure is unknown.
	Statements []Cost
	// Database is the whole database's, every session's: the monitor's
	// and other clients' work is in it too.
	Database Cost
	// PageBytes is the size of one page (block) of the reads' counts.
	PageBytes int64
	// Notes say what the database does not count here and how to have
	// it counted ("pg_stat_statements is not installed: …").
	Notes []string
}

// Cost is the server's running totals for one statement or the whole
// database; a figure is Unknown (-1) where the database does not count it.
type Cost struct {
	// Calls is how many times the statement ran (for the database: the
	// transactions committed).
	Calls int64
	// LogicalReads are the pages read, from the cache or from storage
	// (PostgreSQL shared_blks_hit + shared_blks_read, InnoDB buffer pool
	// read requests, SQL Server logical reads).
	LogicalReads int64
	// PhysicalReads are the pages that were not in the database's cache.
	PhysicalReads int64
	// Rows are the rows returned or changed (MySQL: rows examined are in
	// RowsExamined).
	Rows         int64
	RowsExamined int64
	// CPU and Elapsed are server time in nanoseconds.
	CPU     int64
	Elapsed int64
}

// Unknown is a Cost figure the database does not count.
const Unknown = -1

// Sub returns c minus an earlier reading of the same counters; a figure
// unknown in either is Unknown.
func (c Cost) Sub(earlier Cost) Cost {
	d := func(a, b int64) int64 {
		if a == Unknown || b == Unknown {
			return Unknown
		}
		return a - b
	}
	return Cost{
		Calls: d(c.Calls, earlier.Calls), LogicalReads: d(c.LogicalReads, earlier.LogicalReads),
		PhysicalReads: d(c.PhysicalReads, earlier.PhysicalReads), Rows: d(c.Rows, earlier.Rows),
		RowsExamined: d(c.RowsExamined, earlier.RowsExamined), CPU: d(c.CPU, earlier.CPU), Elapsed: d(c.Elapsed, earlier.Elapsed),
	}
}

// UnknownCost is a Cost with every figure Unknown.
var UnknownCost = Cost{Calls: Unknown, LogicalReads: Unknown, PhysicalReads: Unknown, Rows: Unknown, RowsExamined: Unknown, CPU: Unknown, Elapsed: Unknown}

// TempPlacer puts the database's temporary files (sorts and hashes that
// spill, temporary tables) in a Location, per session: the stress
// experiment's --placement-temp.
type TempPlacer interface {
	// TempSetup returns the statements that send a session's temporary
	// files to l (PostgreSQL SET temp_tablespaces; SQLite PRAGMA
	// temp_store_directory), to run on every connection when it opens
	// (SQLOptions.Setup).
	TempSetup(l Location) ([]string, error)
}

// Locator says where a DataTable's rows are on the server's host: the
// stress experiment's header names the device and file system they live
// on.
type Locator interface {
	// TablePath returns the file that holds t's rows, as the database
	// reports it (PostgreSQL data_directory and pg_relation_filepath,
	// InnoDB's FILE_NAME, SQL Server's sys.database_files, SQLite its
	// database file): a path on the server's host, absolute.
	TablePath(ctx context.Context, t DataTable) (string, error)
}

// CacheSizer reads the size of the database's own cache of table pages
// (PostgreSQL shared_buffers, InnoDB's buffer pool, SQL Server's buffer
// pool, SQLite's page cache): a cold scan's table is made larger than it
// by default, so that the database cannot answer the scan from memory.
type CacheSizer interface {
	// CacheSize returns the cache's size as the database reports it now.
	CacheSize(ctx context.Context) (CacheSize, error)
}

// CacheSize is the size of a database's own cache of table pages.
type CacheSize struct {
	// Bytes is the cache's size in bytes.
	Bytes int64
	// How says where it came from, in the database's words
	// ("shared_buffers = 128MB").
	How string
}

// CacheCounter reads the database's own counts of the pages its reads
// asked of its cache and of those it had to read in: the cache
// experiment's hit share, as a difference between two calls.
type CacheCounter interface {
	// CacheCounts returns the counts now, cumulative: t's own (its rows
	// and its indexes) where the database counts per table, else the
	// whole server's (CacheCounts.PerTable says which).
	CacheCounts(ctx context.Context, t DataTable) (CacheCounts, error)
}

// CacheCounts are a database's cumulative counts of its cache's work.
type CacheCounts struct {
	// Requests is the pages asked of the cache, found there or not;
	// Misses those not found, which the database read in.
	Requests, Misses int64
	// PageBytes is the size of a page, which turns Misses into bytes.
	PageBytes int64
	// PerTable says the counts are the table's (and its indexes');
	// otherwise every session's on the server is in them.
	PerTable bool
	// How names the counters, in the database's words
	// ("pg_statio_user_tables heap_blks_hit + idx_blks_hit, …").
	How string
	// OSCache says whether the database reads the pages it misses
	// through its host's page cache, which may then serve them from
	// memory; OSCacheHow says how that is known.
	OSCache    OSCacheUse
	OSCacheHow string
}

// OSCacheUse says whether a database's reads go through the host's page
// cache.
type OSCacheUse int

// The ways a database reads its files.
const (
	// OSCacheUnknown: the database does not say.
	OSCacheUnknown OSCacheUse = iota
	// OSCacheThrough: buffered reads (PostgreSQL), which the host's page
	// cache may answer: a miss of the database's cache is not
	// necessarily a read of the device.
	OSCacheThrough
	// OSCacheBypassed: direct I/O (InnoDB's O_DIRECT, SQL Server):
	// every miss is a read of the device.
	OSCacheBypassed
)

// String says it in words.
func (u OSCacheUse) String() string {
	switch u {
	case OSCacheThrough:
		return "through the OS page cache"
	case OSCacheBypassed:
		return "bypassing the OS page cache"
	}
	return "not known"
}

// Capability is one thing a database can do beyond the key-value Session.
type Capability int

// The capabilities, each with the interface that provides it.
const (
	// CapSQL runs SQL text with :name parameters (SQLRunner).
	CapSQL Capability = iota
	// CapCancel stops a running statement on the server when its context
	// ends, from another connection or by the protocol's own signal.
	CapCancel
	// CapFill creates DataTables and fills them on the server
	// (TableFiller).
	CapFill
	// CapSize reports a table's size on disk (TableSizer).
	CapSize
	// CapCopy copies a table on the server (TableCopier).
	CapCopy
	// CapParallelCopy copies it at a chosen degree of parallelism.
	CapParallelCopy
	// CapInsertSelect copies rows by INSERT … SELECT (ChunkWriter).
	CapInsertSelect
	// CapScan reads a table on the server (TableScanner).
	CapScan
	// CapBulkLoad loads rows through the bulk API with N writers
	// (BulkLoader).
	CapBulkLoad
	// CapPlace puts tables on a given directory (Placer).
	CapPlace
	// CapCounters is a monitor whose samples carry the standard counters
	// (CounterLogBytes, …; Monitorable).
	CapCounters
	// CapSimpleProtocol sends statements as text with their parameters
	// put in by the client library (SQLOptions.Simple).
	CapSimpleProtocol
	// CapExplain shows a statement's plan (Explainer).
	CapExplain
	// CapCosts reads what statements cost the server (CostReader).
	CapCosts
	// CapTempPlace puts temporary files in a Location (TempPlacer).
	CapTempPlace
	// CapLocate says which file holds a table (Locator).
	CapLocate
	// CapCacheSize reads the size of the database's cache (CacheSizer).
	CapCacheSize
	// CapCacheCounts reads the database's cache hits and misses
	// (CacheCounter).
	CapCacheCounts
	numCapabilities
)

var capabilityNames = [...]string{
	"SQL text", "server-side cancel", "server-side table fill", "table size on disk",
	"server-side table copy", "parallel table copy", "INSERT … SELECT in chunks", "server-side table scan",
	"bulk load", "table placement on a directory", "standard monitor counters",
	"simple query protocol", "statement plans", "statement costs", "temporary files on a directory", "table file location",
	"cache size", "cache hit counters",
}

// String names the capability in messages.
func (c Capability) String() string { return nameOf(capabilityNames[:], int(c), "capability") }

// AllCapabilities lists every capability in order.
func AllCapabilities() []Capability {
	out := make([]Capability, numCapabilities)
	for i := range out {
		out[i] = Capability(i)
	}
	return out
}

// Support is whether a database has one capability, and how or why not.
type Support struct {
	Capability Capability
	// OK says the database has it.
	OK bool
	// Note says how, in the database's words, when it has it ("CREATE
	// TABLE AS with max_parallel_workers_per_gather"), and why not, and
	// what to do instead, when it does not ("SQLite has one writer and
	// copies serially").
	Note string
}

// Capabilities says which capabilities a database has.
type Capabilities struct {
	// Database names it as its users do: "PostgreSQL", "SQLite".
	Database string
	list     [numCapabilities]Support
}

// NewCapabilities returns the description of a database that has none of
// the capabilities yet.
func NewCapabilities(database string) Capabilities {
	c := Capabilities{Database: database}
	for i := range c.list {
		c.list[i] = Support{Capability: Capability(i)}
	}
	return c
}

// Has records that the database has capability c, and how.
func (c *Capabilities) Has(cap Capability, how string) {
	c.list[cap] = Support{Capability: cap, OK: true, Note: how}
}

// Lacks records that the database lacks capability c, and why.
func (c *Capabilities) Lacks(cap Capability, why string) {
	c.list[cap] = Support{Capability: cap, Note: why}
}

// Support returns what the description says of capability c.
func (c Capabilities) Support(cap Capability) Support {
	if cap < 0 || cap >= numCapabilities {
		return Support{Capability: cap}
	}
	return c.list[cap]
}

// OK reports whether the database has capability c.
func (c Capabilities) OK(cap Capability) bool { return c.Support(cap).OK }

// List returns every capability's support, in order.
func (c Capabilities) List() []Support { return append([]Support(nil), c.list[:]...) }

// Need returns nil when the database has every capability listed, and
// otherwise one line of bad input naming the database and the first it
// lacks: "SQLite has no parallel table copy: it has one writer and copies
// serially; use --dop 1".
func (c Capabilities) Need(caps ...Capability) error {
	for _, cap := range caps {
		s := c.Support(cap)
		if s.OK {
			continue
		}
		why := s.Note
		if why == "" {
			why = "dbprobe does not do it there"
		}
		return badinput.New("%s has no %s: %s", c.Database, cap, why)
	}
	return nil
}

// Describer is the capability of a DB to say which capabilities it has.
type Describer interface {
	Capabilities() Capabilities
}

// Describe returns db's capabilities: what it says of itself, or none,
// under its driver's name, for a DB that does not describe itself.
func Describe(db DB) Capabilities {
	if d, ok := db.(Describer); ok {
		return d.Capabilities()
	}
	c := NewCapabilities(db.Info().Driver)
	for i := range c.list {
		c.list[i].Note = "the " + db.Info().Driver + " driver does only key-value operations"
	}
	return c
}

// Provides reports whether db implements the interface that gives
// capability c (CapCancel and CapParallelCopy need none of their own).
func Provides(db DB, c Capability) bool {
	var ok bool
	switch c {
	case CapSQL:
		_, ok = db.(SQLRunner)
	case CapCancel, CapSimpleProtocol, CapExplain:
		// Said of connections and statements (SQLOptions, Explainer on a
		// SQLConn), which the DB's type cannot show.
		ok = true
	case CapFill:
		_, ok = db.(TableFiller)
	case CapSize:
		_, ok = db.(TableSizer)
	case CapCopy, CapParallelCopy:
		_, ok = db.(TableCopier)
	case CapInsertSelect:
		_, ok = db.(ChunkWriter)
	case CapScan:
		_, ok = db.(TableScanner)
	case CapBulkLoad:
		_, ok = db.(BulkLoader)
	case CapPlace:
		_, ok = db.(Placer)
	case CapCounters:
		_, ok = db.(Monitorable)
	case CapCosts:
		_, ok = db.(CostReader)
	case CapTempPlace:
		_, ok = db.(TempPlacer)
	case CapLocate:
		_, ok = db.(Locator)
	case CapCacheSize:
		_, ok = db.(CacheSizer)
	case CapCacheCounts:
		_, ok = db.(CacheCounter)
	}
	return ok
}

// ownsNoInterface reports the capabilities a DB may lack while it has the
// interface they are checked by: those said of connections, a parallel
// copy (a TableCopier that copies serially), and standard counters (a
// monitor may sample without the standard names).
func ownsNoInterface(c Capability) bool {
	switch c {
	case CapCancel, CapSimpleProtocol, CapExplain, CapParallelCopy, CapCounters:
		return true
	}
	return false
}

// CheckDescription reports where db's description and its interfaces
// disagree: a capability it claims without the interface, or an interface
// it has without claiming the capability (not for CapCancel and
// CapParallelCopy, which have none of their own, nor CapCounters: a
// monitor may sample without the standard names). Every lacking
// capability must say why.
func CheckDescription(db DB) error {
	c := Describe(db)
	var bad []string
	for _, s := range c.List() {
		has := Provides(db, s.Capability)
		switch {
		case s.OK && !has:
			bad = append(bad, fmt.Sprintf("claims %s without the interface", s.Capability))
		case !s.OK && has && !ownsNoInterface(s.Capability):
			bad = append(bad, fmt.Sprintf("has the interface of %s without claiming it", s.Capability))
		case !s.OK && strings.TrimSpace(s.Note) == "":
			bad = append(bad, fmt.Sprintf("lacks %s without saying why", s.Capability))
		}
	}
	if c.OK(CapParallelCopy) && !c.OK(CapCopy) {
		bad = append(bad, "claims a parallel copy without a copy")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %s", c.Database, strings.Join(bad, "; "))
	}
	return nil
}
