package keygen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// ZipfianConstant is YCSB's default zipfian θ (ZipfianGenerator.ZIPFIAN_CONSTANT).
// The scrambled zipfian and Latest always use it, as YCSB's core workload does.
const ZipfianConstant = 0.99

// YCSB's ScrambledZipfianGenerator draws from a fixed, huge zipfian and folds
// the draw onto the key range with FNVHash64, so the popularity of a key does
// not depend on the record count. It builds that zipfian with
// ZipfianGenerator(0, ITEM_COUNT, 0.99, ZETAN): min 0 and max ITEM_COUNT
// inclusive, hence ITEM_COUNT+1 items, while ZETAN is ζ(10^10, 0.99) as YCSB
// precomputed it (summing 10^10 terms here would take minutes). Both quirks
// are kept so draws match YCSB's exactly.
const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
)

// zipfParams holds the constants of Gray et al.'s method ("Quickly generating
// billion-record synthetic databases", SIGMOD 1994) for one item count, so a
// draw costs a multiplication, two comparisons and at most one powAlpha.
type zipfParams struct {
	items  int64
	fitems float64 // float64(items), kept to save a conversion per draw
	theta  float64
	alpha  float64 // 1/(1-θ)
	zetan  float64 // ζ(items, θ)
	eta    float64 // (1 - (2/items)^(1-θ)) / (1 - ζ(2,θ)/ζ(items,θ))
	zeta2  float64 // ζ(2, θ), for recomputing eta when items grows
	two    float64 // 1 + 0.5^θ: below it u·ζ(n) draws item 1, as YCSB computes it

	// When α is an integer k up to rounding (α = 99.99999999999991 for
	// YCSB's θ = 0.99), powAlpha computes b^k by repeated squaring and
	// corrects for the fraction αfrac = α - k, instead of calling math.Exp
	// and math.Log; alphaInt is 0 otherwise.
	alphaInt  int
	alphaFrac float64
}

func newZipfParams(items int64, theta, zetan float64) zipfParams {
	p := zipfParams{
		theta: theta,
		alpha: 1 / (1 - theta),
		zeta2: zetaRange(0, 2, theta, 0),
		two:   1 + math.Pow(0.5, theta),
	}
	if k := math.Round(p.alpha); k >= 1 && k <= 1024 && math.Abs(p.alpha-k) < 1e-13 {
		p.alphaInt, p.alphaFrac = int(k), p.alpha-k
	}
	p.setItems(items, zetan)
	return p
}

// setItems switches to a new item count whose ζ the caller has computed.
func (p *zipfParams) setItems(items int64, zetan float64) {
	p.items = items
	p.fitems = float64(items)
	p.zetan = zetan
	p.eta = etaFor(items, p.theta, zetan, p.zeta2)
}

// etaFor is Gray et al.'s η. For one or two items it is meaningless (0/0 for
// two), but draw never reaches the formula that uses it in those cases.
func etaFor(items int64, theta, zetan, zeta2 float64) float64 {
	return (1 - math.Pow(2/float64(items), 1-theta)) / (1 - zeta2/zetan)
}

// draw maps u, uniform in [0,1), to an item in [0, items), item 0 the most
// popular. Items 0 and 1 get their exact zipfian probabilities; the rest come
// from Gray et al.'s continuous approximation, exactly as in YCSB.
func (p *zipfParams) draw(u float64) int64 {
	uz := u * p.zetan
	if uz < 1 {
		return 0
	}
	if uz < p.two {
		return 1
	}
	x := p.fitems * p.powAlpha(p.eta*u-p.eta+1)
	// x < items in exact arithmetic. The guard keeps a rounding at the very
	// top, or a NaN eta for two items, from leaving the range.
	if !(x < p.fitems) {
		return p.items - 1
	}
	return int64(x)
}

// powAlpha returns b^α for b in (0, 1]. math.Pow would be the bulk of a
// draw's cost; math.Exp(α·math.Log(b)), both assembly on amd64, costs about
// a third of it, and for an integer α (up to rounding, as with YCSB's θ =
// 0.99) repeated squaring costs a quarter of that again. The correction
// b^αfrac ≈ 1 + αfrac·ln b uses four terms of the series of ln b around 1,
// whose error stays below one ulp of the result since |αfrac| < 10^-13 and
// b ≥ 0.6 (for θ = 0.99, b^100 ≥ 2/n keeps b above 0.64). Either way the
// result may differ from Java's Math.pow in the last bits, which moves a
// draw to the neighbouring item only where n·b^α falls within that rounding
// of an integer: deep in the tail and rarely (no case in 2·10^6 draws over
// 10^10 items), leaving the distribution unchanged.
func (p *zipfParams) powAlpha(b float64) float64 {
	if p.alphaInt == 0 || (p.alphaFrac != 0 && b < 0.6) {
		return math.Exp(p.alpha * math.Log(b))
	}
	r, x := 1.0, b
	for k := p.alphaInt; ; {
		if k&1 != 0 {
			r *= x
		}
		if k >>= 1; k == 0 {
			break
		}
		x *= x
	}
	if p.alphaFrac != 0 {
		d := b - 1
		r *= 1 + p.alphaFrac*(d-d*d/2+d*d*d/3-d*d*d*d/4)
	}
	return r
}

// zetaRange returns initial + Σ_{i=st+1}^{n} 1/i^θ, i.e. extends ζ(st,θ)
// (passed as initial) to ζ(n,θ). It adds the terms one by one in increasing
// order, like YCSB's zetastatic, so extending a prefix gives bit for bit the
// value a sum from scratch would, which is what lets the cache and Latest
// reuse sums. Each term is exp(-θ·ln i), three times faster than math.Pow
// and within a few ulps of it, which matters to Latest: it adds one term
// per acknowledged insert, in every process that runs workload D.
func zetaRange(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += math.Exp(-theta * math.Log(float64(i+1)))
	}
	return sum
}

// zetaCache remembers every ζ(n, θ) up to zetaExactMax items the process
// has summed, so hundreds of workers starting together sum once and a
// longer sum can start from a shorter one; the first asker computes it, the
// others wait for its result.
var zetaCache = struct {
	mu sync.Mutex
	m  map[zetaKey]*zetaEntry
}{m: make(map[zetaKey]*zetaEntry)}

type zetaKey struct {
	n     int64
	theta float64
}

type zetaEntry struct {
	ready chan struct{} // closed once sum is set
	done  bool          // guarded by zetaCache.mu; lets lookups pick finished prefixes
	sum   float64
}

// zeta returns ζ(n, θ). Above zetaExactMax items it is zetaEM's closed
// form, in microseconds. Up to it the sum is taken term by term, as YCSB
// does, from the cache: a new n is summed on from the largest finished
// n' < n with the same θ, so a Latest chooser created after some inserts
// only pays for the new items.
func zeta(n int64, theta float64) float64 {
	if n > zetaExactMax {
		return zetaEM(n, theta)
	}
	key := zetaKey{n, theta}
	zetaCache.mu.Lock()
	if e, ok := zetaCache.m[key]; ok {
		zetaCache.mu.Unlock()
		<-e.ready
		return e.sum
	}
	var fromN int64
	var fromSum float64
	for k, e := range zetaCache.m {
		if k.theta == theta && e.done && k.n < n && k.n > fromN {
			fromN, fromSum = k.n, e.sum
		}
	}
	e := &zetaEntry{ready: make(chan struct{})}
	zetaCache.m[key] = e
	zetaCache.mu.Unlock()

	sum := zetaRange(fromN, n, theta, fromSum)

	zetaCache.mu.Lock()
	e.sum, e.done = sum, true
	zetaCache.mu.Unlock()
	close(e.ready)
	return sum
}

// Zipfian draws integers in [lo, hi] with a zipfian popularity: lo is the
// most popular, lo+1 the next, and so on, with P(lo+k) ∝ 1/(k+1)^θ. It is
// YCSB's ZipfianGenerator(lo, hi, θ), Gray et al.'s method, which gives lo
// and lo+1 exactly that probability and approximates the rest: at θ = 0.99
// over 10^3 items lo+2 comes out 17% more popular than the law says and the
// far tail about 3.5% less. dbprobe keeps the approximation, since matching
// YCSB is the point. Popular items are clustered at the low end, which suits
// scan and field lengths; for keys use NewScrambledZipfian. A Zipfian holds
// no per-draw state and is safe to share between goroutines.
type Zipfian struct {
	lo int64
	p  zipfParams
}

// NewZipfian returns a Zipfian over [lo, hi] with exponent theta (YCSB uses
// ZipfianConstant). It needs ζ(hi-lo+1, θ): summed as YCSB does up to
// zetaExactMax items, from a closed form above, so construction takes
// microseconds even over 10^12 items. It panics unless lo <= hi and
// 0 < theta < 1 (Gray et al.'s method needs θ < 1); configuration is
// validated before this point.
func NewZipfian(lo, hi int64, theta float64) *Zipfian {
	if hi < lo {
		panic(fmt.Sprintf("keygen: NewZipfian(%d, %d): hi below lo", lo, hi))
	}
	if !(theta > 0 && theta < 1) {
		panic(fmt.Sprintf("keygen: NewZipfian: theta %v not in (0, 1)", theta))
	}
	items := hi - lo + 1
	if items <= 0 {
		panic(fmt.Sprintf("keygen: NewZipfian(%d, %d): range too large", lo, hi))
	}
	return &Zipfian{lo: lo, p: newZipfParams(items, theta, zeta(items, theta))}
}

// Next returns the next draw, using rng for its one uniform variate.
func (z *Zipfian) Next(rng *rand.Rand) int64 {
	return z.lo + z.p.draw(rng.Float64())
}

// scrambledZipfian is YCSB's ScrambledZipfianGenerator.
type scrambledZipfian struct {
	lo    int64
	count divisor // the number of keys
	p     zipfParams
}

// NewScrambledZipfian returns YCSB's default key chooser for
// requestdistribution=zipfian: a zipfian draw over YCSB's fixed item space
// (θ = ZipfianConstant, the precomputed ζ) hashed with FNVHash64 and taken
// modulo the number of keys, plus lo. Popular keys are thereby scattered over
// [lo, hi] instead of clustered at lo, and the hottest keys are the same ones
// YCSB hits for the same range. Because the item space is far larger than
// the key range, much of the probability mass lands near-uniformly, so the
// skew is milder than a plain zipfian over hi-lo+1 items — as in YCSB.
// Construction is instant and the chooser is safe to share. It panics
// unless lo <= hi.
func NewScrambledZipfian(lo, hi int64) Chooser {
	if hi < lo {
		panic(fmt.Sprintf("keygen: NewScrambledZipfian(%d, %d): hi below lo", lo, hi))
	}
	count := hi - lo + 1
	if count <= 0 {
		panic(fmt.Sprintf("keygen: NewScrambledZipfian(%d, %d): range too large", lo, hi))
	}
	return &scrambledZipfian{
		lo:    lo,
		count: newDivisor(uint64(count)),
		p:     newZipfParams(scrambledItemCount+1, ZipfianConstant, scrambledZetan),
	}
}

func (s *scrambledZipfian) Next(rng *rand.Rand) int64 {
	// FNVHash64 is never negative, so its unsigned remainder is YCSB's %.
	return s.lo + int64(s.count.mod(uint64(FNVHash64(s.p.draw(rng.Float64())))))
}
