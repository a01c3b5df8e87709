package storage

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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
