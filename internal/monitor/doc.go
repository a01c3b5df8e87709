// Package monitor watches the database, the host and the client while a run
// goes, and hands one set of figures per interval to its caller, so that a
// throughput figure can be read beside what limited it.
//
// One goroutine does everything. At every interval boundary (counted from
// Options.Origin, so that the figures line up with the runner's per-second
// series) it reads the database's counters through driver.Monitor, the
// host's /proc files and the process's own runtime figures; between
// boundaries it asks the database WaitSamples times, evenly spaced, what its
// active sessions are waiting on, and counts.
//
// Metric names say where a figure comes from and what unit it has:
//
//	db.<counter>/s              rate per second of a cumulative database counter
//	db.<gauge>                  database gauge at the end of the interval
//	db.wait.<event>             share (0–1) of dbprobe's sampled active sessions in
//	                            that wait; db.wait.CPU for those running
//	db.wait.other.<event>       the same among the server's other sessions
//	db.sessions.active          dbprobe's active sessions, average over the samples
//	db.sessions.other.active    the server's other active sessions, average
//	host.cpu.{user,system,iowait,steal,idle}%   share of all CPUs' time
//	host.disk.<dev>.{read_bytes/s,write_bytes/s,reads/s,writes/s,queue_ms/s,util%}
//	host.mem.available_bytes, host.mem.used%
//	client.cpu%                 this process's CPU time, percent of one core
//	client.gomaxprocs           how many threads may run Go code at once
//	client.cores                how many cores of CPU the process may use: the
//	                            fewest of GOMAXPROCS, its CPUs and its cgroup's quota
//	client.goroutines           goroutines at the end of the interval
//	client.gc.pause_ms          stop-the-world GC pause time in the interval
//	client.sched.latency_p99_ms 99th percentile of how long runnable goroutines
//	                            waited for a thread: the client's scheduling lag
//
// A figure that cannot be computed for an interval is left out rather than
// guessed: a counter that went down (a server restart, a reset) has no rate
// for that interval, a counter seen for the first time has none until the
// next one. What cannot be seen at all is named once in Notes.
//
// The monitor never fails a run: when the database monitor's connection
// fails, that is one note, database sampling stops, and the host and the
// client are still sampled.
package monitor
