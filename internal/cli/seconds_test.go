package cli_test

import (
	"path/filepath"
	"testing"
	"time"
)

// The JSON result's intervals end on the wall clock's whole seconds, the
// first one cut short at the phase's start and the last at its end, and
// the monitor's samples end on the same seconds, so that the results of
// several clients, and their monitors, can be merged second by second.
func TestIntervalsEndOnWholeSeconds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "result.jsonl")
	if _, stderr, err := run(t, "run", "--db", "null", "-p", "operationcount=0", "--duration", "2300ms", "--threads", "1", "--target", "2000", "--out", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	p := readResult(t, out).Phases[0]
	ivs := p.Intervals
	if len(ivs) < 3 || p.Summary == nil {
		t.Fatalf("%d intervals, summary %v: want a partial first second, whole ones and a partial last", len(ivs), p.Summary)
	}
	start, end := ivs[0].Start, ivs[len(ivs)-1].End
	if d := end.Sub(start) - p.Summary.RunTime; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("intervals span %v, run time %v", end.Sub(start), p.Summary.RunTime)
	}
	// On a busy machine the ticker may wake late, but not by a tenth of
	// a second.
	const late = 100 * time.Millisecond
	seconds := map[time.Time]bool{}
	for i, iv := range ivs[:len(ivs)-1] {
		second := iv.End.Truncate(time.Second)
		if iv.End.Sub(second) > late || (i == 0 && !second.Equal(start.Truncate(time.Second).Add(time.Second))) {
			t.Fatalf("interval %d ends at %v, not just after a whole second (the phase started at %v)", i, iv.End, start)
		}
		seconds[second] = true
	}
	// The monitor's first sample ends where it was aligned, its last where
	// it stopped; those between end on the runner's seconds.
	if len(p.Monitor) < 3 {
		t.Fatalf("%d monitor samples", len(p.Monitor))
	}
	for _, m := range p.Monitor[1 : len(p.Monitor)-1] {
		// The monitor stops once the phase's sessions are closed: on a
		// busy machine that can be after the next whole second.
		if m.End.After(end) {
			continue
		}
		if !seconds[m.End] {
			t.Errorf("a monitor sample ends at %v, on none of the runner's seconds %v", m.End, seconds)
		}
	}
}
