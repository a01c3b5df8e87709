// Package driver is the one interface every database sits behind. Nothing
// above this layer knows a dialect: the runner asks a Session to read,
// update, insert, scan or delete a record, and classifies what went wrong
// with the predicates here (IsRetryable, IsConnLost, IsTimeout), never by
// looking at a driver's own error types.
//
// Beside the key-value Session, a DB may have optional capabilities,
// found by type assertion as Monitorable is (capabilities.go): SQL text
// with :name parameters (SQLRunner), server-side fill, copy, INSERT …
// SELECT and scan of a DataTable (TableFiller, TableCopier, ChunkWriter,
// TableScanner), its size on disk (TableSizer), bulk loading with N
// writers (BulkLoader) and placement on a directory (Placer). Describe
// says which a DB has, and why not when not, so that an experiment can
// refuse with one line; the conformance suite (drivertest) holds each
// driver's description against its interfaces.
//
// Replicated (replica.go), found the same way, says what role a server
// plays in replication and keeps a heartbeat table for --read-db; it is
// not among the described capabilities, as a DB has it or not by its
// driver alone.
//
// A Monitor's samples carry each database's counters under its own names
// and the standard ones every experiment reads (CounterLogBytes and the
// others, counters.go).
//
// What the drivers share lives here too: Connecting says why Open failed
// (the network's reasons, TLS, the password kept out of the message), and
// package sqlgen builds the SQL text the four SQL drivers send.
//
// Drivers register themselves by URL scheme in init(), the way database/sql
// drivers do; internal/driver/all holds the blank imports so that no backend
// is silently left out of the build.
package driver
