// Package ycsb is the key-value experiment: YCSB's load and run phases of
// a workload on a driver's table, done step by step on the runner's worker
// seam. A load step inserts a batch of records; a run step is one
// operation of the workload's mix (read, update, insert, scan or
// read-modify-write), checked against dataintegrity's values when asked.
// The runner paces, retries, times out, reconnects and records them.
//
// Run is the experiment around them (experiment.go): it resolves the
// configuration the commands give it (Config), connects to the target,
// prepares the table (it creates one, or refuses to touch rows it did not
// write), and for each phase writes a header of every setting and its
// source, runs the phase beside the monitor, and writes its summary, with
// the verdict, to every output. A phase the runner stopped early (a
// failure more attempts cannot fix, a server that did not come back) ends
// the command with one line saying why, what was done and what to do
// (stop.go).
//
// With a replica (--read-db, replica.go) a run's reads and scans go to
// it, on a second session per worker; writes stamp versions and reads are
// judged by package replica, whose heartbeat measures the lag.
package ycsb
