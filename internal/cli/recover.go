package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/durability"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
)

func newRecoverCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "recover RESULT",
		Short: "Rebuild the summary of a killed run or durability check from its JSON result (--out)",
		Long: `recover rebuilds the summary of every phase of a JSON result that has none:
the run was killed (kill -9, a crash, the machine lost) before it could
write it. The result is written as the run goes, one record per interval,
each interval carrying every series' HDR histogram, so the summary is the
one the run would have printed had it stopped after its last complete
interval: operations, Return= counts, errors per code and retries add up
exactly, warm-up intervals are left out, and the percentiles are those of
the merged histograms. The bottleneck verdict is made again from the
monitor samples the result holds; outages are not rebuilt. What the run
did after its last complete interval (at most one interval) is lost; the
summary says so and is marked recovered (and interrupted).

A killed dbprobe durability check is totalled from the cycles it wrote,
each written once it was checked: acknowledged and lost writes, tail
and scattered cycles, and the verdict and caveat made again from the
database and durability its header names. The cycle in progress at the
kill proved nothing and is lost. It is printed as the check prints its
report, with a note that it was recovered.

Results written by an older dbprobe (schema version 1) are recovered as
well, and stay version 1.

It prints each recovered phase as a run prints it: the header, then YCSB's
text results. Then it adds the recovered summary records to RESULT, at the
end of their phases: RESULT is replaced by a copy with every complete line
kept as it was and the summaries added, written beside it and renamed over
it, so a failure leaves RESULT untouched. A last line cut by the kill is
left out. With --out the repaired result goes to that file instead and
RESULT is not changed.

A result whose every phase has its summary is left alone. Damage other
than a cut last line is refused with the line number (exit 2). Run it only
once the run's process is gone.`,
		Example: `  dbprobe run --db sqlite:///tmp/bench.db --duration 1h --out result.jsonl   # killed
  dbprobe recover result.jsonl
  dbprobe recover result.jsonl --out repaired.jsonl
  dbprobe recover durability.jsonl   # a killed dbprobe durability --out durability.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badinput.New("recover takes one result file, the --out of the killed run, and got %d arguments; e.g. dbprobe recover result.jsonl", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return recoverResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the repaired result to this file and leave RESULT unchanged (default: replace RESULT)")
	setGroup(cmd.Flags(), groupOutputs, "out")
	return cmd
}

// recoverResult rebuilds the missing summaries of the result at path,
// prints them, and writes the repaired result to out (path when empty).
func recoverResult(stdout, stderr io.Writer, path, out string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return badinput.New("cannot read %s: %v", path, experiment.ShortError(err))
	}
	repaired, recovered, cut, err := result.Repair(data, finishRecovered)
	if err != nil {
		return badinput.New("%s cannot be recovered: %v", path, err)
	}
	if len(recovered) == 0 {
		what := "nothing to recover"
		if cut {
			what += " (its cut last line is left as it is)"
		}
		fmt.Fprintf(stderr, "dbprobe: every phase of %s has its summary: %s\n", path, what)
		return nil
	}
	for _, r := range recovered {
		if err := writeRecovered(stdout, r); err != nil {
			return err
		}
	}
	dest := out
	if dest == "" {
		dest = path
	}
	if err := replaceFile(dest, repaired); err != nil {
		return err
	}
	for _, r := range recovered {
		from := fmt.Sprintf("%d intervals", r.Intervals)
		if r.Header.Experiment == result.ExperimentDurability {
			from = fmt.Sprintf("%d cycles", len(r.Cycles))
		}
		fmt.Fprintf(stderr, "dbprobe: recovered the summary of phase %s from %s into %s\n", r.Header.Phase, from, dest)
	}
	if cut {
		fmt.Fprintf(stderr, "dbprobe: the last line of %s was cut by the kill and is left out of %s\n", path, dest)
	}
	return nil
}

// finishRecovered completes a rebuilt summary with what its experiment
// judges: a YCSB phase's bottleneck, a durability check's verdict.
func finishRecovered(p result.Phase, s *result.Summary) {
	if p.Header.Experiment == result.ExperimentDurability {
		durability.Finish(p, s)
		return
	}
	experiment.DiagnoseRecovered(p, s)
}

// writeRecovered prints a recovered phase as its command prints it: a
// YCSB phase's header and YCSB text, a durability check's report.
func writeRecovered(w io.Writer, r result.Recovered) error {
	if r.Header.Experiment != result.ExperimentDurability {
		if err := result.WriteHeader(w, r.Header); err != nil {
			return err
		}
		return result.WriteText(w, r.Summary)
	}
	rep, err := durability.FromResult(r.Header, r.Cycles, r.Summary)
	if err != nil {
		// The totals are in the file all the same; only the report's
		// wording needs the settings.
		_, err = fmt.Fprintf(w, "dbprobe durability (recovered): %d acknowledged writes over %d cycles, %d lost; %s\n",
			r.Summary.Durability.Acknowledged, r.Summary.Durability.Cycles, r.Summary.Durability.Lost, r.Summary.Durability.Verdict)
		return err
	}
	return durability.WriteText(w, rep, r.Summary.Notes)
}

// replaceFile writes data to a new file beside path, syncs it and renames
// it over path, so that path holds either its old content or all of data.
func replaceFile(path string, data []byte) (err error) {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".recover-*")
	if err != nil {
		return badinput.New("cannot write beside %s: %v", path, experiment.ShortError(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	// The rename itself lasts only once the directory is on disk.
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}
