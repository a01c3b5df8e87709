package ycsb

import (
	"fmt"

	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// progress says what the phase did before it stopped: "after 9,000 of
// 100,000 rows", "after 1,234 of 10,000 operations", "after 1,234
// operations".
func (j *job) progress(ph runner.Phase, out *runner.Outcome) string {
	if ph == runner.Load {
		return fmt.Sprintf("after %s of %s rows", result.Grouped(out.Ops-out.Failed), result.Grouped(j.cfg.Workload.InsertCount))
	}
	if n := j.cfg.Workload.OperationCount; n > 0 {
		return fmt.Sprintf("after %s of %s operations", result.Grouped(out.Ops), result.Grouped(n))
	}
	return fmt.Sprintf("after %s operations", result.Grouped(out.Ops))
}

// stopped describes a phase the runner stopped early (experiment.Stopped):
// the record for the result and the cause in words for the verdict.
func (j *job) stopped(ph runner.Phase, out *runner.Outcome) (*result.Stopped, string) {
	c := experiment.StopContext{Phase: ph.String(), Progress: j.progress(ph, out), DataDir: j.dataDir}
	if ph == runner.Load {
		// dbprobe never drops what it loaded.
		c.Left = fmt.Sprintf("the table %s is incomplete (left as it is)", j.table.Name)
	}
	return experiment.Stopped(out.Stopped, j.db, j.target.Target, c)
}
