package keygen

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestZetaEMReference(t *testing.T) {
	// ζ(n, θ) = ζ(θ) − ζ(θ, n+1) (Riemann minus Hurwitz), evaluated by
	// mpmath at 40 digits:
	//   from mpmath import mp, zeta, mpf; mp.dps = 40
	//   zeta(mpf(th)) - zeta(mpf(th), n + 1)
	// The requirement is 1e-9 relative; the closed form does far better.
	tests := []struct {
		theta float64
		n     int64
		want  float64
	}{
		{0.99, 65537, 12.305226401887956716941},
		{0.99, 1000000, 15.39184974603680293181372},
		{0.99, 1000000000, 23.6033641041250995608824},
		{0.99, 1000000000000, 32.40216087791318108453041},
		{0.99, 4611686018427387904, 54.2640051510730458713955},
		{0.5, 65537, 510.5455048339049049899865},
		{0.5, 1000000, 1998.540145491148746520444},
		{0.5, 1000000000, 63244.09286467016535268926},
		{0.5, 1000000000000, 1999998.539645991190413187},
		{0.5, 4611686018427387904, 4294967294.539645491423244},
		{0.2, 65537, 8913.867075098273165317212},
		{0.2, 1000000, 78868.96568696543225279111},
		{0.2, 1000000000, 19811164.17976745963072709},
		{0.2, 1000000000000, 4976339631.186785245584581},
		{0.2, 4611686018427387904, 1066590713146173.706844473},
		{0.999999, 65537, 11.66765486744313551830066},
		{0.999999, 1000000, 14.39282208466226180950192},
		{0.999999, 1000000000, 21.30069615788886680310566},
		{0.999999, 1000000000000, 28.208618448194634093201},
		{0.999999, 4611686018427387904, 43.55326423072336783066208},
	}
	for _, tc := range tests {
		got := zetaEM(tc.n, tc.theta)
		if rel := math.Abs(got/tc.want - 1); rel > 1e-13 {
			t.Errorf("zetaEM(%d, %v) = %.17g, want %.17g (relative error %.2g)", tc.n, tc.theta, got, tc.want, rel)
		}
		if got := zeta(tc.n, tc.theta); got != zetaEM(tc.n, tc.theta) {
			t.Errorf("zeta(%d, %v) = %v did not take the closed form", tc.n, tc.theta, got)
		}
	}
}

// neumaier adds x to the running sum s with Neumaier's compensation c:
// s+c is the sum of what was added, to within about one ulp of it even
// over 10^8 terms, where a plain float64 sum drifts by some 10^-10. A
// function of values, so that the hot loop keeps them in registers: the
// race detector instruments every write to memory.
func neumaier(s, c, x float64) (float64, float64) {
	u := s + x
	if math.Abs(s) >= math.Abs(x) {
		c += (s - u) + x
	} else {
		c += (x - u) + s
	}
	return u, c
}

// zetaCompensated returns Σ_{i=1}^{n} i^-θ with math.Pow and compensated
// summation for each n of ns (ascending): one pass over 1…max(ns) gives
// every prefix. The pass is cut into ranges of at most a million terms,
// each summed on its own by one of GOMAXPROCS goroutines and the ranges'
// sums then added in order, compensated too: the sum over 10^8 terms is
// most of this package's test time, and CI's cores would otherwise idle.
func zetaCompensated(ns []int64, theta float64) []float64 {
	const most = 1_000_000
	type piece struct {
		lo, hi int64 // terms lo…hi
		last   bool  // hi is one of ns
		s, c   float64
	}
	var pieces []piece
	lo := int64(1)
	for _, n := range ns {
		for lo <= n {
			hi := min(lo+most-1, n)
			pieces = append(pieces, piece{lo: lo, hi: hi, last: hi == n})
			lo = hi + 1
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(len(pieces)); k = next.Add(1) - 1 {
				p := &pieces[k]
				var s, c float64
				for i := p.lo; i <= p.hi; i++ {
					s, c = neumaier(s, c, math.Pow(float64(i), -theta))
				}
				p.s, p.c = s, c
			}
		})
	}
	wg.Wait()
	var s, c float64
	var sums []float64
	for _, p := range pieces {
		s, c = neumaier(s, c, p.s)
		s, c = neumaier(s, c, p.c)
		if p.last {
			sums = append(sums, s+c)
		}
	}
	return sums
}

func TestZetaEMAgainstSums(t *testing.T) {
	tests := []struct {
		n     int64
		theta float64
		long  bool
	}{
		{zetaExactMax + 1, 0.99, false},
		{1_000_003, 0.99, false},
		{1_000_003, 0.5, false},
		{2_500_000, 0.05, false},
		{10_000_000, 0.99, true},
		{100_000_000, 0.99, true}, // some seconds: the largest sum run here
	}
	// The sums for each θ in one pass.
	ns := map[float64][]int64{}
	for _, tc := range tests {
		if !tc.long || !testing.Short() {
			ns[tc.theta] = append(ns[tc.theta], tc.n)
		}
	}
	want := map[float64]map[int64]float64{}
	for theta, n := range ns {
		slices.Sort(n)
		want[theta] = map[int64]float64{}
		for k, v := range zetaCompensated(n, theta) {
			want[theta][n[k]] = v
		}
	}
	for _, tc := range tests {
		if tc.long && testing.Short() {
			continue
		}
		want := want[tc.theta][tc.n]
		got := zeta(tc.n, tc.theta)
		if rel := math.Abs(got/want - 1); rel > 1e-13 {
			t.Errorf("zeta(%d, %v) = %.17g, compensated sum %.17g (relative %.2g)", tc.n, tc.theta, got, want, rel)
		}
	}
}

func TestZetaEMContinuesIncrementalSum(t *testing.T) {
	// Latest starts from zeta's value and then adds one term per insert with
	// zetaRange; the two paths must agree wherever they meet.
	const theta = ZipfianConstant
	t.Run("exact prefix extended past the threshold", func(t *testing.T) {
		const n = 3_000_000
		ext := zetaRange(zetaExactMax, n, theta, zeta(zetaExactMax, theta))
		if rel := math.Abs(zeta(n, theta)/ext - 1); rel > 1e-12 {
			t.Errorf("closed form %v, extended sum %v (relative %.2g)", zeta(n, theta), ext, rel)
		}
	})
	t.Run("closed form at the threshold", func(t *testing.T) {
		// The plain sum of 65536 terms has itself drifted by about 10^-14.
		exact := zeta(zetaExactMax, theta)
		next := zeta(zetaExactMax+1, theta) - math.Pow(zetaExactMax+1, -theta)
		if rel := math.Abs(next/exact - 1); rel > 1e-13 {
			t.Errorf("ζ(%d) summed %v, from ζ(%d) closed form %v", zetaExactMax, exact, zetaExactMax+1, next)
		}
	})
	t.Run("a billion keys growing by a million inserts", func(t *testing.T) {
		const n, k = 1_000_000_000, 1_000_000
		ext := zetaRange(n, n+k, theta, zeta(n, theta))
		if rel := math.Abs(zeta(n+k, theta)/ext - 1); rel > 1e-13 {
			t.Errorf("closed form %v, extended %v (relative %.2g)", zeta(n+k, theta), ext, rel)
		}
	})
}

func TestZipfianClosedFormMatchesYCSBDraw(t *testing.T) {
	// Above zetaExactMax the draws still follow Gray et al.'s method with
	// the summed ζ: the closed form moves ζ by about 10^-15, which shifts no
	// draw in 20,000.
	const lo, hi, theta = 5, 1_000_004, 0.99
	n := int64(hi - lo + 1)
	g := newGray(n, theta, zetaExact(n, theta))
	z := NewZipfian(lo, hi, theta)
	a, b := newRand(21), newRand(21)
	for range 20_000 {
		if got, want := z.Next(a), lo+g.draw(b.Float64()); got != want {
			t.Fatalf("Next = %d, YCSB's draw = %d", got, want)
		}
	}
}

func TestLatestBillionKeys(t *testing.T) {
	// Latest over 10^9 keys: built at once, and its draws are YCSB's with
	// ζ(10^9, 0.99) from mpmath (see TestZetaEMReference).
	const n = 1_000_000_000
	basis := NewAcknowledged(n)
	l := NewLatest(basis)
	g := newGray(n, ZipfianConstant, 23.6033641041250995608824)
	a, b := newRand(22), newRand(22)
	for range 20_000 {
		if got, want := l.Next(a), int64(n-1)-g.draw(b.Float64()); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
}
