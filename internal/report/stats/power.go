package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
)

// The power arithmetic answers "what would these runs have shown?" for a
// comparison that showed no difference: the smallest shift the rank test
// finds with the given probability (its power) at the given level, were
// the runs' spread normal with the standard deviation observed. It is
// computed by simulating the test itself rather than from a t-test
// formula: with 4 to 10 runs per side the rank test's discreteness (5
// runs per side reject at 3.2%, not 5%) costs power no formula for
// large samples shows.

// simRuns is how many simulated comparisons estimate a power: the
// estimate of 80% is then within ±1.3% (two standard errors), finer than
// the one-digit percentages it is said in.
const simRuns = 4000

// simMaxN is the largest side simulated; beyond it the normal
// approximation of the test's power (Noether 1987) is within a few
// percent of the simulation, and a simulation there costs more than it
// tells.
const simMaxN = 30

// MaxRuns caps RunsNeeded: a difference that needs more runs per side
// than this is, in practice, none worth chasing with more runs.
const MaxRuns = 200

// PooledSD is the standard deviation of A and B pooled, each about its
// own mean: the spread of a run, with the difference between the sides
// taken out. NaN when there is no spread to estimate (fewer than 3
// values in all).
func PooledSD(a, b []float64) float64 {
	df := len(a) + len(b) - 2
	if df < 1 {
		return math.NaN()
	}
	ss := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		s := 0.0
		for _, x := range xs {
			s += (x - m) * (x - m)
		}
		return s
	}
	return math.Sqrt((ss(a) + ss(b)) / float64(df))
}

// DetectableShift is the smallest shift, in the units of sd, that the
// two-sided rank test at level alpha finds with probability power, with
// na and nb runs per side whose spread is normal with standard deviation
// sd. +Inf when no shift can be found (fewer than 4 runs on a side at
// alpha 0.05) or sd is not a positive number; 0 when sd is 0.
func DetectableShift(na, nb int, sd, alpha, power float64) float64 {
	if math.IsNaN(sd) || sd < 0 || math.IsInf(sd, 0) {
		return math.Inf(1)
	}
	d := standardShift(na, nb, alpha, power)
	if sd == 0 {
		if math.IsInf(d, 1) {
			return d
		}
		return 0
	}
	return d * sd
}

// RunsNeeded is the fewest runs per side (the same on both) at which the
// rank test at level alpha finds a shift of the given size with
// probability power, when a run's spread is normal with standard
// deviation sd (in the shift's units). It is at least the fewest runs
// that can reach alpha at all (4 at 0.05), and MaxRuns+1 when even
// MaxRuns would not do.
func RunsNeeded(shift, sd, alpha, power float64) int {
	shift = math.Abs(shift)
	n := 1
	for MinP(n, n) > alpha {
		n++
	}
	if math.IsNaN(sd) || math.IsNaN(shift) {
		return n
	}
	for ; n <= MaxRuns; n++ {
		if DetectableShift(n, n, sd, alpha, power) <= shift {
			return n
		}
	}
	return MaxRuns + 1
}

// standardShift is DetectableShift for sd = 1, memoised: it depends only
// on the sides' sizes, the level and the power.
func standardShift(na, nb int, alpha, power float64) float64 {
	key := shiftKey{na, nb, alpha, power}
	shiftMemo.Lock()
	v, ok := shiftMemo.m[key]
	shiftMemo.Unlock()
	if ok {
		return v
	}
	if na <= simMaxN && nb <= simMaxN {
		v = simulatedShift(na, nb, alpha, power)
	} else {
		v = noetherShift(na, nb, alpha, power)
	}
	shiftMemo.Lock()
	shiftMemo.m[key] = v
	shiftMemo.Unlock()
	return v
}

type shiftKey struct {
	na, nb       int
	alpha, power float64
}

var shiftMemo = struct {
	sync.Mutex
	m map[shiftKey]float64
}{m: map[shiftKey]float64{}}

// criticalU is the largest u such that the two-sided exact test rejects
// when min(U, na·nb − U) ≤ u at level alpha; −1 when it never rejects.
func criticalU(na, nb int, alpha float64) int {
	cdf := uCDF(na, nb)
	c := -1
	for u := 0; u <= na*nb/2 && 2*cdf[u] <= alpha; u++ {
		c = u
	}
	return c
}

// simulatedShift finds by bisection the shift (in standard deviations)
// at which the simulated power of the exact rank test reaches power.
// Every candidate shift is tried on the same simulated runs (common
// random numbers, fixed seed), so the power rises with the shift without
// simulation noise between candidates, and the answer is the same on
// every call: output that is golden-tested stays put.
func simulatedShift(na, nb int, alpha, power float64) float64 {
	c := criticalU(na, nb, alpha)
	if c < 0 {
		return math.Inf(1)
	}
	rng := rand.New(rand.NewPCG(0x64627072, uint64(na)<<32|uint64(nb)))
	as := make([][]float64, simRuns)
	bs := make([][]float64, simRuns)
	for i := range simRuns {
		a, b := make([]float64, na), make([]float64, nb)
		for j := range a {
			a[j] = rng.NormFloat64()
		}
		for j := range b {
			b[j] = rng.NormFloat64()
		}
		sort.Float64s(a)
		sort.Float64s(b)
		as[i], bs[i] = a, b
	}
	mn := na * nb
	powerAt := func(delta float64) float64 {
		hit := 0
		for i := range simRuns {
			u := countAbove(as[i], bs[i], delta)
			if u <= c || mn-u <= c {
				hit++
			}
		}
		return float64(hit) / simRuns
	}
	lo, hi := 0.0, 1.0
	for powerAt(hi) < power {
		lo, hi = hi, 2*hi
		if hi > 1e3 {
			return math.Inf(1)
		}
	}
	for range 40 {
		mid := (lo + hi) / 2
		if powerAt(mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// countAbove counts the pairs with b + delta > a, both sorted: the U of
// B shifted by delta against A (no ties: the values are continuous).
func countAbove(a, b []float64, delta float64) int {
	u, i := 0, 0
	for _, y := range b {
		y += delta
		for i < len(a) && a[i] < y {
			i++
		}
		u += i
	}
	return u
}

// noetherShift is the shift whose normal-approximation power is power
// (Noether 1987): the test finds it when P(B > A) − 1/2 reaches
// (z₁₋α/₂ + z_power)·√((na+nb+1)/(12·na·nb)), and for a normal spread
// P(B > A) = Φ(δ/√2).
func noetherShift(na, nb int, alpha, power float64) float64 {
	z := normalQuantile(1-alpha/2) + normalQuantile(power)
	q := 0.5 + z*math.Sqrt(float64(na+nb+1)/(12*float64(na)*float64(nb)))
	if q >= 1 {
		return math.Inf(1)
	}
	return math.Sqrt2 * normalQuantile(q)
}
