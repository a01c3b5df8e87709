package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/sweep"
)

func newReportCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RESULT... -o report.html",
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

Given several results, the page starts with overlays: the phases they
share drawn on the same charts, one line per result, each line named by
the settings that differ between them (threads=8, durability=delayed),
and their figures side by side; each run's own section follows, folded
(its charts are drawn when it is opened). Every table can be copied as
Markdown or CSV from the page.

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
  dbprobe report sweep.json -o sweep.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeReport(cmd.ErrOrStderr(), cmd.OutOrStdout(), args, out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "write the HTML page to this file (required; - is stdout); it is replaced only once the whole page is written")
	setGroup(f, groupOutputs, "out")
	return cmd
}

// writeReport reads every result in paths and writes their report to
// out.
func writeReport(stderr, stdout io.Writer, paths []string, out string) error {
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
	var inputs []report.Input
	var sweeps []report.Section
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return badinput.New("cannot read %s: %v", path, experiment.ShortError(err))
		}
		if sum, serr := sweep.ReadSummary(bytes.NewReader(data)); serr == nil {
			sweeps = append(sweeps, sweepSection(path, sum))
			sweeps = append(sweeps, sweepCompareSections(path, sum)...)
			continue
		} else if !errors.Is(serr, sweep.ErrNotSweep) && strings.Contains(serr.Error(), "schema version") {
			return badinput.New("%s: %s", path, serr)
		}
		file, err := parseResult(path, data, "report")
		if err != nil {
			return err
		}
		dropIntervalHistograms(file)
		inputs = append(inputs, report.Input{Name: path, File: file})
	}
	r := report.Build(inputs)
	if len(inputs) == 0 {
		r = &report.Report{Title: "dbprobe report: " + filepath.Base(paths[0])}
		if len(paths) > 1 {
			r.Title = fmt.Sprintf("dbprobe report: %d sweeps", len(paths))
		}
	}
	r.Sections = append(sweeps, r.Sections...)
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
