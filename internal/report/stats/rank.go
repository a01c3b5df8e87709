package stats

import (
	"errors"
	"math"
	"slices"
	"sort"
	"sync"
)

// RankTest is the outcome of a two-sided Mann–Whitney U test of A
// against B.
type RankTest struct {
	// NA and NB are the sample sizes.
	NA, NB int
	// U counts the pairs (a, b) with b > a, a tie counting one half:
	// NA×NB/2 when the sides do not differ, NA×NB when every B is above
	// every A. It is R's W for wilcox.test(b, a).
	U float64
	// P is the two-sided p-value: the chance, were A and B the same, of
	// a U at least as far from NA×NB/2 as this one.
	P float64
	// Exact says P comes from the exact permutation distribution of the
	// ranks (given the ties, when there are); otherwise from the normal
	// approximation with the tie and continuity corrections, as R's
	// wilcox.test computes it.
	Exact bool
}

// ErrTooFew is returned for a side with no values.
var ErrTooFew = errors.New("stats: a side has no values")

// errNaN is returned for a NaN among the values: it has no rank.
var errNaN = errors.New("stats: a value is NaN")

// MannWhitney tests whether B tends to lie above or below A. Values that
// are all equal on both sides give P = 1: nothing tells them apart.
func MannWhitney(a, b []float64) (RankTest, error) {
	if len(a) == 0 || len(b) == 0 {
		return RankTest{}, ErrTooFew
	}
	if hasNaN(a) || hasNaN(b) {
		return RankTest{}, errNaN
	}
	na, nb := len(a), len(b)
	n := na + nb
	type v struct {
		x   float64
		inB bool
	}
	pool := make([]v, 0, n)
	for _, x := range a {
		pool = append(pool, v{x, false})
	}
	for _, x := range b {
		pool = append(pool, v{x, true})
	}
	sort.Slice(pool, func(i, j int) bool { return pool[i].x < pool[j].x })
	sorted := make([]float64, n)
	for i, p := range pool {
		sorted[i] = p.x
	}
	ranks := doubledRanks(sorted)
	w := 0 // B's doubled rank sum
	for i, p := range pool {
		if p.inB {
			w += ranks[i]
		}
	}
	t := RankTest{NA: na, NB: nb, U: float64(w)/2 - float64(nb*(nb+1))/2}
	centre := nb * (n + 1) // B's doubled rank sum expected under the null
	far := abs(w - centre)
	if n <= exactLimit {
		counts := rankSumCounts(ranks, nb)
		hit, all := 0.0, 0.0
		for s, c := range counts {
			all += c
			if abs(s-centre) >= far {
				hit += c
			}
		}
		t.P, t.Exact = math.Min(1, hit/all), true
		return t, nil
	}
	t.P = normalP(sorted, na, nb, t.U)
	return t, nil
}

// normalP is the two-sided p-value of U from the normal approximation:
// the variance of U with the tie correction Σ(t³ − t), and a continuity
// correction of one half toward the centre, as R's wilcox.test(correct =
// TRUE) computes it. sorted is the pooled sample, sorted.
func normalP(sorted []float64, na, nb int, u float64) float64 {
	n := len(sorted)
	ties := 0.0
	for i := 0; i < n; {
		j := i
		for j+1 < n && sorted[j+1] == sorted[i] {
			j++
		}
		g := float64(j - i + 1)
		ties += g*g*g - g
		i = j + 1
	}
	fa, fb, fn := float64(na), float64(nb), float64(n)
	sigma := math.Sqrt(fa * fb / 12 * ((fn + 1) - ties/(fn*(fn-1))))
	if sigma == 0 {
		return 1
	}
	z := math.Max(0, math.Abs(u-fa*fb/2)-0.5) / sigma
	return math.Min(1, 2*normalCDF(-z))
}

// MinP is the smallest two-sided p-value the rank test can give with na
// and nb values per side: 2 / C(na+nb, na), reached when the sides do
// not overlap. Below 4 runs per side it is 0.1 or more, so no
// difference can be shown at the 5% level however large it is.
func MinP(na, nb int) float64 {
	if na < 1 || nb < 1 {
		return 1
	}
	// log C(n, k) through the log-gamma function: no overflow for large
	// sides.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Min(1, 2*math.Exp(lg(na)+lg(nb)-lg(na+nb)))
}

// Shift is the Hodges–Lehmann estimate of how far B lies from A, B − A,
// with its distribution-free confidence interval.
type Shift struct {
	// Estimate is the median of the NA×NB differences b − a.
	Estimate float64
	// Low and High bound the interval: order statistics of the same
	// differences (Moses' interval, the one R's wilcox.test(conf.int =
	// TRUE) gives).
	Low, High float64
	// Level is the interval's confidence as achieved: the rank
	// distribution is discrete, so a 95% interval asked for is 96.8% with
	// 5 runs per side. It is never below the level asked for, unless
	// the sides are too small to reach it at all (then the interval is
	// the widest, from the smallest difference to the largest).
	Level float64
}

// HodgesLehmann estimates the shift B − A and its confidence interval at
// the given level (0.95). The interval's critical value comes from the
// exact null distribution of U without ties up to 60 values in all, and
// from the normal approximation beyond; ties make it conservative, not
// wrong.
func HodgesLehmann(a, b []float64, level float64) (Shift, error) {
	if len(a) == 0 || len(b) == 0 {
		return Shift{}, ErrTooFew
	}
	if !(level > 0 && level < 1) {
		return Shift{}, errors.New("stats: the confidence level is not between 0 and 1")
	}
	if hasNaN(a) || hasNaN(b) {
		return Shift{}, errNaN
	}
	d := make([]float64, 0, len(a)*len(b))
	for _, y := range b {
		for _, x := range a {
			d = append(d, y-x)
		}
	}
	sort.Float64s(d)
	s := Shift{Estimate: median(d)}
	k, achieved := criticalCount(len(a), len(b), 1-level)
	// The interval is [d(k), d(mn+1−k)] in 1-based order statistics: the
	// shifts δ for which the test of A against B−δ does not reject.
	s.Low, s.High, s.Level = d[k-1], d[len(d)-k], achieved
	return s, nil
}

// criticalCount is Moses' k for a two-sided interval of error alpha:
// the largest k ≥ 1 with 2·P(U ≤ k−1) ≤ alpha under the null, and the
// confidence 1 − 2·P(U ≤ k−1) it achieves. When even k = 1 exceeds alpha
// (tiny sides), k is 1 and the level is what k = 1 gives.
func criticalCount(na, nb int, alpha float64) (int, float64) {
	mn := na * nb
	if na+nb <= exactLimit {
		cdf := uCDF(na, nb)
		k := 1
		for k < (mn+1)/2 && 2*cdf[k] <= alpha {
			k++
		}
		return k, 1 - 2*cdf[k-1]
	}
	// Normal approximation of U's null distribution with the continuity
	// correction: P(U ≤ k−1) ≈ Φ((k − 1/2 − mn/2)/σ).
	sigma := math.Sqrt(float64(mn) * float64(na+nb+1) / 12)
	k := int(math.Floor(float64(mn)/2 + normalQuantile(alpha/2)*sigma + 0.5))
	k = max(1, min(k, (mn+1)/2))
	return k, 1 - 2*normalCDF((float64(k)-0.5-float64(mn)/2)/sigma)
}

// Holm adjusts p-values for testing several hypotheses at once (Holm
// 1979): the i-th smallest of m is multiplied by m−i+1, and the results
// made non-decreasing in that order and capped at 1. A difference is
// shown where the adjusted p is below the level, which keeps the chance
// of any false difference among the m at most the level, whatever the
// dependence between the metrics (throughput and latency of the same
// runs are far from independent). The result is in the order of p.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return p[idx[i]] < p[idx[j]] })
	adj := make([]float64, m)
	run := 0.0
	for rank, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-rank)*p[i]))
		adj[i] = run
	}
	return adj
}

// Median is the middle value of xs (the mean of the two middle ones for
// an even count); NaN for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return median(s)
}

// median is Median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func hasNaN(xs []float64) bool { return slices.ContainsFunc(xs, math.IsNaN) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

var cdfMemo = struct {
	sync.Mutex
	m map[[2]int][]float64
}{m: map[[2]int][]float64{}}
