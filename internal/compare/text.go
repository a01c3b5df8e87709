package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/result"
)

// WriteText prints the comparison for people: what was compared, the
// settings that differ, one line per metric with its verdict, how to
// read the figures, the --fail-if checks and the notes.
func WriteText(w io.Writer, c *Comparison) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "dbprobe compare: %s results, phase %s\n", c.Experiment, c.Phase)
	for _, s := range []SideInfo{c.A, c.B} {
		names := shortPaths(s.Files)
		if len(names) > 6 {
			// A sweep's fifty files: the first and the last say which.
			names = append(append(names[:3:3], "…"), names[len(names)-2:]...)
		}
		fmt.Fprintf(bw, "  %s: %s: %s\n", s.Name, countText(len(s.Files), "run"), strings.Join(names, " "))
	}
	bw.WriteString("\n")
	if len(c.Differences) == 0 {
		bw.WriteString("Settings that differ: none\n\n")
	} else {
		bw.WriteString("Settings that differ:\n")
		for _, d := range c.Differences {
			va, vb := strings.Join(d.A, " | "), strings.Join(d.B, " | ")
			line := fmt.Sprintf("  %s: %s %s, %s %s", d.Setting, c.A.Name, va, c.B.Name, vb)
			if utf8.RuneCountInString(line) <= textWidth {
				bw.WriteString(line + "\n")
				continue
			}
			// A long value (a SQLite pragma's explanation) on lines of
			// its own, from where the sides' values part.
			from := diffStart(va, vb)
			fmt.Fprintf(bw, "  %s:\n    %s: %s\n    %s: %s\n", d.Setting, c.A.Name, clip(va, from), c.B.Name, clip(vb, from))
		}
		bw.WriteString("\n")
	}
	writeTable(bw, c)
	bw.WriteString("\n")
	bw.WriteString(howToRead(c))
	for _, ch := range c.Checks {
		state := "passed"
		if ch.Tripped {
			state = "FAILED"
		}
		bw.WriteString(hanging(fmt.Sprintf("fail-if %s: %s: %s", ch.Condition.Text, state, ch.Why), "", "    ") + "\n")
	}
	if len(c.Notes) > 0 {
		bw.WriteString("\nNotes:\n")
		for _, n := range c.Notes {
			bw.WriteString(hanging(n, "  - ", "    ") + "\n")
		}
	}
	return bw.Flush()
}

// writeTable writes a row of figures per metric, aligned, and its
// verdict wrapped on the lines below it: a verdict is a sentence, and
// as a column it would push every line past a terminal's width.
func writeTable(bw *bufio.Writer, c *Comparison) {
	rows := [][]string{{"metric", "unit", c.A.Name + " median", c.B.Name + " median", "change"}}
	for _, m := range c.Metrics {
		rows = append(rows, []string{m.Name, m.Unit, number(m.MedianA, len(m.A)), number(m.MedianB, len(m.B)), changeText(m)})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	for i, r := range rows {
		var line strings.Builder
		for j, cell := range r {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(cell))
			if j > 0 {
				line.WriteString("  ")
			}
			if j < 2 { // names left, figures right
				line.WriteString(cell + pad)
			} else {
				line.WriteString(pad + cell)
			}
		}
		bw.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		if i > 0 {
			for _, l := range strings.Split(wrap(c.Metrics[i-1].Verdict, textWidth-4), "\n") {
				bw.WriteString("    " + l + "\n")
			}
		}
	}
}

// howToRead says what the figures are, in the terms of this comparison.
func howToRead(c *Comparison) string {
	n := 0
	level := math.NaN()
	exact := true
	for _, m := range c.Metrics {
		if m.P != nil {
			n++
			exact = exact && m.Exact
			if m.Change != nil && m.Outcome != TooFew && math.IsNaN(level) {
				level = m.Change.Level
			}
		}
	}
	var b strings.Builder
	b.WriteString("Each side's value is one per run (its result file). ")
	b.WriteString("change: the Hodges–Lehmann shift of B against A, the median of every B/A ratio; ")
	if !math.IsNaN(level) && math.Abs(level-Level) > 0.0005 {
		fmt.Fprintf(&b, "its %.0f%% CI is the rank test's (%.1f%% achieved with these runs). ", 100*Level, 100*level)
	} else {
		fmt.Fprintf(&b, "its %.0f%% CI is the rank test's. ", 100*Level)
	}
	how := "exact"
	if !exact {
		how = "exact or normal-approximated"
	}
	fmt.Fprintf(&b, "p: two-sided Mann–Whitney U (%s)", how)
	if n > 1 {
		fmt.Fprintf(&b, ", Holm-adjusted over the %d metrics compared", n)
	}
	b.WriteString("; a difference is shown at p < 0.05")
	if c.MinEffect > 0 {
		fmt.Fprintf(&b, " and a change of %s or more (--min-effect)", pct(c.MinEffect))
	}
	b.WriteString(". \"would detect\": the smallest change these runs find 80% of the time at their spread")
	if n > 1 {
		fmt.Fprintf(&b, ", at p < 0.05/%d as Holm may ask", n)
	}
	b.WriteString(". Latency and server cost: lower is better.")
	return wrap(b.String(), textWidth) + "\n"
}

// hanging wraps text to textWidth with first before its first line and
// rest before the others.
func hanging(text, first, rest string) string {
	lines := strings.Split(wrap(text, textWidth-len(rest)), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(s string, width int) string {
	var out strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		wl := len([]rune(word))
		if i > 0 {
			if line+1+wl > width {
				out.WriteString("\n")
				line = 0
			} else {
				out.WriteString(" ")
				line++
			}
		}
		out.WriteString(word)
		line += wl
	}
	return out.String()
}

// textWidth is the widest line the text writes where it can choose:
// a terminal's 80 columns, less a margin.
const textWidth = 78

// clipWidth is the most of a setting's value the text shows.
const clipWidth = textWidth - 7

// clip shortens a long setting value (a SQLite pragma's explanation) for
// the table, keeping the place where the two sides' values part (from,
// in runes) in view: the JSON keeps it whole.
func clip(s string, from int) string {
	r := []rune(s)
	if len(r) <= clipWidth {
		return s
	}
	start := 0
	if from > clipWidth-12 {
		start = min(from-8, len(r)-(clipWidth-1))
	}
	end := min(len(r), start+clipWidth-1)
	out := string(r[start:end])
	if start > 0 {
		out = "…" + string(r[start+1:end])
	}
	if end < len(r) {
		out += "…"
	}
	return out
}

// diffStart is the first rune at which a and b differ.
func diffStart(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	return i
}

// number is a median as the table shows it: grouped digits from 100 up,
// three significant places below; "–" for a side without values.
func number(v float64, n int) string {
	switch {
	case n == 0 || math.IsNaN(v):
		return "–"
	case math.Abs(v) >= 100:
		return result.Grouped(int64(math.Round(v)))
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64) // microseconds are whole
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func countText(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// WriteJSON writes the comparison as one indented JSON object: what the
// text says, with every run's value, for a script or a report.
func WriteJSON(w io.Writer, c *Comparison) error {
	type out struct {
		*Comparison
		Method  string `json:"method"`
		Tripped bool   `json:"tripped"`
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// "throughput<-5%" reads better than "throughput\u003c-5%": the
	// JSON is for files and scripts, not for HTML.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out{c, method, c.Tripped()}); err != nil {
		return fmt.Errorf("compare: writing the comparison: %w", err)
	}
	return nil
}

// method names the statistics, for a reader of the JSON.
const method = "per metric: two-sided Mann–Whitney U test (exact up to 60 runs in all), Holm-adjusted over the metrics compared; change: Hodges–Lehmann shift of log values (median B/A ratio) with its rank confidence interval; difference shown at p < 0.05"

// Cells are a metric's figures as the text table prints them — the two
// medians grouped and rounded to what the runs can tell, and the change
// with its interval — for other renderings of the same table.
func (m *Metric) Cells() (medianA, medianB, change string) {
	return number(m.MedianA, len(m.A)), number(m.MedianB, len(m.B)), changeText(m)
}
