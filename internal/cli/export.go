package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/export"
	"github.com/dbprobe/dbprobe/internal/result"
)

// exportOptions are the flags of dbprobe export.
type exportOptions struct {
	csv     bool
	monitor bool
	out     string
}

func newExportCommand() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export --csv RESULT",
		Short: "Write the per-second series of a JSON result (--out) as CSV, for a spreadsheet",
		Long: `export --csv writes the per-second series of a JSON result (the --out of
any run that has them: dbprobe load, run, ycsb, stress, storage) as CSV on
stdout, or to a file with -o.

The table is wide: one row per interval (normally one second), so that a
spreadsheet charts it as it is, without a pivot table: select time_utc or
elapsed_s and a column, insert a chart. Its columns are

  time_utc     the interval's end, UTC, as spreadsheets read a date and time
  elapsed_s    seconds from the phase's start to the interval's end
  phase        the phase: load or run (a ycsb result holds both, one after
               the other), stress
  warmup       true for an interval of the warm-up (--warmup), which the
               summary leaves out
  ops          operations finished in the interval
  ops_per_s    their rate
  then for each series (READ, UPDATE, Intended-READ, READ-FAILED, …;
  a stress run's ITERATION, LOOP.SQL-1, OLTP-SELECT, …):
  S count      the series' operations in the interval
  S mean_us    mean latency, microseconds
  S max_us     largest latency
  S pP_us      each percentile the run kept (hdrhistogram.percentiles),
               named by its value: READ p99_us, READ p99.9_us

A series with nothing in an interval has count 0 and empty latency cells;
one the phase does not have (INSERT during run) is all empty.

The result of dbprobe storage is exported as its per-second rate instead,
one row per second: elapsed_s (from the measured part's start), experiment,
point (the --threads or --dop step, "threads 4"; empty at one point),
seconds (the span measured), bytes, rate_bytes_per_s, rate and rate_unit
(GB/min for scan and read, MB/min for write, MB/s for bulk and logcopy),
and fell (below 90% of its point's median).

--monitor writes the monitor's samples instead: time_utc, elapsed_s (from
the same start, so the rows line up with the intervals'), phase, and one
column per figure by its name (db.xact_commit/s, host.cpu.user%,
client.cpu%…). They are a table of their own because the monitor samples
at its own interval (--monitor-interval) and each database has its own
figures; paste both into one sheet and chart them over elapsed_s.

A result cut short (the run was killed, or is still going) is exported as
far as it is complete, and export then says so and exits with status 2:
dbprobe recover RESULT adds the missing summaries and drops a cut last
line, after which export exits 0. A file that is not a dbprobe result, or
an -o that cannot be written, is refused (status 2) with nothing written;
-o replaces its file only once the whole table is written beside it.`,
		Example: `  dbprobe ycsb --duration 1m --out result.jsonl
  dbprobe export --csv result.jsonl > result.csv
  dbprobe export --csv --monitor result.jsonl -o monitor.csv`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badinput.New("export takes one result file, the --out of a run, and got %d arguments; e.g. dbprobe export --csv result.jsonl", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return exportResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.csv, "csv", false, "write CSV (the only format export writes today; required)")
	f.BoolVar(&o.monitor, "monitor", false, "write the monitor's samples (one column per figure) instead of the per-second operation series")
	f.StringVarP(&o.out, "out", "o", "", "write to this file instead of stdout (- is stdout); it is replaced only once the whole table is written")
	setGroup(f, groupOutputs, "csv", "monitor", "out")
	return cmd
}

// exportResult writes the CSV of the result at path to stdout, or to
// o.out.
func exportResult(stdout, stderr io.Writer, path string, o exportOptions) error {
	if !o.csv {
		return badinput.New("export needs a format: --csv (e.g. dbprobe export --csv %s)", path)
	}
	if o.out == "-" {
		o.out = ""
	}
	if o.out != "" {
		if err := checkExportOut(o.out, path); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return badinput.New("cannot read %s: %v", path, experiment.ShortError(err))
	}
	file, err := parseResult(path, data, "export")
	if err != nil {
		return err
	}
	write, what := export.IntervalsCSV, "intervals"
	count := 0
	for _, p := range file.Phases {
		count += len(p.Intervals)
	}
	if export.HasStorage(file) && !o.monitor {
		// A storage run's series is its per-second rate: the runner's
		// intervals count chunks or copies, whose units differ.
		write, what, count = export.StorageCSV, "seconds", 0
		for _, p := range file.Phases {
			if p.Summary != nil && p.Summary.Storage != nil {
				count += len(p.Summary.Storage.PerSecond)
			}
		}
	}
	if o.monitor {
		write, what, count = export.MonitorCSV, "monitor samples", 0
		for _, p := range file.Phases {
			count += len(p.Monitor)
		}
	}
	if count == 0 {
		why := "export takes the --out of a run with per-second series (dbprobe load, run, ycsb, stress)"
		if o.monitor {
			why = "the run was not monitored (--no-monitor) or ended before its first sample"
		}
		return badinput.New("%s holds no %s to export: %s", path, what, why)
	}
	var buf bytes.Buffer
	rows, err := write(&buf, file)
	if err != nil {
		return err
	}
	if o.out == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing the CSV: %w", err)
		}
	} else {
		if err := replaceFile(o.out, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "dbprobe: wrote %d %s of %s to %s\n", rows, what, path, o.out)
	}
	return cutShort(path, file, rows, what)
}

// checkExportOut refuses an -o that cannot be written, before anything
// is read: a directory, one in a directory that does not exist, or the
// result itself, which the CSV would replace.
func checkExportOut(out, path string) error {
	if st, err := os.Stat(out); err == nil {
		if st.IsDir() {
			return badinput.New("cannot write -o %s: it is a directory; give a file name, e.g. -o %s", out, filepath.Join(out, "result.csv"))
		}
		if in, err := os.Stat(path); err == nil && os.SameFile(st, in) {
			return badinput.New("-o %s is the result being exported: give the CSV another name", out)
		}
	}
	return checkOutDir(out)
}

// cutShort says, as bad input, that the result was not complete, once
// what it held has been written: a last line cut by a kill, or phases
// without a summary.
func cutShort(path string, f *result.File, rows int, what string) error {
	var open []string
	for _, p := range f.Phases {
		if p.Summary == nil {
			open = append(open, p.Header.Phase)
		}
	}
	if !f.Truncated && len(open) == 0 {
		return nil
	}
	var why []string
	if f.Truncated {
		why = append(why, "its last line was cut")
	}
	switch len(open) {
	case 0:
	case 1:
		why = append(why, "phase "+open[0]+" has no summary")
	default:
		why = append(why, "phases "+strings.Join(open, " and ")+" have no summary")
	}
	return badinput.New("%s was cut short (%s: the run was killed or is still going): exported the %d complete %s; once the run is over, dbprobe recover %s completes it", path, strings.Join(why, " and "), rows, what, path)
}

// checkOutDir refuses an -o file whose directory does not exist or is not
// a directory, before anything is read or written: export's and report's
// -o are checked alike.
func checkOutDir(out string) error {
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return badinput.New("cannot write -o %s: directory %s does not exist", out, dir)
	case err != nil:
		return badinput.New("cannot write -o %s: %v", out, experiment.ShortError(err))
	case !st.IsDir():
		return badinput.New("cannot write -o %s: %s is not a directory", out, dir)
	}
	return nil
}

// parseResult reads the JSON result in data (read from path) for the
// command verb ("export", "report"), and refuses as bad input what is no
// dbprobe result or holds no phase.
func parseResult(path string, data []byte, verb string) (*result.File, error) {
	file, err := result.Read(bytes.NewReader(data))
	if err != nil {
		return nil, badinput.New("%s is not a dbprobe result (%s); give the JSON result a run wrote with --out", path, strings.TrimPrefix(err.Error(), "result: "))
	}
	if len(file.Phases) == 0 {
		what := "it is empty"
		if file.Truncated {
			what = "its only line was cut short"
		}
		return nil, badinput.New("%s holds no phase to %s: %s; give the JSON result a run wrote with --out", path, verb, what)
	}
	return file, nil
}
