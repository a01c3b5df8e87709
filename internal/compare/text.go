package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

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
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, d := range c.Differences {
			va, vb := strings.Join(d.A, " | "), strings.Join(d.B, " | ")
			from := diffStart(va, vb)
			fmt.Fprintf(tw, "  %s\t%s: %s\t%s: %s\n", d.Setting, c.A.Name, clip(va, from), c.B.Name, clip(vb, from))
		}
		tw.Flush()
		bw.WriteString("\n")
	}
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tunit\t%s median\t%s median\tchange\tverdict\n", c.A.Name, c.B.Name)
	for _, m := range c.Metrics {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Unit, number(m.MedianA, len(m.A)), number(m.MedianB, len(m.B)), changeText(m), m.Verdict)
	}
	tw.Flush()
	bw.WriteString("\n")
	bw.WriteString(howToRead(c))
	for _, ch := range c.Checks {
		state := "passed"
		if ch.Tripped {
			state = "FAILED"
		}
		fmt.Fprintf(bw, "fail-if %s: %s: %s\n", ch.Condition.Text, state, ch.Why)
	}
	if len(c.Notes) > 0 {
		bw.WriteString("\nNotes:\n")
		for _, n := range c.Notes {
			fmt.Fprintf(bw, "  - %s\n", n)
		}
	}
	return bw.Flush()
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
	return wrap(b.String(), 78) + "\n"
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

// clipWidth is the most of a setting's value the table shows.
const clipWidth = 48

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
