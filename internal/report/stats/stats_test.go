package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestMannWhitneyMatchesR checks the test against outputs of R's
// wilcox.test printed in its documentation and in tutorials.
func TestMannWhitneyMatchesR(t *testing.T) {
	// R's ?wilcox.test example (Hollander & Wolfe 1973, p. 69,
	// permeability constants): wilcox.test(x, y, alternative = "g")
	// prints W = 35, p-value = 0.1272; exact, no ties, so the two-sided
	// p is twice that.
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r, err := MannWhitney(y, x)
	if err != nil {
		t.Fatal(err)
	}
	if r.U != 35 || !near(r.P, 2*0.1272, 0.0002) || !r.Exact {
		t.Errorf("Hollander & Wolfe: U %v p %v exact %v, want U 35, p 0.2544, exact", r.U, r.P, r.Exact)
	}

	// With ties R uses the normal approximation with the tie and
	// continuity corrections (endmemo.com's wilcox.test page):
	// x <- c(1,5,9,24,56,21,3,7,21,4); y <- c(12,15,5,9,9,14,56,22,3,7,32,5)
	// wilcox.test(x, y): W = 51.5, p-value = 0.5966; with
	// y <- c(1233,4356,987,39999,1111,200000): W = 0, p-value = 0.001364.
	// Sides this small get the exact distribution from MannWhitney, so
	// the approximation it uses beyond exactLimit is checked directly.
	xa := []float64{1, 5, 9, 24, 56, 21, 3, 7, 21, 4}
	for _, c := range []struct {
		y    []float64
		w, p float64
	}{
		{[]float64{12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5}, 51.5, 0.5966},
		{[]float64{1233, 4356, 987, 39999, 1111, 200000}, 0, 0.001364},
	} {
		r, err := MannWhitney(c.y, xa)
		if err != nil {
			t.Fatal(err)
		}
		pool := append(append([]float64{}, xa...), c.y...)
		sort.Float64s(pool)
		p := normalP(pool, len(c.y), len(xa), r.U)
		if r.U != c.w || !near(p, c.p, 0.000005+c.p*0.0001) {
			t.Errorf("ties: U %v normal p %v, want W %v p %v", r.U, p, c.w, c.p)
		}
	}
}

// TestMannWhitneyExactByEnumeration holds the exact p-value, with and
// without ties, against a count over every way of splitting the pooled
// values into two sides of the same sizes: the definition of the
// permutation distribution, computed independently of the library.
func TestMannWhitneyExactByEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		na, nb := 2+rng.IntN(5), 2+rng.IntN(5)
		a, b := make([]float64, na), make([]float64, nb)
		for i := range a {
			a[i] = float64(rng.IntN(6)) // few values: ties are common
		}
		for i := range b {
			b[i] = float64(rng.IntN(6) + rng.IntN(2))
		}
		if trial%2 == 0 { // half without ties
			for i := range a {
				a[i] += rng.Float64()
			}
			for i := range b {
				b[i] += rng.Float64()
			}
		}
		got, err := MannWhitney(a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := enumerateP(a, b)
		if !near(got.P, want, 1e-9) {
			t.Errorf("trial %d a=%v b=%v: p %v, enumeration %v", trial, a, b, got.P, want)
		}
	}
}

// uStat counts pairs with b > a, ties one half.
func uStat(a, b []float64) float64 {
	u := 0.0
	for _, y := range b {
		for _, x := range a {
			switch {
			case y > x:
				u++
			case y == x:
				u += 0.5
			}
		}
	}
	return u
}

// enumerateP is the two-sided permutation p-value of U: the share of
// splits whose U is at least as far from its centre as the one seen.
func enumerateP(a, b []float64) float64 {
	pool := append(append([]float64{}, a...), b...)
	n, na := len(pool), len(a)
	centre := float64(na*len(b)) / 2
	seen := math.Abs(uStat(a, b) - centre)
	hit, all := 0, 0
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != na {
			continue
		}
		var x, y []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		all++
		if math.Abs(uStat(x, y)-centre) >= seen-1e-9 {
			hit++
		}
	}
	return float64(hit) / float64(all)
}

func popcount(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func TestMannWhitneyAllEqual(t *testing.T) {
	r, err := MannWhitney([]float64{3, 3, 3}, []float64{3, 3})
	if err != nil || r.P != 1 || r.U != 3 {
		t.Errorf("all equal: %+v, %v; want p 1, U 3", r, err)
	}
	if _, err := MannWhitney(nil, []float64{1}); err == nil {
		t.Error("an empty side gave no error")
	}
	if _, err := MannWhitney([]float64{math.NaN()}, []float64{1}); err == nil {
		t.Error("NaN gave no error")
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		na, nb int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 1, 1}, {3, 4, 2.0 / 35}, {0, 3, 1}} {
		if got := MinP(c.na, c.nb); !near(got, c.want, 1e-12) {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.na, c.nb, got, c.want)
		}
	}
}

// TestHodgesLehmann checks the estimate against its definition and the
// interval against Moses' order statistics: with 5 runs per side, the
// 3rd and the 23rd of the 25 sorted differences, at the 96.8% the exact
// distribution achieves (1 − 2·4/252), as R's wilcox.test(conf.int =
// TRUE) computes them (qwilcox(0.025, 5, 5) = 3).
func TestHodgesLehmann(t *testing.T) {
	a := []float64{10.1, 9.8, 10.4, 10.0, 9.9}
	b := []float64{11.0, 10.6, 10.9, 11.3, 10.7}
	s, err := HodgesLehmann(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	var d []float64
	for _, y := range b {
		for _, x := range a {
			d = append(d, y-x)
		}
	}
	sort.Float64s(d)
	if s.Estimate != d[12] || s.Low != d[2] || s.High != d[22] {
		t.Errorf("shift %+v, want estimate %v, interval [%v, %v]", s, d[12], d[2], d[22])
	}
	if !near(s.Level, 1-8.0/252, 1e-12) {
		t.Errorf("level %v, want %v", s.Level, 1-8.0/252)
	}
	// Even count of differences: the estimate is the mean of the middle
	// two. One side of 1 and one of 2: [0.5, 1.5] differences.
	s, _ = HodgesLehmann([]float64{1}, []float64{1.5, 2.5}, 0.95)
	if s.Estimate != 1 || s.Low != 0.5 || s.High != 1.5 {
		t.Errorf("tiny sides: %+v, want estimate 1 on [0.5, 1.5]", s)
	}
}

// TestHodgesLehmannInvertsTheTest checks the interval is the set of
// shifts the test does not reject: B moved back by a shift just inside
// the interval is not told apart from A at the interval's level, and by
// one just outside it is.
func TestHodgesLehmannInvertsTheTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		na, nb := 4+rng.IntN(7), 4+rng.IntN(7)
		a, b := make([]float64, na), make([]float64, nb)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64() + 1
		}
		s, err := HodgesLehmann(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		alpha := 1 - s.Level
		moved := func(delta float64) float64 {
			c := make([]float64, nb)
			for i, v := range b {
				c[i] = v - delta
			}
			r, _ := MannWhitney(a, c)
			return r.P
		}
		const eps = 1e-9
		if p := moved(s.Low + eps); p <= alpha-1e-12 {
			t.Errorf("just inside the low end, p %v ≤ %v", p, alpha)
		}
		if p := moved(s.Low - eps); p > alpha+1e-12 {
			t.Errorf("just outside the low end, p %v > %v", p, alpha)
		}
		if p := moved(s.High - eps); p <= alpha-1e-12 {
			t.Errorf("just inside the high end, p %v ≤ %v", p, alpha)
		}
		if p := moved(s.High + eps); p > alpha+1e-12 {
			t.Errorf("just outside the high end, p %v > %v", p, alpha)
		}
		if s.Level < 0.95 {
			t.Errorf("level %v below 0.95 with %d and %d runs", s.Level, na, nb)
		}
	}
}

// TestHodgesLehmannLargeSides checks the normal approximation's interval
// covers the true shift about 95% of the time beyond the exact range.
func TestHodgesLehmannLargeSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	covered, trials := 0, 400
	for range trials {
		a, b := make([]float64, 60), make([]float64, 55)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64() + 0.5
		}
		s, err := HodgesLehmann(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if s.Low <= 0.5 && 0.5 <= s.High {
			covered++
		}
		if !near(s.Level, 0.95, 0.01) {
			t.Fatalf("level %v, want about 0.95", s.Level)
		}
	}
	// 95% of 400 is 380; two standard errors are ±9.
	if covered < 368 {
		t.Errorf("covered the true shift %d times in %d, want about 380", covered, trials)
	}
}

// TestHolm checks against R: p.adjust(c(0.01, 0.04, 0.03, 0.005),
// "holm") is 0.03 0.06 0.06 0.02.
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
	if got := Holm(nil); len(got) != 0 {
		t.Errorf("Holm(nil) = %v", got)
	}
}

func TestMedianAndPooledSD(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median %v", m)
	}
	if m := Median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median %v", m)
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	// Each side about its own mean: (1,3) and (10,14): (2+8)/2 = 5.
	if sd := PooledSD([]float64{1, 3}, []float64{10, 14}); !near(sd, math.Sqrt(10.0/2), 1e-12) {
		t.Errorf("pooled sd %v, want √5", sd)
	}
	if !math.IsNaN(PooledSD([]float64{1}, []float64{2})) {
		t.Error("pooled sd of one run each is not NaN")
	}
}

// TestDetectableShiftHasItsPower checks the shift said detectable is
// found about 80% of the time by the real test (MannWhitney, on fresh
// random numbers unlike the ones the shift was computed from).
func TestDetectableShiftHasItsPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{4, 5, 8, 12} {
		d := DetectableShift(n, n, 1, 0.05, 0.8)
		found, trials := 0, 2000
		for range trials {
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i] = rng.NormFloat64()
				b[i] = rng.NormFloat64() + d
			}
			r, _ := MannWhitney(a, b)
			if r.P <= 0.05 {
				found++
			}
		}
		// ±2.5% is about three standard errors of 2000 trials.
		if share := float64(found) / float64(trials); !near(share, 0.8, 0.025) {
			t.Errorf("n %d: shift %.3f found in %.3f of trials, want 0.8", n, d, share)
		}
	}
}

func TestDetectableShiftEdges(t *testing.T) {
	if d := DetectableShift(3, 3, 1, 0.05, 0.8); !math.IsInf(d, 1) {
		t.Errorf("3 runs per side detect %v; no shift can reach p < 0.05", d)
	}
	if d := DetectableShift(5, 5, math.NaN(), 0.05, 0.8); !math.IsInf(d, 1) {
		t.Errorf("unknown spread detects %v", d)
	}
	if d := DetectableShift(5, 5, 0, 0.05, 0.8); d != 0 {
		t.Errorf("no spread detects %v, want 0", d)
	}
	prev := math.Inf(1)
	for n := 4; n <= 40; n++ {
		d := DetectableShift(n, n, 1, 0.05, 0.8)
		// The step from simulation to Noether's formula at simMaxN may
		// go up a little: Noether's is conservative.
		if d > prev*1.05 {
			t.Errorf("n %d detects %v, more than n-1's %v", n, d, prev)
		}
		prev = d
	}
}

func TestRunsNeeded(t *testing.T) {
	// Too few to reach p < 0.05 at all: 4 per side, whatever the shift.
	if n := RunsNeeded(10, 0.01, 0.05, 0.8); n != 4 {
		t.Errorf("a huge shift needs %d runs, want 4", n)
	}
	if n := RunsNeeded(1, math.NaN(), 0.05, 0.8); n != 4 {
		t.Errorf("unknown spread needs %d runs, want 4", n)
	}
	n := RunsNeeded(0.04, 0.03, 0.05, 0.8)
	if DetectableShift(n, n, 0.03, 0.05, 0.8) > 0.04 || DetectableShift(n-1, n-1, 0.03, 0.05, 0.8) <= 0.04 {
		t.Errorf("RunsNeeded(4%% at 3%%) = %d is not the fewest", n)
	}
	if n := RunsNeeded(0.0001, 1, 0.05, 0.8); n != MaxRuns+1 {
		t.Errorf("a tiny shift in a wide spread needs %d, want %d", n, MaxRuns+1)
	}
}

// TestMannWhitneyLargeSidesUseTheApproximation: beyond exactLimit the
// p-value is the normal approximation's, which R's wilcox.test gives for
// sides this size, and it is within a hair of the exact one just below.
func TestMannWhitneyLargeSidesUseTheApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := make([]float64, 40), make([]float64, 40)
	for i := range a {
		a[i] = rng.NormFloat64()
		b[i] = rng.NormFloat64() + 0.4
	}
	r, err := MannWhitney(a, b)
	if err != nil {
		t.Fatal(err)
	}
	pool := append(append([]float64{}, a...), b...)
	sort.Float64s(pool)
	if r.Exact || r.P != normalP(pool, 40, 40, r.U) {
		t.Errorf("80 runs: exact %v, p %v, want the approximation's %v", r.Exact, r.P, normalP(pool, 40, 40, r.U))
	}
	// 30 against 30 is exact; the approximation agrees to within 1% of p.
	r, _ = MannWhitney(a[:30], b[:30])
	pool = append(append([]float64{}, a[:30]...), b[:30]...)
	sort.Float64s(pool)
	if approx := normalP(pool, 30, 30, r.U); !r.Exact || math.Abs(approx-r.P) > 0.01*r.P+1e-4 {
		t.Errorf("60 runs: exact %v p %v, approximation %v", r.Exact, r.P, approx)
	}
}
