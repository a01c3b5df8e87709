package keygen

import (
	"math"
	"testing"
)

func TestDivisor(t *testing.T) {
	// Edge divisors and numerators, then random pairs across all
	// magnitudes, against the % operator.
	edges := []uint64{0, 1, 2, 3, 7, 10, 99, 1 << 32, 1<<32 - 1, 1<<32 + 1, 10_000_000_000,
		math.MaxInt64 - 1, math.MaxInt64, 1 << 63, 1<<63 + 1, math.MaxUint64 - 1, math.MaxUint64}
	for _, d := range edges {
		if d == 0 {
			continue
		}
		v := newDivisor(d)
		for _, x := range edges {
			for _, x := range []uint64{x, x - 1, x + 1, d - 1, d, d + 1, 2*d - 1, 2 * d} {
				if got, want := v.mod(x), x%d; got != want {
					t.Fatalf("%d mod %d = %d, want %d", x, d, got, want)
				}
			}
		}
	}
	rng := newRand(15)
	for range 200_000 {
		d := rng.Uint64() >> rng.UintN(64)
		if d == 0 {
			d = 1
		}
		x := rng.Uint64() >> rng.UintN(64)
		if got, want := newDivisor(d).mod(x), x%d; got != want {
			t.Fatalf("%d mod %d = %d, want %d", x, d, got, want)
		}
	}
}
