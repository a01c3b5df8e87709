package keygen

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestUniform(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int64
		draws  int64
	}{
		{"keys 0..999", 0, 999, 300_000},
		{"field lengths 1..100", 1, 100, 100_000},
		{"negative bounds", -50, 49, 100_000},
		{"two values", 7, 8, 50_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.hi - tc.lo + 1
			c := NewUniform(tc.lo, tc.hi)
			rng := newRand(uint64(300 + i))
			counts := make([]int64, n)
			for range tc.draws {
				v := c.Next(rng)
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tc.lo, tc.hi)
				}
				counts[v-tc.lo]++
			}
			exp := make([]float64, n)
			for k := range exp {
				exp[k] = float64(tc.draws) / float64(n)
			}
			checkChiSquare(t, "flatness", counts, exp)
			checkProportion(t, "lowest value", counts[0], tc.draws, 1/float64(n))
			checkProportion(t, "highest value", counts[n-1], tc.draws, 1/float64(n))
			// A chi-square over many bins dilutes a broad tilt; the halves
			// catch one of 1% of the draws.
			var lower int64
			for _, c := range counts[:n/2] {
				lower += c
			}
			checkProportion(t, "lower half", lower, tc.draws, float64(n/2)/float64(n))
		})
	}
}

func TestUniformExtremes(t *testing.T) {
	rng := newRand(4)
	single := NewUniform(5, 5)
	for range 100 {
		if v := single.Next(rng); v != 5 {
			t.Fatalf("NewUniform(5, 5) drew %d", v)
		}
	}
	// The whole int64 range has 2^64 values, one more than fits a uint64
	// span; both halves must come up.
	all := NewUniform(math.MinInt64, math.MaxInt64)
	var neg int64
	const draws = 10_000
	for range draws {
		if all.Next(rng) < 0 {
			neg++
		}
	}
	checkProportion(t, "negative draws over the whole range", neg, draws, 0.5)
	top := NewUniform(math.MaxInt64-1, math.MaxInt64)
	for range 100 {
		if v := top.Next(rng); v < math.MaxInt64-1 {
			t.Fatalf("NewUniform at the top of the range drew %d", v)
		}
	}
}

func TestHotspot(t *testing.T) {
	tests := []struct {
		name           string
		lo, hi         int64
		data, opn      float64
		wantHot        int64 // keys in the hot set
		wantHotOpnFrac float64
	}{
		{"ycsb defaults", 0, 999, 0.2, 0.8, 200, 0.8},
		{"offset range", 1_000, 1_999, 0.2, 0.8, 200, 0.8},
		{"hot set rounded down", 0, 99, 0.255, 0.9, 25, 0.9},
		{"inverted skew", 0, 499, 0.5, 0.1, 250, 0.1},
		{"no hot set", 0, 99, 0, 0.8, 0, 0},
		{"all hot", 0, 99, 1, 0.3, 100, 1},
	}
	const draws = 200_000
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.hi - tc.lo + 1
			c := NewHotspot(tc.lo, tc.hi, tc.data, tc.opn)
			rng := newRand(uint64(400 + i))
			counts := make([]int64, n)
			for range draws {
				v := c.Next(rng)
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tc.lo, tc.hi)
				}
				counts[v-tc.lo]++
			}
			var hot int64
			for _, c := range counts[:tc.wantHot] {
				hot += c
			}
			switch tc.wantHotOpnFrac {
			case 0, 1:
				if want := int64(tc.wantHotOpnFrac * draws); hot != want {
					t.Errorf("%d draws in the hot set, want %d", hot, want)
				}
			default:
				checkProportion(t, "draws in the hot set", hot, draws, tc.wantHotOpnFrac)
			}
			// Uniform inside each part, given the part's total.
			parts := [][]int64{counts[:tc.wantHot], counts[tc.wantHot:]}
			for pi, part := range parts {
				if len(part) < 2 {
					continue
				}
				var total int64
				for _, c := range part {
					total += c
				}
				exp := make([]float64, len(part))
				for k := range exp {
					exp[k] = float64(total) / float64(len(part))
				}
				checkChiSquare(t, []string{"hot set", "cold set"}[pi]+" flatness", part, exp)
			}
		})
	}
}

func TestExponential(t *testing.T) {
	tests := []struct {
		name       string
		percentile float64
		rangeSize  float64
	}{
		{"95 within 1000", 95, 1_000},
		{"ycsb defaults over 7000 records", 95, 0.8571428571 * 7_000},
		{"90 within 100", 90, 100},
		{"50 within 10", 50, 10},
	}
	const draws = 200_000
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewExponential(tc.percentile, tc.rangeSize)
			rng := newRand(uint64(500 + i))
			gamma := -math.Log(1-tc.percentile/100) / tc.rangeSize
			// An integer draw is below k exactly when the real one is, so
			// P(draw < k) = 1 - e^(-γk) for every integer k.
			thresholds := []int64{1, int64(tc.rangeSize / 4), int64(tc.rangeSize / 2), int64(tc.rangeSize), int64(2 * tc.rangeSize)}
			below := make([]int64, len(thresholds))
			var withinRange int64
			for range draws {
				v := c.Next(rng)
				if v < 0 {
					t.Fatalf("negative draw %d", v)
				}
				for j, k := range thresholds {
					if v < k {
						below[j]++
					}
				}
				if float64(v) < tc.rangeSize {
					withinRange++
				}
			}
			for j, k := range thresholds {
				checkProportion(t, "draws below "+itoa(k), below[j], draws, 1-math.Exp(-gamma*float64(k)))
			}
			// percentile% of draws fall below rangeSize (for a fractional
			// range the integer draws below it are those below its ceiling).
			checkProportion(t, "draws within rangeSize", withinRange, draws,
				1-math.Exp(-gamma*math.Ceil(tc.rangeSize)))
			if tc.rangeSize == math.Trunc(tc.rangeSize) {
				checkProportion(t, "percentile", withinRange, draws, tc.percentile/100)
			}
		})
	}
}

func TestSequential(t *testing.T) {
	c := NewSequential(5, 9)
	want := []int64{5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6}
	for i, w := range want {
		if got := c.Next(nil); got != w {
			t.Fatalf("draw %d = %d, want %d", i, got, w)
		}
	}
	one := NewSequential(3, 3)
	for range 5 {
		if got := one.Next(nil); got != 3 {
			t.Fatalf("NewSequential(3, 3) drew %d", got)
		}
	}
}

func TestSequentialConcurrent(t *testing.T) {
	// Workers sharing one Sequential together visit every key exactly once
	// per lap.
	const lo, hi, laps, workers = 100, 1_099, 6, 8
	const n = hi - lo + 1
	c := NewSequential(lo, hi)
	per := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range n * laps / workers {
				per[w] = append(per[w], c.Next(nil))
			}
		})
	}
	wg.Wait()
	counts := make([]int, n)
	for _, vs := range per {
		for _, v := range vs {
			if v < lo || v > hi {
				t.Fatalf("draw %d outside [%d, %d]", v, lo, hi)
			}
			counts[v-lo]++
		}
	}
	for k, got := range counts {
		if got != laps {
			t.Errorf("key %d drawn %d times, want %d", lo+k, got, laps)
		}
	}
	// The counter is now exactly at a lap boundary.
	if got := c.Next(nil); got != lo {
		t.Errorf("after %d laps Next = %d, want %d", laps, got, lo)
	}
}

func TestConstructorsPanic(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"uniform hi below lo", func() { NewUniform(2, 1) }},
		{"sequential hi below lo", func() { NewSequential(2, 1) }},
		{"scrambled hi below lo", func() { NewScrambledZipfian(2, 1) }},
		{"hotspot hi below lo", func() { NewHotspot(2, 1, 0.2, 0.8) }},
		{"hotspot data fraction", func() { NewHotspot(0, 9, 1.2, 0.8) }},
		{"hotspot opn fraction", func() { NewHotspot(0, 9, 0.2, -0.1) }},
		{"hotspot NaN", func() { NewHotspot(0, 9, math.NaN(), 0.8) }},
		{"exponential percentile 100", func() { NewExponential(100, 10) }},
		{"exponential percentile 0", func() { NewExponential(0, 10) }},
		{"exponential range 0", func() { NewExponential(95, 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("did not panic")
				}
			}()
			tc.f()
		})
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	basis := NewAcknowledged(0)
	for range 1000 {
		basis.Acknowledge(basis.Next())
	}
	choosers := []struct {
		name string
		c    Chooser
	}{
		{"uniform", NewUniform(0, 999)},
		{"zipfian", NewZipfian(0, 999, ZipfianConstant)},
		{"scrambled zipfian", NewScrambledZipfian(0, 999)},
		{"hotspot", NewHotspot(0, 999, 0.2, 0.8)},
		{"sequential", NewSequential(0, 999)},
		{"exponential", NewExponential(95, 857)},
		{"latest", NewLatest(basis)},
	}
	for _, tc := range choosers {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(6)
			if allocs := testing.AllocsPerRun(1000, func() { tc.c.Next(rng) }); allocs != 0 {
				t.Errorf("Next allocated %v times per call", allocs)
			}
		})
	}
	t.Run("latest while keys are inserted", func(t *testing.T) {
		rng := newRand(7)
		l := NewLatest(basis)
		allocs := testing.AllocsPerRun(1000, func() {
			basis.Acknowledge(basis.Next())
			l.Next(rng)
		})
		if allocs != 0 {
			t.Errorf("Acknowledge+Next allocated %v times per call", allocs)
		}
	})
}

// Ensure the documented sharing works: one stateless chooser, many workers.
func TestSharedChooserConcurrent(t *testing.T) {
	c := NewScrambledZipfian(0, 99)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			for range 10_000 {
				if v := c.Next(rng); v < 0 || v > 99 {
					t.Errorf("draw %d outside [0, 99]", v)
					return
				}
			}
		})
	}
	wg.Wait()
}
