package sweep

import (
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/price"
	"github.com/dbprobe/dbprobe/internal/result"
)

// A stress sweep counts iterations, as its ops/s row says: the cost rows
// name them too, not "ops", which would read as statements.
func TestCostRowsNameTheUnit(t *testing.T) {
	for _, tc := range []struct{ kind, perM, per1k string }{
		{result.ExperimentYCSB, "per 1M ops", "per 1,000 ops/s"},
		{result.ExperimentStress, "per 1M iterations", "per 1,000 iterations/s"},
	} {
		s := &Summary{Kind: tc.kind, Variants: []VariantRecord{{Cost: &Cost{PerHour: 1, Run: 0.001, PerMillionOps: 0.8, Per1000OpsS: 2.9}}}}
		rows := costRows(s)
		if len(rows) != 4 || rows[2][0] != tc.perM || rows[3][0] != tc.per1k {
			t.Errorf("%s: rows %q, want %q and %q", tc.kind, rows, tc.perM, tc.per1k)
		}
	}
}

// A variant whose runs all failed still has its price: the recap shows
// it, and a dash where a figure needs a finished run.
func TestPriceOfAVariantWithoutFinishedRuns(t *testing.T) {
	p, err := price.Parse("$1991/month")
	if err != nil {
		t.Fatal(err)
	}
	variants := []Variant{{ID: 1, Settings: []Setting{{Key: "threads", Value: "1"}}}, {ID: 2, Settings: []Setting{{Key: "threads", Value: "2"}}}}
	s := &Summary{Kind: result.ExperimentYCSB, Variants: []VariantRecord{{ID: 1}, {ID: 2}}}
	s.Runs = []RunRecord{
		{Position: 1, Variant: 1, Status: StatusOK, Metrics: map[string]float64{MetricThroughput: 1000, MetricSeconds: 10}},
		{Position: 2, Variant: 2, Status: "failed"},
	}
	analyze(s, variants, []price.Selected{p})
	if c := s.Variants[1].Cost; c == nil || c.PerHour == 0 {
		t.Fatalf("variant 2 has no price: %+v", c)
	}
	rows := costRows(s)
	if rows[0][2] != rows[0][1] || rows[0][2] == "—" {
		t.Errorf("price row %q: variant 2 should show the same price as variant 1", rows[0])
	}
	if rows[1][2] != "—" || rows[1][1] == "—" {
		t.Errorf("cost per run row %q: a dash only where no run finished", rows[1])
	}
}

// The gap between stress or storage runs holds each run's table setup,
// which the line must not call the sweep's own time.
func TestOverheadLineSaysWhatTheGapHolds(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		{result.ExperimentYCSB, "between runs the sweep itself took 1.50 s"},
		{result.ExperimentStress, "between runs passed 1.50 s (median of 3; at most 2.00 s): from a run's last operation to the next's first, each run's own table setup included"},
	} {
		var b strings.Builder
		if err := WriteRecap(&b, &Summary{Kind: tc.kind, Variants: []VariantRecord{{ID: 1}}, Overhead: &Overhead{Gaps: 3, MedianMS: 1500, MaxMS: 2000}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: %s", tc.kind, b.String())
		}
	}
}
