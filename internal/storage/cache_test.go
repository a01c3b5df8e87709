package storage

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// cacheRun runs dbprobe storage cache on url with --max-size max.
func cacheRun(t *testing.T, url string, max int64) (outcome, *result.StorageSummary) {
	t.Helper()
	c := &Config{
		// Half-second windows: the rule is the same, the suite faster.
		Kind: Cache, MaxSize: max, SettleLimit: 20 * time.Second, Window: 500 * time.Millisecond,
		Target:       experiment.TargetConfig{DB: url},
		Outputs:      experiment.OutputConfig{Out: filepath.Join(t.TempDir(), "r.jsonl")},
		Monitor:      experiment.MonitorConfig{Interval: time.Second, WaitSamples: 2},
		DrainTimeout: 5 * time.Second,
	}
	start := time.Now()
	o, st := mustRun(t, c)
	t.Logf("%s in %s:\n%s", url[:8], time.Since(start).Round(time.Second), o.text)
	if st.Cache == nil {
		t.Fatalf("no cache figures in the summary:\n%s", o.text)
	}
	return o, st
}

// throwaway starts a server of kind with settings, closed at the test's
// end.
func throwaway(t *testing.T, kind instance.Kind, settings map[string]string) *instance.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, kind, instance.Options{Settings: settings})
	if err != nil {
		testdb.Unavailable(t, kind.String()+" did not start: "+err.Error())
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The estimate brackets the configured cache within one doubling, and
// moves when the setting does: PostgreSQL at shared_buffers 32 MB and
// 128 MB, MariaDB at innodb_buffer_pool_size 32 MB and 128 MB, each read
// up to twice the setting.
func TestCacheEstimateFollowsTheSetting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	cases := []struct {
		name string
		kind instance.Kind
		key  string
		// extra settings: MariaDB is told not to reload its buffer pool.
		extra map[string]string
	}{
		{"postgres", instance.Postgres, "shared_buffers", nil},
		{"mariadb", instance.MariaDB, "innodb_buffer_pool_size", map[string]string{"innodb_buffer_pool_load_at_startup": "OFF", "innodb_buffer_pool_dump_at_shutdown": "OFF"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var prev *result.CacheEstimate
			for _, mb := range []int64{32, 128} {
				settings := map[string]string{tc.key: map[instance.Kind]string{instance.Postgres: "MB", instance.MariaDB: "M"}[tc.kind]}
				settings[tc.key] = strconv.FormatInt(mb, 10) + settings[tc.key]
				for k, v := range tc.extra {
					settings[k] = v
				}
				srv := throwaway(t, tc.kind, settings)
				setting := mb << 20
				_, st := cacheRun(t, srv.URL(), 2*setting)
				f := st.Cache
				e := f.Estimate
				if f.Configured != setting {
					t.Errorf("%s %d MB: configured %d bytes (%s), want %d", tc.key, mb, f.Configured, f.ConfiguredHow, setting)
				}
				if e.Low <= 0 || e.High <= 0 || e.Low < setting/2 || e.High > 2*setting {
					t.Errorf("%s %d MB: estimate %+v does not bracket %d bytes within one doubling", tc.key, mb, e, setting)
				}
				if prev != nil && e.Low < prev.High {
					t.Errorf("%s %d MB: estimate %s did not move above the smaller setting's %s", tc.key, mb, e.Text, prev.Text)
				}
				prev = &e
				srv.Close()
			}
		})
	}
}

// The doubling starts at --max-size halved down to 8 MB or just above,
// and ends at --max-size itself.
func TestWorkingSets(t *testing.T) {
	for _, c := range []struct {
		max  int64
		want []int64
	}{
		{256_000_000, []int64{8_000_000, 16_000_000, 32_000_000, 64_000_000, 128_000_000, 256_000_000}},
		{4_000_000_000, []int64{15_625_000, 31_250_000, 62_500_000, 125_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_000_000_000, 4_000_000_000}},
		{16_000_000, []int64{8_000_000, 16_000_000}},
	} {
		if got := workingSets(c.max); !slices.Equal(got, c.want) {
			t.Errorf("workingSets(%d) = %v, want %v", c.max, got, c.want)
		}
	}
}

// --max-size's default: twice the cache, between 256 MB and 4 GB; 4 GB
// when the cache is not known; a given one as given.
func TestCacheMax(t *testing.T) {
	for _, c := range []struct {
		given, cache int64
		known        bool
		want         int64
	}{
		{0, 128 << 20, true, 268_435_456},
		{0, 16 << 20, true, 256_000_000},
		{0, 8 << 30, true, 4_000_000_000},
		{0, 0, false, 4_000_000_000},
		{1_000_000_000, 8 << 30, true, 1_000_000_000},
	} {
		got, note := cacheMax(c.given, c.cache, c.known)
		if got != c.want || (c.given == 0) != (note != "") {
			t.Errorf("cacheMax(%d, %d, %v) = %d, %q; want %d", c.given, c.cache, c.known, got, note, c.want)
		}
	}
}

// win is a window of n pages with the share hit.
func win(n int64, hit float64) cacheWindowed {
	return cacheWindowed{requests: n, misses: int64(math.Round(float64(n) * (1 - hit))), device: -1}
}

// A share settles over three windows after the first that agree within a
// point, or within the noise of a binomial share when that is wider; a
// share still rising does not.
func TestSettledRun(t *testing.T) {
	for _, c := range []struct {
		name string
		ws   []cacheWindowed
		ok   bool
	}{
		{"too few", []cacheWindowed{win(1e4, 0.5), win(1e4, 0.99), win(1e4, 0.99)}, false},
		{"flat after a warm first", []cacheWindowed{win(1e4, 0.5), win(1e4, 0.99), win(1e4, 0.99), win(1e4, 0.993)}, true},
		{"rising", []cacheWindowed{win(1e4, 0.8), win(1e4, 0.88), win(1e4, 0.91), win(1e4, 0.94)}, false},
		{"a 2-point step", []cacheWindowed{win(1e4, 0.9), win(1e4, 0.90), win(1e4, 0.90), win(1e4, 0.93)}, false},
		// PostgreSQL's, filling near its end: within a point of the mean,
		// still rising.
		{"a slow rise", []cacheWindowed{win(1e5, 0.94), win(1e5, 0.984), win(1e5, 0.988), win(1e5, 0.992)}, false},
		// 3σ of a 50% share of 5,000 pages is 2.1 points.
		{"noisy at 50%", []cacheWindowed{win(5000, 0.4), win(5000, 0.49), win(5000, 0.51), win(5000, 0.50)}, true},
	} {
		if _, ok := settledRun(c.ws); ok != c.ok {
			t.Errorf("%s: settled %v, want %v", c.name, ok, c.ok)
		}
	}
}

// point is a measured working set of the share hit.
func point(bytes int64, hit float64) result.CachePoint {
	return result.CachePoint{Bytes: bytes, HitShare: hit}
}

// The estimate is the first crossing below 95%, in order of size
// whatever the order measured, said as a bracket; a share that never
// falls, or falls at once, says so.
func TestEstimate(t *testing.T) {
	mb := int64(1e6)
	e := estimate([]result.CachePoint{point(256*mb, 1), point(512*mb, 0.71), point(384*mb, 0.99), point(128*mb, 1), point(1024*mb, 0.4)})
	if e.Low != 384*mb || e.High != 512*mb || e.Text != "cache ≈ 384.0–512.0 MB: 99.0% hits at 384.0 MB, 71% at 512.0 MB" {
		t.Errorf("%+v", e)
	}
	if e := estimate([]result.CachePoint{point(8*mb, 0.6), point(16*mb, 0.3)}); e.Low != 0 || e.High != 8*mb || !strings.HasPrefix(e.Text, "cache < 8.0 MB") {
		t.Errorf("falls at once: %+v", e)
	}
	if e := estimate([]result.CachePoint{point(8*mb, 1), point(16*mb, 0.97)}); e.Low != 16*mb || e.High != 0 || !strings.HasPrefix(e.Text, "cache ≥ 16.0 MB") {
		t.Errorf("never falls: %+v", e)
	}
	if e := estimate([]result.CachePoint{{Bytes: 8 * mb, HitShare: -1}}); e.Low != 0 || e.High != 0 {
		t.Errorf("nothing counted: %+v", e)
	}
	if got := bracketLow(900*mb, 1200*mb); got != "900.0 MB" {
		t.Errorf("bracketLow across units: %q", got)
	}
}

// --expect cache=SIZE is held when the promise is at most the bracket's
// top, and otherwise says how far the cache falls short.
func TestCacheExpect(t *testing.T) {
	mb := int64(1e6)
	est := result.CacheEstimate{Low: 384 * mb, High: 512 * mb, LowShare: 0.99, HighShare: 0.71}
	for _, c := range []struct {
		promise float64
		held    bool
		verdict string
	}{
		{256e6, true, "held: 99.0% hits at 384.0 MB"},
		{450e6, true, "held within the bracket"},
		{2e9, false, "below the promise: only 71% hits at 512.0 MB"},
	} {
		got := cacheExpect(Expectation{Key: "cache", Rate: c.promise, Text: "x"}, est)
		if got.Held != c.held || !strings.HasPrefix(got.Verdict, c.verdict) {
			t.Errorf("promise %.0f: %+v", c.promise, got)
		}
	}
	open := result.CacheEstimate{Low: 256 * mb, LowShare: 1}
	if got := cacheExpect(Expectation{Key: "cache", Rate: 1e9, Text: "1GB"}, open); got.Held || !strings.HasPrefix(got.Verdict, "not judged") || got.NotMeasured == "" {
		t.Errorf("a promise past --max-size: %+v", got)
	}
	if got := cacheExpect(Expectation{Key: "cache", Rate: 1e9, Text: "1GB"}, result.CacheEstimate{}); got.NotMeasured == "" {
		t.Errorf("nothing measured: %+v", got)
	}
}

// --expect cache takes a size, not a rate; cache's flags are refused
// elsewhere, and the others' by cache.
func TestCacheInput(t *testing.T) {
	got, err := ParseExpect("cache=2GB")
	if err != nil || len(got) != 1 || got[0].Rate != 2e9 || got[0].Text != "2GB" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, in := range []string{"cache=2GB/s", "cache=x", "cache=0", "cache="} {
		if _, err := ParseExpect(in); !badinput.Is(err) {
			t.Errorf("ParseExpect(%q): %v, want bad input", in, err)
		}
	}
	for _, c := range []Config{
		{Kind: Cache, Size: 100_000_000},
		{Kind: Cache, MaxSize: 1_000_000},
		{Kind: Cache, Threads: []int{1, 2}},
		{Kind: Cache, Expect: []Expectation{{Key: "scan"}}},
		{Kind: Scan, MaxSize: 100_000_000},
		{Kind: Scan, Expect: []Expectation{{Key: "cache"}}},
	} {
		c.Monitor.Off = true
		if err := c.Validate(); !badinput.Is(err) {
			t.Errorf("%+v: %v, want bad input", c, err)
		}
	}
}

// A database without the counters (the null driver, SQLite, Redis), and a
// --max-size above the data's free space, are one line of bad input, and
// nothing is made.
func TestCacheRefusals(t *testing.T) {
	c := func(url string) *Config {
		return &Config{Kind: Cache, Target: experiment.TargetConfig{DB: url},
			Outputs: experiment.OutputConfig{Out: filepath.Join(t.TempDir(), "r.jsonl")}, Monitor: experiment.MonitorConfig{Off: true}}
	}
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		want string
	}{
		{"null", func(*testing.T) string { return "null" }, "dbprobe storage cache: the null driver has no cache hit counters"},
		{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "st.db")) }, "dbprobe storage cache: SQLite has no cache hit counters"},
		{"redis", func(t *testing.T) string { return testdb.RedisURL(t) }, "dbprobe storage cache: Redis has no cache hit counters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runC(t, c(tc.url(t)))
			if !badinput.Is(err) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line of bad input starting %q", err, tc.want)
			}
		})
	}
	t.Run("no room", func(t *testing.T) {
		url := testdb.FreshPostgresDatabase(t)
		cc := c(url)
		cc.MaxSize = 1 << 58
		_, err := runC(t, cc)
		if !badinput.Is(err) || !strings.Contains(err.Error(), "free; give a smaller --max-size") {
			t.Fatalf("a --max-size above the free space: %v", err)
		}
		if exists(t, openDB(t, url), "dbprobe_storage_cache") {
			t.Error("a table was made")
		}
	})
}

// Ctrl-C during a cache run keeps the working sets measured so far in
// the summary, and drops the table.
func TestCacheInterruptKeepsThePoints(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	c := &Config{Kind: Cache, MaxSize: 64_000_000, Window: 500 * time.Millisecond,
		Target:       experiment.TargetConfig{DB: url},
		Outputs:      experiment.OutputConfig{Out: filepath.Join(t.TempDir(), "r.jsonl")},
		Monitor:      experiment.MonitorConfig{Interval: time.Second, WaitSamples: 2},
		DrainTimeout: 5 * time.Second}
	var out, errb testdb.LockedBuffer
	c.Stdout, c.Stderr = &out, &errb
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(errb.String(), "hits in the database's cache") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop within 30 s of the interrupt")
	}
	// The first working set read is the largest, --max-size.
	if !strings.Contains(out.String(), "[CACHE 64.0MB], HitShare(%)") || !strings.Contains(out.String(), "# verdict: ") {
		t.Errorf("no figures of the first working set after the interrupt:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if exists(t, openDB(t, url), "dbprobe_storage_cache") {
		t.Error("the table outlived the interrupt")
	}
}

// The configured size is placed against the bracket in words that say
// which way it lies and, below it, why the bracket sits above a
// setting: never "less than the bottom: fits in more than the setting".
func TestConfiguredAgainstTheBracket(t *testing.T) {
	e := result.CacheEstimate{Low: 150_000_000, High: 187_500_000}
	for _, tc := range []struct {
		configured int64
		want       string
	}{
		{134_217_728, ", below the bracket, whose bottom is 1.12× the setting: the hit share counts every page a lookup asks for"},
		{160_000_000, ", within the bracket"},
		{400_000_000, ", 2.1× the bracket's top: the database keeps less of the table in memory than it is given"},
	} {
		if got := againstBracket(e, tc.configured); !strings.HasPrefix(got, tc.want) {
			t.Errorf("configured %d: %q, want %q…", tc.configured, got, tc.want)
		}
	}
}
