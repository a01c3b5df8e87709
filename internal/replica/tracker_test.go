package replica

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var testEpoch, _ = ParseEpoch("testx00001")

// row is a replica's row of fields fields of 30 bytes, as loaded
// (unstamped).
func row(fields int) [][]byte {
	r := make([][]byte, fields)
	for i := range r {
		r[i] = bytes.Repeat([]byte{'.'}, 30)
	}
	return r
}

// apply writes stamped values into a row as the database would.
func apply(r [][]byte, fields []int, values [][]byte) {
	if fields == nil {
		for i, v := range values {
			r[i] = append([]byte(nil), v...)
		}
		return
	}
	for i, f := range fields {
		r[f] = append([]byte(nil), values[i]...)
	}
}

func update(w *Worker, key int64, fields []int, r [][]byte, acked bool) {
	vals := make([][]byte, max(len(fields), 1))
	if fields == nil {
		vals = make([][]byte, len(r))
	}
	for i := range vals {
		vals[i] = bytes.Repeat([]byte{'v'}, 30)
	}
	stamped := w.BeginWrite(key, fields, vals)
	if r != nil {
		apply(r, fields, stamped)
	}
	w.EndWrite(acked)
}

// read reads r (the replica's row) through w and returns the counts
// after.
func read(w *Worker, key int64, fields []int, r [][]byte, err error) {
	w.BeginRead(key)
	var vals [][]byte
	if fields == nil {
		vals = r
	} else {
		for _, f := range fields {
			vals = append(vals, r[f])
		}
	}
	w.EndRead(fields, vals, err)
}

func TestTrackerJudgesReads(t *testing.T) {
	tr := NewTracker(testEpoch, 4, true, time.Now())
	w := tr.NewWorker()
	replica := row(4)
	primary := row(4)

	// A key never written is not judged.
	read(w, 7, nil, replica, nil)
	// An acknowledged update the replica does not show: stale.
	update(w, 1, []int{2}, primary, true)
	read(w, 1, nil, replica, nil)
	// Once the replica shows it: fresh.
	apply(replica, nil, primary)
	read(w, 1, nil, replica, nil)
	// A read of field 3 alone cannot judge an update of field 2.
	update(w, 1, []int{2}, primary, true)
	read(w, 1, []int{3}, replica, nil)
	// A read of field 2 alone can: stale.
	read(w, 1, []int{2}, replica, nil)
	// An update that failed changes nothing to judge by.
	update(w, 2, []int{0}, primary, false)
	read(w, 2, nil, replica, nil)
	// An acknowledged insert the replica does not have: stale, missing.
	update(w, 3, nil, nil, true)
	read(w, 3, nil, nil, driver.ErrNotFound)
	// A failed read is not judged.
	read(w, 1, nil, replica, fmt.Errorf("boom"))

	c := tr.Counts()
	// Key 2's only write failed: nothing of it is remembered.
	want := Counts{Reads: 8, Checked: 4, Stale: 3, Missing: 1, Keys: 2}
	if c.Reads != want.Reads || c.Checked != want.Checked || c.Stale != want.Stale || c.Missing != want.Missing || c.Keys != want.Keys {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	if len(c.SecondStale) == 0 || c.SecondStale[0] != 3 || c.SecondChecked[0] != 4 {
		t.Errorf("per second: checked %v stale %v, want 4 and 3 in second 0", c.SecondChecked, c.SecondStale)
	}
}

// An update taken while another of its key is in flight is not clean: it
// may commit before the earlier one, so it never sets the version reads
// are judged by, and a replica showing the earlier one is not stale.
func TestTrackerOverlappingUpdatesDoNotJudge(t *testing.T) {
	tr := NewTracker(testEpoch, 2, false, time.Now())
	a, b := tr.NewWorker(), tr.NewWorker()
	replica := row(2)
	va := a.BeginWrite(5, []int{0}, [][]byte{bytes.Repeat([]byte{'a'}, 30)})
	vb := b.BeginWrite(5, []int{0}, [][]byte{bytes.Repeat([]byte{'b'}, 30)})
	// The server applied b, then a: a's value is the last.
	apply(replica, []int{0}, vb)
	apply(replica, []int{0}, va)
	b.EndWrite(true)
	a.EndWrite(true)
	read(a, 5, nil, replica, nil)
	if c := tr.Counts(); c.Stale != 0 || c.Checked != 1 {
		t.Fatalf("overlapping updates: checked %d stale %d, want 1 (by a, the clean one) and 0", c.Checked, c.Stale)
	}
	// A later update sent alone is clean, and judges again.
	update(a, 5, []int{0}, nil, true)
	read(a, 5, nil, replica, nil)
	if c := tr.Counts(); c.Stale != 1 || c.Checked != 2 {
		t.Fatalf("after a clean update: checked %d stale %d, want 2 and 1", c.Checked, c.Stale)
	}
}

// A field another run stamped may be newer than this run's update: the
// read is not judged.
func TestTrackerForeignStampNotJudged(t *testing.T) {
	tr := NewTracker(testEpoch, 2, false, time.Now())
	w := tr.NewWorker()
	update(w, 9, []int{1}, nil, true)
	replica := row(2)
	other, _ := ParseEpoch("other00001")
	Stamp(replica[1], other, 99)
	read(w, 9, nil, replica, nil)
	if c := tr.Counts(); c.Checked != 0 || c.Stale != 0 {
		t.Fatalf("foreign stamp: checked %d stale %d, want 0 and 0", c.Checked, c.Stale)
	}
}

// Another run's stamps count as older once Settle says that run had
// ended before this one began: it started earlier and its heartbeat
// table was gone. One still going, or started within the margin, is not
// judged.
func TestTrackerSettledRuns(t *testing.T) {
	now := time.Date(2026, 11, 27, 19, 0, 0, 0, time.UTC)
	mine, _ := NewEpoch(now)
	ended, _ := NewEpoch(now.Add(-time.Hour))
	going, _ := NewEpoch(now.Add(-time.Hour))
	recent, _ := NewEpoch(now.Add(-10 * time.Second))
	for _, c := range []struct {
		name  string
		other Epoch
		stale bool
	}{{"ended an hour before", ended, true}, {"still going", going, false}, {"started 10 s before", recent, false}} {
		tr := NewTracker(mine, 2, false, now)
		tr.Settle([]Epoch{going})
		w := tr.NewWorker()
		update(w, 1, []int{0}, nil, true)
		replica := row(2)
		Stamp(replica[0], c.other, 12345)
		read(w, 1, nil, replica, nil)
		cnt := tr.Counts()
		if c.stale && (cnt.Stale != 1 || cnt.Checked != 1) || !c.stale && (cnt.Stale != 0 || cnt.Checked != 0) {
			t.Errorf("%s: checked %d stale %d, want stale %v", c.name, cnt.Checked, cnt.Stale, c.stale)
		}
	}
}

// The stamped values are copies: the generator's values stay as they were.
func TestBeginWriteCopies(t *testing.T) {
	tr := NewTracker(testEpoch, 1, false, time.Now())
	w := tr.NewWorker()
	orig := []byte("0123456789abcdefghijklmnop")
	keep := append([]byte(nil), orig...)
	out := w.BeginWrite(1, nil, [][]byte{orig})
	w.EndWrite(true)
	if !bytes.Equal(orig, keep) {
		t.Fatalf("BeginWrite changed the caller's value to %q", orig)
	}
	if len(out[0]) != len(orig) || !bytes.Equal(out[0][StampLen:], orig[StampLen:]) {
		t.Fatalf("stamped value %q: want %q with its first %d bytes stamped", out[0], orig, StampLen)
	}
}

// BenchmarkTrackerMemory measures what a remembered key costs (the
// bytes/key metric), for bytesPerKey and partialBytesPerKey.
func BenchmarkTrackerMemory(b *testing.B) {
	const keys = 1_000_000
	for _, partial := range []bool{false, true} {
		b.Run(fmt.Sprintf("partial=%v", partial), func(b *testing.B) {
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				tr := NewTracker(testEpoch, 10, partial, time.Now())
				w := tr.NewWorker()
				vals := [][]byte{bytes.Repeat([]byte{'v'}, 100)}
				for k := int64(0); k < keys; k++ {
					w.BeginWrite(k*7919, []int{3}, vals)
					w.EndWrite(true)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/keys, "bytes/key")
				runtime.KeepAlive(tr)
			}
		})
	}
}

// BenchmarkTrackerUpdateRead is the cost per operation of an update and a
// read judged, on one worker.
func BenchmarkTrackerUpdateRead(b *testing.B) {
	tr := NewTracker(testEpoch, 10, false, time.Now())
	w := tr.NewWorker()
	vals := [][]byte{bytes.Repeat([]byte{'v'}, 100)}
	replica := row(10)
	b.ResetTimer()
	for i := range b.N {
		k := int64(i % 100_000)
		w.BeginWrite(k, []int{3}, vals)
		w.EndWrite(true)
		w.BeginRead(k)
		w.EndRead(nil, replica, nil)
	}
}

// Reads that end before the measured part (MeasureFrom: the --start-at
// wait, the warm-up) are not counted, while the writes made then are
// remembered: a measured read of a key updated in the warm-up is judged.
// The seconds count from the whole second the measured part began in.
func TestTrackerCountsOnlyMeasuredReads(t *testing.T) {
	tr := NewTracker(testEpoch, 4, false, time.Now())
	w := tr.NewWorker()
	replica, primary := row(4), row(4)
	tr.MeasureFrom(time.Now().Add(time.Hour))
	update(w, 1, nil, primary, true)
	read(w, 1, nil, replica, nil)
	read(w, 7, nil, replica, nil)
	update(w, 3, nil, nil, true)
	read(w, 3, nil, nil, driver.ErrNotFound)
	if c := tr.Counts(); c.Reads != 0 || c.Checked != 0 || c.Stale != 0 || c.Missing != 0 || len(c.SecondChecked) != 0 || c.Keys != 2 {
		t.Fatalf("after the warm-up's reads: %+v; want no read counted and both keys remembered", c)
	}
	// The measured part began 2.5 s ago.
	from := time.Now().Add(-2500 * time.Millisecond)
	tr.MeasureFrom(from)
	before := time.Now()
	read(w, 1, nil, replica, nil)
	read(w, 7, nil, replica, nil)
	read(w, 3, nil, nil, driver.ErrNotFound)
	after := time.Now()
	c := tr.Counts()
	if c.Reads != 3 || c.Checked != 2 || c.Stale != 2 || c.Missing != 1 {
		t.Errorf("measured reads: %+v; want 3 reads, 2 checked and stale, 1 missing", c)
	}
	// Each second's index counts from Origin(from).
	first, last := int(before.Sub(Origin(from))/time.Second), int(after.Sub(Origin(from))/time.Second)
	var stale int64
	for i, n := range c.SecondStale {
		if n > 0 && (i < first || i > last) {
			t.Errorf("stale reads in second %d, want them in %d..%d from %s", i, first, last, Origin(from))
		}
		stale += n
	}
	if stale != 2 {
		t.Errorf("per second stale %v, want 2 in all", c.SecondStale)
	}
}
