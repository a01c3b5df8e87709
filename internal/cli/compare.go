package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/compare"
)

// compareOptions are the flags of dbprobe compare.
type compareOptions struct {
	json      bool
	out       string
	force     bool
	minEffect string
	failIf    []string
	phase     string
	metrics   []string
}

func newCompareCommand() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare A1 [A2 …] -- B1 [B2 …]",
		Short: "Tell whether two sets of runs differ, metric by metric, with a verdict a skeptic accepts",
		Long: `compare takes the JSON results (--out) of side A's runs, then --, then
side B's, one file per run, and says per metric whether B differs from A:
throughput; p50 and p99 latency of each operation (a stress run's
statements and ITERATION); a storage experiment's rate; a stress run's
server cost per iteration. SQLite, 5 runs each of --durability full (A)
and delayed (B), --metrics throughput,p99.read,p50.update:

  Settings that differ:
    durability: A full, B delayed
    database synchronous: A FULL (2), B OFF (0)

  metric      unit   A median  B median  change
  throughput  ops/s     4,741   117,625   ×15.9
      B is 15.9× as fast (95% CI 6.47–42.9×, p = 0.02, 5 runs each)
  p99.read    µs          326        28  −70.9%
      no difference shown (p = 0.10): with this spread, 5 runs per side would
      detect a fall of 94.9% or a rise of 1849%
  p50.update  µs          604         6  −98.9%
      B is better: 98.9% lower (95% CI 98.1–99.2%, p = 0.02, 5 runs each)

How to read a verdict:
  - change is the Hodges–Lehmann shift: the median of the B/A ratios of
    every run of B to every run of A; its 95% CI comes from the same
    ranks (96.8% achieved with 5 runs each: the ranks are discrete).
  - p is the two-sided Mann–Whitney U test, exact for small sides, and
    Holm-adjusted over the metrics compared, so that looking at many
    metrics does not find a difference by chance. A difference is shown
    at p < 0.05 (and a change of --min-effect or more).
  - "no difference shown" is not "the same": the sentence says the
    smallest change these runs would have found 80% of the time at their
    spread. The p99 above swings too much from run to run to tell.
  - Latency and server cost: lower is better, and the verdict says so.
  - With fewer than 4 runs per side the test cannot reach p < 0.05: no
    verdict, and the runs that would give one. Holm needs more: 5 runs
    per side show at most 6 metrics at once; --metrics narrows the list.
    Run the sides in turn (A, B, A, B…) so that drift hits both.

Each file must hold the phase compared (--phase; by default the last
phase of the first file: run, for dbprobe ycsb). Results of different
experiments or workloads (operation mix, key distribution, stress
statements, storage experiment) are refused, naming the setting;
--force compares them anyway. Every other setting that differs between
the sides is listed, secrets never shown; one that differs from run to
run on both sides (a temporary database's path) is only noted.

--fail-if 'throughput<-5%' exits 1 when B's throughput is shown to be
more than 5% below A's: for a CI pipeline that holds a new build (B)
against the last release (A); for latency, --fail-if 'p99.read>+10%'. A
condition trips only when the difference is shown (p < 0.05 after
Holm), so noise does not fail a build; with fewer than 4 runs per side
no test is possible and the estimate alone decides (the line says so).
Repeat the flag or separate conditions with commas; the metric names
are the table's. Flags may follow B's files.

Only each run's summary is read, not its seconds: 100 one-hour results
compare in about a second. A result cut short (a killed run) is compared
as far as it is complete (a phase without summary is rebuilt from its
seconds, as dbprobe recover does), the notes say so, and compare exits 2
(1 if a --fail-if tripped).

Exit status: 0 compared, whatever the verdicts; 1 a --fail-if tripped;
2 bad input: a file that is not a result, different experiments or
workloads, a malformed --fail-if, a file cut short.`,
		Example: `  dbprobe compare full-*.jsonl -- delayed-*.jsonl
  dbprobe compare a1.jsonl a2.jsonl a3.jsonl a4.jsonl a5.jsonl -- b1.jsonl b2.jsonl b3.jsonl b4.jsonl b5.jsonl --min-effect 2%
  dbprobe compare release/*.jsonl -- build/*.jsonl --fail-if 'throughput<-5%' --fail-if 'p99.read>+10%'
  dbprobe compare disk-*.jsonl -- memory-*.jsonl --json --out comparison.json
  dbprobe compare a.jsonl -- b.jsonl --metrics throughput,p99.update`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 {
				return badinput.New("compare needs side A's result files, then --, then side B's: dbprobe compare a1.jsonl a2.jsonl -- b1.jsonl b2.jsonl")
			}
			filesA, filesB := args[:dash], args[dash:]
			// Flags after B's files ("… -- b*.jsonl --fail-if
			// 'throughput<-5%'") are read too: cobra leaves everything
			// after -- as arguments, and a CI line puts its flags last.
			if slices.ContainsFunc(filesB, func(a string) bool { return strings.HasPrefix(a, "-") }) {
				fs := cmd.Flags()
				if err := fs.Parse(filesB); err != nil {
					return badinput.New("%v; see dbprobe compare --help", err)
				}
				filesB = fs.Args()
			}
			return runCompare(cmd.OutOrStdout(), cmd.ErrOrStderr(), filesA, filesB, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the comparison as JSON instead of text")
	f.StringVar(&o.out, "out", "", "also write the comparison as JSON to this file (replaced once written whole)")
	f.BoolVar(&o.force, "force", false, "compare results of different experiments or workloads anyway")
	f.StringVar(&o.minEffect, "min-effect", "0%", "treat a change smaller than this as no difference, e.g. 2%")
	f.StringArrayVar(&o.failIf, "fail-if", nil, "exit 1 when B's change meets this condition and is shown, e.g. 'throughput<-5%' or 'p99.read>+10%' (repeatable)")
	f.StringVar(&o.phase, "phase", "", "the phase to compare, e.g. load (default: the last phase of the first file)")
	f.StringSliceVar(&o.metrics, "metrics", nil, "compare only these metrics, e.g. throughput,p99.read (fewer metrics lose less to the Holm correction)")
	setGroup(f, groupOutputs, "json", "out")
	setGroup(f, groupGeneral, "force", "min-effect", "fail-if", "phase", "metrics")
	return cmd
}

// runCompare compares the files of side A against side B and prints the
// comparison; a tripped --fail-if is an error (exit 1), a file cut short
// bad input (exit 2) once the comparison is printed.
func runCompare(stdout, stderr io.Writer, pathsA, pathsB []string, o compareOptions) error {
	opts := compare.Options{Force: o.force, Phase: o.phase, Metrics: o.metrics}
	min, err := parsePercent(o.minEffect)
	if err != nil {
		return err
	}
	opts.MinEffect = min
	for _, f := range o.failIf {
		cs, err := compare.ParseConditions(f)
		if err != nil {
			return err
		}
		opts.FailIf = append(opts.FailIf, cs...)
	}
	switch {
	case len(pathsA) == 0 && len(pathsB) == 0:
		return badinput.New("compare got no result files: give side A's, then --, then side B's (dbprobe compare a1.jsonl a2.jsonl -- b1.jsonl b2.jsonl)")
	case len(pathsA) == 0:
		return badinput.New("side A has no result files (nothing before --); a shell glob that matched nothing leaves it empty or as typed")
	case len(pathsB) == 0:
		return badinput.New("side B has no result files (nothing after --); a shell glob that matched nothing leaves it empty or as typed")
	}
	if err := checkEachFileOnce(pathsA, pathsB); err != nil {
		return err
	}
	if o.out != "" {
		// Checked against every input: --out b1.jsonl would replace a
		// result with the comparison.
		for _, p := range append(slices.Clone(pathsA), pathsB...) {
			if err := checkExportOut(o.out, p); err != nil {
				msg := strings.Replace(err.Error(), "-o ", "--out ", 1)
				msg = strings.Replace(msg, "the result being exported: give the CSV another name", "one of the results compared: give the comparison another name", 1)
				return badinput.New("%s", msg)
			}
		}
	}
	a, err := compare.Load("A", pathsA)
	if err != nil {
		return err
	}
	b, err := compare.Load("B", pathsB)
	if err != nil {
		return err
	}
	c, err := compare.Run(a, b, opts)
	if err != nil {
		return err
	}
	if o.json {
		err = compare.WriteJSON(stdout, c)
	} else {
		err = compare.WriteText(stdout, c)
	}
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	if o.out != "" {
		var buf bytes.Buffer
		if err := compare.WriteJSON(&buf, c); err != nil {
			return err
		}
		if err := replaceFile(o.out, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "dbprobe: wrote the comparison to %s\n", o.out)
	}
	if c.Tripped() {
		var which []string
		for _, ch := range c.Checks {
			if ch.Tripped {
				which = append(which, ch.Condition.Text)
			}
		}
		return fmt.Errorf("--fail-if %s: tripped (see the fail-if line above)", strings.Join(which, ", "))
	}
	if len(c.CutShort) > 0 {
		return badinput.New("%s cut short (a killed run, or one still going): compared as far as complete; once the run is over, dbprobe recover FILE completes it", strings.Join(c.CutShort, ", "))
	}
	return nil
}

// parsePercent reads --min-effect: a percentage from 0% to below 100%,
// "2%" or "2.5%".
func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || num == "" || strings.ContainsAny(num, "eEinNIxX_") || v < 0 || v >= 100 {
		return 0, badinput.New("--min-effect %q: give a percentage from 0%% to below 100%%, e.g. --min-effect 2%%", s)
	}
	return v / 100, nil
}

// checkEachFileOnce refuses a result file given twice, on one side or on
// both: a run counted twice makes a difference look surer than it is,
// and one on both sides compares a run with itself.
func checkEachFileOnce(pathsA, pathsB []string) error {
	type seen struct {
		path, side string
		info       os.FileInfo
	}
	var all []seen
	for _, side := range []struct {
		name  string
		paths []string
	}{{"A", pathsA}, {"B", pathsB}} {
		for _, p := range side.paths {
			info, err := os.Stat(p)
			if err != nil {
				continue // compare.Load says what is wrong with it
			}
			for _, s := range all {
				if os.SameFile(s.info, info) {
					where := "twice on side " + side.name
					if s.side != side.name {
						where = "on both sides"
					}
					return badinput.New("%s is given %s (as %s and %s): each run counts once; give every result file once", p, where, s.path, p)
				}
			}
			all = append(all, seen{p, side.name, info})
		}
	}
	return nil
}
