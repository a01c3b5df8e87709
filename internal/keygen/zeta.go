package keygen

import "math"

// zetaExactMax is the largest item count whose ζ is summed term by term.
// Up to it a sum costs at most a millisecond and extends bit for bit (see
// zetaRange); above it zetaEM gives ζ in microseconds whatever the count,
// so a run over 10^9 records starts at once instead of after half a minute
// of summing.
const zetaExactMax = 1 << 16

// zetaEMHead is the number of leading terms zetaEM adds one by one before
// the Euler–Maclaurin tail takes over. At 128 the first term left out of
// the correction, |B₈/8!·f⁽⁷⁾(128)| = (θ)₇/1,209,600·128^(-θ-7), is below
// 10^-17 for any θ in (0, 1), far under float64 rounding of a sum above 1,
// and the head is 127 terms.
const zetaEMHead = 128

// zetaEM returns ζ(n, θ) = Σ_{i=1}^{n} i^-θ for n > zetaEMHead by the
// Euler–Maclaurin formula: the first a-1 = zetaEMHead-1 terms summed exactly,
// then for f(x) = x^-θ
//
//	Σ_{i=a}^{n} f(i) = ∫_a^n f + (f(a)+f(n))/2 + Σ_{j=1}^{3} B_2j/(2j)! (f⁽²ʲ⁻¹⁾(n) − f⁽²ʲ⁻¹⁾(a)) + R,
//
// with |R| below the next term's size. The integral (n^(1-θ) − a^(1-θ))/(1-θ)
// is taken as a^(1-θ)·expm1((1-θ)·ln(n/a))/(1-θ) so that a θ near 1 loses no
// digits to cancellation. The result is within a few ulps of the true sum,
// closer than a sum of 10^9 float64 terms gets (TestZetaEM holds it to
// compensated sums up to 10^8 terms).
func zetaEM(n int64, theta float64) float64 {
	const a = zetaEMHead
	head := zetaRange(0, a-1, theta, 0)
	fa := float64(a)
	fn := float64(n)
	s := 1 - theta
	integral := math.Exp(s*math.Log(fa)) * math.Expm1(s*(math.Log(fn)-math.Log(fa))) / s
	f := func(x float64) float64 { return math.Exp(-theta * math.Log(x)) }
	ends := (f(fa) + f(fn)) / 2
	// f⁽ᵐ⁾(x) = (−1)^m (θ)_m x^(−θ−m), (θ)_m the rising factorial; for odd
	// m = 2j−1 it is −(θ)_m x^(−θ−m).
	bernoulli := [...]float64{1.0 / 6, -1.0 / 30, 1.0 / 42} // B₂, B₄, B₆
	var corr float64
	rising := theta // (θ)_1
	fact := 2.0     // (2j)! for j = 1
	for j := 1; j <= len(bernoulli); j++ {
		m := float64(2*j - 1)
		dn := -rising * math.Exp((-theta-m)*math.Log(fn))
		da := -rising * math.Exp((-theta-m)*math.Log(fa))
		corr += bernoulli[j-1] / fact * (dn - da)
		// Step to m+2: (θ)_(m+2) = (θ)_m (θ+m)(θ+m+1); (2j+2)! = (2j)!(2j+1)(2j+2).
		rising *= (theta + m) * (theta + m + 1)
		fact *= float64(2*j+1) * float64(2*j+2)
	}
	return head + integral + ends + corr
}
