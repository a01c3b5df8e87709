package storage

import (
	"fmt"
	"math"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/price"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Expectation is one promise of --expect: a rate ("scan=14GB/min"), or
// the cache experiment's size ("cache=2GB").
type Expectation struct {
	// Key is what it promises: scan, read, write, bulk or log (rates),
	// or cache (a size).
	Key string
	// Rate is the promise in bytes per second, or in bytes for cache;
	// Text as given.
	Rate float64
	Text string
}

// expectKeys are the keys --expect takes, named after the experiments
// (log is logcopy's rate, and the log rate of write and bulk; cache is
// the cache experiment's size, not a rate).
var expectKeys = []string{"scan", "read", "write", "bulk", "log", "cache"}

// rateUnits are the time units a promised rate may be per.
var rateUnits = map[string]float64{"s": 1, "sec": 1, "second": 1, "min": 60, "minute": 60, "h": 3600, "hour": 3600}

// ParseExpect reads --expect: KEY=RATE pairs separated by commas, each
// RATE a size per time unit (14GB/min, 48MB/s, 1TB/h), except cache,
// which promises a size (cache=2GB). A key given twice or unknown, or a
// rate without a unit, is bad input.
func ParseExpect(s string) ([]Expectation, error) {
	var out []Expectation
	seen := map[string]bool{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		key, val, ok := strings.Cut(pair, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || !knownKey(key) {
			return nil, badinput.New("--expect %q: give KEY=RATE pairs, KEY one of %s, e.g. --expect scan=14GB/min,log=48MB/s or --expect cache=2GB", s, strings.Join(expectKeys, ", "))
		}
		if seen[key] {
			return nil, badinput.New("--expect gives %s twice; give each rate once", key)
		}
		seen[key] = true
		if key == "cache" {
			b, ok := parseBytes(val)
			if !ok || b < 1 || b > 1<<60 || strings.Contains(val, "/") {
				return nil, badinput.New("--expect cache=%s: give the cache size promised, such as cache=2GB or cache=512MiB (decimal units: 1 GB = 10^9 bytes)", val)
			}
			out = append(out, Expectation{Key: key, Rate: b, Text: strings.TrimSpace(val)})
			continue
		}
		rate, err := parseRate(val)
		if err != nil {
			return nil, badinput.New("--expect %s=%s: %v", key, val, err)
		}
		out = append(out, Expectation{Key: key, Rate: rate, Text: strings.TrimSpace(val)})
	}
	return out, nil
}

func knownKey(k string) bool {
	for _, e := range expectKeys {
		if e == k {
			return true
		}
	}
	return false
}

// parseRate reads SIZE/UNIT into bytes per second.
func parseRate(s string) (float64, error) {
	size, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	secs, known := rateUnits[strings.ToLower(strings.TrimSpace(per))]
	if !ok || !known {
		return 0, fmt.Errorf("give a size per time unit, such as 14GB/min, 48MB/s or 1TB/h")
	}
	// Less than a byte is no size, as for --size and cache=: a tiny
	// one (5e-324B/h) would divide to a promise of 0 bytes per second,
	// which every measurement falls short of by 100%.
	b, ok := parseBytes(size)
	if !ok || b < 1 {
		return 0, fmt.Errorf("%q is not a size: give one such as 14GB or 48MB (decimal units)", size)
	}
	return b / secs, nil
}

// check holds a measured rate against the promise: held when it reaches
// it, else below it by the shortfall.
func (e Expectation) check(measured float64) result.ExpectCheck {
	c := result.ExpectCheck{Key: e.Key, Promised: e.Rate, PromisedText: e.Text, Measured: measured}
	if e.Rate > 0 {
		c.Ratio = measured / e.Rate
	}
	c.Held = c.Ratio >= 1
	if c.Held {
		c.Verdict = "held"
	} else {
		c.Verdict = fmt.Sprintf("below promise by %.0f%%", math.Round(100*(1-c.Ratio)))
	}
	return c
}

// notMeasured is the check of a promise whose rate was not measured:
// no ratio, and why.
func (e Expectation) notMeasured(why string) result.ExpectCheck {
	return result.ExpectCheck{Key: e.Key, Promised: e.Rate, PromisedText: e.Text, NotMeasured: why, Verdict: "not measured: " + why}
}

// ParsePrice reads --price AMOUNT/hour or AMOUNT/month (a currency sign
// before the amount is dropped), in the grammar of package price.
func ParsePrice(s string) (*price.Rate, error) {
	r, err := price.ParseRate(s)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// runCost is what the run cost at price p (nil: no price): its wall time
// at the price, and per GB moved.
func runCost(p *price.Rate, wallSeconds float64, bytes int64) *result.RunCost {
	if p == nil {
		return nil
	}
	c := &result.RunCost{PerHour: p.PerHour, Given: p.Given, Run: p.PerHour * wallSeconds / 3600}
	if bytes > 0 {
		c.PerGB = c.Run / (float64(bytes) / 1e9)
	}
	return c
}
