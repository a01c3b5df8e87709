package keygen

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

func TestCounter(t *testing.T) {
	c := NewCounter(10)
	if got := c.Last(); got != 9 {
		t.Errorf("Last before any Next = %d, want 9", got)
	}
	for want := int64(10); want < 15; want++ {
		if got := c.Next(); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
		if got := c.Last(); got != want {
			t.Fatalf("Last = %d, want %d", got, want)
		}
	}
}

func TestCounterConcurrent(t *testing.T) {
	const workers, each, start = 8, 5_000, 1_000
	c := NewCounter(start)
	seen := make([]atomic.Int32, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				seen[c.Next()-start].Add(1)
			}
		})
	}
	wg.Wait()
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("number %d handed out %d times", start+i, n)
		}
	}
	if got, want := c.Last(), int64(start+workers*each-1); got != want {
		t.Errorf("Last = %d, want %d", got, want)
	}
}

func TestAcknowledgedOutOfOrder(t *testing.T) {
	// Each step acknowledges one number (of 10 … 19, all handed out first)
	// and states the Last that must follow: it only moves over a contiguous
	// run from the start.
	steps := []struct {
		ack      int64
		wantLast int64
	}{
		{12, 9},
		{11, 9},
		{10, 12},
		{15, 12},
		{14, 12},
		{13, 15},
		{19, 15},
		{16, 16},
		{17, 17},
		{18, 19},
	}
	a := NewAcknowledged(10)
	if got := a.Last(); got != 9 {
		t.Fatalf("Last before any acknowledgement = %d, want 9 (start-1)", got)
	}
	for want := int64(10); want < 20; want++ {
		if got := a.Next(); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
	for _, s := range steps {
		a.Acknowledge(s.ack)
		if got := a.Last(); got != s.wantLast {
			t.Fatalf("after Acknowledge(%d): Last = %d, want %d", s.ack, got, s.wantLast)
		}
	}
}

func TestAcknowledgedWindowGrows(t *testing.T) {
	// Far more pending acknowledgements than the initial window holds (YCSB
	// would throw at 2^20): everything but the first, newest first.
	const n = 4 * initialAckWindow
	a := NewAcknowledged(0)
	for range n {
		a.Next()
	}
	for k := int64(n - 1); k >= 1; k-- {
		a.Acknowledge(k)
		if k%1000 == 0 && a.Last() != -1 {
			t.Fatalf("Last = %d before 0 was acknowledged", a.Last())
		}
	}
	a.Acknowledge(0)
	if got := a.Last(); got != n-1 {
		t.Fatalf("Last = %d, want %d", got, n-1)
	}
	// The window keeps working after growing: wrap round it a few times.
	for range 3 * n {
		k := a.Next()
		a.Acknowledge(k)
		if a.Last() != k {
			t.Fatalf("in-order Acknowledge(%d) left Last at %d", k, a.Last())
		}
	}
}

func TestAcknowledgePanics(t *testing.T) {
	tests := []struct {
		name string
		f    func(a *Acknowledged)
	}{
		{"never handed out", func(a *Acknowledged) { a.Acknowledge(a.Next() + 1) }},
		{"before start", func(a *Acknowledged) { a.Next(); a.Acknowledge(99) }},
		{"twice in order", func(a *Acknowledged) { k := a.Next(); a.Acknowledge(k); a.Acknowledge(k) }},
		{"twice out of order", func(a *Acknowledged) { a.Next(); k := a.Next(); a.Acknowledge(k); a.Acknowledge(k) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("did not panic")
				}
			}()
			tc.f(NewAcknowledged(100))
		})
	}
}

func TestAcknowledgedConcurrent(t *testing.T) {
	// Workers insert with several inserts in flight each, finishing them in
	// random order, while an observer checks that Last never goes back and
	// never passes a number that has not been acknowledged.
	const workers, each, inflight, start = 8, 4_000, 5, 50
	a := NewAcknowledged(start)
	acked := make([]atomic.Bool, workers*each)
	var wg sync.WaitGroup
	done := make(chan struct{})
	stop := make(chan struct{}) // the workers have finished
	var observerErr atomic.Value
	go func() {
		defer close(done)
		prev := a.Last()
		for {
			stopping := false
			select {
			case <-stop:
				stopping = true
			default:
			}
			last := a.Last()
			if last < prev {
				observerErr.Store("Last went back")
				return
			}
			for k := prev + 1; k <= last; k++ {
				if !acked[k-start].Load() {
					observerErr.Store("Last passed " + itoa(k) + " before it was acknowledged")
					return
				}
			}
			prev = last
			if stopping || last == start+workers*each-1 {
				return
			}
		}
	}()
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var pending []int64
			for i := 0; i < each; {
				if len(pending) < inflight && i < each {
					pending = append(pending, a.Next())
					i++
					continue
				}
				j := rng.IntN(len(pending))
				k := pending[j]
				pending[j] = pending[len(pending)-1]
				pending = pending[:len(pending)-1]
				acked[k-start].Store(true)
				a.Acknowledge(k)
			}
			for _, k := range pending {
				acked[k-start].Store(true)
				a.Acknowledge(k)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-done
	if msg := observerErr.Load(); msg != nil {
		t.Fatal(msg)
	}
	if got, want := a.Last(), int64(start+workers*each-1); got != want {
		t.Errorf("Last = %d, want %d", got, want)
	}
}
