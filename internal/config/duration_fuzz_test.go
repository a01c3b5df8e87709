package config

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// resolveOne resolves the defaults with one property set.
func resolveOne(key, value string) (*Config, error) {
	p := NewProperties()
	p.Set(key, value, SourceP)
	return Resolve(p, false)
}

// A duration property either resolves to exactly what its text says or is
// refused as bad input in one line: never a value wrapped around int64
// (9223372037 seconds is not 0.29 s nor negative), never a panic.
func FuzzSecondsProperty(f *testing.F) {
	for _, s := range []string{"0", "10", "90s", "5m", "-1", "1.5", "9223372036", "9223372037", "18446744074",
		"-9223372037", "2562047h", "2562048h", "1e3", " 7 ", "+5", "0x10", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, key := range []string{"maxexecutiontime", "status.interval"} {
			c, err := resolveOne(key, v)
			if err != nil {
				if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s=%q: %v is not one line of bad input", key, v, err)
				}
				continue
			}
			got := c.MaxExecutionTime
			if key == "status.interval" {
				got = c.StatusInterval
			}
			if got < 0 {
				t.Fatalf("%s=%q resolved to a negative %v", key, v, got)
			}
			trimmed := strings.TrimSpace(v)
			if n, ok := new(big.Int).SetString(trimmed, 10); ok {
				want := new(big.Int).Mul(n, big.NewInt(int64(time.Second)))
				if !want.IsInt64() || want.Int64() != int64(got) {
					t.Fatalf("%s=%q resolved to %v, want %s seconds", key, v, got, trimmed)
				}
				continue
			}
			if d, err := time.ParseDuration(trimmed); err != nil || d != got {
				t.Fatalf("%s=%q resolved to %v; time.ParseDuration says %v, %v", key, v, got, d, err)
			}
		}
	})
}

// The retry waits are Go durations: what resolves is what the text says,
// positive, the first no longer than the longest.
func FuzzRetryBackoff(f *testing.F) {
	for _, s := range []string{"1ms", "0", "-1ms", "100ms", "1h", "2562047h", "1", "1.5s", "9223372036854775807ns", "1e3ms"} {
		f.Add(s, "100ms")
		f.Add("1ms", s)
	}
	f.Fuzz(func(t *testing.T, backoff, most string) {
		p := NewProperties()
		p.Set("retry.backoff", backoff, SourceP)
		p.Set("retry.maxbackoff", most, SourceP)
		c, err := Resolve(p, false)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("retry.backoff=%q retry.maxbackoff=%q: %v is not one line of bad input", backoff, most, err)
			}
			return
		}
		b, berr := time.ParseDuration(strings.TrimSpace(backoff))
		m, merr := time.ParseDuration(strings.TrimSpace(most))
		if berr != nil || merr != nil || b != c.RetryBackoff || m != c.RetryMaxBackoff {
			t.Fatalf("retry.backoff=%q retry.maxbackoff=%q resolved to %v, %v", backoff, most, c.RetryBackoff, c.RetryMaxBackoff)
		}
		if c.RetryBackoff <= 0 || c.RetryMaxBackoff < c.RetryBackoff {
			t.Fatalf("accepted backoff %v, max %v", c.RetryBackoff, c.RetryMaxBackoff)
		}
	})
}

// Whole-number properties never wrap either: a count resolves to the
// number written or is refused.
func FuzzCountProperty(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808", "1e3", "01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, err := resolveOne("threadcount", v)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("threadcount=%q: %v is not one line of bad input", v, err)
			}
			return
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if perr != nil || n != int64(c.Threads) {
			t.Fatalf("threadcount=%q resolved to %d", v, c.Threads)
		}
	})
}
