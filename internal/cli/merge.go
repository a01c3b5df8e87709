package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
)

func newMergeCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge RESULT RESULT... -o MERGED",
		Short: "Combine the results of the clients of one run (--client-index, --client-count) exactly",
		Long: `merge combines the JSON results (--out) of the clients that ran one
experiment together, each with its own --client-index and the same
--client-count, into one result, as if one client had run it all.

The merge is exact: every interval of every client carries its HDR
histograms, so each operation's percentiles are those of all the
operations of all the clients, not averages of percentiles. The clients'
per-second series are aligned by wall clock (each client's intervals end
on its clock's whole seconds) and added up; errors, retries and outages
are combined; the database monitor's samples and diagnosis come from the
client that monitored (client 0 unless --monitor-client said otherwise).

The merged summary covers the window in which every client was measuring;
what a client that started late or ran on measured outside it is shown
apart, and the operations of all clients, window or not, follow as
"# all" lines whose counts are the sums of the clients' own. Each
client's own operations, throughput, verdict (a client that was itself the
limit makes the merged figures a floor) and clock offset against the
database server's clock are listed; clocks that disagree by more than one
interval are warned about, since the seconds then do not line up.

Results that are not the clients of one run are refused with one line
naming the difference (exit 2): a result without a client index, client
counts that differ, a client missing or given twice, a setting that
differs (the per-client ones, such as the seed and the outputs, aside), a
phase without its summary (dbprobe recover a killed client's result
first). Nothing is written then.`,
		Example: `  # three clients, started together
  dbprobe run --db postgres://bench@db/ycsb --client-count 3 --client-index 0 --start-at 2026-11-27T20:00:00Z --duration 10m --out r0.jsonl
  dbprobe run ... --client-index 1 ... --out r1.jsonl
  dbprobe run ... --client-index 2 ... --out r2.jsonl
  dbprobe merge r0.jsonl r1.jsonl r2.jsonl -o merged.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return badinput.New("merge takes the results of two or more clients, and got %d; e.g. dbprobe merge r0.jsonl r1.jsonl -o merged.jsonl", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return mergeResults(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, out, commandLine(cmd))
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the merged JSON result to this file (required; not one of the inputs)")
	setGroup(cmd.Flags(), groupOutputs, "out")
	return cmd
}

// mergeResults reads the clients' results, merges them, prints the
// merged phases and writes the merged result to out.
func mergeResults(stdout, stderr io.Writer, paths []string, out, command string) error {
	if out == "" {
		return badinput.New("merge needs -o MERGED, the file to write the merged result to")
	}
	in := make([]result.MergeInput, len(paths))
	for i, p := range paths {
		if samePathAs(p, out) {
			return badinput.New("-o %s is also the input %s: write the merged result to a new file", out, p)
		}
		f, err := os.Open(p)
		if err != nil {
			return badinput.New("cannot read %s: %v", p, experiment.ShortError(err))
		}
		defer f.Close()
		in[i] = result.MergeInput{Name: p, Result: f}
	}
	phases, warnings, err := result.Merge(in, command)
	var me *result.MergeError
	if errors.As(err, &me) {
		return badinput.New("%v", me)
	}
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "dbprobe: warning: %s\n", w)
	}
	var buf bytes.Buffer
	w := result.NewWriter(&buf)
	for _, p := range phases {
		if err := writePhase(w, p); err != nil {
			return err
		}
		if err := result.WriteHeader(stdout, p.Header); err != nil {
			return err
		}
		if err := result.WriteText(stdout, *p.Summary); err != nil {
			return err
		}
		if err := result.WriteMergeText(stdout, p.Summary.Merge); err != nil {
			return err
		}
	}
	if err := replaceFile(out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "dbprobe: merged %d clients' results into %s\n", len(paths), out)
	return nil
}

// writePhase writes a merged phase's records: header, intervals,
// monitor samples, summary.
func writePhase(w *result.Writer, p result.Phase) error {
	if err := w.Header(p.Header); err != nil {
		return err
	}
	for _, iv := range p.Intervals {
		if err := w.Interval(iv); err != nil {
			return err
		}
	}
	for _, m := range p.Monitor {
		if err := w.Monitor(m); err != nil {
			return err
		}
	}
	return w.Summary(*p.Summary)
}

// samePathAs says a and b name one file.
func samePathAs(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
