package monitor

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestClientBusy(t *testing.T) {
	if _, err := processCPU(); err != nil {
		t.Skip(err)
	}
	var notes []string
	c := newClientSampler("", func(s string) { notes = append(notes, s) })
	start := time.Now()
	c.sample(start, nil)

	// Spin on two goroutines until the process has used 50 ms more CPU,
	// and let the collector run, so that every figure has something in it.
	cpu0, _ := processCPU()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sink [2]uint64
	for g := range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 10000 {
					sink[g] += uint64(i)
				}
				runtime.Gosched()
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cpu, _ := processCPU(); cpu-cpu0 >= 50*time.Millisecond {
			break
		}
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	close(stop)
	wg.Wait()

	got := map[string]float64{}
	c.sample(time.Now(), got)
	for _, n := range notes {
		t.Errorf("note: %s", n)
	}
	if g := got["client.goroutines"]; g < 1 || g > 1e6 {
		t.Errorf("client.goroutines = %v", g)
	}
	if p := got["client.gomaxprocs"]; p < 1 {
		t.Errorf("client.gomaxprocs = %v", p)
	}
	cpu, ok := got["client.cpu%"]
	if !ok || cpu <= 0 || cpu > 100*float64(runtime.NumCPU())*1.05 {
		t.Errorf("client.cpu%% = %v (present: %v) after a busy loop on %d CPUs", cpu, ok, runtime.NumCPU())
	}
	if p, ok := got["client.gc.pause_ms"]; !ok || p <= 0 || p > 10000 {
		t.Errorf("client.gc.pause_ms = %v (present: %v) after a GC", p, ok)
	}
	if l, ok := got["client.sched.latency_p99_ms"]; !ok || l < 0 || math.IsNaN(l) {
		t.Errorf("client.sched.latency_p99_ms = %v (present: %v)", l, ok)
	}
}

func TestHistogramQuantile(t *testing.T) {
	h := &metrics.Float64Histogram{
		Buckets: []float64{math.Inf(-1), 0, 1, 2, 4, math.Inf(1)},
		Counts:  []uint64{0, 50, 100, 10, 1},
	}
	prev := []uint64{0, 50, 10, 9, 0}
	// Since prev: 90 in [1,2), 1 in [2,4), 1 in [4,∞): 92 in all.
	tests := []struct {
		q    float64
		want float64
	}{
		{0.5, 2}, {0.97, 2}, {0.98, 4}, {0.99, 4}, {1, 4},
	}
	for _, tt := range tests {
		got, ok := histogramQuantile(prev, h, tt.q)
		if !ok || got != tt.want {
			t.Errorf("q%v = %v, %v; want %v", tt.q, got, ok, tt.want)
		}
	}
	if _, ok := histogramQuantile(h.Counts, h, 0.99); ok {
		t.Error("quantile of nothing")
	}
	// Midpoints: 90×1.5 + 1×3 + 1×4 (the open bucket counts at its bound).
	if s := histogramSum(prev, h); s != 142 {
		t.Errorf("sum = %v, want 142", s)
	}
}
