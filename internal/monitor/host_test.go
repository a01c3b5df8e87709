package monitor

import (
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// checkMetrics compares got with want exactly in keys and to 1e-9 in value.
func checkMetrics(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s missing, want %v", name, w)
			continue
		}
		if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
	var extra []string
	for name := range got {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("unexpected metrics: %s", strings.Join(extra, ", "))
	}
}

// TestHostFixtures reads two generations of /proc files two seconds apart;
// the expected figures are worked out by hand from the files.
func TestHostFixtures(t *testing.T) {
	var notes []string
	h := newHostSampler("testdata/t0", func(s string) { notes = append(notes, s) })
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	h.sample(t0, nil)
	h.root = "testdata/t1"
	got := map[string]float64{}
	h.sample(t0.Add(2*time.Second), got)
	if len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	checkMetrics(t, got, map[string]float64{
		// Ticks: user 300+nice 100, system 200+irq 20+softirq 30, idle 600,
		// iowait 200, steal 50; 1500 in all.
		"host.cpu.user%":   100 * 400.0 / 1500,
		"host.cpu.system%": 100 * 250.0 / 1500,
		"host.cpu.idle%":   40,
		"host.cpu.iowait%": 100 * 200.0 / 1500,
		"host.cpu.steal%":  100 * 50.0 / 1500,
		// nvme0n1: +100 reads, +800 sectors, +200 writes, +4000 sectors,
		// +500 ms busy, +1000 ms weighted. Its partition, the loop, ram
		// and zram devices are left out; sda's counters went down; sdb
		// never had IO; sdc appears only in the second reading.
		"host.disk.nvme0n1.read_bytes/s":  800 * 512 / 2,
		"host.disk.nvme0n1.write_bytes/s": 4000 * 512 / 2,
		"host.disk.nvme0n1.reads/s":       50,
		"host.disk.nvme0n1.writes/s":      100,
		"host.disk.nvme0n1.queue_ms/s":    500,
		"host.disk.nvme0n1.util%":         25,
		// dm-0 had IO once and none now: zeros, not a gap.
		"host.disk.dm-0.read_bytes/s":  0,
		"host.disk.dm-0.write_bytes/s": 0,
		"host.disk.dm-0.reads/s":       0,
		"host.disk.dm-0.writes/s":      0,
		"host.disk.dm-0.queue_ms/s":    0,
		"host.disk.dm-0.util%":         0,
		// xvda1 is a partition whose disk is not listed: reported.
		"host.disk.xvda1.read_bytes/s":  160 * 512 / 2,
		"host.disk.xvda1.write_bytes/s": 320 * 512 / 2,
		"host.disk.xvda1.reads/s":       10,
		"host.disk.xvda1.writes/s":      20,
		"host.disk.xvda1.queue_ms/s":    3,
		"host.disk.xvda1.util%":         0.2,
		"host.mem.available_bytes":      4000000 * 1024,
		"host.mem.used%":                75,
	})
}

func TestHostMissingFile(t *testing.T) {
	var notes []string
	h := newHostSampler(t.TempDir(), func(s string) { notes = append(notes, s) })
	h.sample(time.Now(), nil)
	got := map[string]float64{}
	h.sample(time.Now().Add(time.Second), got)
	if len(got) != 0 {
		t.Errorf("metrics without files: %v", got)
	}
	if len(notes) != 3 {
		t.Errorf("want one note per file, got %q", notes)
	}
}

func TestHostRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux only")
	}
	var notes []string
	h := newHostSampler("", func(s string) { notes = append(notes, s) })
	start := time.Now()
	h.sample(start, nil)
	// Let the CPUs tick so that the CPU shares have something to divide.
	time.Sleep(100 * time.Millisecond)
	got := map[string]float64{}
	h.sample(time.Now(), got)
	for _, n := range notes {
		t.Errorf("note: %s", n)
	}
	if used := got["host.mem.used%"]; used <= 0 || used >= 100 {
		t.Errorf("host.mem.used%% = %v", used)
	}
	if got["host.mem.available_bytes"] <= 0 {
		t.Errorf("host.mem.available_bytes = %v", got["host.mem.available_bytes"])
	}
	if _, ok := got["host.cpu.idle%"]; ok {
		var sum float64
		for _, k := range []string{"user", "system", "idle", "iowait", "steal"} {
			v := got["host.cpu."+k+"%"]
			if v < 0 || v > 100 {
				t.Errorf("host.cpu.%s%% = %v", k, v)
			}
			sum += v
		}
		if math.Abs(sum-100) > 1e-6 {
			t.Errorf("CPU shares add up to %v", sum)
		}
	}
	for name, v := range got {
		if strings.HasPrefix(name, "host.disk.") && (v < 0 || math.IsNaN(v)) {
			t.Errorf("%s = %v", name, v)
		}
	}
}

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name, text string
		want       cpuTimes
		wantErr    string
	}{
		{name: "current", text: "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n", want: cpuTimes{1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "old kernel", text: "cpu 1 2 3 4\n", want: cpuTimes{user: 1, nice: 2, system: 3, idle: 4}},
		{name: "per-cpu line first", text: "cpu0 9 9 9 9\ncpu 1 2 3 4 5 6 7 8\n", want: cpuTimes{1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "no cpu line", text: "intr 1 2\n", wantErr: `no "cpu" line`},
		{name: "too short", text: "cpu 1 2 3\n", wantErr: "at least 4"},
		{name: "not a number", text: "cpu 1 2 x 4\n", wantErr: "invalid syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPU([]byte(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseDiskstats(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]diskStats
		wantErr    string
	}{
		{
			name: "kernel 2.6.25 and 5.5 lines",
			text: " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n\n",
			want: map[string]diskStats{
				"sda":     {major: 8, reads: 1, sectorsRead: 3, readMillis: 4, writes: 5, sectorsWritten: 7, writeMillis: 8, ioMillis: 10, weightedMillis: 11},
				"nvme0n1": {major: 259, reads: 1, sectorsRead: 3, readMillis: 4, writes: 5, sectorsWritten: 7, writeMillis: 8, ioMillis: 10, weightedMillis: 11},
			},
		},
		{name: "empty", text: "", want: map[string]diskStats{}},
		{name: "short line", text: "8 1 sda1 1 2 3 4\n", wantErr: "want at least 14"},
		{name: "negative", text: "8 0 sda 1 2 3 4 5 6 7 8 -9 10 11\n", wantErr: `device "sda"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]diskStats{}
			err := parseDiskstats([]byte(tt.text), got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for name, w := range tt.want {
				if got[name] != w {
					t.Errorf("%s: got %+v, want %+v", name, got[name], w)
				}
			}
		})
	}
}

func TestPartitionOf(t *testing.T) {
	tests := []struct {
		name, disk string
		ok         bool
	}{
		{"sda1", "sda", true},
		{"sda", "", false},
		{"vda15", "vda", true},
		{"nvme0n1p2", "nvme0n1", true},
		{"nvme0n1", "nvme0n", true}, // a candidate only: no disk "nvme0n" is listed
		{"mmcblk0p1", "mmcblk0", true},
		{"md0", "md", true},
		{"dm-0", "dm-", true},
		{"0", "", false},
	}
	for _, tt := range tests {
		disk, ok := partitionOf(tt.name)
		if disk != tt.disk || ok != tt.ok {
			t.Errorf("partitionOf(%q) = %q, %v; want %q, %v", tt.name, disk, ok, tt.disk, tt.ok)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name, text string
		want       memInfo
		wantErr    string
	}{
		{name: "ok", text: "MemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable: 40 kB\n", want: memInfo{total: 102400, available: 40960}},
		{name: "no MemAvailable", text: "MemTotal: 100 kB\nMemFree: 10 kB\n", wantErr: "Linux 3.14"},
		{name: "no MemTotal", text: "MemAvailable: 40 kB\n", wantErr: "no MemTotal"},
		{name: "bad unit", text: "MemTotal: 100 MB\nMemAvailable: 40 kB\n", wantErr: "want a number of kB"},
		{name: "available above total", text: "MemTotal: 10 kB\nMemAvailable: 40 kB\n", wantErr: "does not fit"},
		{name: "overflow", text: "MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n", wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMeminfo([]byte(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func addProcSeeds(f *testing.F, name string) {
	f.Helper()
	for _, dir := range []string{"testdata/t0", "testdata/t1"} {
		data, err := os.ReadFile(dir + "/proc/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzParseDiskstats(f *testing.F) {
	addProcSeeds(f, "diskstats")
	f.Add([]byte("8 0 sda 1 2 3 4 5 6 7 8 9 10 11"))
	f.Fuzz(func(t *testing.T, data []byte) {
		disks := map[string]diskStats{}
		if err := parseDiskstats(data, disks); err != nil {
			return
		}
		// Whatever parsed must yield finite, non-negative rates against
		// itself and against an empty reading.
		for name, s := range disks {
			if name == "" || strings.ContainsAny(name, " \t\n") {
				t.Fatalf("device name %q", name)
			}
			reportedDisk(name, s, disks)
		}
		m := map[string]float64{}
		diskRates(disks, disks, 1, m)
		for name, v := range m {
			if v != 0 {
				t.Fatalf("%s = %v between a reading and itself", name, v)
			}
		}
	})
}

func FuzzParseCPU(f *testing.F) {
	addProcSeeds(f, "stat")
	f.Fuzz(func(t *testing.T, data []byte) {
		cur, err := parseCPU(data)
		if err != nil {
			return
		}
		m := map[string]float64{}
		cpuPercents(cpuTimes{}, cur, m)
		for name, v := range m {
			if v < 0 || v > 100 || math.IsNaN(v) {
				t.Fatalf("%s = %v", name, v)
			}
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	addProcSeeds(f, "meminfo")
	f.Fuzz(func(t *testing.T, data []byte) {
		mem, err := parseMeminfo(data)
		if err != nil {
			return
		}
		if mem.total == 0 || mem.available > mem.total {
			t.Fatalf("accepted %+v", mem)
		}
	})
}
