package sweep

import (
	"testing"

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
