package result

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

func f64(v float64) *float64 { return &v }

// A stress summary: its series as YCSB's, then rows and costs per
// statement and per iteration in YCSB's shape, then statements, plans
// and the costs' source as comments. Pinned, as parsers read it.
func TestWriteTextStressGolden(t *testing.T) {
	s := Summary{
		Phase: "stress", RunTime: 2 * time.Second, Ops: 200, Throughput: 100,
		Series: []measure.Summary{
			{Name: "LOOP.SQL-1", Count: 200, MeanMicros: 80, MinMicros: 20, MaxMicros: 900, Percentiles: pcts(60, 200, 400, 900),
				Statuses: []measure.StatusCount{{Status: "OK", Count: 200}}},
			{Name: "LOOP.SQL-2", Count: 199, MeanMicros: 300, MinMicros: 90, MaxMicros: 5000, Percentiles: pcts(250, 800, 2000, 5000),
				Statuses: []measure.StatusCount{{Status: "ERROR", Count: 1}, {Status: "ERROR(23505)", Count: 1}, {Status: "OK", Count: 199}}},
			{Name: "ITERATION", Count: 199, MeanMicros: 390, MinMicros: 120, MaxMicros: 5100, Percentiles: pcts(320, 1000, 2400, 5100),
				Statuses: []measure.StatusCount{{Status: "ERROR", Count: 1}, {Status: "OK", Count: 199}}},
		},
		Errors: map[string]int64{"ERROR(23505)": 1},
		Stress: &StressSummary{
			CostSource:             "pg_stat_statements; pg_stat_database",
			PerIteration:           &CostFigures{Calls: 200, LogicalReads: f64(9.5), PhysicalReads: f64(0)},
			StatementsPerIteration: &CostFigures{Calls: 200, LogicalReads: f64(8), PhysicalReads: f64(0)},
			Statements: []StressStatement{
				{Label: "LOOP.SQL-1", File: "loop.sql", Line: 2, Text: "SELECT n\n  FROM t WHERE id = :id", Rows: 200, Affected: -1,
					Plan: &Plan{Text: "Index Scan using t_pkey on t  (cost=0.29..8.30 rows=1 width=4)\n  Index Cond: (id = $1)", How: "EXPLAIN"},
					Cost: &CostFigures{Calls: 200, LogicalReads: f64(3), PhysicalReads: f64(0.25), Rows: f64(1), CPUMicros: f64(12.5), ElapsedMicros: f64(40)}},
				{Label: "LOOP.SQL-2", File: "loop.sql", Line: 3, Text: "UPDATE t SET n = n + 1 WHERE id = :id", Rows: 0, Affected: 199, PlanChanged: true,
					PlanEnd: &Plan{Text: "Update on t\n  ->  Seq Scan on t", How: "EXPLAIN (ANALYZE, BUFFERS)"}},
			},
		},
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_stress.golden", buf.Bytes())
}

// A stress run's result reads back with its statements, plans and costs.
func TestStressSummaryRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(Header{Experiment: ExperimentStress, Phase: "stress"}); err != nil {
		t.Fatal(err)
	}
	want := &StressSummary{
		CostSource: "x",
		Statements: []StressStatement{{Label: "A.SQL-1", File: "a.sql", Line: 1, Text: "SELECT 1", Rows: 5, Affected: -1,
			Plan: &Plan{Text: "p", How: "EXPLAIN"}, Cost: &CostFigures{Calls: 5, LogicalReads: f64(2)}}},
	}
	if err := w.Summary(Summary{Phase: "stress", Ops: 5, Stress: want}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Phases[0].Summary.Stress
	if got == nil || len(got.Statements) != 1 || got.Statements[0].Plan.How != "EXPLAIN" || *got.Statements[0].Cost.LogicalReads != 2 || got.Statements[0].Affected != -1 || got.CostSource != "x" {
		t.Errorf("read back %+v", got)
	}
}

// Costs from the database's whole counters alone (no statement
// statistics) are not announced per call of each statement.
func TestStressCostsWithoutStatementFigures(t *testing.T) {
	st := &StressSummary{CostSource: "pg_stat_database (pg_stat_statements is not installed)", PerIteration: &CostFigures{Calls: 10, LogicalReads: f64(4)},
		Statements: []StressStatement{{Label: "LOOP.SQL-1", File: "loop.sql", Line: 1, Text: "SELECT 1"}}}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	writeStressNotes(bw, st)
	bw.Flush()
	if out := buf.String(); strings.Contains(out, "per call of each statement") || !strings.Contains(out, "no statement's own costs") {
		t.Errorf("notes:\n%s", out)
	}
}
