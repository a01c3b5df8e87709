package cli

import (
	"bytes"
	"fmt"
	"io"
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
		Long: `compare takes the JSON results (--out) of runs of side A, then --, then
those of side B, one file per run, and says per metric whether B differs
from A: throughput; p50 and p99 latency of each operation (a stress run's
statements and ITERATION); a storage experiment's rate; a stress run's
server cost per iteration.

  dbprobe compare: ycsb results, phase run
    A: 5 runs: full-1.jsonl full-2.jsonl full-3.jsonl full-4.jsonl full-5.jsonl
    B: 5 runs: delayed-1.jsonl delayed-2.jsonl delayed-3.jsonl delayed-4.jsonl delayed-5.jsonl

  Settings that differ:
    durability            A: full      B: delayed

       metric   unit  A median  B median   change
   throughput  ops/s    10,234    10,652    +4.1%  B is 4.1% faster (95% CI 2.0–6.3%, p = 0.008, 5 runs each)
     p50.read     µs       412       407    −1.2%  no difference shown (p = 0.42): with this spread, 5 runs per side would detect 6.0% or more
     p99.read     µs     2,210     1,990   −10.0%  B is better: 10.0% lower (95% CI 4.8–14.9%, p = 0.032, 5 runs each)

How to read a verdict:
  - change is the Hodges–Lehmann shift: the median of every B/A ratio of
    one run of B to one of A. Its 95% CI comes from the same ranks.
  - p is the two-sided Mann–Whitney U test, exact for small sides,
    Holm-adjusted over the metrics compared: looking at ten metrics does
    not find a difference by chance. A difference is shown at p < 0.05.
  - "no difference shown" is not "the same": the sentence after it says
    the smallest change these runs would have found 80% of the time.
  - Latency and server cost: lower is better, and the verdict says so.
  - With fewer than 4 runs per side the test cannot reach p < 0.05: no
    verdict, and the runs that would give one. Run each side 5 times or
    more, interleaved (A, B, A, B…), so that drift hits both sides.

Each file must hold the phase compared (--phase; by default the last
phase of the first file: "run" for dbprobe ycsb). Results of different
experiments or workloads (operation mix, key distribution, stress
statements, storage experiment) are refused, naming the setting;
--force compares them anyway. Every other setting that differs between
the sides is listed, secrets never shown; one that differs from run to
run on both sides (a temporary database's path) is only noted.

--fail-if 'throughput<-5%' makes compare exit 1 when B's throughput is
shown to be more than 5% below A's: for a CI pipeline that holds a new
build (B) against the last release (A). Latency: --fail-if
'p99.read>+10%'. A condition trips only when the difference is shown
(p < 0.05 after Holm), so noise does not fail a build; with fewer than 4
runs per side no test is possible and the estimate alone decides (the
line says so). Several conditions: repeat the flag or separate them with
commas. Metric names are those of the table.

A result cut short (a killed run) is compared as far as it is complete
(a phase without summary is rebuilt as dbprobe recover does), said in
the notes, and compare then exits 2 (1 if a --fail-if tripped).

Exit status: 0 compared (whatever the verdicts), 1 a --fail-if tripped,
2 bad input (a file that is not a result, different experiments or
workloads, a malformed --fail-if, a file cut short).`,
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
	if o.out != "" {
		if err := checkExportOut(o.out, pathsA[0]); err != nil {
			return badinput.New("%s", strings.Replace(err.Error(), "-o ", "--out ", 1))
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
