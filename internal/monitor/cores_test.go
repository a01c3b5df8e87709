package monitor

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// writeFiles lays out a fake root of /proc and /sys files.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCgroupCPULimit(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  float64
		ok    bool
	}{
		{"v1 quota of half a core", map[string]string{
			"proc/self/cgroup": "4:memory:/x\n2:cpuacct:/\n1:cpu:/bench/run\n0::/\n",
			"sys/fs/cgroup/cpu/bench/run/cpu.cfs_quota_us":  "50000\n",
			"sys/fs/cgroup/cpu/bench/run/cpu.cfs_period_us": "100000\n",
		}, 0.5, true},
		{"v1 unlimited child of a limited parent", map[string]string{
			"proc/self/cgroup": "3:cpu,cpuacct:/bench/run\n",
			"sys/fs/cgroup/cpu,cpuacct/bench/run/cpu.cfs_quota_us":  "-1\n",
			"sys/fs/cgroup/cpu,cpuacct/bench/run/cpu.cfs_period_us": "100000\n",
			"sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_quota_us":      "150000\n",
			"sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_period_us":     "100000\n",
		}, 1.5, true},
		{"v1 no quota", map[string]string{
			"proc/self/cgroup":                    "1:cpu:/\n",
			"sys/fs/cgroup/cpu/cpu.cfs_quota_us":  "-1\n",
			"sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
		}, 0, false},
		{"v2 cpu.max", map[string]string{
			"proc/self/cgroup":                       "0::/user.slice/bench\n",
			"sys/fs/cgroup/user.slice/bench/cpu.max": "25000 100000\n",
			"sys/fs/cgroup/user.slice/cpu.max":       "max 100000\n",
		}, 0.25, true},
		{"v2 max", map[string]string{
			"proc/self/cgroup":      "0::/\n",
			"sys/fs/cgroup/cpu.max": "max 100000\n",
		}, 0, false},
		{"no cgroup file", map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cgroupCPULimit(writeFiles(t, tt.files))
			if got.cores != tt.want || ok != tt.ok {
				t.Errorf("cgroupCPULimit = %g, %v; want %g, %v", got.cores, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestClientCoresTakesTheFewest(t *testing.T) {
	unlimited := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	if got, _, limited := clientCores(t.TempDir()); got != float64(unlimited) || limited {
		t.Errorf("without a quota: %g cores, want %d", got, unlimited)
	}
	root := writeFiles(t, map[string]string{
		"proc/self/cgroup":                      "1:cpu:/q\n",
		"sys/fs/cgroup/cpu/q/cpu.cfs_quota_us":  "30000\n",
		"sys/fs/cgroup/cpu/q/cpu.cfs_period_us": "100000\n",
	})
	if got, _, limited := clientCores(root); got != 0.3 || !limited {
		t.Errorf("under a 0.3-core quota: %g cores", got)
	}
}

// Under a quota the sampler reports the share of periods the quota
// stopped the client in, from the cgroup's own counters.
func TestThrottledShare(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"proc/self/cgroup":             "0::/bench\n",
		"sys/fs/cgroup/bench/cpu.max":  "50000 100000\n",
		"sys/fs/cgroup/bench/cpu.stat": "usage_usec 1\nnr_periods 100\nnr_throttled 10\nthrottled_usec 5\n",
	})
	c := newClientSampler(root, func(string) {})
	c.sampleCores(nil)
	stat := filepath.Join(root, "sys/fs/cgroup/bench/cpu.stat")
	os.WriteFile(stat, []byte("nr_periods 150\nnr_throttled 50\n"), 0o644)
	out := map[string]float64{}
	c.sampleCores(out)
	if out["client.cores"] != 0.5 || out["client.cpu.throttled%"] != 80 {
		t.Errorf("cores %g, throttled %g%%; want 0.5 and 80%% (40 of 50 periods)", out["client.cores"], out["client.cpu.throttled%"])
	}
}
