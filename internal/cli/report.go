package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/compare"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/sweep"
)

// reportOptions are the flags of dbprobe report.
type reportOptions struct {
	out    string
	points string
	// compare, with the files before -- as side A and those after as B,
	// draws dbprobe compare's verdicts at the top of the page.
	compare bool
	force   bool
	sides   [2][]string
}

func newReportCommand() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report RESULT... -o report.html | report --compare A1 [A2 …] -- B1 [B2 …] -o report.html",
		Short: "Draw JSON results and sweep summaries as one self-contained HTML page",
		Long: `report draws the JSON results of runs (the --out of dbprobe load, run,
ycsb, stress, storage, durability) as one HTML page you can open in any
browser, mail or archive: every script, style and figure is inside it, and
it loads nothing from anywhere (its Content-Security-Policy forbids it), so
opening it sends no request.

For each phase of each result it shows

  - what ran: the command that reproduces it, the target (passwords were
    never written), the database and its settings, every effective setting
    and where its value came from, the client machine;
  - the figures the text output prints, formatted as it prints them;
  - throughput over time, and each operation's latency percentiles and
    maximum over time (the percentiles the run kept,
    hdrhistogram.percentiles), on a log scale;
  - the percentile spectrum of each operation over the whole phase, read
    from its HDR histogram: p0 to the highest percentile its count can
    tell apart, evenly spaced in nines (90, 99, 99.9…);
  - failures and retries per second, with outages and the warm-up shaded
    on every timeline, and the failures by code;
  - the monitor's waits over time (the average number of sessions in each
    wait), the host's and the client's CPU, and the bottleneck verdict
    with the figures behind it;
  - for a storage run its rate second by second, steps, proof and verdict;
    for a stress run each statement's rows, costs and plans; for a
    durability check its cycles.

Given a sweep summary (the --out of dbprobe sweep), the page shows its
recap table (one column per variant), each curve as a chart with the
scalability fit dashed, and its conclusions as verdicts; a sweep of two
variants with four or more good runs each is also compared as dbprobe
compare does, from the runs' results beside the summary.

With --compare, the files before -- are side A's runs and those after it
side B's, and the page starts with what dbprobe compare A… -- B… prints:
per metric the medians, the change with its 95% confidence interval and
the rank test's verdict (Holm over the metrics), the settings that differ
between the sides and the notes; then the runs, overlaid. Results of
different experiments or workloads are refused as compare refuses them
(--force draws them anyway).

Given several results, the page starts with overlays: the phases they
share drawn on the same charts, one line per result, each line named by
the settings that differ between them (threads=8, durability=delayed),
and their figures side by side; each run's own section follows, folded
(its charts are drawn when it is opened). Every table can be copied as
Markdown or CSV from the page.

A page of many long results would be too big to open (an hour at one
interval a second is about 1 MB of chart data, 100 hours 110 MB): with
--points auto (the default), when the charts over time would hold more
than 1.5 million values, each is summarised into at most the number of
spans of whole seconds that keeps the page within that (never fewer than
60), and of each line in each span its lowest and its highest value are
kept, so a one-second stall or a p99 spike still shows; the page says so
at the top and under each chart so drawn. Tables, percentiles and
verdicts are always computed from every interval. --points all draws
every interval; --points N draws at most N points per line (N/2 spans).

A result cut short (the run was killed, or is still going) is drawn as far
as it is complete, the page says so at the top, and report then exits
with status 2; dbprobe recover RESULT completes the file. A file that is
not a dbprobe result, no result at all, or an -o that cannot be written
is refused (status 2) with nothing written; -o is replaced only once the
whole page is written beside it.`,
		Example: `  dbprobe ycsb --db postgres://localhost/bench --duration 1m --out a.jsonl
  dbprobe report a.jsonl -o report.html

  # two runs on the same charts, each line named by what differs
  dbprobe run --threads 8 --out t8.jsonl ...
  dbprobe run --threads 32 --out t32.jsonl ...
  dbprobe report t8.jsonl t32.jsonl -o threads.html

  # a sweep's recap, curves and conclusions
  dbprobe sweep --vary threads=1,2,4,8 --reps 4 --out sweep.json -- ycsb --duration 30s
  dbprobe report sweep.json -o sweep.html

  # compare's verdicts, then the runs overlaid
  dbprobe report --compare full-*.jsonl -- delayed-*.jsonl -o durability.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if o.force && !o.compare {
				return badinput.New("--force applies to report --compare (results of different experiments compared anyway); drop it, or add --compare")
			}
			if !o.compare {
				return writeReport(cmd.ErrOrStderr(), cmd.OutOrStdout(), args, o)
			}
			if dash < 0 {
				return badinput.New("report --compare needs side A's result files, then --, then side B's: dbprobe report --compare a1.jsonl a2.jsonl -- b1.jsonl b2.jsonl -o report.html")
			}
			filesA, filesB := args[:dash], args[dash:]
			// Flags after B's files (… -- b*.jsonl -o page.html) are read
			// too, as dbprobe compare reads them.
			if slices.ContainsFunc(filesB, func(a string) bool { return strings.HasPrefix(a, "-") }) {
				fs := cmd.Flags()
				if err := fs.Parse(filesB); err != nil {
					return badinput.New("%v; see dbprobe report --help", err)
				}
				filesB = fs.Args()
			}
			switch {
			case len(filesA) == 0:
				return badinput.New("report --compare: side A has no result files (nothing before --); a shell glob that matched nothing leaves it empty or as typed")
			case len(filesB) == 0:
				return badinput.New("report --compare: side B has no result files (nothing after --); a shell glob that matched nothing leaves it empty or as typed")
			}
			o.sides = [2][]string{filesA, filesB}
			return writeReport(cmd.ErrOrStderr(), cmd.OutOrStdout(), append(slices.Clone(filesA), filesB...), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "write the HTML page to this file (required; - is stdout); it is replaced only once the whole page is written")
	f.StringVar(&o.points, "points", "auto", "points per line on a chart over time: auto (summarise a page too big to open), all (every interval), or a number of at least 40 (each span's lowest and highest: N/2 spans)")
	f.BoolVar(&o.compare, "compare", false, "compare side A's results (before --) with side B's (after it) as dbprobe compare does, at the top of the page")
	f.BoolVar(&o.force, "force", false, "with --compare: compare results of different experiments or workloads anyway")
	setGroup(f, groupOutputs, "out", "points")
	setGroup(f, groupGeneral, "compare", "force")
	return cmd
}

// writeReport reads every result in paths and writes their report to
// out.
func writeReport(stderr, stdout io.Writer, paths []string, o reportOptions) error {
	out := o.out
	buckets, err := parsePoints(o.points)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return badinput.New("report needs at least one result file, the --out of a run; e.g. dbprobe report result.jsonl -o report.html")
	}
	if out == "" {
		return badinput.New("report needs -o FILE, where to write the HTML page; e.g. dbprobe report %s -o report.html", strings.Join(paths, " "))
	}
	if out != "-" {
		if err := checkReportOut(out, paths); err != nil {
			return err
		}
	}
	var compared *report.Section
	if o.compare {
		a, err := compare.Load("A", o.sides[0])
		if err != nil {
			return err
		}
		b, err := compare.Load("B", o.sides[1])
		if err != nil {
			return err
		}
		c, err := compare.Run(a, b, compare.Options{Force: o.force})
		if err != nil {
			return err
		}
		compared = &report.Section{Title: fmt.Sprintf("Comparison: %d runs of A against %d of B", len(a.Files), len(b.Files)), Kind: "compare", Blocks: compareBlocks(c, true)}
	}
	read, err := readReportInputs(paths)
	if err != nil {
		return err
	}
	var inputs []report.Input
	var sweeps []report.Section
	for i, in := range read {
		if in.sweep != nil {
			sweeps = append(sweeps, sweepSection(paths[i], in.sweep))
			sweeps = append(sweeps, sweepCompareSections(paths[i], in.sweep)...)
			continue
		}
		inputs = append(inputs, report.Input{Name: paths[i], File: in.file})
	}
	r := report.Build(inputs)
	if len(inputs) == 0 {
		r = &report.Report{Title: "dbprobe report: " + filepath.Base(paths[0])}
		if len(paths) > 1 {
			r.Title = fmt.Sprintf("dbprobe report: %d sweeps", len(paths))
		}
	}
	r.Sections = append(sweeps, r.Sections...)
	if compared != nil {
		r.Sections = append([]report.Section{*compared}, r.Sections...)
		r.Title = "dbprobe report: " + compared.Title
	}
	switch buckets {
	case 0:
		r.Downsample(r.AutoBuckets(0))
	case -1:
	default:
		r.Downsample(buckets)
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		return err
	}
	if out == "-" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	} else {
		if err := replaceFile(out, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "dbprobe: wrote the report of %s to %s (%s)\n", strings.Join(paths, ", "), out, result.BytesText(int64(buf.Len())))
	}
	var cut []string
	for _, in := range inputs {
		open := in.File.Truncated
		for _, p := range in.File.Phases {
			open = open || p.Summary == nil
		}
		if open {
			cut = append(cut, in.Name)
		}
	}
	switch len(cut) {
	case 0:
		return nil
	case 1:
		return badinput.New("%s was cut short (the run was killed or is still going): the report shows what is complete and says so; once the run is over, dbprobe recover %s completes it", cut[0], cut[0])
	}
	return badinput.New("%s were cut short (the runs were killed or are still going): the report shows what is complete and says so; once the runs are over, dbprobe recover completes each", strings.Join(cut, ", "))
}

// parsePoints reads --points: 0 for auto, -1 for all, else the most
// spans per chart, two points each.
func parsePoints(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return 0, nil
	case "all":
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 40 {
		return 0, badinput.New("--points %q: give auto, all, or a number of points per line of at least 40, e.g. --points 600", s)
	}
	return n / 2, nil
}

// reportInput is one file given to report: a run's result or a sweep's
// summary.
type reportInput struct {
	file  *result.File
	sweep *sweep.Summary
}

// readReportInputs reads the files given to report, on as many cores as
// there are (100 one-hour results are 1.5 GB of JSON, their reading most
// of a report's time), and keeps each result without its seconds'
// histograms. The first bad file in the order given is the error.
func readReportInputs(paths []string) ([]reportInput, error) {
	out := make([]reportInput, len(paths))
	errs := make([]error, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = readReportInput(paths[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readReportInput(path string) (reportInput, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return reportInput{}, badinput.New("cannot read %s: %v", path, experiment.ShortError(err))
	}
	// ReadSummary decodes only the first JSON value: a run's header,
	// not its hour of seconds.
	if sum, serr := sweep.ReadSummary(bytes.NewReader(data)); serr == nil {
		return reportInput{sweep: sum}, nil
	} else if !errors.Is(serr, sweep.ErrNotSweep) && strings.Contains(serr.Error(), "schema version") {
		return reportInput{}, badinput.New("%s: %s", path, serr)
	}
	// The seconds' histograms are cut out before the JSON is decoded:
	// they are 95% of a result's bytes, the report draws nothing from
	// them when a phase has its summary, and decoding them is most of
	// the time 100 one-hour results take. A phase without a summary
	// needs them (its summary is added up from them): the file is then
	// read again whole.
	file, err := parseResult(path, withoutIntervalHistograms(data), "report")
	if err == nil && slices.ContainsFunc(file.Phases, func(p result.Phase) bool { return p.Summary == nil }) {
		file, err = parseResult(path, data, "report")
	}
	if err != nil {
		return reportInput{}, err
	}
	dropIntervalHistograms(file)
	return reportInput{file: file}, nil
}

// intervalPrefix starts every interval record: the writer puts "type"
// first (its records are structs).
var (
	intervalPrefix = []byte(`{"type":"interval",`)
	histogramKey   = []byte(`,"histogram":"`)
)

// withoutIntervalHistograms is a result's bytes with the "histogram"
// of every series of every interval record left out (the field is
// omitempty: a series without one is valid). Each is base64, so the
// next quote ends it. Other records (the summary's own histograms) are
// kept as they are. It returns a new slice; data is not changed.
func withoutIntervalHistograms(data []byte) []byte {
	out := make([]byte, 0, len(data)/8)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if !bytes.HasPrefix(line, intervalPrefix) {
			out = append(out, line...)
			continue
		}
		for {
			i := bytes.Index(line, histogramKey)
			if i < 0 {
				break
			}
			end := bytes.IndexByte(line[i+len(histogramKey):], '"')
			if end < 0 {
				break // cut short: left for result.Read to say so
			}
			out = append(out, line[:i]...)
			line = line[i+len(histogramKey)+end+1:]
		}
		out = append(out, line...)
	}
	return out
}

// dropIntervalHistograms lets go of the histograms that each second's
// series carries in a phase that has its summary: the report draws the
// seconds from their percentiles and the spectrum from the summary's
// histogram, and the seconds' histograms are most of a result's size
// (15 of the 15.4 MB of an hour at 64 threads), which reporting on many
// results would otherwise hold in memory all at once. A phase without a
// summary keeps them: its summary is added up from them.
func dropIntervalHistograms(f *result.File) {
	for _, p := range f.Phases {
		if p.Summary == nil {
			continue
		}
		for _, iv := range p.Intervals {
			for k := range iv.Series {
				iv.Series[k].Histogram = ""
			}
		}
	}
}

// checkReportOut refuses an -o that cannot be written, before anything
// is read: a directory, one in a directory that does not exist, or one
// of the results, which the page would replace.
func checkReportOut(out string, paths []string) error {
	if st, err := os.Stat(out); err == nil {
		if st.IsDir() {
			return badinput.New("cannot write -o %s: it is a directory; give a file name, e.g. -o %s", out, filepath.Join(out, "report.html"))
		}
		for _, p := range paths {
			if in, err := os.Stat(p); err == nil && os.SameFile(st, in) {
				return badinput.New("-o %s is one of the results being reported: give the page another name, e.g. report.html", out)
			}
		}
	}
	return checkOutDir(out)
}
