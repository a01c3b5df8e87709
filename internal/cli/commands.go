package cli

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/runner"
)

// ycsbCommon is the part of load's, run's and ycsb's help they share: the
// generated reference (docs/reference) carries it, so what the flags'
// one-line usages leave out is said here, not in a hand-kept table.
const ycsbCommon = `

The database: --db takes a URL (env DBPROBE_DB): postgres://, mysql:// (or
mariadb://), sqlserver://, redis:// (rediss:// for TLS), sqlite: or null.
SQLite takes sqlite:///abs/path.db, sqlite:rel.db or sqlite::memory:, with
options such as ?synchronous=NORMAL&journal_mode=WAL&busy_timeout=5000;
vfs=unix-excl, the default, locks the file to dbprobe for the run and keeps
SQLite's locks in memory, and vfs=unix lets other processes open the file
meanwhile. null is no database: it measures dbprobe itself. load and ycsb
without --db use a new SQLite database in a temporary directory; run needs
--db. The password comes from the URL, DBPROBE_PASSWORD or --password-file,
and is never printed.

Settings: YCSB properties with YCSB's names and semantics, so an existing
properties file works unchanged. Later sources win: --workload (or the
built-in workloads/workloada when no -P is given), then -P files in order,
then -p key=value, then the flags that set a property (their usage names
it). The built-in workloads/workloada … workloadf work from any directory.
YCSB's single-dash -threads N and -target N are accepted too. Every
setting in force, with where it came from, heads the results.

Retries: --retries N repeats an operation that failed with a retryable
error: the whole transaction, a load batch as a whole. The first wait is
--retry-backoff, doubling up to --retry-max-backoff, each drawn from its
upper half.

Outputs: the results on stdout, status lines (-s) on stderr; --out FILE
keeps the JSON result, with the monitor's samples; --influx-out writes
InfluxDB line protocol; --metrics-addr serves Prometheus metrics, for which
deploy/grafana/ holds a dashboard.`

// runEnds says how a run phase ends and what open loop means, for run's
// and ycsb's help.
const runEnds = `

How a run ends: after operationcount operations (--operations) or after
--duration (maxexecutiontime), whichever comes first. With --duration, an
operationcount that only a built-in workload file or the default (1000)
gives way, so the run lasts the whole duration; one you set (-p,
--operations, your own -P file) stands. The header says in advance what
will end each phase (ends), the summary which bound did (# ended:).
--warmup leaves the run's first part out of the statistics; its operations
still count toward operationcount.

Closed loop by default. With --target (property target) it runs open loop:
every operation has an intended start time, and its latency from that time
is reported as Intended-READ etc., so a stall is never hidden.`

// loadPacing says how --target paces a load, for load's and ycsb's help.
const loadPacing = `

With --target a load paces rows: they are due at that rate, and a batch
goes out when its last row is due.`

const ycsbExamples = `  dbprobe ycsb
  dbprobe load --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada -p recordcount=1000000 --threads 16
  dbprobe run  --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada -p operationcount=1000000 --threads 200 -s
  dbprobe run  --db sqlite:///tmp/bench.db --workload b --target 5000 --duration 1m --out result.jsonl
  dbprobe load --db mysql://ycsb@127.0.0.1:3306/bench -p recordcount=1000000 --table-type memory --threads 8
  dbprobe run  --db mysql://ycsb@127.0.0.1:3306/bench -p operationcount=1000000 --threads 64 --durability delayed --op-path procedure --retries 5`

func newLoadCommand() *cobra.Command {
	cmd, o := newYCSBFlags("load")
	cmd.Short = "Load the YCSB table: insert recordcount records"
	cmd.Long = `load creates the YCSB table (usertable: YCSB_KEY varchar(255) primary key,
FIELD0…FIELDn varchar(fieldlength) NOT NULL) when it is absent, records that
dbprobe created it, and inserts the records insertstart …
insertstart+insertcount-1 in batches of db.batchsize rows (PostgreSQL: COPY;
--no-copy: multi-row INSERT).

With -p fieldlengthdistribution=histogram, field lengths are drawn from the
histogram file fieldlengthhistogram names (default hist.txt; a relative path is
from the working directory, as in YCSB), and its longest length sizes the
FIELD columns instead of fieldlength.

A table that holds rows dbprobe did not write is never loaded into, emptied or
dropped; --drop-existing drops only a table dbprobe created.` + loadPacing + ycsbCommon
	cmd.Example = ycsbExamples
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return execute(cmd, o, ycsbPhases["load"])
	}
	return cmd
}

func newRunCommand() *cobra.Command {
	cmd, o := newYCSBFlags("run")
	cmd.Short = "Run the YCSB transaction phase: operationcount operations of the workload's mix"
	cmd.Long = `run executes the workload's mix of reads, updates, inserts, scans and
read-modify-writes against a table dbprobe load filled, and prints YCSB's
text results: [OVERALL] RunTime and Throughput, and per operation its count,
average, min, max and percentile latencies in microseconds and Return= counts.

With a table type given (--table-type or -p tabletype=…), run refuses a
table stored otherwise, rather than label its figures wrongly.` + runEnds + ycsbCommon
	cmd.Example = ycsbExamples
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return execute(cmd, o, ycsbPhases["run"])
	}
	return cmd
}

func newYCSBCommand() *cobra.Command {
	cmd, o := newYCSBFlags("ycsb")
	cmd.Short = "Load then run a YCSB workload (default: workload A on a new SQLite database)"
	cmd.Long = `ycsb runs load and then run with the same settings. With no --db it
creates an SQLite database in a temporary directory (and says where),
loads it, runs core workload A and removes it (--keep-db keeps it).
A phase stopped by Ctrl-C is the last: ycsb stops after it.` + runEnds + loadPacing + ycsbCommon
	cmd.Example = ycsbExamples
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return execute(cmd, o, ycsbPhases["ycsb"])
	}
	return cmd
}

// ycsbPhases are the phases each YCSB command runs, by its name.
var ycsbPhases = map[string][]runner.Phase{
	"load": {runner.Load},
	"run":  {runner.Run},
	"ycsb": {runner.Load, runner.Run},
}

// newYCSBFlags builds the YCSB command name ("load", "run" or "ycsb")
// with its flags and the options they fill, but no help and no action.
// The commands and the sweep, which parses each variant's command line
// into a fresh copy, both build theirs here, so that a flag added to one
// of the commands is never missed by the sweep.
func newYCSBFlags(name string) (*cobra.Command, *options) {
	o := &options{}
	cmd := &cobra.Command{Use: name, Args: cobra.NoArgs}
	addCommonFlags(cmd, o)
	if slices.Contains(ycsbPhases[name], runner.Load) {
		addLoadFlags(cmd, o)
	}
	if slices.Contains(ycsbPhases[name], runner.Run) {
		addRunFlags(cmd, o)
	}
	if name == "ycsb" {
		cmd.Flags().BoolVar(&o.keepDB, "keep-db", false, "keep the temporary SQLite database created when no --db is given")
		setGroup(cmd.Flags(), groupTarget, "keep-db")
	}
	return cmd, o
}
