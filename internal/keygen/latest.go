package keygen

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// latest is YCSB's SkewedLatestGenerator: the newest acknowledged key minus a
// zipfian draw over the keys that exist, so recent inserts are the hottest.
type latest struct {
	basis *Acknowledged
	p     zipfParams // p.items is the key count (basis.Last()+1) p was built for
}

// NewLatest returns the chooser for requestdistribution=latest, one per
// worker: basis.Last() minus a (non-scrambled) zipfian draw, θ =
// ZipfianConstant, over the basis.Last()+1 keys 0 … basis.Last(). Next never
// returns more than basis.Last(), so it only reads acknowledged keys.
//
// As inserts are acknowledged the zipfian's item count grows and its ζ is
// extended by the new terms, never recomputed from 0. The extension is shared
// by all Latest choosers on the same basis, so each new key costs one term in
// the whole process rather than one per worker.
//
// Two details differ from YCSB on purpose. YCSB draws over basis.Last() items,
// so key 0 can never be chosen; here all Last()+1 existing keys can be. And
// YCSB recomputes η with the item count it started with (a slip in
// ZipfianGenerator.nextLong); here η follows the current count, as Gray et
// al. define it. While no key has been acknowledged (Last() < 0), Next
// returns 0, the first key there will be.
func NewLatest(basis *Acknowledged) Chooser {
	n := max(basis.Last()+1, 0)
	c, z, _ := basis.latest.load()
	if c != n {
		z = zeta(n, ZipfianConstant) // a closed form, or cached: workers created together share one sum
	}
	l := &latest{basis: basis, p: newZipfParams(n, ZipfianConstant, z)}
	basis.latest.publish(n, l.p.zetan, l.p.eta)
	return l
}

func (l *latest) Next(rng *rand.Rand) int64 {
	last := l.basis.Last()
	if last < 0 {
		return 0
	}
	if last+1 != l.p.items {
		l.grow(last + 1)
	}
	return last - l.p.draw(rng.Float64())
}

// grow moves l to n keys (n > l.p.items, since Last only grows), taking the
// shared ζ when another worker has already computed it for n and otherwise
// summing on from the longest prefix at hand and sharing the result.
func (l *latest) grow(n int64) {
	c, z, eta := l.basis.latest.load()
	if c == n {
		l.p.items, l.p.fitems, l.p.zetan, l.p.eta = n, float64(n), z, eta
		return
	}
	// The shared count is of no use when it is ahead of n (another worker
	// read a newer Last after we read ours) and may be behind our own (a
	// publish skipped while another writer was busy); sum on from whichever
	// prefix below n is longer. Both are exact prefix sums, so the result is
	// the same either way.
	from, sum := l.p.items, l.p.zetan
	if c > from && c < n {
		from, sum = c, z
	}
	l.p.setItems(n, zetaRange(from, n, l.p.theta, sum))
	l.basis.latest.publish(n, l.p.zetan, l.p.eta)
}

// latestShare publishes the newest (count, ζ, η) of an Acknowledged's Latest
// choosers under a sequence lock: readers never block and never allocate,
// writers take turns with TryLock and skip publishing when busy, since a
// value they could not share is still correct for themselves.
type latestShare struct {
	mu    sync.Mutex    // serialises writers
	seq   atomic.Uint64 // odd while a writer is storing
	count atomic.Int64
	zetan atomic.Uint64 // math.Float64bits
	eta   atomic.Uint64 // math.Float64bits
}

// load returns a consistent (count, ζ, η); count 0 means nothing published.
func (s *latestShare) load() (int64, float64, float64) {
	for {
		before := s.seq.Load()
		if before&1 == 0 {
			c, z, e := s.count.Load(), s.zetan.Load(), s.eta.Load()
			if s.seq.Load() == before {
				return c, math.Float64frombits(z), math.Float64frombits(e)
			}
		}
		runtime.Gosched() // a writer was mid-store; let it finish
	}
}

// publish shares ζ and η for count keys unless a count at least as large is
// already shared or another writer is busy.
func (s *latestShare) publish(count int64, zetan, eta float64) {
	if !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	if count <= s.count.Load() {
		return
	}
	s.seq.Add(1)
	s.count.Store(count)
	s.zetan.Store(math.Float64bits(zetan))
	s.eta.Store(math.Float64bits(eta))
	s.seq.Add(1)
}
