package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// USL is a fit of Gunther's Universal Scalability Law to throughput
// measured at several concurrencies N (threads, clients, degree of
// parallelism):
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// λ is the throughput of one worker alone, σ the contention (the share
// of work that queues for one resource: a lock, the log flush) and κ the
// coherency cost (each worker waiting on every other: the cost of
// agreeing). With κ > 0 throughput peaks at N* = sqrt((1−σ)/κ) and falls
// after it; with κ = 0 it only levels off towards λ/σ.
type USL struct {
	Lambda, Sigma, Kappa float64
	// R2 is the coefficient of determination of the fit over the points
	// given: 1 − (residual sum of squares)/(total sum of squares).
	R2 float64
	// Points is how many (N, X) pairs it was fitted to.
	Points int
}

// ErrTooFewPoints is returned (wrapped) by FitUSL when fewer than three
// distinct concurrencies are given: three parameters need three.
var ErrTooFewPoints = errors.New("too few points for a scalability fit")

// FitUSL fits the Universal Scalability Law to throughputs x measured at
// concurrencies n (several measurements at one N are fine: each is a
// point) by nonlinear least squares on X, with σ in [0, 1] and κ ≥ 0.
// λ is solved exactly for each (σ, κ) (the model is linear in it), so the
// search is over σ and κ alone: a grid for the start, then Nelder–Mead.
func FitUSL(n, x []float64) (USL, error) {
	if len(n) != len(x) {
		return USL{}, fmt.Errorf("usl: %d concurrencies and %d throughputs", len(n), len(x))
	}
	distinct := map[float64]bool{}
	for i := range n {
		if !(n[i] >= 1) || math.IsInf(n[i], 0) || !(x[i] >= 0) || math.IsInf(x[i], 0) {
			return USL{}, fmt.Errorf("usl: point %d (N=%v, X=%v): N must be at least 1 and X a throughput", i, n[i], x[i])
		}
		distinct[n[i]] = true
	}
	if len(distinct) < 3 {
		return USL{}, fmt.Errorf("usl: %d distinct concurrencies: %w", len(distinct), ErrTooFewPoints)
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ssTot float64
	for _, v := range x {
		ssTot += (v - mean) * (v - mean)
	}
	scale := ssTot
	if scale == 0 {
		scale = 1
	}
	// The search runs on a and b with σ = min(a², 1) and κ = b², which
	// keeps both in range without a constrained method.
	params := func(p []float64) (sigma, kappa float64) {
		return math.Min(p[0]*p[0], 1), p[1] * p[1]
	}
	objective := func(p []float64) float64 {
		sigma, kappa := params(p)
		_, ss := fitLambda(n, x, sigma, kappa)
		return ss / scale
	}
	// Start from the best of a grid that spans the shapes met in
	// practice: near-linear to a peak at a few workers.
	best, start := math.Inf(1), []float64{0, 0}
	for _, s := range []float64{0, 0.01, 0.03, 0.1, 0.3, 0.6, 0.9} {
		for _, k := range []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1} {
			p := []float64{math.Sqrt(s), math.Sqrt(k)}
			if f := objective(p); f < best {
				best, start = f, p
			}
		}
	}
	res, err := optimize.Minimize(optimize.Problem{Func: objective}, start, &optimize.Settings{
		Converger: &optimize.FunctionConverge{Absolute: 1e-14, Relative: 1e-12, Iterations: 200},
	}, &optimize.NelderMead{})
	p := start
	if err == nil && res.F <= best {
		p = res.X
	}
	sigma, kappa := params(p)
	lambda, ss := fitLambda(n, x, sigma, kappa)
	u := USL{Lambda: lambda, Sigma: sigma, Kappa: kappa, Points: len(n)}
	if ssTot > 0 {
		u.R2 = 1 - ss/ssTot
	} else if ss == 0 {
		u.R2 = 1
	}
	return u, nil
}

// fitLambda is the least-squares λ for given σ and κ, and the residual
// sum of squares with it: X = λ·g(N) is linear in λ, so λ = Σxg / Σg².
func fitLambda(n, x []float64, sigma, kappa float64) (lambda, ss float64) {
	var xg, gg float64
	for i := range n {
		g := n[i] / (1 + sigma*(n[i]-1) + kappa*n[i]*(n[i]-1))
		xg += x[i] * g
		gg += g * g
	}
	if gg > 0 {
		lambda = math.Max(xg/gg, 0)
	}
	for i := range n {
		r := x[i] - lambda*n[i]/(1+sigma*(n[i]-1)+kappa*n[i]*(n[i]-1))
		ss += r * r
	}
	return lambda, ss
}

// Throughput is the fitted X(N).
func (u USL) Throughput(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// Peak is the concurrency N* = sqrt((1−σ)/κ) at which the fitted
// throughput is highest; ok is false when κ is 0 (or too small to place
// a peak below 10^9 workers), where throughput levels off instead.
func (u USL) Peak() (n float64, ok bool) {
	if u.Kappa <= 0 {
		return 0, false
	}
	n = math.Sqrt((1 - u.Sigma) / u.Kappa)
	if n > 1e9 || math.IsNaN(n) {
		return 0, false
	}
	return math.Max(n, 1), true
}
