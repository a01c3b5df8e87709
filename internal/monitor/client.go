package monitor

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"time"
)

// The runtime's own figures, read in one metrics.Read. These are what tell
// a client limit from a database limit: a client whose goroutines wait for
// a thread, or stop for GC, adds that time to every latency it measures.
const (
	metricGoroutines   = "/sched/goroutines:goroutines"
	metricGOMAXPROCS   = "/sched/gomaxprocs:threads"
	metricSchedLatency = "/sched/latencies:seconds"
	metricGCPauses     = "/sched/pauses/total/gc:seconds"
)

// clientSampler reads this process's CPU time and runtime figures.
type clientSampler struct {
	root  string // "/" but in tests, for the cgroup files
	note  func(string)
	noted map[string]bool

	samples []metrics.Sample
	// prevCounts holds the histograms' cumulative counts at the previous
	// reading, by index into samples.
	prevCounts [][]uint64

	prevTime time.Time
	prevCPU  time.Duration
	cpuOK    bool

	// The cgroup quota's cpu.stat at the previous reading.
	prevStat     string
	prevThrottle throttling
}

func newClientSampler(root string, note func(string)) *clientSampler {
	if root == "" {
		root = "/"
	}
	c := &clientSampler{root: root, note: note, noted: map[string]bool{}}
	for _, name := range []string{metricGoroutines, metricGOMAXPROCS, metricSchedLatency, metricGCPauses} {
		c.samples = append(c.samples, metrics.Sample{Name: name})
	}
	c.prevCounts = make([][]uint64, len(c.samples))
	return c
}

// sample reads the figures and, when metrics is not nil, adds them with
// the ones computed since the previous reading.
func (c *clientSampler) sample(now time.Time, out map[string]float64) {
	cpu, err := processCPU()
	if err != nil {
		c.fail("cpu", fmt.Errorf("client: CPU time not sampled: %w", err))
	} else {
		if secs := now.Sub(c.prevTime).Seconds(); out != nil && c.cpuOK && secs > 0 && cpu >= c.prevCPU {
			out["client.cpu%"] = 100 * (cpu - c.prevCPU).Seconds() / secs
		}
		c.prevCPU, c.cpuOK = cpu, true
	}
	c.prevTime = now
	c.sampleCores(out)

	metrics.Read(c.samples)
	for i := range c.samples {
		s := &c.samples[i]
		switch s.Value.Kind() {
		case metrics.KindUint64:
			if out == nil {
				continue
			}
			switch s.Name {
			case metricGoroutines:
				out["client.goroutines"] = float64(s.Value.Uint64())
			case metricGOMAXPROCS:
				out["client.gomaxprocs"] = float64(s.Value.Uint64())
			}
		case metrics.KindFloat64Histogram:
			h := s.Value.Float64Histogram()
			prev := c.prevCounts[i]
			if out != nil && len(prev) == len(h.Counts) {
				switch s.Name {
				case metricSchedLatency:
					if p99, ok := histogramQuantile(prev, h, 0.99); ok {
						out["client.sched.latency_p99_ms"] = p99 * 1000
					}
				case metricGCPauses:
					out["client.gc.pause_ms"] = histogramSum(prev, h) * 1000
				}
			}
			c.prevCounts[i] = append(prev[:0], h.Counts...)
		default:
			c.fail(s.Name, fmt.Errorf("client: runtime metric %s is not available in %s", s.Name, runtime.Version()))
		}
	}
}

// sampleCores adds the cores the client may use and, under a cgroup CPU
// quota, the share of scheduling periods in which the quota stopped it:
// the kernel's own count of a client held back, whatever its CPU figure.
func (c *clientSampler) sampleCores(out map[string]float64) {
	cores, q, limited := clientCores(c.root)
	if out != nil {
		out["client.cores"] = cores
	}
	if !limited {
		c.prevStat = ""
		return
	}
	t, ok := readThrottling(q.stat)
	if !ok {
		c.prevStat = ""
		return
	}
	if out != nil && c.prevStat == q.stat && t.periods > c.prevThrottle.periods && t.throttled >= c.prevThrottle.throttled {
		out["client.cpu.throttled%"] = 100 * float64(t.throttled-c.prevThrottle.throttled) / float64(t.periods-c.prevThrottle.periods)
	}
	c.prevStat, c.prevThrottle = q.stat, t
}

func (c *clientSampler) fail(key string, err error) {
	if c.noted[key] {
		return
	}
	c.noted[key] = true
	c.note(err.Error())
}

// histogramQuantile returns the q-quantile of the values recorded since
// prev, as the upper bound of the bucket it falls in: the runtime keeps
// only a few buckets per power of two, and a lag figure should not be
// understated. ok is false when nothing was recorded.
func histogramQuantile(prev []uint64, h *metrics.Float64Histogram, q float64) (float64, bool) {
	var total uint64
	for i, n := range h.Counts {
		total += n - prev[i]
	}
	if total == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, n := range h.Counts {
		seen += n - prev[i]
		if seen >= rank {
			return bucketBound(h, i), true
		}
	}
	return bucketBound(h, len(h.Counts)-1), true
}

// bucketBound is bucket i's upper bound, or its lower one for the last,
// unbounded bucket.
func bucketBound(h *metrics.Float64Histogram, i int) float64 {
	if hi := h.Buckets[i+1]; !math.IsInf(hi, 1) {
		return hi
	}
	return h.Buckets[i]
}

// histogramSum estimates the sum of the values recorded since prev from
// the buckets' midpoints; the runtime keeps no exact sum of GC pauses
// other than in runtime.MemStats, whose reading stops the world.
func histogramSum(prev []uint64, h *metrics.Float64Histogram) float64 {
	var sum float64
	for i, n := range h.Counts {
		d := n - prev[i]
		if d == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		switch {
		case math.IsInf(lo, -1):
			lo = math.Min(hi, 0)
		case math.IsInf(hi, 1):
			hi = lo
		}
		sum += float64(d) * (lo + hi) / 2
	}
	return sum
}
