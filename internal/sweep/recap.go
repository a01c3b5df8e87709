package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/result"
)

// WriteRecap prints the recap table as the studies print theirs: one
// column per variant, a row for each varied setting, then the metrics'
// medians over the variant's runs, the runs counted, the prices; then
// the curves, the scalability verdicts, the drift check and the time the
// sweep itself took between runs. Every line starts with "# " except the
// table's, so YCSB-style parsers of the output skip it.
func WriteRecap(w io.Writer, s *Summary) error {
	var b strings.Builder
	if len(s.Variants) == 0 {
		return nil
	}
	rk := rateKind(s.Experiment)
	fmt.Fprintf(&b, "# recap: dbprobe %s, the median of each variant's runs (%d asked per variant)\n", s.Experiment, s.Reps)
	writeTable(&b, RecapTable(s))
	for _, c := range s.Curves {
		fmt.Fprintf(&b, "# curve of %s over %s%s: %s\n", rowLabel(s, c.Metric), c.Key, fixedText(c.Fixed), curveText(c, rk))
	}
	for _, c := range s.Conclusions {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	if o := s.Overhead; o != nil {
		fmt.Fprintf(&b, "# between runs the sweep itself took %.2f s (median of %d; at most %.2f s): from a run's last operation to the next's first, --cooldown and --between left out\n", o.MedianMS/1000, o.Gaps, o.MaxMS/1000)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RecapTable is the recap's table as WriteRecap prints it, a header row
// (variant ids) then one row per varied key, metric, runs, spread and
// cost; the first cell of each row names it. It is nil without variants.
func RecapTable(s *Summary) [][]string {
	if len(s.Variants) == 0 {
		return nil
	}
	rk := rateKind(s.Experiment)
	table := [][]string{}
	head := []string{"variant"}
	for _, v := range s.Variants {
		head = append(head, strconv.Itoa(v.ID))
	}
	table = append(table, head)
	for _, vy := range s.Vary {
		row := []string{vy.Key}
		for _, v := range s.Variants {
			row = append(row, settingOf(v.Settings, vy.Key))
		}
		table = append(table, row)
	}
	for _, r := range s.Rows {
		row := []string{r.Label}
		any := false
		for _, v := range s.Variants {
			val, ok := v.Medians[r.Key]
			any = any || ok
			row = append(row, metricText(r.Key, val, ok, rk))
		}
		if any {
			table = append(table, row)
		}
	}
	runs := []string{"runs"}
	for _, v := range s.Variants {
		asked := 0
		for _, r := range s.Runs {
			if r.Variant == v.ID {
				asked++
			}
		}
		if v.RunsOK == asked {
			runs = append(runs, strconv.Itoa(v.RunsOK))
		} else {
			runs = append(runs, fmt.Sprintf("%d of %d", v.RunsOK, asked))
		}
	}
	table = append(table, runs)
	table = append(table, spreadRow(s))
	table = append(table, costRows(s)...)
	return table
}

// rateKind is the storage experiment of "storage scan" as
// result.RateText names it ("log" for logcopy), to print its rate in the
// unit its kind is given in.
func rateKind(experiment string) string {
	f := strings.Fields(experiment)
	if len(f) < 2 || f[0] != "storage" {
		return ""
	}
	if f[1] == "logcopy" {
		return "log"
	}
	return f[1]
}

func settingOf(ss []Setting, key string) string {
	for _, s := range ss {
		if s.Key == key {
			return s.Value
		}
	}
	return "—"
}

func rowLabel(s *Summary, key string) string {
	for _, r := range s.Rows {
		if r.Key == key {
			return r.Label
		}
	}
	return key
}

func fixedText(f []Setting) string {
	if len(f) == 0 {
		return ""
	}
	parts := make([]string, len(f))
	for i, s := range f {
		parts[i] = s.Key + "=" + s.Value
	}
	return " (" + strings.Join(parts, " ") + ")"
}

func curveText(c Curve, kind string) string {
	parts := make([]string, len(c.X))
	for i := range c.X {
		parts[i] = num(c.X[i]) + " → " + metricText(c.Metric, c.Y[i], true, kind)
	}
	return strings.Join(parts, " · ")
}

// spreadRow is the headline metric's spread over each variant's runs,
// (max − min) / median: what a difference between columns has to beat.
func spreadRow(s *Summary) []string {
	key, _ := headline(s.Kind)
	row := []string{"spread"}
	for _, v := range s.Variants {
		med := v.Medians[key]
		if v.RunsOK < 2 || med == 0 {
			row = append(row, "—")
			continue
		}
		row = append(row, fmt.Sprintf("±%.1f%%", 50*(v.Max[key]-v.Min[key])/med))
	}
	return row
}

func costRows(s *Summary) [][]string {
	have := false
	for _, v := range s.Variants {
		have = have || v.Cost != nil
	}
	if !have {
		return nil
	}
	priced := []string{"price"}
	run := []string{"cost per run"}
	// A stress run counts iterations, not statements: say so.
	unit := "ops"
	if s.Kind == result.ExperimentStress {
		unit = "iterations"
	}
	perM := []string{"per 1M " + unit}
	per1k := []string{"per 1,000 " + unit + "/s"}
	perGB := []string{"per GB"}
	for _, v := range s.Variants {
		c := v.Cost
		if c == nil {
			for _, r := range []*[]string{&priced, &run, &perM, &per1k, &perGB} {
				*r = append(*r, "—")
			}
			continue
		}
		if c.Monthly {
			priced = append(priced, money(c.PerHour*730)+"/month")
			per1k = append(per1k, orDash(c.Per1000OpsS, "/month"))
		} else {
			priced = append(priced, money(c.PerHour)+"/hour")
			per1k = append(per1k, orDash(c.Per1000OpsS, "/hour"))
		}
		run = append(run, money(c.Run))
		perM = append(perM, orDash(c.PerMillionOps, ""))
		perGB = append(perGB, orDash(c.PerGB, ""))
	}
	if s.Kind == result.ExperimentStorage {
		return [][]string{priced, run, perGB}
	}
	return [][]string{priced, run, perM, per1k}
}

func orDash(v float64, suffix string) string {
	if v == 0 {
		return "—"
	}
	return money(v) + suffix
}

// money prints an amount with the precision its size needs: $18,299,
// $3.56, $0.0042.
func money(v float64) string {
	switch {
	case v >= 100:
		return "$" + thousands(math.Round(v))
	case v >= 1:
		return fmt.Sprintf("$%.2f", v)
	case v == 0:
		return "$0"
	}
	return "$" + strconv.FormatFloat(v, 'g', 2, 64)
}

// metricText prints a metric as the studies do: ops/s whole with
// thousands separators, milliseconds to two or three figures, a storage
// rate in its kind's unit.
func metricText(key string, v float64, ok bool, kind string) string {
	if !ok || math.IsNaN(v) {
		return "—"
	}
	switch key {
	case MetricRate:
		return result.RateText(kind, v)
	case MetricErrors, MetricOps:
		return thousands(v)
	case MetricThroughput:
		if v >= 100 {
			return thousands(math.Round(v))
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	switch {
	case v >= 100:
		return thousands(math.Round(v))
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// thousands prints a whole number with commas: 13,640.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// writeTable aligns the first column left and the others right.
func writeTable(b *strings.Builder, rows [][]string) {
	widths := []int{}
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
}
