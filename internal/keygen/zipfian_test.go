package keygen

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func TestZipfianRankFrequency(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int64
		theta  float64
		draws  int64
	}{
		{"ycsb theta over 1000", 0, 999, 0.99, 400_000},
		{"offset range", 50, 149, 0.99, 200_000},
		{"scan lengths 1..100", 1, 100, ZipfianConstant, 200_000},
		{"milder skew", 0, 9_999, 0.5, 300_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.hi - tc.lo + 1
			z := NewZipfian(tc.lo, tc.hi, tc.theta)
			rng := newRand(uint64(100 + i))
			counts := make([]int64, n)
			for range tc.draws {
				v := z.Next(rng)
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tc.lo, tc.hi)
				}
				counts[v-tc.lo]++
			}
			zn := zetaExact(n, tc.theta)
			g := newGray(n, tc.theta, zn)

			// Ranks 1 and 2 (items lo, lo+1) have exactly the zipfian
			// probabilities 1/k^θ / ζ(n,θ).
			for k := range int64(2) {
				checkProportion(t, "rank "+itoa(k+1)+" vs zipf", counts[k], tc.draws,
					math.Pow(float64(k+1), -tc.theta)/zn)
			}
			// count(rank 1)/count(rank 2) ≈ 2^θ; the tolerance is 5 standard
			// deviations of the ratio of two multinomial counts (delta method).
			p1, p2 := 1/zn, math.Pow(2, -tc.theta)/zn
			ratio := float64(counts[0]) / float64(counts[1])
			want := math.Pow(2, tc.theta)
			sd := want * math.Sqrt((1-p1)/(float64(tc.draws)*p1)+(1-p2)/(float64(tc.draws)*p2)+2/float64(tc.draws))
			if math.Abs(ratio-want) > sigmas*sd {
				t.Errorf("count(rank1)/count(rank2) = %.4f, want %.4f ± %.4f", ratio, want, sigmas*sd)
			}
			// Further ranks follow the method's own probabilities.
			for k := int64(2); k < min(30, n); k++ {
				checkProportion(t, "rank "+itoa(k+1)+" vs Gray", counts[k], tc.draws, g.prob(k, k+1))
			}
			// And so does the whole distribution: the first 100 items one
			// by one, the rest in 100 equal-width groups.
			var obs []int64
			var exp []float64
			edges := []int64{}
			for k := int64(0); k <= min(100, n); k++ {
				edges = append(edges, k)
			}
			if n > 100 {
				for j := int64(1); j <= 100; j++ {
					edges = append(edges, 100+(n-100)*j/100)
				}
			}
			for b := 0; b+1 < len(edges); b++ {
				var c int64
				for _, x := range counts[edges[b]:edges[b+1]] {
					c += x
				}
				obs = append(obs, c)
				exp = append(exp, float64(tc.draws)*g.prob(edges[b], edges[b+1]))
			}
			checkChiSquare(t, "rank histogram", obs, exp)
		})
	}
}

func TestZipfianMatchesYCSBDraw(t *testing.T) {
	// Given the same uniform variate, Next must return the item YCSB's
	// nextLong would; the statistical tests cannot see a small shift.
	tests := []struct {
		lo, hi int64
		theta  float64
	}{
		{0, 999, 0.99},
		{7, 1_006, 0.99},
		{1, 100, 0.8},
	}
	for _, tc := range tests {
		n := tc.hi - tc.lo + 1
		g := newGray(n, tc.theta, zetaExact(n, tc.theta))
		z := NewZipfian(tc.lo, tc.hi, tc.theta)
		a, b := newRand(7), newRand(7)
		for range 20_000 {
			got := z.Next(a)
			if want := tc.lo + g.draw(b.Float64()); got != want {
				t.Fatalf("[%d, %d] θ=%v: Next = %d, YCSB's draw = %d", tc.lo, tc.hi, tc.theta, got, want)
			}
		}
	}
}

// powReference returns b^α accurate to about 2 ulps: b^k, k = ⌊α⌋,
// multiplied out in 256-bit big.Float, times b^(α-k) from math.Pow, which is
// accurate for an exponent below 1. math.Pow itself is not a good enough
// reference: for large α it can be off by 10^-14.
func powReference(b, alpha float64) float64 {
	k := int(math.Floor(alpha))
	r := new(big.Float).SetPrec(256).SetFloat64(1)
	x := new(big.Float).SetPrec(256).SetFloat64(b)
	for ; k > 0; k >>= 1 {
		if k&1 != 0 {
			r.Mul(r, x)
		}
		x.Mul(x, x)
	}
	f, _ := r.Float64()
	return f * math.Pow(b, alpha-math.Floor(alpha))
}

func TestPowAlpha(t *testing.T) {
	// Squaring up to 100 times over is good to some 20 ulps, while dropping
	// the fractional correction would be off by up to 4·10^-14 for θ = 0.99.
	// exp(α·ln b) amplifies the rounding of α·ln b by its size.
	tests := []struct {
		theta float64
		fast  bool // α is an integer up to rounding
	}{
		{0.99, true},
		{0.95, true},
		{0.9, true},
		{0.8, true},
		{0.75, true},
		{0.5, true},
		{0.7, false},
		{0.999, false}, // α - 1000 too large to correct by series
		{0.3, false},
	}
	for _, tc := range tests {
		t.Run("theta "+strconv.FormatFloat(tc.theta, 'g', -1, 64), func(t *testing.T) {
			p := newZipfParams(1000, tc.theta, 10)
			if got := p.alphaInt != 0; got != tc.fast {
				t.Fatalf("α = %v: repeated squaring %v, want %v", p.alpha, got, tc.fast)
			}
			rng := newRand(8)
			for range 3_000 {
				// b where b^α is a normal number, as it is in a draw
				// (b^α ≥ 2/n), biased towards 1 where draws land.
				lnMin := math.Log(1e-300) / p.alpha
				b := math.Exp(lnMin * rng.Float64() * rng.Float64())
				got, want := p.powAlpha(b), powReference(b, p.alpha)
				tol := 1e-14
				if !tc.fast || b < 0.6 {
					tol = 2e-15 + 2.5e-16*math.Abs(p.alpha*math.Log(b))
				}
				if e := math.Abs(got/want - 1); e > tol {
					t.Fatalf("powAlpha(%v) = %v, want %v (relative error %.2g > %.2g)", b, got, want, e, tol)
				}
			}
		})
	}
}

func TestZipfianTinyRanges(t *testing.T) {
	rng := newRand(3)
	one := NewZipfian(42, 42, ZipfianConstant)
	for range 1000 {
		if v := one.Next(rng); v != 42 {
			t.Fatalf("one-item zipfian drew %d", v)
		}
	}
	two := NewZipfian(10, 11, ZipfianConstant)
	const draws = 200_000
	var low int64
	for range draws {
		switch two.Next(rng) {
		case 10:
			low++
		case 11:
		default:
			t.Fatal("two-item zipfian left its range")
		}
	}
	checkProportion(t, "two items: lower", low, draws, 1/(1+math.Pow(2, -ZipfianConstant)))
}

func TestNewZipfianPanics(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int64
		theta  float64
	}{
		{"hi below lo", 5, 4, 0.99},
		{"theta 1", 0, 9, 1},
		{"theta 0", 0, 9, 0},
		{"theta NaN", 0, 9, math.NaN()},
		{"range overflows", math.MinInt64, math.MaxInt64, 0.99},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewZipfian(%d, %d, %v) did not panic", tc.lo, tc.hi, tc.theta)
				}
			}()
			NewZipfian(tc.lo, tc.hi, tc.theta)
		})
	}
}

func TestZetaCache(t *testing.T) {
	// A fresh θ so entries made by other tests do not interfere.
	const theta = 0.913
	t.Run("from scratch", func(t *testing.T) {
		got := zeta(3_000, theta)
		if want := zetaRange(0, 3_000, theta, 0); got != want {
			t.Errorf("zeta(3000) = %v, want %v", got, want)
		}
		if want := zetaExact(3_000, theta); math.Abs(got/want-1) > 1e-12 {
			t.Errorf("zeta(3000) = %v, independent sum %v", got, want)
		}
	})
	t.Run("extended from a cached prefix is bit-identical", func(t *testing.T) {
		got := zeta(5_000, theta) // sums on from the cached 3000
		if want := zetaRange(0, 5_000, theta, 0); got != want {
			t.Errorf("zeta(5000) = %v (%x), from scratch %v (%x)", got, math.Float64bits(got), want, math.Float64bits(want))
		}
	})
	t.Run("concurrent callers agree", func(t *testing.T) {
		const n = zetaExactMax // the largest count the cache sums
		var wg sync.WaitGroup
		results := make([]float64, 32)
		for i := range results {
			wg.Go(func() { results[i] = zeta(n, theta) })
		}
		wg.Wait()
		want := zetaRange(0, n, theta, 0)
		for i, r := range results {
			if r != want {
				t.Errorf("caller %d got %v, want %v", i, r, want)
			}
		}
	})
}

func TestScrambledZetaConstant(t *testing.T) {
	// YCSB's precomputed ζ(10^10, 0.99): sum the first 10^5 terms and add
	// the Euler–Maclaurin tail from 10^5 to 10^10, accurate far beyond the
	// tolerance, which allows for YCSB's rounding over 10^10 additions.
	const s, m, big = 0.99, 100_000.0, 1e10
	head := zetaExact(100_000, s)
	tail := (math.Pow(big, 1-s)-math.Pow(m, 1-s))/(1-s) +
		(math.Pow(big, -s)-math.Pow(m, -s))/2 +
		s/12*(math.Pow(m, -s-1)-math.Pow(big, -s-1))
	if got := head + tail; math.Abs(got-scrambledZetan) > 1e-6 {
		t.Errorf("ζ(10^10, 0.99) ≈ %.12f, constant %.12f", got, scrambledZetan)
	}
}

// scrambledHead holds the probabilities of items 0 … 2^18-1 of the zipfian
// under YCSB's scrambled zipfian, computed once for all subtests.
var scrambledHead = sync.OnceValue(func() []float64 {
	g := newGray(scrambledItemCount+1, ZipfianConstant, scrambledZetan)
	p := make([]float64, 1<<18)
	prev := 0.0
	for i := range p {
		c := g.cdf(int64(i) + 1)
		p[i] = c - prev
		prev = c
	}
	return p
})

// scrambledExpectation returns the expected probability of each of count
// keys under YCSB's scrambled zipfian: items 0 … 2^18-1 of the underlying
// zipfian each contribute their probability to key FNVHash64(item) % count,
// and the remaining mass (about half) — items hashed near-uniformly onto the
// keys — is spread evenly; the unevenness that leaves has a standard
// deviation below 10^-5 of the draws per key, negligible beside the
// binomial noise.
func scrambledExpectation(count int64) []float64 {
	head := scrambledHead()
	p := make([]float64, count)
	rest := 1.0
	for i, pi := range head {
		p[FNVHash64(int64(i))%count] += pi
		rest -= pi
	}
	for k := range p {
		p[k] += rest / float64(count)
	}
	return p
}

func TestScrambledZipfian(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int64
		draws  int64
	}{
		{"1000 keys", 0, 999, 400_000},
		{"offset 1000 keys", 1_000, 1_999, 300_000},
		{"100 keys", 0, 99, 150_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			count := tc.hi - tc.lo + 1
			c := NewScrambledZipfian(tc.lo, tc.hi)
			rng := newRand(uint64(200 + i))
			counts := make([]int64, count)
			for range tc.draws {
				v := c.Next(rng)
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tc.lo, tc.hi)
				}
				counts[v-tc.lo]++
			}
			p := scrambledExpectation(count)
			exp := make([]float64, count)
			for k := range p {
				exp[k] = p[k] * float64(tc.draws)
			}
			checkChiSquare(t, "per-key counts vs scrambled zipf", counts, exp)

			// Sorted frequencies: the k-th most popular key, rank by rank.
			order := make([]int64, count)
			for k := range order {
				order[k] = int64(k)
			}
			slices.SortFunc(order, func(a, b int64) int { return cmp.Compare(p[b], p[a]) })
			for r := range min(20, count) {
				k := order[r]
				checkProportion(t, "key ranked "+itoa(r+1), counts[k], tc.draws, p[k])
			}

			// The hottest key is where item 0 hashes, not lo.
			hottest := int64(slices.Index(counts, slices.Max(counts)))
			if want := FNVHash64(0) % count; hottest != want {
				t.Errorf("hottest key lo+%d, want lo+%d (FNVHash64(0) %% %d)", hottest, want, count)
			}
			// Popular keys are scattered: of the ten hottest keys observed,
			// hardly any sit among the ten lowest (a clustered zipfian would
			// put all ten there).
			observed := make([]int64, count)
			for k := range observed {
				observed[k] = int64(k)
			}
			slices.SortFunc(observed, func(a, b int64) int { return cmp.Compare(counts[b], counts[a]) })
			low := 0
			for _, k := range observed[:10] {
				if k < 10 {
					low++
				}
			}
			if low > 3 {
				t.Errorf("%d of the 10 hottest keys are among the 10 lowest: %v", low, observed[:10])
			}
		})
	}
}

func TestScrambledZipfianMatchesYCSBDraw(t *testing.T) {
	// Over YCSB's 10^10+1 items, exp(α·ln b) and Math.pow round differently
	// about once in 10^6 draws (see zipfParams.draw); a wrong item count or ζ
	// would change the key for a good part of the draws instead.
	g := newGray(scrambledItemCount+1, ZipfianConstant, scrambledZetan)
	const lo, hi, draws = 500, 10_499, 50_000
	c := NewScrambledZipfian(lo, hi)
	a, b := newRand(11), newRand(11)
	mismatches := 0
	for range draws {
		got := c.Next(a)
		if want := lo + FNVHash64(g.draw(b.Float64()))%(hi-lo+1); got != want {
			mismatches++
		}
	}
	if mismatches > 5 {
		t.Errorf("%d of %d draws differ from YCSB's min + fnvhash64(draw) %% itemcount", mismatches, draws)
	}
}

func itoa(v int64) string { return KeyName(v, false, 0)[len("user"):] }
