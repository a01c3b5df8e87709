package report

import (
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/result"
)

// storageBlocks are a storage run's rate second by second (one line per
// point when it ran at several), its steps, its proof, its promises
// held against it and its device's seconds.
func storageBlocks(ru *run) []Block {
	st := ru.summary.Storage
	_, unit := result.RateIn(st.Experiment, 0)
	var out []Block
	if len(st.PerSecond) > 0 {
		out = append(out, storageRateChart("Rate per second", []*result.StorageSummary{st}, []string{""}))
	}
	if st.Cache != nil {
		out = append(out, cacheBlocks(st.Cache)...)
	}
	if c := st.Consistency; c != nil {
		out = append(out, Paragraph{Text: "Over " + strconv.Itoa(c.Points) + " seconds: median " + result.RateText(rateKind(st.Experiment), c.Median) +
			", min " + result.RateText(rateKind(st.Experiment), c.Min) + ", max " + result.RateText(rateKind(st.Experiment), c.Max) +
			", coefficient of variation " + strconv.FormatFloat(c.CV*100, 'f', 1, 64) + "%, " +
			strconv.FormatFloat(c.BelowShare*100, 'f', 1, 64) + "% of seconds below 90% of the median."})
	}
	if len(st.Steps) > 0 {
		t := Table{Caption: "Steps", Head: []string{"step", "seconds", "bytes", "rate (" + unit + ")", "rows", "log rate (MB/s)", "checkpoints", "verdict"}}
		for _, s := range st.Steps {
			rate, _ := result.RateIn(st.Experiment, s.Rate)
			logRate := ""
			if s.LogBytes >= 0 {
				logRate = strconv.FormatFloat(s.LogRate/1e6, 'f', 1, 64)
			}
			cps := ""
			if s.Checkpoints >= 0 {
				cps = strconv.FormatInt(s.Checkpoints, 10)
			}
			t.Rows = append(t.Rows, []string{s.Label, strconv.FormatFloat(s.Seconds, 'f', 1, 64), result.BytesText(s.Bytes),
				strconv.FormatFloat(rate, 'f', 3, 64), strconv.FormatInt(s.Rows, 10), logRate, cps, s.Verdict})
		}
		t.Numeric = []bool{false, true, true, true, true, true, true, false}
		out = append(out, t)
	}
	if p := st.Proof; p != nil {
		t := Table{Caption: "Proof: what the rate counts against the database's and the device's own counts", Head: []string{"count", "bytes"}}
		t.Rows = append(t.Rows, []string{"the rate's bytes (" + st.BytesAre + ")", result.BytesText(p.Bytes)})
		if p.DatabaseBytes >= 0 {
			t.Rows = append(t.Rows, []string{"the database's (" + p.Counter + ")", result.BytesText(p.DatabaseBytes)})
		}
		if p.DeviceBytes >= 0 {
			t.Rows = append(t.Rows, []string{"the device's (" + p.Device + ")", result.BytesText(p.DeviceBytes)})
		}
		out = append(out, t)
	}
	for _, e := range st.Expect {
		out = append(out, Verdict{Label: "Promise " + e.Key + " " + e.PromisedText, Text: e.Verdict, Bad: !e.Held && e.NotMeasured == ""})
	}
	if d := st.Device; d != nil && len(d.PerSecond) > 0 {
		c := Chart{Title: "Device " + d.Name + " per second", XLabel: "elapsed (s)", YLabel: "MB/s"}
		rd, wr := Series{Label: "read MB/s"}, Series{Label: "write MB/s"}
		for _, s := range d.PerSecond {
			c.Xs = append(c.Xs, s.Elapsed)
			rd.Y = append(rd.Y, val(s.ReadRate/1e6))
			wr.Y = append(wr.Y, val(s.WriteRate/1e6))
		}
		c.Series = []Series{rd, wr}
		out = append(out, c)
	}
	if len(st.Cold) > 0 {
		out = append(out, Paragraph{Text: "Made cold: " + strings.Join(st.Cold, "; ") + "."})
	}
	return out
}

// storageRateChart draws the per-second rate of one or more storage
// runs of the same experiment, a line per run and per point, each
// labelled by its run's label and its point.
func storageRateChart(title string, sts []*result.StorageSummary, labels []string) Chart {
	_, unit := result.RateIn(sts[0].Experiment, 0)
	type line struct {
		label string
		xs    []float64
		ys    []float64
	}
	var lines []line
	for i, st := range sts {
		idx := map[string]int{}
		for _, p := range st.PerSecond {
			l := strings.TrimSpace(labels[i] + " " + p.Point)
			if l == "" {
				l = "rate"
			}
			k, ok := idx[l]
			if !ok {
				k = len(lines)
				idx[l] = k
				lines = append(lines, line{label: l})
			}
			v, _ := result.RateIn(st.Experiment, p.Rate)
			lines[k].xs = append(lines[k].xs, p.Elapsed)
			lines[k].ys = append(lines[k].ys, v)
		}
	}
	xss := make([][]float64, len(lines))
	yss := make([][]float64, len(lines))
	names := make([]string, len(lines))
	for i, l := range lines {
		xss[i], yss[i], names[i] = l.xs, l.ys, l.label
	}
	xs, series := align(xss, yss, names)
	// Lines of several runs, or of several points, each have their own
	// seconds: joined over the others' instead of broken at each.
	return Chart{Title: title, XLabel: "elapsed (s) of the measured part", YLabel: unit, Xs: xs, Series: series, SpanGaps: len(lines) > 1}
}

// stressBlocks are a stress run's statements: their texts and places,
// rows, plans, and what each cost the server per call.
func stressBlocks(st *result.StressSummary) []Block {
	if len(st.Statements) == 0 {
		return nil
	}
	var out []Block
	t := Table{Caption: "Statements: rows and the server's cost per call", Head: []string{"statement", "place", "rows returned", "rows changed",
		"server calls", "logical reads", "physical reads", "CPU (µs)", "time (µs)", "plan changed"}}
	t.Numeric = []bool{false, false, true, true, true, true, true, true, true, false}
	for _, s := range st.Statements {
		place := s.File
		if s.Line > 0 {
			place += " line " + strconv.Itoa(s.Line)
		}
		changed := ""
		if s.Affected >= 0 {
			changed = strconv.FormatInt(s.Affected, 10)
		}
		row := []string{s.Label, place, strconv.FormatInt(s.Rows, 10), changed}
		row = append(row, costCells(s.Cost)...)
		plan := "no"
		if s.PlanChanged {
			plan = "yes"
		}
		t.Rows = append(t.Rows, append(row, plan))
	}
	out = append(out, t)
	if st.PerIteration != nil || st.StatementsPerIteration != nil {
		ct := Table{Caption: "Per iteration", Head: []string{"whose", "iterations", "logical reads", "physical reads", "CPU (µs)", "time (µs)"}}
		if st.StatementsPerIteration != nil {
			ct.Rows = append(ct.Rows, append([]string{"the statements'"}, costCells(st.StatementsPerIteration)...))
		}
		if st.PerIteration != nil {
			ct.Rows = append(ct.Rows, append([]string{"the whole database's (every session's work)"}, costCells(st.PerIteration)...))
		}
		out = append(out, ct)
	}
	if st.CostSource != "" {
		out = append(out, Paragraph{Text: "Server costs come from " + st.CostSource + ", over the measured part."})
	}
	for _, s := range st.Statements {
		var text strings.Builder
		text.WriteString(strings.TrimSpace(s.Text) + "\n")
		if s.Plan != nil {
			text.WriteString("\n-- plan (" + s.Plan.How + "):\n" + strings.TrimRight(s.Plan.Text, "\n") + "\n")
		}
		if s.PlanEnd != nil {
			text.WriteString("\n-- plan at the end (" + s.PlanEnd.How + "):\n" + strings.TrimRight(s.PlanEnd.Text, "\n") + "\n")
		}
		out = append(out, Code{Caption: "Statement " + s.Label + " and its plan", Text: text.String(), Collapsed: true})
	}
	return out
}

// costCells are a cost's figures as the text output prints them, empty
// where the database does not count one.
func costCells(c *result.CostFigures) []string {
	if c == nil {
		return []string{"", "", "", "", ""}
	}
	f := func(v *float64) string {
		if v == nil {
			return ""
		}
		return result.Double(*v)
	}
	return []string{strconv.FormatInt(c.Calls, 10), f(c.LogicalReads), f(c.PhysicalReads), f(c.CPUMicros), f(c.ElapsedMicros)}
}

// durabilityBlocks are a durability check's cycles.
func durabilityBlocks(ru *run) []Block {
	cs := ru.phase.Cycles
	if len(cs) == 0 {
		return []Block{Paragraph{Text: "No crash cycle was written."}}
	}
	t := Table{Caption: "Crash cycles", Head: []string{"cycle", "crash after", "acknowledged", "lost", "pattern", "lost window", "earlier lost", "recovery"}}
	t.Numeric = []bool{true, true, true, true, false, true, true, true}
	for _, c := range cs {
		t.Rows = append(t.Rows, []string{strconv.Itoa(c.Number), c.CrashAfter.String(), strconv.Itoa(c.Acknowledged), strconv.Itoa(c.Lost),
			c.Pattern, c.LostWindow.String(), strconv.Itoa(c.EarlierLost), c.Recovery.String()})
	}
	out := []Block{t}
	if s := ru.summary; s != nil && s.Durability != nil && s.Durability.Caveat != "" {
		out = append(out, Paragraph{Text: "Caveat: " + s.Durability.Caveat})
	}
	return out
}

// cacheBlocks draws the cache experiment (dbprobe storage cache): the hit
// share and the lookups' latency over the working set's size, both on a
// log x, and the estimate as a verdict.
func cacheBlocks(c *result.CacheFigures) []Block {
	if len(c.Points) == 0 {
		return nil
	}
	var xs []float64
	hit := Series{Label: "hit share (%)", Points: true}
	thr := Series{Label: "threshold", Dashed: true}
	p50 := Series{Label: "p50", Points: true}
	p99 := Series{Label: "p99", Points: true}
	for _, p := range c.Points {
		xs = append(xs, float64(p.Bytes)/1e6)
		if p.HitShare >= 0 {
			hit.Y = append(hit.Y, val(100*p.HitShare))
		} else {
			hit.Y = append(hit.Y, nil)
		}
		thr.Y = append(thr.Y, val(100*c.Threshold))
		p50.Y = append(p50.Y, val(float64(p.P50Micros)/1000))
		p99.Y = append(p99.Y, val(float64(p.P99Micros)/1000))
	}
	var out []Block
	if c.Estimate.Text != "" {
		out = append(out, Verdict{Label: "cache", Text: c.Estimate.Text})
	}
	out = append(out,
		Chart{Title: "Working-set size → hit share", XLabel: "working set (MB)", YLabel: "hit share (%)", X: XNumber, LogX: true, Xs: xs, Series: []Series{hit, thr}},
		Chart{Title: "Working-set size → lookup latency", XLabel: "working set (MB)", YLabel: "latency (ms)", X: XNumber, LogX: true, LogY: true, Xs: xs, Series: []Series{p50, p99}, Points: true},
	)
	return out
}
