package sweep

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func variantsOf(shapes ...int) []Variant {
	var vs []Variant
	for i, sh := range shapes {
		vs = append(vs, Variant{ID: i + 1, Shape: sh})
	}
	return vs
}

// Every variant runs reps times; within a shape the runs are
// interleaved (each round runs every variant once, so no variant's runs
// all come before another's); shapes are contiguous; the order is the
// seed's and another seed gives another.
func TestOrder(t *testing.T) {
	vs := variantsOf(0, 0, 0, 1, 1, 1, 1)
	for seed := range uint64(50) {
		o := Order(vs, 2, 3, seed)
		if len(o) != 21 {
			t.Fatalf("seed %d: %d runs", seed, len(o))
		}
		count := map[int]int{}
		for _, s := range o {
			count[s.Variant]++
		}
		for i := range vs {
			if count[i] != 3 {
				t.Errorf("seed %d: variant %d runs %d times", seed, i, count[i])
			}
		}
		// Shapes contiguous: the shape changes once.
		changes := 0
		for i := 1; i < len(o); i++ {
			if vs[o[i].Variant].Shape != vs[o[i-1].Variant].Shape {
				changes++
			}
		}
		if changes != 1 {
			t.Errorf("seed %d: the shape changes %d times", seed, changes)
		}
		// Interleaved: for every pair of variants of a shape, each has a
		// run before the other's last.
		for a := range vs {
			for b := range vs {
				if a == b || vs[a].Shape != vs[b].Shape {
					continue
				}
				firstA := slices.IndexFunc(o, func(s Slot) bool { return s.Variant == a })
				lastB := -1
				for i, s := range o {
					if s.Variant == b {
						lastB = i
					}
				}
				if firstA > lastB {
					t.Errorf("seed %d: all of variant %d before variant %d: %v", seed, b, a, o)
				}
			}
		}
		// No variant twice in a row.
		for i := 1; i < len(o); i++ {
			if o[i].Variant == o[i-1].Variant {
				t.Errorf("seed %d: variant %d twice in a row at %d", seed, o[i].Variant, i)
			}
		}
		if !slices.Equal(o, Order(vs, 2, 3, seed)) {
			t.Errorf("seed %d: not the same order twice", seed)
		}
	}
	if slices.Equal(Order(vs, 2, 3, 1), Order(vs, 2, 3, 2)) {
		t.Error("seeds 1 and 2 give the same order")
	}
}

// A trend of 2% per run over 8 runs is found; noise of the same spread
// without a trend is not, in at most about DriftAlpha of the seeds.
func TestCheckTrend(t *testing.T) {
	pos := []float64{1, 4, 7, 10, 13, 16, 19, 22}
	found, falseAlarms := 0, 0
	const trials = 400
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 3))
		drifting := make([]float64, len(pos))
		flat := make([]float64, len(pos))
		for i := range pos {
			noise := 1 + 0.01*rng.NormFloat64()
			drifting[i] = 1000 * (1 - 0.02*float64(i)) * noise
			flat[i] = 1000 * (1 + 0.01*rng.NormFloat64())
		}
		if tr := CheckTrend(pos, drifting); tr.Drifts {
			found++
			if tr.Change > -0.1 || tr.Rho > -0.7 {
				t.Errorf("seed %d: drift found with change %.3f, ρ %.2f", seed, tr.Change, tr.Rho)
			}
		}
		if CheckTrend(pos, flat).Drifts {
			falseAlarms++
		}
	}
	if found < trials*95/100 {
		t.Errorf("a 2%%-per-run drift found in %d of %d", found, trials)
	}
	if falseAlarms > trials*6/100 {
		t.Errorf("no drift, yet drift reported in %d of %d", falseAlarms, trials)
	}
}

// The exact permutation p-value: 4 runs in perfect order happen in 2 of
// the 24 orders (rising or falling).
func TestSpearmanExact(t *testing.T) {
	tr := CheckTrend([]float64{1, 2, 3, 4}, []float64{100, 90, 80, 70})
	if math.Abs(tr.Rho+1) > 1e-12 || math.Abs(tr.P-2.0/24) > 1e-12 || tr.Drifts {
		t.Errorf("%+v: want ρ = −1, p = 1/12, not significant at 0.05", tr)
	}
	tr = CheckTrend([]float64{1, 2, 3, 4, 5}, []float64{100, 90, 80, 70, 60})
	if math.Abs(tr.P-2.0/120) > 1e-12 || !tr.Drifts || math.Abs(tr.Change+0.4) > 0.02 {
		t.Errorf("%+v: want p = 1/60, a drift, change about −40%% (100 to 60)", tr)
	}
	if tr := CheckTrend([]float64{1, 2, 3}, []float64{3, 2, 1}); tr.Drifts || tr.Runs != 3 {
		t.Errorf("3 runs: %+v", tr)
	}
	// Past 8 runs, the t approximation: 20 runs in perfect order.
	var x, y []float64
	for i := range 20 {
		x = append(x, float64(i))
		y = append(y, float64(100-i))
	}
	if tr := CheckTrend(x, y); tr.P > 1e-6 || !tr.Drifts {
		t.Errorf("20 runs in order: %+v", tr)
	}
}
