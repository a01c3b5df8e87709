package keygen

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// insertKeys hands out and acknowledges n more keys of a, in order.
func insertKeys(a *Acknowledged, n int) {
	for range n {
		a.Acknowledge(a.Next())
	}
}

// checkLatestDistribution draws from l and checks the draws against
// basis.Last() minus Gray's zipfian over Last()+1 keys.
func checkLatestDistribution(t *testing.T, l Chooser, basis *Acknowledged, rng *rand.Rand, draws int64) {
	t.Helper()
	last := basis.Last()
	n := last + 1
	back := make([]int64, n) // back[d]: draws of key last-d
	for range draws {
		v := l.Next(rng)
		if v > last || v < 0 {
			t.Fatalf("draw %d outside [0, Last() = %d]", v, last)
		}
		back[last-v]++
	}
	zn := zetaExact(n, ZipfianConstant)
	g := newGray(n, ZipfianConstant, zn)
	// The newest key and the one before it get exactly their zipfian shares.
	checkProportion(t, "newest key", back[0], draws, 1/zn)
	checkProportion(t, "second newest key", back[1], draws, math.Pow(2, -ZipfianConstant)/zn)
	// The newest 1% of keys draw about half of all reads at θ = 0.99 (over
	// 10^4 keys: 53%; a uniform chooser would give them 1%).
	newest := max(n/100, 1)
	var recent int64
	for _, c := range back[:newest] {
		recent += c
	}
	if p := g.cdf(newest); p < 0.3 {
		t.Fatalf("test set-up: expected share of the newest 1%% is only %.3f", p)
	}
	checkProportion(t, "newest 1% of keys", recent, draws, g.cdf(newest))
	// The whole shape, in 100 bins of equal probability-ish width: the
	// first 50 distances singly, then 50 equal-width groups.
	var obs []int64
	var exp []float64
	edges := []int64{0}
	for d := int64(1); d <= min(50, n); d++ {
		edges = append(edges, d)
	}
	if n > 50 {
		for j := int64(1); j <= 50; j++ {
			edges = append(edges, 50+(n-50)*j/50)
		}
	}
	for b := 0; b+1 < len(edges); b++ {
		var c int64
		for _, x := range back[edges[b]:edges[b+1]] {
			c += x
		}
		obs = append(obs, c)
		exp = append(exp, float64(draws)*g.prob(edges[b], edges[b+1]))
	}
	checkChiSquare(t, "distance from the newest key", obs, exp)
}

func TestLatestDistribution(t *testing.T) {
	tests := []struct {
		name  string
		start int64 // YCSB starts the insert sequence at recordcount
		keys  int   // inserted and acknowledged in the run phase
		draws int64
	}{
		{"10000 keys, all run-phase", 0, 10_000, 300_000},
		{"1000 loaded plus 500 inserted", 1_000, 500, 150_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			basis := NewAcknowledged(tc.start)
			insertKeys(basis, tc.keys)
			checkLatestDistribution(t, NewLatest(basis), basis, newRand(uint64(600+i)), tc.draws)
		})
	}
}

func TestLatestGrowsIncrementally(t *testing.T) {
	basis := NewAcknowledged(0)
	insertKeys(basis, 1_000)
	rng := newRand(610)
	l := NewLatest(basis)
	checkLatestDistribution(t, l, basis, rng, 150_000)

	insertKeys(basis, 4_000)
	checkLatestDistribution(t, l, basis, rng, 200_000)

	// ζ was extended term by term, which must equal a sum from scratch
	// exactly, and η follows the current count.
	p := l.(*latest).p
	if p.items != 5_000 {
		t.Fatalf("zipfian covers %d keys, want 5000", p.items)
	}
	if want := zetaRange(0, 5_000, ZipfianConstant, 0); p.zetan != want {
		t.Errorf("ζ = %v, from scratch %v", p.zetan, want)
	}
	if want := etaFor(5_000, ZipfianConstant, p.zetan, p.zeta2); p.eta != want {
		t.Errorf("η = %v, want %v", p.eta, want)
	}
}

func TestLatestMatchesYCSBDraw(t *testing.T) {
	// Given the same uniform variate, Next returns Last() minus the item
	// YCSB's zipfian draws over Last()+1 items (see NewLatest for why +1).
	basis := NewAcknowledged(0)
	insertKeys(basis, 777)
	g := newGray(777, ZipfianConstant, zetaExact(777, ZipfianConstant))
	l := NewLatest(basis)
	a, b := newRand(12), newRand(12)
	for range 20_000 {
		if got, want := l.Next(a), 776-g.draw(b.Float64()); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
}

func TestLatestFewKeys(t *testing.T) {
	basis := NewAcknowledged(0)
	l := NewLatest(basis)
	rng := newRand(13)
	if got := l.Next(rng); got != 0 {
		t.Errorf("before any insert Next = %d, want 0", got)
	}
	basis.Acknowledge(basis.Next())
	for range 100 {
		if got := l.Next(rng); got != 0 {
			t.Fatalf("with one key Next = %d, want 0", got)
		}
	}
	basis.Acknowledge(basis.Next())
	const draws = 100_000
	var newest int64
	for range draws {
		switch l.Next(rng) {
		case 1:
			newest++
		case 0:
		default:
			t.Fatal("with two keys Next left [0, 1]")
		}
	}
	checkProportion(t, "two keys: newest", newest, draws, 1/(1+math.Pow(2, -ZipfianConstant)))
}

func TestLatestConcurrentInserts(t *testing.T) {
	// Readers, each with its own Latest, draw while inserters add keys out
	// of order. No draw may exceed Last(), and every reader must end with
	// exactly the ζ a sum from scratch gives, whichever mix of its own and
	// shared extensions it went through.
	const readers, inserters, inserts = 4, 2, 3_000
	basis := NewAcknowledged(500)
	insertKeys(basis, 500) // start Latest at a count no earlier test cached
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range inserters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			var pending []int64
			for range inserts {
				pending = append(pending, basis.Next())
				if len(pending) == 3 {
					rng.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
					for _, k := range pending {
						basis.Acknowledge(k)
					}
					pending = pending[:0]
				}
			}
			for _, k := range pending {
				basis.Acknowledge(k)
			}
		})
	}
	ls := make([]*latest, readers)
	var rg sync.WaitGroup
	for r := range readers {
		ls[r] = NewLatest(basis).(*latest)
		rg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 3))
			for !stop.Load() {
				v := ls[r].Next(rng)
				if last := basis.Last(); v > last || v < 0 {
					t.Errorf("draw %d outside [0, Last() = %d]", v, last)
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	rg.Wait()

	final := basis.Last() + 1
	if final != 1_000+inserters*inserts {
		t.Fatalf("Last()+1 = %d, want %d", final, 1_000+inserters*inserts)
	}
	want := zetaRange(0, final, ZipfianConstant, 0)
	rng := newRand(14)
	for r, l := range ls {
		l.Next(rng) // catch up with the last inserts
		if l.p.items != final || l.p.zetan != want {
			t.Errorf("reader %d: %d keys, ζ %v; want %d keys, ζ %v", r, l.p.items, l.p.zetan, final, want)
		}
	}
	if c, z, _ := basis.latest.load(); z != zetaRange(0, c, ZipfianConstant, 0) {
		t.Errorf("shared ζ for %d keys is %v, from scratch %v", c, z, zetaRange(0, c, ZipfianConstant, 0))
	}
}
