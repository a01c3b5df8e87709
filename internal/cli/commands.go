package cli

import (
	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/runner"
)

const ycsbExamples = `  dbprobe ycsb
  dbprobe load --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada -p recordcount=1000000 --threads 16
  dbprobe run  --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada -p operationcount=1000000 --threads 200 -s
  dbprobe run  --db sqlite:///tmp/bench.db --workload b --target 5000 --duration 1m --out result.jsonl
  dbprobe load --db mysql://ycsb@127.0.0.1:3306/bench -p recordcount=1000000 --table-type memory --threads 8
  dbprobe run  --db mysql://ycsb@127.0.0.1:3306/bench -p operationcount=1000000 --threads 64 --durability delayed --op-path procedure --retries 5`

func newLoadCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load the YCSB table: insert recordcount records",
		Long: `load creates the YCSB table (usertable: YCSB_KEY varchar(255) primary key,
FIELD0…FIELDn varchar(fieldlength) NOT NULL) when it is absent, records that
dbprobe created it, and inserts the records insertstart …
insertstart+insertcount-1 in batches of db.batchsize rows (PostgreSQL: COPY;
--no-copy: multi-row INSERT).

With -p fieldlengthdistribution=histogram, field lengths are drawn from the
histogram file fieldlengthhistogram names (default hist.txt; a relative path is
from the working directory, as in YCSB), and its longest length sizes the
FIELD columns instead of fieldlength.

A table that holds rows dbprobe did not write is never loaded into, emptied or
dropped; --drop-existing drops only a table dbprobe created.`,
		Example: ycsbExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return execute(cmd, o, []runner.Phase{runner.Load})
		},
	}
	addCommonFlags(cmd, o)
	addLoadFlags(cmd, o)
	return cmd
}

func newRunCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the YCSB transaction phase: operationcount operations of the workload's mix",
		Long: `run executes the workload's mix of reads, updates, inserts, scans and
read-modify-writes against a table dbprobe load filled, and prints YCSB's
text results: [OVERALL] RunTime and Throughput, and per operation its count,
average, min, max and percentile latencies in microseconds and Return= counts.

Closed loop by default. With --target (property target) it runs open loop:
every operation has an intended start time, and its latency from that time
is reported as Intended-READ etc., so a stall is never hidden.`,
		Example: ycsbExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return execute(cmd, o, []runner.Phase{runner.Run})
		},
	}
	addCommonFlags(cmd, o)
	addRunFlags(cmd, o)
	return cmd
}

func newYCSBCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "ycsb",
		Short: "Load then run a YCSB workload (default: workload A on a new SQLite database)",
		Long: `ycsb runs load and then run with the same settings. With no --db it
creates an SQLite database in a temporary directory (and says where),
loads it, runs core workload A and removes it (--keep-db keeps it).`,
		Example: ycsbExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return execute(cmd, o, []runner.Phase{runner.Load, runner.Run})
		},
	}
	addCommonFlags(cmd, o)
	addLoadFlags(cmd, o)
	addRunFlags(cmd, o)
	cmd.Flags().BoolVar(&o.keepDB, "keep-db", false, "keep the temporary SQLite database created when no --db is given")
	setGroup(cmd.Flags(), groupTarget, "keep-db")
	return cmd
}
