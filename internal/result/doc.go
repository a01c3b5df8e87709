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
//   - The JSON result (Writer, Read): JSON Lines, one record per line, one
//     format for every experiment. A header record starts each phase and
//     names its experiment; the experiment's own records follow (a YCSB
//     phase's intervals, a durability check's cycles), then a summary
//     record. It is appended to while the run goes, each record in a
//     single write, so a run that is interrupted or killed still leaves
//     every interval or cycle it measured on disk; Read accepts a file
//     whose last line was cut and says so. Every series of an interval
//     carries its HDR histogram, so Repair (dbprobe recover) rebuilds the
//     summary of a killed run exactly, as the run would have written it
//     after its last complete interval, marked "recovered"; a durability
//     check's totals are rebuilt from its cycles.
//
// The package formats and parses only: it knows no database and imports no
// driver, so reports can be built from result files on any machine.
//
// # JSON schema, version 2
//
// Every line is an object whose "type" names the record. The header
// ("header") carries "schema_version" and "experiment", the kind of
// experiment the phase is; the kind decides which records follow it and
// what its summary holds:
//
//   - "ycsb" (dbprobe load, run, ycsb): "interval" records, one per tick,
//     each series with its histogram; "monitor" records, the monitor's
//     samples; a "summary" of operations, latencies, errors and retries,
//     the one YCSB's text output prints, with what ended the phase
//     ("ended": "count", "time", "interrupt", "error" or "unreachable")
//     and, for a phase stopped early, "stopped" (reason "fatal" or
//     "unreachable", cause, code, op, at, since, text). Errors and
//     retries are counted by code as "ERROR(CODE NAME)" and "CODE NAME"
//     (the name, the code's meaning in the database's words, is added
//     when the driver knows it, after the code, so that a key matched by
//     its code's prefix still matches; results written before have the
//     code alone). A run with reads sent to a replica (--read-db) adds
//     "replica" to its summary (ReplicaSummary: reads, reads_checked,
//     stale_reads, stale_missing, keys_tracked, tracked_bytes, "lag" with
//     the heartbeat's figures in milliseconds and each heartbeat's lag
//     (lags_ms), and "seconds", each second's lag_ms, checked and stale,
//     counted from seconds_from, a whole second of the wall clock; a
//     merged one has "clients"). A sharded run (--shard) adds "shards",
//     each shard's calls and their histogram (ShardSummary).
//   - "durability" (dbprobe durability): the header's settings are the
//     check's (database, durability, cycles, writers, crash-after, seed)
//     and its database is the one the check started; a "cycle" record per
//     crash cycle checked (cycle, start, end, crash_after_ms,
//     acknowledged, lost, pattern "none", "tail" or "scattered",
//     lost_window_ms, first_lost_position, unacknowledged_present,
//     earlier_lost, recovery_ms); a "summary" of the totals (runtime_ms,
//     interrupted, cycles_checked, acknowledged, lost, tail_cycles,
//     scattered_cycles, passed, verdict, caveat), without a YCSB
//     summary's operation fields.
//
// A phase run as one client of several (--client-index, --client-count)
// has "client" in its header: index, count, slice (what it did, in a
// line), insert_start and insert_count (a load's records), operations,
// insert_stride and insert_offset (a run's share and its inserts' key
// numbers), target, start_at, monitors, and clock (offset_us, the
// database server's clock less the client's, rtt_us, query, at). A result
// written by dbprobe merge has "merge" in its summary: clients (each
// one's file, host, ops, runtime_ms, throughput, start, end, clock,
// diagnosis, ended, outages), window_start and window_end (the span every
// client measured, which the summary's figures cover), outside (per client,
// ops and seconds measured outside it), all_ops, all_series and
// all_errors (every client's operations, window or not), clock_spread_us
// and monitor_client.
//
// A reader rejects a schema version it does not know rather than misread
// it. Durations are in keys ending in "_ms" (milliseconds, exact to the
// nanosecond as a decimal fraction); times are RFC 3339 with nanoseconds.
// Adding a field, a record type or an experiment kind is compatible
// (readers skip the record types they do not know, and read the summary
// of a kind they do not know only as the end of its phase); changing the
// meaning of an existing field requires a new SchemaVersion.
//
// # What changed from version 1
//
// Version 1 had one experiment, YCSB, and its header no "experiment"; Read
// still reads it, as a "ycsb" phase, and dbprobe recover repairs it (the
// summary record it adds is the same in both versions, so the file stays
// version 1). Version 2 adds "experiment" to the header, and the
// "durability" kind with its "cycle" record and its summary. The version
// changed, although new fields and records alone would not need it,
// because a "summary" record now means what its phase's experiment says:
// a version 1 reader would read a durability check's summary as a YCSB
// phase that did nothing.
package result
