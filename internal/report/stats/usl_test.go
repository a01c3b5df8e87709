package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// noisy is the law's throughput at each n, repeated reps times, each
// multiplied by 1 + a normal error of the given coefficient of variation.
func noisy(rng *rand.Rand, u USL, ns []float64, reps int, cv float64) (n, x []float64) {
	for _, v := range ns {
		for range reps {
			n = append(n, v)
			x = append(x, u.Throughput(v)*(1+cv*rng.NormFloat64()))
		}
	}
	return n, x
}

// ss is the residual sum of squares of u over the points.
func ss(u USL, n, x []float64) float64 {
	var s float64
	for i := range n {
		r := x[i] - u.Throughput(n[i])
		s += r * r
	}
	return s
}

// FitUSL recovers σ, κ, λ and the peak from noisy data shaped by the
// law, over many seeds, when the peak lies inside the measured range;
// and it always finds a fit at least as close as the true parameters
// (it is the least-squares minimum, not merely near it).
func TestFitUSLRecovers(t *testing.T) {
	ns := []float64{1, 2, 4, 8, 16, 32, 64}
	for _, c := range []struct {
		name string
		true USL
		// peakSeen: N* inside the range measured, so κ is determined
		// by the data; past it, only σ and λ are.
		peakSeen bool
	}{
		{"peak at 21", USL{Lambda: 1000, Sigma: 0.05, Kappa: 0.002}, true},
		{"peak at 7", USL{Lambda: 2000, Sigma: 0.1, Kappa: 0.02}, true},
		{"contention, peak past the range", USL{Lambda: 5000, Sigma: 0.2, Kappa: 0.0001}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantPeak, _ := c.true.Peak()
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 7))
				n, x := noisy(rng, c.true, ns, 3, 0.02)
				u, err := FitUSL(n, x)
				if err != nil {
					t.Fatal(err)
				}
				if got, truth := ss(u, n, x), ss(c.true, n, x); got > truth*(1+1e-6) {
					t.Errorf("seed %d: fit %+v has squares %.4g, the true parameters %.4g", seed, u, got, truth)
				}
				if math.Abs(u.Sigma-c.true.Sigma) > 0.02+0.2*c.true.Sigma ||
					math.Abs(u.Lambda-c.true.Lambda) > 0.05*c.true.Lambda || u.R2 < 0.98 {
					t.Errorf("seed %d: fitted %+v, want %+v", seed, u, c.true)
				}
				if !c.peakSeen {
					continue
				}
				peak, ok := u.Peak()
				if math.Abs(u.Kappa-c.true.Kappa) > 0.35*c.true.Kappa || !ok || math.Abs(peak-wantPeak) > 0.2*wantPeak {
					t.Errorf("seed %d: fitted %+v (peak %.1f), want %+v (peak %.1f)", seed, u, peak, c.true, wantPeak)
				}
			}
		})
	}
}

// Linear scaling gives σ and κ near 0 and no peak in sight.
func TestFitUSLLinear(t *testing.T) {
	n := []float64{1, 2, 4, 8, 16}
	x := []float64{100, 200, 400, 800, 1600}
	u, err := FitUSL(n, x)
	if err != nil {
		t.Fatal(err)
	}
	if u.Sigma > 1e-4 || u.Kappa > 1e-6 || math.Abs(u.Lambda-100) > 0.1 || u.R2 < 0.9999 {
		t.Errorf("fitted %+v", u)
	}
	if p, ok := u.Peak(); ok && p < 1000 {
		t.Errorf("peak at %v for linear scaling", p)
	}
}

// A flat curve is all contention: σ near 1.
func TestFitUSLFlat(t *testing.T) {
	u, err := FitUSL([]float64{1, 2, 4, 8}, []float64{500, 500, 500, 500})
	if err != nil {
		t.Fatal(err)
	}
	if u.Sigma < 0.99 || math.Abs(u.Throughput(8)-500) > 1 {
		t.Errorf("fitted %+v", u)
	}
}

func TestFitUSLBadInput(t *testing.T) {
	if _, err := FitUSL([]float64{1, 2, 2, 1}, []float64{1, 2, 2, 1}); !errors.Is(err, ErrTooFewPoints) {
		t.Errorf("two concurrencies: %v", err)
	}
	if _, err := FitUSL([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("lengths differ: no error")
	}
	if _, err := FitUSL([]float64{0, 2, 4}, []float64{1, 2, 3}); err == nil {
		t.Error("N=0: no error")
	}
	if _, err := FitUSL([]float64{1, 2, 4}, []float64{1, math.NaN(), 3}); err == nil {
		t.Error("NaN: no error")
	}
}
