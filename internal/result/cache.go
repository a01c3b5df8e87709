package result

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// CacheFigures are what dbprobe storage cache measured: the database's
// own cache hit share, the share of its misses the OS page cache served,
// and the lookups' latency at each working-set size, and from them the
// size of the cache the database really gives. A chart of sizes against
// hit share and latency is drawn from Points.
type CacheFigures struct {
	// Points are the working sets measured, in order of size; Order says
	// in which order they were measured.
	Points []CachePoint `json:"points"`
	// Threshold is the hit share below which the cache no longer holds
	// the working set: 0.95.
	Threshold float64 `json:"threshold"`
	// Estimate is the size at which the hit share falls below Threshold,
	// as a bracket of two measured sizes.
	Estimate CacheEstimate `json:"estimate"`
	// Configured is the cache size the database reports (shared_buffers,
	// innodb_buffer_pool_size, …) in bytes, -1 when not known;
	// ConfiguredHow says where it came from, or why it is not known.
	Configured    int64  `json:"configured_bytes"`
	ConfiguredHow string `json:"configured_how"`
	// HostMemory is this machine's memory (MemTotal) when the database is
	// on it, -1 otherwise.
	HostMemory int64 `json:"host_memory_bytes"`
	// Counters names the database's counters behind the hit share;
	// PerTable says they are the table's own, not the server's.
	Counters string `json:"counters"`
	PerTable bool   `json:"per_table"`
	// OSCache says how the database reads its misses ("through the OS
	// page cache", "bypassing the OS page cache", "not known"), and
	// OSCacheHow how that is known.
	OSCache    string `json:"os_cache"`
	OSCacheHow string `json:"os_cache_how"`
	// Layers says where the reads past the database's cache came from:
	// the OS page cache or the device.
	Layers string `json:"layers"`
	// Settle is the rule a working set's hit share was read by.
	Settle string `json:"settle"`
}

// CachePoint is one working set's figures.
type CachePoint struct {
	// Bytes is the working set's size: its share of the table's size on
	// disk (rows and index); Rows the keys read at random among.
	Bytes int64 `json:"working_set_bytes"`
	Rows  int64 `json:"rows"`
	// Order is when it was measured (1 first); Stage is "doubling" or
	// "refinement".
	Order int    `json:"order"`
	Stage string `json:"stage"`
	// HitShare is the database's own cache hit share over the settled
	// windows, 0 to 1; -1 when nothing was counted. Requests and Misses
	// are the pages asked of the cache and those read in, over them.
	HitShare float64 `json:"hit_share"`
	Requests int64   `json:"requests"`
	Misses   int64   `json:"misses"`
	// Settled says the hit share settled (Windows are the shares of
	// every window read, the first, warming, one included) before
	// --settle-limit; Seconds is the time the working set was read at
	// random.
	Settled bool      `json:"settled"`
	Windows []float64 `json:"windows"`
	Seconds float64   `json:"seconds"`
	// Lookups is the lookups by key over the whole working set's reading,
	// and LookupsPerSec their rate.
	Lookups       int64   `json:"lookups"`
	LookupsPerSec float64 `json:"lookups_per_s"`
	// P50Micros and P99Micros are the lookups' latency over the settled
	// windows.
	P50Micros int64 `json:"p50_us"`
	P99Micros int64 `json:"p99_us"`
	// MissBytes is Misses at the page size; DeviceReadBytes what the
	// data's block device read meanwhile (every process's), -1 when not
	// seen; OSShare the share of MissBytes the device did not read, so
	// the OS page cache served, -1 when not known.
	MissBytes       int64   `json:"miss_bytes"`
	DeviceReadBytes int64   `json:"device_read_bytes"`
	OSShare         float64 `json:"os_share"`
}

// CacheEstimate is the working-set size at which the database's own hit
// share falls below the threshold.
type CacheEstimate struct {
	// Low is the largest size measured below the crossing, where the hit
	// share was at or above the threshold, and High the smallest above it;
	// LowShare and HighShare their shares. Low is 0 when the share was
	// already below at the smallest size, High 0 when it never fell.
	Low       int64   `json:"low_bytes"`
	High      int64   `json:"high_bytes"`
	LowShare  float64 `json:"low_share"`
	HighShare float64 `json:"high_share"`
	// Text says it: "cache ≈ 384–512 MB: 99% hits at 384 MB, 71% at
	// 512 MB".
	Text string `json:"text"`
}

// pct says a share in whole percent.
func pct(v float64) string {
	if v < 0 {
		return "–"
	}
	return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
}

// ShareText says a hit share in percent: to a tenth between 90% and
// 99.5%, where a whole percent would round 94.7% up to the 95% threshold
// it fell below; whole elsewhere; "–" when not known.
func ShareText(v float64) string {
	switch {
	case v < 0:
		return "–"
	case v >= 0.9 && v < 0.995:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	}
	return pct(v)
}

// writeCacheLines writes the cache experiment's figures in YCSB's shape:
//
//	[CACHE], EstimateLow(bytes), 384000000
//	[CACHE 512 MB], HitShare(%), 71.0
func writeCacheLines(bw *bufio.Writer, c *CacheFigures) {
	line := func(metric, measurement, value string) {
		bw.WriteString("[" + field(metric) + "], " + field(measurement) + ", " + value + "\n")
	}
	fixed := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	line("CACHE", "EstimateLow(bytes)", strconv.FormatInt(c.Estimate.Low, 10))
	if c.Estimate.High > 0 { // 0: the share never fell, there is no top
		line("CACHE", "EstimateHigh(bytes)", strconv.FormatInt(c.Estimate.High, 10))
	}
	if c.Configured >= 0 {
		line("CACHE", "Configured(bytes)", strconv.FormatInt(c.Configured, 10))
	}
	for _, p := range c.Points {
		label := "CACHE " + strings.ReplaceAll(BytesText(p.Bytes), " ", "")
		if p.HitShare >= 0 {
			line(label, "HitShare(%)", fixed(100*p.HitShare))
		}
		if p.OSShare >= 0 {
			line(label, "MissesFromOSCache(%)", fixed(100*p.OSShare))
		}
		line(label, "50thPercentileLatency(us)", strconv.FormatInt(p.P50Micros, 10))
		line(label, "99thPercentileLatency(us)", strconv.FormatInt(p.P99Micros, 10))
	}
}

// writeCacheNotes writes each working set's figures and the estimate as
// comments.
func writeCacheNotes(put func(string, ...any), c *CacheFigures) {
	for _, p := range c.Points {
		settled := fmt.Sprintf("settled over %d windows", len(p.Windows))
		if !p.Settled {
			settled = fmt.Sprintf("NOT settled within --settle-limit (%d windows)", len(p.Windows))
		}
		var ws []string
		for _, w := range p.Windows {
			ws = append(ws, pct(w))
		}
		os := ""
		switch {
		case p.OSShare >= 0:
			os = fmt.Sprintf(", misses %s of which the device read %s (%s from the OS page cache)", BytesText(p.MissBytes), BytesText(p.DeviceReadBytes), pct(p.OSShare))
		case p.DeviceReadBytes >= 0:
			os = fmt.Sprintf(", misses %s, the device read %s", BytesText(p.MissBytes), BytesText(p.DeviceReadBytes))
		case p.Misses > 0:
			os = ", misses " + BytesText(p.MissBytes)
		}
		put("working set %s (%s rows, %s): %s hits in the database's cache (%s of %s pages missed; windows %s, %s), %s lookups/s, p50 %d µs, p99 %d µs%s",
			BytesText(p.Bytes), Grouped(p.Rows), p.Stage, ShareText(p.HitShare), Grouped(p.Misses), Grouped(p.Requests), strings.Join(ws, " "), settled,
			strconv.FormatFloat(p.LookupsPerSec, 'f', 0, 64), p.P50Micros, p.P99Micros, os)
	}
	put("hit share from %s", c.Counters)
	put("settling: %s", c.Settle)
	put("estimate: %s", c.Estimate.Text)
	conf := "configured: not known (" + c.ConfiguredHow + ")"
	if c.Configured >= 0 {
		conf = fmt.Sprintf("configured: %s (%s)", BytesText(c.Configured), c.ConfiguredHow)
	}
	mem := "host memory: not known (the database is not on this machine)"
	if c.HostMemory >= 0 {
		mem = "host memory: " + BytesText(c.HostMemory) + " (MemTotal of this machine, which the database runs on)"
	}
	put("%s; %s", conf, mem)
	put("misses are read %s: %s", c.OSCache, c.OSCacheHow)
	if c.Layers != "" {
		put("layers: %s", c.Layers)
	}
}
