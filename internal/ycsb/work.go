package ycsb

import (
	"context"
	"fmt"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// Execute runs one phase of spec (opts.Phase: the load or the run) on db's
// table, with the runner's options, and returns what it measured.
func Execute(ctx context.Context, db driver.DB, table driver.Table, spec *workload.Spec, opts runner.Options) (*runner.Outcome, error) {
	return ExecuteReads(ctx, db, nil, table, spec, opts)
}

// ExecuteReads is Execute with a run's reads and scans sent to a replica
// (nil: none).
func ExecuteReads(ctx context.Context, db driver.DB, reads *Reads, table driver.Table, spec *workload.Spec, opts runner.Options) (*runner.Outcome, error) {
	l := newLayout()
	workers := make([]*session, opts.Threads)
	plan := runner.Plan{Series: l.series, Cleanup: l.cleanup}
	if opts.Phase == runner.Load {
		plan.Split, plan.Count = runner.Sequence, spec.InsertCount
		plan.Worker = func(i int) runner.Worker {
			w := newLoader(db, table, spec, l, max(opts.BatchSize, 1))
			workers[i] = &w.session
			return w
		}
	} else {
		plan.Split, plan.Count = runner.PerWorker, spec.OperationCount
		plan.Worker = func(i int) runner.Worker {
			w := newTransactor(db, table, spec, l)
			w.reads = newReadSession(reads)
			workers[i] = &w.session
			return w
		}
	}
	plan.Prepare = func(ctx context.Context) error {
		gens, err := newGenerators(ctx, spec, opts)
		if err != nil {
			return err
		}
		for i, w := range workers {
			w.gen = gens[i]
		}
		return nil
	}
	return runner.Execute(ctx, plan, opts)
}

// layout names every series a phase can record and where each one is.
type layout struct {
	series  []runner.Series
	ops     [5]runner.Op
	verify  int
	cleanup int
}

func newLayout() *layout {
	l := &layout{}
	add := func(name string, ok, retryable bool) int {
		l.series = append(l.series, runner.Series{Name: name, CountsOK: ok, Retryable: retryable})
		return len(l.series) - 1
	}
	for _, o := range workload.Operations {
		l.ops[o].Name = o.String()
		l.ops[o].OK = add(o.String(), true, true)
	}
	for _, o := range workload.Operations {
		l.ops[o].Failed = add(o.String()+"-FAILED", false, false)
	}
	// Every check, good or bad, is timed in VERIFY, so its Return=OK is
	// counted check by check rather than taken from the count (see verify).
	l.verify = add("VERIFY", false, false)
	l.cleanup = add("CLEANUP", true, false)
	for _, o := range workload.Operations {
		l.ops[o].IntendedOK = add("Intended-"+o.String(), false, false)
		l.ops[o].IntendedFailed = add("Intended-"+o.String()+"-FAILED", false, false)
	}
	return l
}

// newGenerators makes each worker's generator. ζ no longer takes long (a
// closed form above 65,536 keys, see keygen), but thousands of workers
// each fill a pool of random value bytes; a signal meanwhile must still
// stop the command, so the generators are built apart and ctx can end the
// wait (the building goes on until the process exits).
func newGenerators(ctx context.Context, spec *workload.Spec, opts runner.Options) ([]*workload.Generator, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stopped before preparing the key generators: %w", err)
	}
	built := make(chan []*workload.Generator, 1)
	go func() {
		shared := workload.NewShared(spec)
		gens := make([]*workload.Generator, opts.Threads)
		for i := range gens {
			gens[i] = workload.NewGenerator(spec, shared, opts.Seed+uint64(i))
		}
		built <- gens
	}()
	select {
	case gens := <-built:
		return gens, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("stopped while preparing the key generators: %w", ctx.Err())
	}
}
