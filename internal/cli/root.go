package cli

import (
	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// NewRoot builds the dbprobe command tree.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "dbprobe",
		Short: "Measure what a database really delivers",
		Long: `dbprobe measures what a database really delivers: key-value (YCSB)
throughput and latency (load, run, ycsb), your own SQL under load (stress),
storage rates and cache size (storage), crash durability (durability), one
experiment over many settings (sweep), and whether two sets of runs differ
(compare); report, export, merge and recover work on their JSON results.

With no --db it uses an embedded SQLite database in a temporary directory,
so "dbprobe ycsb" works on a fresh machine with nothing installed.

Results print on stdout in YCSB's text format, so existing parsers keep
working; --out FILE also writes a JSON result as the run goes. On a
terminal a live progress line shows on stderr (-s for YCSB's status lines,
--quiet for none).

Shell completion of commands, flags and their values (workloads, table
types, durability…): dbprobe completion bash|zsh|fish|powershell --help.`,
		Example: `  dbprobe ycsb
  dbprobe ycsb --db postgres://ycsb@127.0.0.1:5432/bench --workload b --threads 16 --duration 1m --out b.jsonl
  dbprobe stress --db postgres://app@127.0.0.1:5432/shop --mix oltp --rows 100000 --threads 4 --duration 1m
  dbprobe storage scan --db postgres://bench@127.0.0.1:5432/bench --size 4GB --expect scan=14GB/min
  dbprobe report b.jsonl -o report.html`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       resolveVersion(),
	}
	root.SetVersionTemplate(versionLine())
	// A malformed flag is bad input: one line, exit code 2.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// The command's whole path: "dbprobe storage read --help", not
		// "dbprobe read --help", which is another command.
		return badinput.New("%v; see %s --help", describeFlagError(err), c.CommandPath())
	})
	root.SetUsageFunc(usage)
	root.AddCommand(newLoadCommand(), newRunCommand(), newYCSBCommand())
	root.AddCommand(newRecoverCommand(), newExportCommand())
	root.AddCommand(newReportCommand())
	root.AddCommand(newDurabilityCommand(), newStressCommand(), newStorageCommand())
	root.AddCommand(newCompareCommand())
	root.AddCommand(newVersionCommand())
	root.AddCommand(newSweepCommand())
	root.AddCommand(newMergeCommand())
	return root
}
