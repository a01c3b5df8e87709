// Package result writes what a run measured, in the three forms people
// read it in, and reads the durable one back.
//
//   - The YCSB text output (WriteText): the exact lines YCSB's text exporter
//     prints ("[READ], 95thPercentileLatency(us), 2265"), so the scripts
//     people already have for YCSB keep working on dbprobe's output.
//     Everything dbprobe adds (the run header from WriteHeader, notes,
//     overflow flags, error counts) goes on lines starting with "# ", which
//     those scripts skip because they only look at lines starting with "[".
//   - The status line (StatusLine): YCSB's periodic progress line.
//   - The JSON result (Writer, Read): JSON Lines, one record per line, a
//     header record starting each phase, then one record per interval, then
//     a summary record. It is appended to while the run goes, each record in
//     a single write, so a run that is interrupted or killed still leaves
//     every interval it measured on disk; Read accepts a file whose last line
//     was cut and says so. Every series of an interval carries its HDR
//     histogram, so Repair (dbprobe recover) rebuilds the summary of a
//     killed run exactly, as the run would have written it after its last
//     complete interval, marked "recovered".
//
// The package formats and parses only: it knows no database and imports no
// driver, so reports can be built from result files on any machine.
//
// # JSON schema, version 1
//
// Every line is an object whose "type" is "header", "interval" or
// "summary". The header carries "schema_version"; a reader rejects a
// version it does not know rather than misread it. Durations are in keys
// ending in "_ms" (milliseconds, exact to the nanosecond as a decimal
// fraction); times are RFC 3339 with nanoseconds. Adding a field or a new
// record type is compatible (readers ignore what they do not know);
// changing the meaning of an existing one requires a new SchemaVersion.
package result
