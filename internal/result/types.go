package result

import (
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// SchemaVersion is the version of the JSON result written by this package.
// Read accepts it and the versions before it that it still understands
// (readVersions) and rejects any other: a reader that guessed at a newer
// layout would report wrong numbers without noticing.
const SchemaVersion = 2

// readVersions are the schema versions Read accepts, oldest first.
var readVersions = []int{1, SchemaVersion}

// The experiment kinds, the "experiment" of a header record. Each kind
// decides which records follow its header and what its summary holds.
// The set is open: a newer dbprobe adds kinds within the same schema
// version, and Read accepts a kind it does not know (its records of
// unknown types are skipped); Repair refuses to rebuild one.
const (
	// ExperimentYCSB is a key-value workload phase (load or run): interval
	// and monitor records, and a summary of operations and latencies.
	ExperimentYCSB = "ycsb"
	// ExperimentDurability is a crash-durability check: cycle records and
	// a summary of acknowledged and lost writes (Summary.Durability).
	ExperimentDurability = "durability"
	// ExperimentStress is a run of SQL a user wrote (dbprobe stress):
	// interval and monitor records as a YCSB run has, its series one per
	// statement and [ITERATION], and a summary that also holds each
	// statement's rows, plans and server-side costs (Summary.Stress).
	ExperimentStress = "stress"
	// ExperimentStorage is a storage rate experiment (dbprobe storage
	// scan|read|write|bulk|logcopy): interval and monitor records as a
	// YCSB run has, its series one per kind of chunk, and a summary that
	// also holds the rate, its series, its proof and its verdict
	// (Summary.Storage).
	ExperimentStorage = "storage"
)

// Setting is one effective setting and where its value came from, so a
// result says what actually took effect, not what the user thinks they set.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Source is where the value came from: "default", "file workloads/workloada",
	// "-p", "--threads"… Empty for database settings, which the server reports.
	Source string `json:"source,omitempty"`
}

// Database describes the database under test as the driver found it.
type Database struct {
	Driver        string    `json:"driver"`
	Library       string    `json:"library,omitempty"`
	ServerVersion string    `json:"server_version,omitempty"`
	Settings      []Setting `json:"settings,omitempty"`
	// Placement is where the database ran: "server", "embedded" (in
	// dbprobe's process) or "none" (no database).
	Placement string `json:"placement,omitempty"`
}

// Environment describes the client machine, so a result can be judged
// (and a client-bound run recognised) long after the machine is gone.
type Environment struct {
	Dbprobe    string `json:"dbprobe"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Hostname   string `json:"hostname,omitempty"`
}

// Header describes one phase before it runs: what ran, against what, with
// which settings.
type Header struct {
	// Experiment is the kind of experiment, ExperimentYCSB or another; the
	// caller sets it, and Writer refuses a header without one. A header of
	// schema version 1, which had no kinds, reads as ExperimentYCSB.
	Experiment string
	// Phase is "load" or "run" (or the experiment's own phase name).
	Phase string
	// Command is the command line, secrets already redacted by the caller.
	Command string
	// RunID names the run (one id for all its phases), as the exported
	// metrics label their series; empty in results from before it.
	RunID     string
	StartedAt time.Time
	// Target is the database URL, redacted by the caller.
	Target string
	// Settings is every effective setting and where it came from.
	Settings []Setting
	// Notes are remarks on the configuration, e.g. "unknown property foo=bar
	// ignored", "warm-up 10s excluded from statistics".
	Notes       []string
	Environment Environment
	Database    Database
	// Client is set when the phase was one client's part of a run of
	// several (--client-count); nil otherwise.
	Client *Client
}

// Interval is what one tick (normally 1 s) measured.
type Interval struct {
	Phase      string
	Start, End time.Time
	// Elapsed is End minus the phase start.
	Elapsed time.Duration
	// Ops is the number of transactions finished in the interval.
	Ops       int64
	OpsPerSec float64
	// Warmup says the interval belongs to the warm-up and is excluded from
	// the summary; it is kept so the warm-up can still be seen in a report.
	Warmup bool
	Series []measure.Summary
}

// Summary is the outcome of one phase: what YCSB prints at the end.
type Summary struct {
	Phase string
	// RunTime is what [OVERALL], RunTime(ms) reports.
	RunTime time.Duration
	Ops     int64
	// Throughput is ops/s, what [OVERALL], Throughput(ops/sec) reports.
	// It is the caller's to compute; see WriteText for a zero RunTime.
	Throughput float64
	Series     []measure.Summary
	// Errors counts errors by code across the phase: "ERROR(23505)": 3,
	// "NOT_FOUND": 1…
	Errors      map[string]int64
	Interrupted bool
	// Recovered says the run wrote no summary (it was killed) and this one
	// was rebuilt from its intervals by dbprobe recover; see RecoverSummary.
	Recovered bool
	// Warmup is the warm-up time excluded from the figures.
	Warmup time.Duration
	// Diagnosis names what limited the phase, when it was monitored.
	Diagnosis *Diagnosis
	// Availability holds the outages and reconnections; nil when every
	// connection held.
	Availability *Availability
	// RetryLimit is how many times a failed operation could be repeated
	// (--retries); when above 0 every operation series gets a Retries line.
	RetryLimit int
	// Ending says which bound ended the phase; nil in results written
	// before it was recorded.
	Ending *Ending
	// Stopped says why the phase stopped before its count or its time (a
	// failure more attempts cannot fix, a database that did not come
	// back); nil when it was not stopped early, and in results written
	// before stops were recorded.
	Stopped *Stopped
	// Notes are remarks on the outcome, e.g. "interrupted by signal after
	// 12.3 s". Overflows need no note: WriteText flags them from Series.
	Notes []string
	// Durability holds the totals and verdict of a durability check, and
	// is nil for every other experiment. A durability summary has only
	// Phase, RunTime, Interrupted, Recovered and Notes besides it: it
	// counts writes, not operations with latencies.
	Durability *DurabilitySummary
	// Stress holds what a stress run measured beyond the series: each
	// statement's rows, plans and costs on the server. Nil for every
	// other experiment.
	Stress *StressSummary
	// Storage holds what a storage experiment measured beyond the
	// series: its rate, the counters behind it and its verdict. Nil for
	// every other experiment.
	Storage *StorageSummary
	// Merge says how the summary of a run of several clients was made
	// from theirs (dbprobe merge); nil in a client's own result.
	Merge *MergeSummary
	// Replica holds what reads sent to a replica (--read-db) measured:
	// stale reads and the replica's lag. Nil for every other run.
	Replica *ReplicaSummary
	// Shards holds what each shard of a sharded run (--shard) answered;
	// nil for a run on one database.
	Shards []ShardSummary
}

// StressSummary is what a stress run reports beside its series.
type StressSummary struct {
	// Statements are the scripts' statements, in the order of their
	// series.
	Statements []StressStatement `json:"statements"`
	// CostSource names where the server-side costs came from, in the
	// database's words ("pg_stat_statements; pg_stat_database"); empty
	// when they were not read.
	CostSource string `json:"cost_source,omitempty"`
	// PerIteration is the whole database's cost over the measured part
	// divided by the iterations measured: every session's work is in it,
	// the monitor's and other clients' included. Nil when not read.
	PerIteration *CostFigures `json:"per_iteration,omitempty"`
	// StatementsPerIteration is the sum of the statements' own costs over
	// the measured part divided by the iterations measured: what
	// SQLQueryStress's per-iteration logical reads are. Nil where the
	// database keeps no per-statement costs, or one statement that ran
	// was not found in them.
	StatementsPerIteration *CostFigures `json:"statements_per_iteration,omitempty"`
}

// StressStatement is one statement of a stress script and what it did.
type StressStatement struct {
	// Label names its series: the script's base name upper-cased and the
	// statement's place in it from 1 ("LOOP.SQL-3").
	Label string `json:"label"`
	// File is the script as given, Line the line the statement starts on.
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
	// Rows and Affected add up, over the measured executions that
	// succeeded, the rows it returned and those it changed; Affected is
	// -1 when the database never said (a statement that returns rows).
	Rows     int64 `json:"rows"`
	Affected int64 `json:"affected"`
	// Plan is its plan as checked before the measurement, with the first
	// parameter values; PlanEnd, with --explain, the analyzed plan at the
	// end; PlanChanged says the plan's shape at the end differs from the
	// one at the start.
	Plan        *Plan `json:"plan,omitempty"`
	PlanEnd     *Plan `json:"plan_end,omitempty"`
	PlanChanged bool  `json:"plan_changed,omitempty"`
	// Cost is what one call cost the server on average over the measured
	// part, from the database's per-statement counters; nil when it does
	// not keep them.
	Cost *CostFigures `json:"cost,omitempty"`
}

// Plan is a statement's plan as the database showed it.
type Plan struct {
	Text string `json:"text"`
	// How names what produced it ("EXPLAIN (ANALYZE, BUFFERS)").
	How string `json:"how"`
}

// CostFigures are averages of the server's cost counters: per call of a
// statement, or per iteration. A figure the database does not count is
// nil.
type CostFigures struct {
	// Calls is what the averages are over: the server's count of the
	// statement's calls, or the iterations measured.
	Calls         int64    `json:"calls"`
	LogicalReads  *float64 `json:"logical_reads,omitempty"`
	PhysicalReads *float64 `json:"physical_reads,omitempty"`
	Rows          *float64 `json:"rows,omitempty"`
	RowsExamined  *float64 `json:"rows_examined,omitempty"`
	// CPUMicros and ElapsedMicros are server time in microseconds.
	CPUMicros     *float64 `json:"cpu_us,omitempty"`
	ElapsedMicros *float64 `json:"elapsed_us,omitempty"`
}

// The patterns of a durability cycle's loss (Cycle.Pattern).
const (
	// PatternNone: every acknowledged write of the cycle was found.
	PatternNone = "none"
	// PatternTail: each writer lost only its most recent acknowledged
	// commits, the expected shape of asynchronous commit.
	PatternTail = "tail"
	// PatternScattered: a writer lost a commit and kept a later one, which
	// no cut of a log explains: a bug.
	PatternScattered = "scattered"
)

// Cycle is one crash cycle of a durability check: what the database
// acknowledged before it was killed and what it still held once it had
// restarted.
type Cycle struct {
	Phase string
	// Number counts the cycles from 1.
	Number int
	// Start is when the cycle's writers started; End when the restarted
	// database had been read back.
	Start, End time.Time
	// CrashAfter is how long after the cycle's first acknowledged commit
	// the database was killed.
	CrashAfter   time.Duration
	Acknowledged int
	// Lost counts the cycle's acknowledged rows missing after the restart.
	Lost int
	// Pattern is PatternNone, PatternTail or PatternScattered.
	Pattern string
	// LostWindow is how long before the kill was complete the oldest lost
	// row was acknowledged; 0 when nothing was lost.
	LostWindow time.Duration
	// FirstLostPosition is the 1-based place of the oldest lost row among
	// the cycle's acknowledgements, in the order they arrived; 0 when
	// nothing was lost.
	FirstLostPosition int
	// UnacknowledgedPresent counts rows committed whose acknowledgement
	// never arrived (in flight at the kill): allowed, and no loss.
	UnacknowledgedPresent int
	// EarlierLost counts rows of earlier cycles that their own check
	// found and this one did not.
	EarlierLost int
	// Recovery is how long the restart (crash recovery included) and the
	// read-back took.
	Recovery time.Duration
}

// DurabilitySummary is the outcome of a durability check, over the
// cycles it ran.
type DurabilitySummary struct {
	// Cycles counts the cycles checked (the header's "cycles" setting is
	// how many were asked for).
	Cycles       int
	Acknowledged int
	// Lost counts the acknowledged rows missing at the last check, those
	// of earlier cycles included: the sum of every cycle's Lost and
	// EarlierLost.
	Lost int
	// TailCycles and ScatteredCycles count the cycles whose loss had that
	// pattern.
	TailCycles, ScatteredCycles int
	// Passed is false when a loss was scattered, or writes were lost
	// under a durability setting that promises to lose none.
	Passed bool
	// Verdict says the outcome in a sentence.
	Verdict string
	// Caveat says what a process kill cannot reveal for the database and
	// setting that ran.
	Caveat string
}

// Ending is what ended a phase.
type Ending struct {
	// By is "count" (operationcount or insertcount done), "time"
	// (maxexecutiontime ran out) or "interrupt".
	By string `json:"by"`
	// Text says it in a sentence, for the "# ended:" line.
	Text string `json:"text"`
}

// The reasons a phase was stopped early (Stopped.Reason).
const (
	// StopFatal: a failure more attempts cannot fix (a full disk, a
	// read-only database), under --on-error stop.
	StopFatal = "fatal"
	// StopUnreachable: the database did not answer for
	// --reconnect-timeout in a phase without a duration.
	StopUnreachable = "unreachable"
)

// Stopped is why and when a phase stopped before its count or its time.
type Stopped struct {
	// Reason is StopFatal or StopUnreachable.
	Reason string `json:"reason"`
	// Cause is the failure in the database's words ("database or disk is
	// full"), or the last failed attempt to reconnect.
	Cause string `json:"cause"`
	// Code is the failure's code and name as the error counts show them
	// ("13 SQLITE_FULL"); empty when the failure has no code.
	Code string `json:"code,omitempty"`
	// Op is the operation that met it ("INSERT"); "RECONNECT" for an
	// unreachable database.
	Op string `json:"op,omitempty"`
	// At is when the phase was stopped.
	At time.Time `json:"at"`
	// Since is when the database stopped answering (StopUnreachable).
	Since time.Time `json:"since,omitzero"`
	// Text is the line the command ended with: the cause, what was done
	// before it and what to do.
	Text string `json:"text"`
}

// MonitorSample is what the monitor measured over one interval: the
// database's counters as rates, its sessions' waits, the host and the
// client, by namespaced metric name ("db.xact_commit/s",
// "db.wait.IO:WALSync", "host.cpu.iowait%", "client.cpu%").
type MonitorSample struct {
	Phase      string
	Start, End time.Time
	Metrics    map[string]float64
}

// Diagnosis is the monitor's verdict on what limited a phase.
type Diagnosis struct {
	// Limit is the class: "commit flush", "locks and conflicts", "read IO",
	// "server CPU", "client", "round trips", "none saturated".
	Limit string `json:"limit"`
	// Verdict is the one line printed after the summary.
	Verdict string `json:"verdict"`
	// Evidence are the averaged figures behind it, by name.
	Evidence map[string]float64 `json:"evidence,omitempty"`
}
