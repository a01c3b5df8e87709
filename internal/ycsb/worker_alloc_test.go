package ycsb

import (
	"context"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/null"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// Workload A's steps on the null driver (reads and updates: key choice,
// values, the session's call, recording) allocate nothing per operation,
// in closed and in open loop: the harness ceiling --db null measures must
// not include the garbage collector's cost. A phase's setup allocates, so
// the test compares two phases that differ by 100,000 operations; one
// allocation per operation would add 100,000.
func TestNullOperationsAllocateNothing(t *testing.T) {
	ctx := context.Background()
	target, err := driver.ParseTarget("null", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := null.Driver{}.Open(ctx, target, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		target float64
	}{{"closed loop", 0}, {"open loop", 200_000}} {
		t.Run(tt.name, func(t *testing.T) {
			allocs := func(ops int64) int64 {
				spec := testSpec(1000, ops)
				// No tick but the last: a tick allocates its summaries.
				opts := runner.Options{Phase: runner.Run, Threads: 2, Target: tt.target, Tick: time.Hour, Seed: 1}
				var out *runner.Outcome
				n := testing.AllocsPerRun(1, func() {
					if out, err = Execute(ctx, db, testTable, spec, opts); err != nil {
						t.Fatal(err)
					}
				})
				if out.Ops != ops || out.Failed != 0 {
					t.Fatalf("%d operations, %d failed; want %d", out.Ops, out.Failed, ops)
				}
				reads, updates := summaryOf(out, "READ").Count, summaryOf(out, "UPDATE").Count
				if reads < ops/3 || updates < ops/3 {
					t.Fatalf("%d reads and %d updates of %d: not workload A", reads, updates, ops)
				}
				return int64(n)
			}
			// Enough for each worker's every series to outgrow the
			// recorder's list (4,096 values) in both phases, so that both
			// allocate the same histograms.
			few, many := allocs(24_000), allocs(124_000)
			t.Logf("%d allocations for 24,000 operations, %d for 124,000", few, many)
			if extra := many - few; extra > 100 {
				t.Fatalf("%d allocations for 24,000 operations, %d for 124,000: %.3f per operation, want 0", few, many, float64(extra)/100_000)
			}
		})
	}
}
