package keygen

import "math/bits"

// divisor computes x mod d without a division instruction. A 64-bit
// division was the slowest step of a scrambled-zipfian draw (about 13 ns on
// the 2.5 GHz Xeon the benchmarks ran on, against 5 ns here), and the
// divisor, the key count, is fixed for the run. The method is
// Lemire, Kaser and Kurz, "Faster remainder by direct computation" (2019):
// with M = ⌊(2^128 − 1)/d⌋ + 1, x mod d = ⌊((M·x) mod 2^128) · d / 2^128⌋,
// exact for every 64-bit x and d ≥ 1 (for d = 1, M wraps to 0 and so does
// the remainder).
type divisor struct {
	mhi, mlo uint64 // M
	d        uint64
}

func newDivisor(d uint64) divisor {
	if d == 0 {
		panic("keygen: division by zero")
	}
	hi, r := bits.Div64(0, ^uint64(0), d)
	lo, _ := bits.Div64(r, ^uint64(0), d)
	lo++
	if lo == 0 {
		hi++
	}
	return divisor{mhi: hi, mlo: lo, d: d}
}

// mod returns x mod d.
func (v divisor) mod(x uint64) uint64 {
	// low = M·x mod 2^128, as two words.
	h, lowLo := bits.Mul64(v.mlo, x)
	lowHi := v.mhi*x + h
	// The top word of low·d, a 192-bit product.
	carryIn, _ := bits.Mul64(lowLo, v.d)
	top, mid := bits.Mul64(lowHi, v.d)
	_, c := bits.Add64(mid, carryIn, 0)
	return top + c
}
