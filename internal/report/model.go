package report

import (
	"encoding/csv"
	"math"
	"strconv"
	"strings"
)

// Report is one HTML page: a title, notices that head it (a result cut
// short), and its sections in order. Build fills it from result files;
// a caller adds its own sections (a sweep's recap and scaling, compare's
// verdicts) with Add before WriteHTML.
type Report struct {
	Title string
	// Notices are said at the top, above every section: what the reader
	// must know before trusting a figure (a result cut short).
	Notices  []string
	Sections []Section
}

// Add appends a section.
func (r *Report) Add(s Section) { r.Sections = append(r.Sections, s) }

// Section is one part of the report with its own heading in the page's
// contents: one run, the overlay of several, a sweep's recap.
type Section struct {
	// ID is the section's anchor; WriteHTML makes one from Title when it
	// is empty, and keeps every anchor unique.
	ID    string
	Title string
	// Kind names what the section is about, shown beside its title
	// ("ycsb run", "storage scan", "overlay", "sweep").
	Kind   string
	Blocks []Block
}

// Block is one piece of a section: Paragraph, Verdict, Table, Chart,
// Code or Group. The set is closed: the page knows how to draw each.
type Block interface{ block() }

// Paragraph is a paragraph of plain text.
type Paragraph struct{ Text string }

// Verdict is a sentence that says what the figures mean (the monitor's
// bottleneck, a storage verdict, compare's verdict), set apart so the
// reader finds it. Bad marks one that reports a problem.
type Verdict struct {
	Label string
	Text  string
	Bad   bool
}

// Code is text shown as it is: a command that reproduces a run, the
// text output. Copy adds a button that copies it.
type Code struct {
	Caption string
	Text    string
	// Collapsed puts it in a closed <details>, for long text.
	Collapsed bool
}

// Group is a titled sub-part of a section, with its own blocks.
type Group struct {
	Title  string
	Blocks []Block
	// Collapsed puts it in a closed <details>: reference material (every
	// setting) that would otherwise push the charts apart.
	Collapsed bool
}

// Table is a table of text cells. The page shows it as HTML and, in a
// closed <details>, as Markdown and CSV with copy buttons, so it can be
// pasted into an issue or a spreadsheet as it is.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
	// Numeric marks the columns to align right (figures); nil aligns
	// every column but the first right.
	Numeric []bool
}

// Chart is one chart: an x series and one or more y series, drawn by
// the embedded charting library. A nil value in Y is a gap.
type Chart struct {
	Title string
	// XLabel and YLabel name the axes with their units.
	XLabel, YLabel string
	// X is the kind of x axis: XSeconds (elapsed seconds), XNumber (a
	// setting's value: threads, rows) or XNines (a percentile spectrum,
	// x being -log10(1-q)).
	X XKind
	// LogX draws x on a base-2 logarithmic scale (threads 1, 2, 4…64).
	LogX bool
	// LogY draws y on a logarithmic scale (latencies, which span
	// decades); values <= 0 are then gaps.
	LogY   bool
	Xs     []float64
	Series []Series
	// Bands shade spans of x: a warm-up, an outage.
	Bands []Band
	// Points draws markers without lines (a few points far apart).
	Points bool
	// SpanGaps joins a line across its gaps: lines of several runs on one
	// x axis each have gaps where only another has a value.
	SpanGaps bool
	// Note is said under the chart: how it was drawn when that is not
	// plain (downsampled, see Report.Downsample).
	Note string
}

// XKind is the kind of a chart's x axis.
type XKind int

const (
	// XSeconds is elapsed seconds from a phase's start.
	XSeconds XKind = iota
	// XNines is a percentile spectrum: x = -log10(1 - q/100), so that
	// 90, 99, 99.9 and 99.99 are evenly spaced.
	XNines
	// XNumber is any other number: a sweep's threads, rows, degree.
	XNumber
)

// Series is one line of a chart.
type Series struct {
	Label string
	Y     []*float64
	// Points draws this series as markers without a line: measured
	// points beside a fitted curve.
	Points bool
	// Dashed draws its line dashed: a fit, a limit.
	Dashed bool
}

// Band is a span of x shaded on a chart, with its label in the legend
// text below the chart.
type Band struct {
	From, To float64
	Label    string
	// Kind is "warmup" or "outage", which sets its colour.
	Kind string
}

func (Paragraph) block() {}
func (Verdict) block()   {}
func (Code) block()      {}
func (Group) block()     {}
func (Table) block()     {}
func (Chart) block()     {}

// Markdown is the table as a GitHub Markdown table.
func (t Table) Markdown() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			c = strings.ReplaceAll(strings.ReplaceAll(c, "|", `\|`), "\n", " ")
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	row(t.Head)
	b.WriteString("|")
	for i := range t.Head {
		if t.numeric(i) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// CSV is the table as CSV, its head the first row.
func (t Table) CSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(t.Head)
	w.WriteAll(t.Rows) // WriteAll flushes; a strings.Builder cannot fail
	return b.String()
}

func (t Table) numeric(i int) bool {
	if t.Numeric == nil {
		return i > 0
	}
	return i < len(t.Numeric) && t.Numeric[i]
}

// val is a chart value: nil for a gap, which NaN and infinities are too.
func val(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// num writes a chart value with 6 significant digits, enough for a
// chart and half the bytes of a float64's shortest form; a gap is null.
func num(b *strings.Builder, v *float64) {
	if v == nil {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(*v, 'g', 6, 64))
}
