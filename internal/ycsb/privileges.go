package ycsb

import (
	"context"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// phaseAccess is what a phase does to the table: the load inserts; a run
// reads, and updates and inserts as its operation mix says. An update finds
// its row by key, which takes SELECT as well.
func phaseAccess(ph runner.Phase, spec *workload.Spec) driver.Access {
	if ph == runner.Load {
		return driver.AccessInsert
	}
	var a driver.Access
	for _, op := range spec.UsedOperations() {
		switch op {
		case workload.Read, workload.Scan:
			a |= driver.AccessSelect
		case workload.Update, workload.ReadModifyWrite:
			a |= driver.AccessSelect | driver.AccessUpdate
		case workload.Insert:
			a |= driver.AccessInsert
		}
	}
	return a
}

// checkPrivileges asks a database that can tell whether the user holds
// what the phase needs on the table, so that a missing GRANT ends the
// command with one line before any operation is sent.
func (j *job) checkPrivileges(ctx context.Context, ph runner.Phase) error {
	pc, ok := j.db.(driver.PrivilegeChecker)
	if !ok {
		return nil
	}
	need := phaseAccess(ph, &j.cfg.Workload)
	if need == 0 {
		return nil
	}
	if err := pc.CheckPrivileges(ctx, j.table, need); err != nil {
		return experiment.Scrubbed(j.target.Target, err)
	}
	return nil
}
