package keygen

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Counter hands out consecutive key numbers to any number of goroutines:
// YCSB's CounterGenerator, the load phase's key sequence (insertstart,
// insertstart+1, …). The zero value is not useful; use NewCounter.
type Counter struct {
	next atomic.Int64
}

// NewCounter returns a Counter whose first Next is start.
func NewCounter(start int64) *Counter {
	c := &Counter{}
	c.next.Store(start)
	return c
}

// Next returns the next number: start, start+1, …, each exactly once.
func (c *Counter) Next() int64 {
	return c.next.Add(1) - 1
}

// Last returns the number Next most recently handed out, start-1 before the
// first call, as YCSB's CounterGenerator.lastValue does.
func (c *Counter) Last() int64 {
	return c.next.Load() - 1
}

// initialAckWindow is the first size of Acknowledged's ring of out-of-order
// acknowledgements. It only has to cover the inserts in flight at once (a
// few per worker), and it doubles when it does not, so it starts small.
const initialAckWindow = 1 << 12

// Acknowledged hands out key numbers for run-phase inserts and reports, as
// Last, the highest number up to which every insert has been acknowledged:
// YCSB's AcknowledgedCounterGenerator. Reads must only target keys that
// exist, and with many workers inserts finish out of order, so the newest
// number handed out is not yet a safe key to read; Last is.
//
// Acknowledge every number Next returns, also when the insert failed (YCSB
// acknowledges in a finally block): one number never acknowledged stops Last
// for the rest of the run and makes the pending window grow by one byte per
// later insert. Where YCSB throws once 2^20 acknowledgements are pending,
// the window here grows instead.
type Acknowledged struct {
	next atomic.Int64 // next number Next hands out
	last atomic.Int64 // published for lock-free reads by Last and Latest

	mu      sync.Mutex
	pending []bool // pending[n&mask] is set when n > last+1 was acknowledged early
	mask    int64

	// latest lets every Latest chooser on this basis share the ζ they
	// extend as inserts are acknowledged; see latest.go.
	latest latestShare
}

// NewAcknowledged returns an Acknowledged whose first Next is start and whose
// Last is start-1 until start is acknowledged. YCSB's core workload starts it
// at recordcount, the first key the load phase did not insert.
func NewAcknowledged(start int64) *Acknowledged {
	a := &Acknowledged{
		pending: make([]bool, initialAckWindow),
		mask:    initialAckWindow - 1,
	}
	a.next.Store(start)
	a.last.Store(start - 1)
	return a
}

// Next hands out the next insert key number: start, start+1, …, each exactly
// once across all goroutines.
func (a *Acknowledged) Next() int64 {
	return a.next.Add(1) - 1
}

// Acknowledge records that the insert of n, a number handed out by Next, has
// finished. Last advances only over a contiguous run of acknowledged numbers,
// so an early acknowledgement waits in a window until the numbers before it
// arrive. Acknowledging a number twice, or one never handed out, is a bug in
// the caller and panics.
func (a *Acknowledged) Acknowledge(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := a.last.Load()
	if n <= last || n >= a.next.Load() {
		panic(fmt.Sprintf("keygen: Acknowledge(%d): not an outstanding key number (acknowledged up to %d, next %d)",
			n, last, a.next.Load()))
	}
	if n != last+1 {
		// The window covers (last, last+len]; widen it until n fits.
		for n-last > int64(len(a.pending)) {
			a.grow(last)
		}
		slot := n & a.mask
		if a.pending[slot] {
			panic(fmt.Sprintf("keygen: Acknowledge(%d): acknowledged twice", n))
		}
		a.pending[slot] = true
		return
	}
	last = n
	for {
		slot := (last + 1) & a.mask
		if !a.pending[slot] {
			break
		}
		a.pending[slot] = false
		last++
	}
	a.last.Store(last)
}

// grow doubles the pending window, moving each pending mark to its slot
// under the new mask. The caller holds a.mu.
func (a *Acknowledged) grow(last int64) {
	bigger := make([]bool, 2*len(a.pending))
	mask := int64(len(bigger) - 1)
	for n := last + 1; n <= last+int64(len(a.pending)); n++ {
		if a.pending[n&a.mask] {
			bigger[n&mask] = true
		}
	}
	a.pending, a.mask = bigger, mask
}

// Last returns the highest number L such that every number <= L handed out
// by Next has been acknowledged; start-1 before that. It is a single atomic
// load, cheap enough to call on every read.
func (a *Acknowledged) Last() int64 {
	return a.last.Load()
}
