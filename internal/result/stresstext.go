package result

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IterationSeries is the name of a stress run's series of whole
// iterations, beside one per statement.
const IterationSeries = "ITERATION"

// writeStressLines writes what a stress run adds to YCSB's lines, in
// YCSB's shape so that a parser splitting on ", " reads them: per
// statement the rows it returned and changed, and the server's costs per
// call; per iteration the sum of the statements' costs (what
// SQLQueryStress's logical reads per iteration are) and the whole
// database's, every session's work included.
//
//	[LOOP.SQL-1], RowsReturned, 1000
//	[LOOP.SQL-1], RowsAffected, 1000
//	[LOOP.SQL-1], ServerCalls, 1000
//	[LOOP.SQL-1], ServerLogicalReadsPerCall, 4.0
//	[ITERATION], StatementsLogicalReadsPerIteration, 8.0
//	[ITERATION], DatabaseLogicalReadsPerIteration, 9.5
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
		costLines(s.Label, "Server", "PerCall", s.Cost, line)
	}
	costLines(IterationSeries, "Statements", "PerIteration", st.StatementsPerIteration, line)
	costLines(IterationSeries, "Database", "PerIteration", st.PerIteration, line)
}

// costLines writes one line per figure of c that the database counts,
// each named whose it is (Server, Statements, Database) and per what.
func costLines(label, whose, per string, c *CostFigures, line func(metric, measurement, value string)) {
	if c == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{
		{"LogicalReads", c.LogicalReads}, {"PhysicalReads", c.PhysicalReads},
		{"Rows", c.Rows}, {"RowsExamined", c.RowsExamined},
		{"CPU(us)", c.CPUMicros}, {"Time(us)", c.ElapsedMicros},
	} {
		if f.v == nil {
			continue
		}
		name := whose + f.name + per
		if k := strings.IndexByte(f.name, '('); k >= 0 {
			name = whose + f.name[:k] + per + f.name[k:]
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
		per := "per call of each statement"
		if !slices.ContainsFunc(st.Statements, func(s StressStatement) bool { return s.Cost != nil }) {
			// pg_stat_statements absent, say: the database's block
			// deltas have no statement to go to.
			per = "no statement's own costs (the source does not tell statements apart)"
		} else if st.StatementsPerIteration != nil {
			per += "; per iteration the sum of the statements' (Statements…PerIteration)"
		}
		put("server costs: from %s, over the measured part; %s; and per iteration the whole database's (Database…PerIteration: every session's work, other clients', autovacuum's and the monitor's included)", st.CostSource, per)
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
