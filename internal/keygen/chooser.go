package keygen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Chooser picks key numbers (or any bounded integer, such as a scan or field
// length). rng is the calling worker's own generator, so the hot path shares
// no random state and a run is reproducible from its seed. A Chooser that
// keeps no per-call state (Uniform, Zipfian, ScrambledZipfian, Hotspot,
// Exponential) is safe to share across goroutines; Sequential uses an atomic
// counter and is shareable too; Latest keeps state and must be one per worker.
type Chooser interface {
	Next(rng *rand.Rand) int64
}

// span returns the number of integers in [lo, hi] as a uint64, 0 standing
// for all 2^64 of them; it panics when hi < lo.
func span(fn string, lo, hi int64) uint64 {
	if hi < lo {
		panic(fmt.Sprintf("keygen: %s(%d, %d): hi below lo", fn, lo, hi))
	}
	return uint64(hi-lo) + 1
}

type uniform struct {
	lo   int64
	span uint64 // 0 means the whole int64 range
}

// NewUniform returns a Chooser that draws every integer in [lo, hi]
// (inclusive) with equal probability: YCSB's UniformLongGenerator, used for
// requestdistribution=uniform and for uniform field and scan lengths. Unlike
// YCSB's abs(nextLong()) % n it has no modulo bias. It panics if hi < lo.
func NewUniform(lo, hi int64) Chooser {
	return &uniform{lo: lo, span: span("NewUniform", lo, hi)}
}

func (u *uniform) Next(rng *rand.Rand) int64 {
	if u.span == 0 {
		return int64(rng.Uint64())
	}
	return u.lo + int64(rng.Uint64N(u.span))
}

type hotspot struct {
	lo   int64
	hot  int64   // size of the hot set [lo, lo+hot)
	cold int64   // size of the cold set [lo+hot, hi]
	opn  float64 // probability of drawing from the hot set
}

// NewHotspot returns YCSB's HotspotIntegerGenerator over [lo, hi]: the first
// dataFraction of the range (the hot set, rounded down to whole keys as YCSB
// does) receives opnFraction of the draws, the rest the remainder, uniform
// inside each part. Where YCSB would divide by zero — a hot or cold set of
// no keys — every draw goes to the other part. It panics if hi < lo or a
// fraction is outside [0, 1] (YCSB silently resets it to 0; dbprobe rejects
// it when it reads the configuration).
func NewHotspot(lo, hi int64, dataFraction, opnFraction float64) Chooser {
	n := span("NewHotspot", lo, hi)
	if n == 0 || n > math.MaxInt64 {
		panic(fmt.Sprintf("keygen: NewHotspot(%d, %d): range too large", lo, hi))
	}
	if !(dataFraction >= 0 && dataFraction <= 1) {
		panic(fmt.Sprintf("keygen: NewHotspot: dataFraction %v not in [0, 1]", dataFraction))
	}
	if !(opnFraction >= 0 && opnFraction <= 1) {
		panic(fmt.Sprintf("keygen: NewHotspot: opnFraction %v not in [0, 1]", opnFraction))
	}
	interval := int64(n)
	hot := int64(float64(interval) * dataFraction)
	hot = min(max(hot, 0), interval)
	h := &hotspot{lo: lo, hot: hot, cold: interval - hot, opn: opnFraction}
	switch {
	case h.hot == 0:
		h.opn = 0
	case h.cold == 0:
		h.opn = 2 // rng.Float64() < 2 always
	}
	return h
}

func (h *hotspot) Next(rng *rand.Rand) int64 {
	if rng.Float64() < h.opn {
		return h.lo + rng.Int64N(h.hot)
	}
	return h.lo + h.hot + rng.Int64N(h.cold)
}

type sequential struct {
	lo   int64
	span uint64 // 0 means the whole int64 range
	ctr  atomic.Uint64
}

// NewSequential returns YCSB's SequentialGenerator over [lo, hi]: lo, lo+1,
// …, hi, then lo again, handed out through one atomic counter so that all
// workers sharing it together visit each key exactly once per lap. Its Next
// ignores rng. It panics if hi < lo.
func NewSequential(lo, hi int64) Chooser {
	return &sequential{lo: lo, span: span("NewSequential", lo, hi)}
}

func (s *sequential) Next(*rand.Rand) int64 {
	v := s.ctr.Add(1) - 1
	if s.span != 0 {
		v %= s.span
	}
	return s.lo + int64(v)
}

type exponential struct {
	gamma float64
}

// NewExponential returns YCSB's ExponentialGenerator(percentile, range): an
// exponential with rate γ = -ln(1 - percentile/100) / rangeSize, so that
// percentile % of draws are below rangeSize, truncated to an integer. The
// draw is a distance back from the newest key: the caller subtracts it from
// the last acknowledged key number and draws again while the result is
// negative, as YCSB's CoreWorkload.nextKeynum does. YCSB's core workload
// passes exponential.percentile (default 95) and exponential.frac (default
// 0.8571428571) × recordcount. It panics unless 0 < percentile < 100 and
// rangeSize > 0.
func NewExponential(percentile, rangeSize float64) Chooser {
	if !(percentile > 0 && percentile < 100) {
		panic(fmt.Sprintf("keygen: NewExponential: percentile %v not in (0, 100)", percentile))
	}
	if !(rangeSize > 0) || math.IsInf(rangeSize, 1) {
		panic(fmt.Sprintf("keygen: NewExponential: rangeSize %v not positive and finite", rangeSize))
	}
	return &exponential{gamma: -math.Log(1-percentile/100) / rangeSize}
}

func (e *exponential) Next(rng *rand.Rand) int64 {
	// 1-u lies in (0, 1], so the logarithm is finite; YCSB's log(u) can be
	// log(0) = -Inf, whose conversion to an integer is undefined in Go.
	x := -math.Log(1-rng.Float64()) / e.gamma
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}
