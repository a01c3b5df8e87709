package result

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// IterationSeries is the name of a stress run's series of whole
// iterations, beside one per statement.
const IterationSeries = "ITERATION"

// writeStressLines writes what a stress run adds to YCSB's lines, in
// YCSB's shape so that a parser splitting on ", " reads them: per
// statement the rows it returned and changed, and the server's costs per
// call; per iteration the whole database's.
//
//	[LOOP.SQL-1], RowsReturned, 1000
//	[LOOP.SQL-1], RowsAffected, 1000
//	[LOOP.SQL-1], ServerCalls, 1000
//	[LOOP.SQL-1], ServerLogicalReadsPerCall, 4.0
//	[ITERATION], ServerLogicalReadsPerIteration, 9.5
func writeStressLines(bw *bufio.Writer, st *StressSummary) {
	line := func(metric, measurement, value string) {
		bw.WriteString("[" + field(metric) + "], " + field(measurement) + ", " + value + "\n")
	}
	for _, s := range st.Statements {
		line(s.Label, "RowsReturned", strconv.FormatInt(s.Rows, 10))
		if s.Affected >= 0 {
			line(s.Label, "RowsAffected", strconv.FormatInt(s.Affected, 10))
		}
		if s.Cost != nil {
			// The server's own count, which the averages are over: held
			// against Operations it shows the statement was found.
			line(s.Label, "ServerCalls", strconv.FormatInt(s.Cost.Calls, 10))
		}
		costLines(s.Label, "PerCall", s.Cost, line)
	}
	costLines(IterationSeries, "PerIteration", st.PerIteration, line)
}

// costLines writes one line per figure of c that the database counts.
func costLines(label, per string, c *CostFigures, line func(metric, measurement, value string)) {
	if c == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{
		{"ServerLogicalReads", c.LogicalReads}, {"ServerPhysicalReads", c.PhysicalReads},
		{"ServerRows", c.Rows}, {"ServerRowsExamined", c.RowsExamined},
		{"ServerCPU(us)", c.CPUMicros}, {"ServerTime(us)", c.ElapsedMicros},
	} {
		if f.v == nil {
			continue
		}
		name := f.name + per
		if k := strings.IndexByte(f.name, '('); k >= 0 {
			name = f.name[:k] + per + f.name[k:]
		}
		line(label, name, javaDouble(*f.v))
	}
}

// writeStressNotes writes, as comments, each statement's place and text,
// its plans, and where the costs came from.
func writeStressNotes(bw *bufio.Writer, st *StressSummary) {
	put := func(format string, args ...any) {
		bw.WriteString("# " + oneLine(fmt.Sprintf(format, args...)) + "\n")
	}
	for _, s := range st.Statements {
		if s.Line > 0 {
			put("statement [%s]: %s line %d: %s", s.Label, s.File, s.Line, strings.Join(strings.Fields(s.Text), " "))
		} else {
			// A built-in statement (--mix) has no file line.
			put("statement [%s]: %s: %s", s.Label, s.File, strings.Join(strings.Fields(s.Text), " "))
		}
		writePlan(bw, "plan", s.Label, s.Plan)
		writePlan(bw, "plan at the end", s.Label, s.PlanEnd)
		if s.PlanChanged {
			put("plan changed [%s]: its shape at the end differs from the one checked at the start", s.Label)
		}
	}
	if st.CostSource != "" {
		put("server costs: from %s, over the measured part; per call of each statement, and per iteration the whole database's (every session's work, other clients' and the monitor's included)", st.CostSource)
	}
}

// writePlan writes a plan as comment lines, its first line naming the
// statement and how it was taken.
func writePlan(bw *bufio.Writer, what, label string, p *Plan) {
	if p == nil {
		return
	}
	bw.WriteString("# " + oneLine(fmt.Sprintf("%s [%s] (%s):", what, label, p.How)) + "\n")
	for _, l := range strings.Split(strings.TrimRight(p.Text, "\n"), "\n") {
		bw.WriteString("#   " + oneLine(l) + "\n")
	}
}
