package ycsb

import (
	"context"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/replica"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// With Reads, plain reads and scans go to the replica; updates, inserts
// and read-modify-writes (read and write) to the primary, stamped. A
// replica that applies nothing makes every judged read stale.
func TestReadsGoToTheReplica(t *testing.T) {
	primary, frozen := newMemDB(), newMemDB()
	spec := testSpec(500, 4000)
	spec.Proportions = [5]float64{0.4, 0.2, 0.1, 0.1, 0.2}
	ctx := context.Background()
	if _, err := Execute(ctx, primary, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 50, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for k, row := range primary.rows {
		frozen.rows[k] = append([][]byte(nil), row...)
	}
	primary.calls.Store(0)
	epoch, err := replica.NewEpoch(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tracker := replica.NewTracker(epoch, spec.FieldCount, !spec.ReadAllFields, time.Now())
	reads := &Reads{DB: frozen, Tracker: tracker}
	out, err := ExecuteReads(ctx, primary, reads, testTable, spec, runner.Options{Phase: runner.Run, Threads: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Every attempt made, succeeded or failed.
	count := func(name string) int64 { return summaryOf(out, name).Count + summaryOf(out, name+"-FAILED").Count }
	rmw := count("READ-MODIFY-WRITE")
	plainReads := count("READ") - rmw
	if got, want := frozen.calls.Load(), plainReads+count("SCAN"); got != want {
		t.Errorf("the replica took %d calls, want the %d plain reads and scans", got, want)
	}
	if got, want := primary.calls.Load(), count("UPDATE")+count("INSERT")+rmw; got != want {
		t.Errorf("the primary took %d calls, want %d updates (those of read-modify-writes included), inserts and read-modify-write reads", got, want)
	}
	if len(frozen.rows) != 500 {
		t.Errorf("the replica has %d rows: something wrote to it", len(frozen.rows))
	}
	// Every field the run wrote on the primary carries this run's stamp.
	stamped := 0
	for _, row := range primary.rows {
		for _, v := range row {
			if kind, _, _ := replica.ReadStamp(v, epoch); kind == replica.Own {
				stamped++
			}
			if len(v) != spec.FieldLength {
				t.Fatalf("a value of %d bytes, want fieldlength %d", len(v), spec.FieldLength)
			}
		}
	}
	if stamped == 0 {
		t.Fatal("no stamped field on the primary")
	}
	c := tracker.Counts()
	if c.Reads != plainReads || c.Checked == 0 || c.Stale != c.Checked {
		t.Errorf("tracker %+v: want %d reads, and every judged one stale on a replica that applies nothing", c, plainReads)
	}
	// The inserted keys are not on the replica at all.
	if c.Missing == 0 || c.Missing > c.Stale || count("INSERT") == 0 {
		t.Errorf("%d reads found no row of the %d inserted, want some (and among the %d stale)", c.Missing, count("INSERT"), c.Stale)
	}
}

// Fields shorter than the stamp, and dataintegrity, are refused.
func TestCheckReplicaWorkload(t *testing.T) {
	ok := testSpec(10, 10)
	if err := checkReplicaWorkload(ok); err != nil {
		t.Fatalf("fieldlength 100: %v", err)
	}
	short := testSpec(10, 10)
	short.FieldLengthDistribution, short.MinFieldLength = workload.UniformLength, replica.StampLen-1
	integrity := testSpec(10, 10)
	integrity.DataIntegrity = true
	for _, s := range []*workload.Spec{short, integrity} {
		if err := checkReplicaWorkload(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// The replica's counts cover what the runner's do: the reads of the
// warm-up are sent to the replica but not counted (measureReplicaFrom).
// The tracker cuts at the warm-up's end, the runner at its tick just
// after: every read the runner measured is counted, but for the one a
// worker may have had in flight at the cut.
func TestReplicaReadsOfTheWarmupAreNotCounted(t *testing.T) {
	primary, frozen := newMemDB(), newMemDB()
	spec := testSpec(200, 0)
	ctx := context.Background()
	if _, err := Execute(ctx, primary, testTable, spec, runner.Options{Phase: runner.Load, Threads: 2, BatchSize: 50, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for k, row := range primary.rows {
		frozen.rows[k] = append([][]byte(nil), row...)
	}
	epoch, err := replica.NewEpoch(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tracker := replica.NewTracker(epoch, spec.FieldCount, !spec.ReadAllFields, time.Now())
	j := &job{rep: replicaRun{reads: &Reads{DB: frozen, Tracker: tracker}}}
	const threads = 2
	opts := runner.Options{Phase: runner.Run, Threads: threads, Seed: 2, Warmup: 200 * time.Millisecond, MaxExecutionTime: 600 * time.Millisecond}
	j.measureReplicaFrom(&opts)
	out, err := ExecuteReads(ctx, primary, j.rep.reads, testTable, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.WarmupUnfinished {
		t.Fatal("the phase ended before its warm-up did")
	}
	measured := summaryOf(out, "READ").Count + summaryOf(out, "READ-FAILED").Count
	sent := frozen.calls.Load()
	c := tracker.Counts()
	if c.Reads+threads < measured {
		t.Errorf("the tracker counted %d reads, the runner %d (%d threads): want every measured read counted", c.Reads, measured, threads)
	}
	if c.Reads+threads >= sent {
		t.Errorf("the tracker counted %d of the %d reads sent to the replica: want the warm-up's left out", c.Reads, sent)
	}
	if c.Checked == 0 || c.Stale != c.Checked {
		t.Errorf("tracker %+v: want every judged read stale on a replica that applies nothing", c)
	}
}
