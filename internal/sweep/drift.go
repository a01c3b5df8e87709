package sweep

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Drift thresholds: a trend is reported when a rank correlation between
// a metric and the runs' positions in the order is significant at
// DriftAlpha and the fitted change across the runs is at least
// DriftMinChange. Either alone misleads: with 3 runs any order is
// "perfectly" correlated one time in six, and a significant 0.5% trend
// matters to no one.
const (
	DriftAlpha     = 0.05
	DriftMinChange = 0.03
)

// DriftMinRuns is the fewest runs a variant needs for its own trend to
// be judged: with 3 runs even a perfect rank order has p = 1/3.
const DriftMinRuns = 4

// Trend is how a metric moved with the position in the order.
type Trend struct {
	// Runs is how many runs it is over.
	Runs int `json:"runs"`
	// Rho is Spearman's rank correlation of the metric with the position,
	// P its two-sided p-value (exact by permutation up to 8 runs, else
	// from Student's t).
	Rho float64 `json:"rho"`
	P   float64 `json:"p"`
	// Change is the change from the first run's position to the last's
	// of a least-squares line through the metric's logarithm: −0.12 is
	// "12% lower by the last run"; it is never below −1.
	Change float64 `json:"change"`
	// Drifts says the trend passes both thresholds.
	Drifts bool `json:"drifts"`
}

// CheckTrend judges whether values taken at positions move with them.
// It needs DriftMinRuns values; fewer give Runs alone.
func CheckTrend(positions, values []float64) Trend {
	t := Trend{Runs: len(values)}
	if len(values) < DriftMinRuns || len(positions) != len(values) {
		return t
	}
	t.Rho = spearman(positions, values)
	t.P = spearmanP(t.Rho, positions, values)
	// The change is fitted on the logarithm: a drift is multiplicative
	// (a few percent per run), and a straight line through the values
	// themselves can say "fell 150%" of a series that fell to a fifth.
	var lx, ly []float64
	for i, v := range values {
		if v > 0 {
			lx = append(lx, positions[i])
			ly = append(ly, math.Log(v))
		}
	}
	if len(ly) >= 2 {
		lo, hi := minMax(lx)
		t.Change = math.Expm1(olsSlope(lx, ly) * (hi - lo))
	}
	t.Drifts = t.P < DriftAlpha && math.Abs(t.Change) >= DriftMinChange
	return t
}

// Sentence says the trend in words, for the metric named what.
func (t Trend) Sentence(what string) string {
	dir := "rose"
	if t.Change < 0 {
		dir = "fell"
	}
	return fmt.Sprintf("%s %s %.0f%% from its first run to its last (Spearman ρ = %.2f over %d runs, p = %s)", what, dir, math.Abs(100*t.Change), t.Rho, t.Runs, pText(t.P))
}

func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// ranks gives average ranks (ties share their mean rank).
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func spearman(x, y []float64) float64 { return pearson(ranks(x), ranks(y)) }

// spearmanP is the two-sided p-value of rho: the share of the
// permutations of y whose |ρ| reaches |rho| for up to 8 values (40,320
// permutations), else Student's t with n−2 degrees of freedom.
func spearmanP(rho float64, x, y []float64) float64 {
	n := len(y)
	if n <= 8 {
		rx, ry := ranks(x), ranks(y)
		perm := make([]float64, n)
		copy(perm, ry)
		var hit, all int
		permute(perm, 0, func(p []float64) {
			all++
			if math.Abs(pearson(rx, p)) >= math.Abs(rho)-1e-12 {
				hit++
			}
		})
		return float64(hit) / float64(all)
	}
	if math.Abs(rho) >= 1 {
		return 0
	}
	tv := rho * math.Sqrt(float64(n-2)/(1-rho*rho))
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}
	return 2 * st.Survival(math.Abs(tv))
}

// permute calls fn with every permutation of a (Heap's algorithm would
// do; this is the plain recursive swap, fine for 8 values).
func permute(a []float64, k int, fn func([]float64)) {
	if k == len(a) {
		fn(a)
		return
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		permute(a, k+1, fn)
		a[k], a[i] = a[i], a[k]
	}
}

func olsSlope(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

func minMax(x []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// median of the values; NaN for none.
func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
