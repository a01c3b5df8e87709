package stats

import "math"

// normalCDF is Φ, the standard normal distribution function.
func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normalQuantile is Φ⁻¹.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// exactLimit is the largest pooled sample (A and B together) whose rank
// distribution is computed exactly; beyond it the normal approximation
// (with the tie and continuity corrections) is used, within a fraction
// of a percent of the exact value there.
const exactLimit = 60

// doubledRanks gives each value of the pooled, sorted sample twice its
// midrank: a group of ties at places i…j (from 1) all get i+j. Twice, so
// midranks of ties stay integers and the distribution below can be
// indexed by them.
func doubledRanks(sorted []float64) []int {
	r := make([]int, len(sorted))
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[i] {
			j++
		}
		for k := i; k <= j; k++ {
			r[k] = (i + 1) + (j + 1)
		}
		i = j + 1
	}
	return r
}

// rankSumCounts is the permutation distribution of the sum of k of the
// given (doubled) ranks: counts[s] is the number of ways to pick k of
// them summing to s. Every split of the pooled sample into the two sides
// is equally likely under the null hypothesis, so counts / C(n, k) is
// the exact null distribution of the rank sum, ties included. A dynamic
// program over the ranks, O(n·k·Σrank); counts up to C(60, 30) ≈ 1.2e17
// lose a unit in the last place of a float64, far below what a p-value
// is read to.
func rankSumCounts(ranks []int, k int) []float64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	// ways[j][s]: ways to pick j ranks summing to s among those seen.
	ways := make([][]float64, k+1)
	for j := range ways {
		ways[j] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range ranks {
		for j := min(i+1, k); j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := total; s >= r; s-- {
				if prev[s-r] != 0 {
					cur[s] += prev[s-r]
				}
			}
		}
	}
	return ways[k]
}

// uCDF is the null distribution of U without ties for sides of na and
// nb: uCDF(na, nb)[u] = P(U ≤ u), u from 0 to na·nb, memoised.
func uCDF(na, nb int) []float64 {
	key := [2]int{na, nb}
	cdfMemo.Lock()
	c, ok := cdfMemo.m[key]
	cdfMemo.Unlock()
	if ok {
		return c
	}
	n := na + nb
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = 2 * (i + 1)
	}
	counts := rankSumCounts(ranks, nb)
	// The doubled rank sum of B is 2(U + nb(nb+1)/2).
	base := nb * (nb + 1)
	all := 0.0
	for _, v := range counts {
		all += v
	}
	c = make([]float64, na*nb+1)
	run := 0.0
	for u := range c {
		run += counts[2*u+base]
		c[u] = run / all
	}
	cdfMemo.Lock()
	cdfMemo.m[key] = c
	cdfMemo.Unlock()
	return c
}
