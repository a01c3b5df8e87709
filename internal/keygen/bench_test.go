package keygen

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// The null-driver target is 4,000,000 operations/s on 2 cores, about 500 ns
// of CPU per operation for everything, so a key choice must stay far below
// 100 ns. Run with: go test -run '^$' -bench . ./internal/keygen/

var sinkInt int64

func benchChooser(b *testing.B, c Chooser) {
	rng := newRand(1)
	var s int64
	b.ReportAllocs()
	for b.Loop() {
		s += c.Next(rng)
	}
	sinkInt = s
}

func BenchmarkUniform(b *testing.B)    { benchChooser(b, NewUniform(0, 9_999_999)) }
func BenchmarkZipfian(b *testing.B)    { benchChooser(b, NewZipfian(0, 999_999, ZipfianConstant)) }
func BenchmarkHotspot(b *testing.B)    { benchChooser(b, NewHotspot(0, 9_999_999, 0.2, 0.8)) }
func BenchmarkSequential(b *testing.B) { benchChooser(b, NewSequential(0, 9_999_999)) }
func BenchmarkExponential(b *testing.B) {
	benchChooser(b, NewExponential(95, 0.8571428571*10_000_000))
}

func BenchmarkScrambledZipfian(b *testing.B) {
	benchChooser(b, NewScrambledZipfian(0, 9_999_999))
}

// BenchmarkScrambledZipfianParallel shares one chooser among all
// goroutines, each with its own rng, as the runner's workers do.
func BenchmarkScrambledZipfianParallel(b *testing.B) {
	c := NewScrambledZipfian(0, 9_999_999)
	var seed atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 0))
		var s int64
		for pb.Next() {
			s += c.Next(rng)
		}
		atomic.AddInt64(&sinkInt, s)
	})
}

func BenchmarkLatest(b *testing.B) {
	basis := NewAcknowledged(0)
	insertKeys(basis, 1_000_000)
	benchChooser(b, NewLatest(basis))
}

// BenchmarkLatestWithInserts models workload D: one insert (Next and
// Acknowledge) per 20 reads, so Latest's ζ grows as it draws.
func BenchmarkLatestWithInserts(b *testing.B) {
	basis := NewAcknowledged(0)
	insertKeys(basis, 1_000_000)
	l := NewLatest(basis)
	rng := newRand(1)
	var s int64
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i++; i%20 == 0 {
			basis.Acknowledge(basis.Next())
		}
		s += l.Next(rng)
	}
	sinkInt = s
}

func BenchmarkAcknowledgedParallel(b *testing.B) {
	a := NewAcknowledged(0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Acknowledge(a.Next())
		}
	})
}

func BenchmarkAppendKeyHashed(b *testing.B) {
	buf := make([]byte, 0, 64)
	var k int64
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendKey(buf[:0], k, true, 1)
		k++
	}
}

func BenchmarkScrambledZipfianKey(b *testing.B) {
	// The whole per-operation key path: choose, then name.
	c := NewScrambledZipfian(0, 9_999_999)
	rng := newRand(1)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendKey(buf[:0], c.Next(rng), true, 1)
	}
}

// BenchmarkZetaBillion is ζ(10^9, 0.99) by the closed form, what a
// Latest chooser over a billion keys pays once at start-up (YCSB's sum
// of 10^9 terms took 19 s here).
func BenchmarkZetaBillion(b *testing.B) {
	var s float64
	for b.Loop() {
		s += zetaEM(1_000_000_000, ZipfianConstant)
	}
	sinkInt = int64(s)
}

// BenchmarkNewLatestBillion builds the first Latest chooser over 10^9
// acknowledged keys, each time on a new basis so nothing is shared.
func BenchmarkNewLatestBillion(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkInt += NewLatest(NewAcknowledged(1_000_000_000)).Next(newRand(1))
	}
}
