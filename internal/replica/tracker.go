package replica

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// numShards spreads the keys over this many maps, each with its own lock,
// so that hundreds of workers rarely wait on one another.
const numShards = 256

// allFields is the mask of an update that wrote every field of a table
// with more fields than a mask has bits: only a read of every field can
// judge it.
const allFields = ^uint64(0)

// Tracker remembers, for every key the run updated or inserted, the
// highest clean version the primary acknowledged, and judges reads from
// the replica against it. It is safe for concurrent use; each worker
// uses it through a Worker of its own.
type Tracker struct {
	epoch  Epoch
	fields int
	// partial says reads may read some fields only, so each key's mask
	// is kept.
	partial bool
	// start is the origin of the seconds, from is when the measured part
	// begins (MeasureFrom): a read that ends before it is not counted.
	start, from time.Time
	next        atomic.Uint64
	shards      [numShards]shard

	// live are the other runs whose heartbeat tables were there when
	// this one began (Settle); read-only once the workers start.
	live map[Epoch]bool

	mu      sync.Mutex
	workers []*Worker
}

// settledMargin is how much earlier than this run another run must have
// started for its stamps to count as older than this run's writes (with
// its heartbeat table gone when this one began): more than the clocks
// of two client machines are ever apart.
const settledMargin = time.Minute

// Settle tells the tracker which runs were going when this one began:
// live holds the epochs of the heartbeat tables on the primary then. A
// value stamped by any other run that started more than settledMargin
// before this one was written by a run that had ended, so it is older
// than every write of this one and is judged as an unstamped value is.
// Call it before the workers start.
func (t *Tracker) Settle(live []Epoch) {
	t.live = map[Epoch]bool{}
	for _, e := range live {
		t.live[e] = true
	}
}

// settled reports whether another run's stamps are older than every
// write of this one (Settle).
func (t *Tracker) settled(e Epoch) bool {
	return t.live != nil && !t.live[e] && e.Start().Before(t.epoch.Start().Add(-settledMargin))
}

// shard holds what the tracker remembers of some keys, in maps of their
// own so that a key costs only what it needs: a version, a mask only when
// reads may read some fields, and an in-flight count only while a write
// of it is in flight.
type shard struct {
	mu sync.Mutex
	// acked is each key's highest clean version acknowledged.
	acked map[int64]uint64
	// masks are the fields that version wrote (bit i for field i), or
	// allFields; nil unless the tracker is partial.
	masks map[int64]uint64
	// inflight counts the key's writes sent and not yet answered, for
	// the keys with any.
	inflight map[int64]uint32
	// pad keeps two shards' locks off one cache line.
	_ [32]byte
}

// NewTracker returns a tracker for a table of fields fields, whose
// seconds count from start; partial says reads may read some fields only
// (readallfields=false), which makes the tracker keep the fields each
// version wrote.
func NewTracker(e Epoch, fields int, partial bool, start time.Time) *Tracker {
	t := &Tracker{epoch: e, fields: fields, partial: partial, start: start}
	for i := range t.shards {
		sh := &t.shards[i]
		sh.acked, sh.inflight = map[int64]uint64{}, map[int64]uint32{}
		if partial {
			sh.masks = map[int64]uint64{}
		}
	}
	return t
}

// MeasureFrom counts only the reads that end at from or later, and the
// seconds from Origin(from): the runner's figures leave out what comes
// before the measured part (the --start-at wait, the warm-up), and so do
// the replica's. Writes before from are remembered all the same: a
// warm-up's update still makes a later read checkable. Call it before
// the workers start.
func (t *Tracker) MeasureFrom(from time.Time) {
	t.from, t.start = from, Origin(from)
}

// Epoch returns the tracker's epoch.
func (t *Tracker) Epoch() Epoch { return t.epoch }

func (t *Tracker) shard(key int64) *shard {
	// Key numbers are dense; a multiplicative hash spreads neighbours.
	return &t.shards[(uint64(key)*0x9E3779B97F4A7C15)>>56]
}

// maskOf is the mask of the listed fields, nil for all.
func (t *Tracker) maskOf(fields []int) uint64 {
	if fields == nil || t.fields > 64 {
		if t.fields > 64 {
			return allFields
		}
		return 1<<uint(t.fields) - 1
	}
	var m uint64
	for _, f := range fields {
		m |= 1 << uint(f)
	}
	return m
}

// Worker is one worker's handle on the tracker: the update it has in
// flight, the read it is judging, its counts and the buffers its stamped
// values are written in. It is not safe for concurrent use.
type Worker struct {
	t *Tracker

	// the update in flight
	key     int64
	version uint64
	clean   bool
	mask    uint64
	values  [][]byte

	// the read being judged: what had been acknowledged as it began
	want     uint64
	wantMask uint64

	reads, checked, stale, missing int64
	// seconds counts each second's checked and stale reads.
	seconds []secondCount
}

type secondCount struct{ checked, stale int64 }

// NewWorker returns a worker's handle.
func (t *Tracker) NewWorker() *Worker {
	w := &Worker{t: t, values: make([][]byte, t.fields)}
	t.mu.Lock()
	t.workers = append(t.workers, w)
	t.mu.Unlock()
	return w
}

// BeginWrite takes a version for a write of fields (nil: all) of key
// and returns values with the stamp written into each: copies in the
// worker's buffers, values itself untouched. Every value must be at least
// StampLen long (the caller checked the workload's lengths). EndWrite must
// follow, once the write is answered.
func (w *Worker) BeginWrite(key int64, fields []int, values [][]byte) [][]byte {
	sh := w.t.shard(key)
	sh.mu.Lock()
	v := w.t.next.Add(1)
	n := sh.inflight[key]
	w.clean = n == 0
	sh.inflight[key] = n + 1
	sh.mu.Unlock()
	w.key, w.version, w.mask = key, v, w.t.maskOf(fields)
	out := w.values[:len(values)]
	for i, val := range values {
		out[i] = append(out[i][:0], val...)
		Stamp(out[i], w.t.epoch, v)
	}
	return out
}

// EndWrite records the answer to the write BeginWrite began: acked says
// the primary acknowledged it.
func (w *Worker) EndWrite(acked bool) {
	sh := w.t.shard(w.key)
	sh.mu.Lock()
	if n := sh.inflight[w.key] - 1; n == 0 {
		delete(sh.inflight, w.key)
	} else {
		sh.inflight[w.key] = n
	}
	if acked && w.clean && w.version > sh.acked[w.key] {
		sh.acked[w.key] = w.version
		if sh.masks != nil {
			sh.masks[w.key] = w.mask
		}
	}
	sh.mu.Unlock()
}

// BeginRead notes what had been acknowledged for key as a read of it
// from the replica begins; EndRead judges the read.
func (w *Worker) BeginRead(key int64) {
	sh := w.t.shard(key)
	sh.mu.Lock()
	// Without masks every read reads every field, and judges them all.
	w.want, w.wantMask = sh.acked[key], allFields
	if sh.masks != nil {
		w.wantMask = sh.masks[key]
	}
	sh.mu.Unlock()
}

// EndRead judges a read that BeginRead began: fields are the fields read
// (nil: all), values what it returned, err its error. A read that failed
// otherwise than by finding no row is not judged.
// A read that ends before the measured part (MeasureFrom) is not
// counted at all.
func (w *Worker) EndRead(fields []int, values [][]byte, err error) {
	now := time.Now()
	if now.Before(w.t.from) {
		return
	}
	w.reads++
	if w.want == 0 {
		return
	}
	switch {
	case errors.Is(err, driver.ErrNotFound):
		w.count(true, now)
		w.missing++
		return
	case err != nil:
		return
	}
	stale, judged := w.judge(fields, values)
	if judged {
		w.count(stale, now)
	}
}

// judge compares the fields the acknowledged version wrote with it: a
// field at that version or above means the read is not stale; every one
// below it (or never stamped, or stamped by a run settled before this
// one) means it is. A field another run that may still be going stamped
// may be newer or older, so a read with one and no field of this run at
// or above the version is not judged, nor is a read that did not read
// every field that version wrote.
func (w *Worker) judge(fields []int, values [][]byte) (stale, judged bool) {
	want, mask := w.want, w.wantMask
	var foreign bool
	// look reports whether field value i shows the version or a later one.
	look := func(i int) bool {
		if i >= len(values) {
			foreign = true
			return false
		}
		kind, v, other := ReadStamp(values[i], w.t.epoch)
		foreign = foreign || kind == Foreign && !w.t.settled(other)
		return kind == Own && v >= want
	}
	if fields == nil {
		for f := range values {
			if (mask == allFields || mask&(1<<uint(f)) != 0) && look(f) {
				return false, true
			}
		}
		return !foreign, !foreign
	}
	if mask == allFields {
		return false, false
	}
	var seen uint64
	for i, f := range fields {
		if f >= 64 || mask&(1<<uint(f)) == 0 {
			continue
		}
		seen |= 1 << uint(f)
		if look(i) {
			return false, true
		}
	}
	if seen != mask || foreign {
		return false, false
	}
	return true, true
}

// count counts a judged read that ended at now in its second.
func (w *Worker) count(stale bool, now time.Time) {
	w.checked++
	sec := int(now.Sub(w.t.start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	for len(w.seconds) <= sec {
		w.seconds = append(w.seconds, secondCount{})
	}
	w.seconds[sec].checked++
	if stale {
		w.stale++
		w.seconds[sec].stale++
	}
}

// Counts are a tracker's totals.
type Counts struct {
	Reads, Checked, Stale, Missing int64
	// Seconds are each second's checked and stale reads, from the start.
	SecondChecked, SecondStale []int64
	// Keys is how many keys are remembered, Bytes an estimate of their
	// memory.
	Keys, Bytes int64
}

// Counts sums the workers' counts. Call it once the workers are done.
func (t *Tracker) Counts() Counts {
	var c Counts
	t.mu.Lock()
	for _, w := range t.workers {
		c.Reads += w.reads
		c.Checked += w.checked
		c.Stale += w.stale
		c.Missing += w.missing
		for len(c.SecondChecked) < len(w.seconds) {
			c.SecondChecked = append(c.SecondChecked, 0)
			c.SecondStale = append(c.SecondStale, 0)
		}
		for i, s := range w.seconds {
			c.SecondChecked[i] += s.checked
			c.SecondStale[i] += s.stale
		}
	}
	t.mu.Unlock()
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		c.Keys += int64(len(sh.acked))
		sh.mu.Unlock()
	}
	c.Bytes = c.Keys * bytesPerKey
	if t.partial {
		c.Bytes = c.Keys * partialBytesPerKey
	}
	return c
}

// bytesPerKey is what one remembered key costs in the maps, their own
// overhead at their usual load included, as BenchmarkTrackerMemory
// measured it (Go 1.26, a million keys): 38 bytes with reads of every
// field (every core workload), so ten million keys written in one run
// take about 380 MB; 76 with the masks partial reads need.
const (
	bytesPerKey        = 38
	partialBytesPerKey = 76
)
