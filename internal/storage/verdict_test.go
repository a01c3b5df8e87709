package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

// fixture intervals: n seconds of the same metrics from t0.
func fixture(t0 time.Time, n int, metrics map[string]float64) []monitor.Interval {
	var out []monitor.Interval
	for i := range n {
		m := map[string]float64{}
		for k, v := range metrics {
			m[k] = v
		}
		out = append(out, monitor.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second), Metrics: m})
	}
	return out
}

// TestLogCopyVerdicts: a saturated host is named whatever the waits say,
// and no wait figure at all is "no wait samples", not "0% waited".
func TestLogCopyVerdicts(t *testing.T) {
	t0 := time.Now()
	steps := func(cores float64) []result.StorageStep {
		return []result.StorageStep{
			{Label: "DOP 1", Seconds: 10, Bytes: 1e9, Rate: 1e8, LogBytes: 1e9, LogRate: 1e8, HostCores: cores},
			{Label: "DOP 2", Seconds: 10, Bytes: 1e9, Rate: 1e8, LogBytes: 1e9, LogRate: 1.02e8, HostCores: cores},
		}
	}
	mk := func(cores float64) *job {
		j := &job{c: Config{Kind: LogCopy, Dops: []int{1, 2}}, local: true, caps: driver.Capabilities{Database: "MariaDB"}, ev: &evidence{}}
		j.sum.Steps = steps(cores)
		j.steps = []stepWindow{{0, t0, t0.Add(10 * time.Second)}, {1, t0.Add(10 * time.Second), t0.Add(20 * time.Second)}}
		return j
	}
	// Sessions active, but no wait figure: MariaDB's sampler gave none.
	noWaits := fixture(t0, 20, map[string]float64{"db.sessions.active": 1})
	j := mk(0.3)
	j.logcopyVerdict(noWaits)
	if strings.Contains(j.sum.Verdict, "0% of the database's sampled") || !strings.Contains(j.sum.Verdict, "no wait samples") {
		t.Errorf("no samples: %q", j.sum.Verdict)
	}
	j = mk(float64(hostCPUs()))
	j.logcopyVerdict(noWaits)
	if !strings.HasPrefix(j.sum.Verdict, "CPU-bound on the host: host CPU") {
		t.Errorf("saturated host: %q", j.sum.Verdict)
	}
}

// TestFlatCopyIsLogBoundOnlyWithEvidence: a log rate flat across the
// degrees shows a serial part; it is the log's wall only when the
// sessions waited on the log or its device was saturated. A copy whose
// sessions mostly ran, extended the table or talked to their workers
// (PostgreSQL's CREATE TABLE AS at 20% log waits, 23% device) is not.
func TestFlatCopyIsLogBoundOnlyWithEvidence(t *testing.T) {
	t0 := time.Now()
	mk := func(util float64) *job {
		j := &job{c: Config{Kind: LogCopy, Dops: []int{1, 2}}, local: true, caps: driver.Capabilities{Database: "PostgreSQL"}, ev: &evidence{}}
		j.sum.Steps = []result.StorageStep{
			{Label: "DOP 1", Seconds: 10, Bytes: 1e9, Rate: 1e8, LogBytes: 1e9, LogRate: 4.1e8, HostCores: 1},
			{Label: "DOP 2", Seconds: 10, Bytes: 1e9, Rate: 1e8, LogBytes: 1e9, LogRate: 4.2e8, HostCores: 1},
		}
		j.sum.Device = &result.DeviceFigures{Name: "vda", UtilPct: util}
		j.steps = []stepWindow{{0, t0, t0.Add(10 * time.Second)}, {1, t0.Add(10 * time.Second), t0.Add(20 * time.Second)}}
		return j
	}
	mixed := fixture(t0, 20, map[string]float64{"db.sessions.other.active": 1, "db.wait.other.CPU": 0.37, "db.wait.other.IO:WALWrite": 0.2,
		"db.wait.other.IO:DataFileExtend": 0.15, "db.wait.other.IPC:MessageQueueSend": 0.14, "db.wait.other.IO:DataFileWrite": 0.02})
	onLog := fixture(t0, 20, map[string]float64{"db.sessions.other.active": 1, "db.wait.other.IO:WALSync": 0.7, "db.wait.other.CPU": 0.2})
	states := fixture(t0, 20, map[string]float64{"db.sessions.active": 1, "db.wait.Sending data": 1})
	for _, tc := range []struct {
		name      string
		samples   []monitor.Interval
		util      float64
		prefix    string
		has, hasn []string
	}{
		{"mixed waits, device 23% busy", mixed, 23, "serial-bound: ", []string{"20% of the database's sampled sessions waited on the log, 37% were on CPU; of the rest IO:DataFileExtend 15%, IPC:MessageQueueSend 14%)", "the log's device vda was 23% busy"}, []string{"DataFileWrite"}},
		{"mixed waits, device saturated", mixed, 95, "log-bound: ", []string{"more cores do not copy faster", "the device vda was 95% busy"}, nil},
		{"sessions on the log", onLog, 23, "log-bound: ", []string{"70% of the database's sampled sessions waited on the log"}, nil},
		{"states of no class", states, 23, "serial-bound: ", []string{"states name neither a wait on the log nor CPU: Sending data 100%"}, []string{"0% of the database's"}},
	} {
		j := mk(tc.util)
		j.logcopyVerdict(tc.samples)
		ok := strings.HasPrefix(j.sum.Verdict, tc.prefix)
		for _, h := range tc.has {
			ok = ok && strings.Contains(j.sum.Verdict, h)
		}
		for _, h := range tc.hasn {
			ok = ok && !strings.Contains(j.sum.Verdict, h)
		}
		if !ok {
			t.Errorf("%s: %q", tc.name, j.sum.Verdict)
		}
	}
}

// TestReadVerdicts: the best point being the last is "not tested
// beyond", and an in-process engine is not a server.
func TestReadVerdicts(t *testing.T) {
	t0 := time.Now()
	j := &job{c: Config{Kind: Read, Threads: []int{1, 2, 4}}, info: driver.Info{Placement: driver.PlacementServer}}
	for i, r := range []float64{1e8, 2e8, 4e8} {
		j.sum.Steps = append(j.sum.Steps, result.StorageStep{Label: []string{"threads 1", "threads 2", "threads 4"}[i], Rate: r, Seconds: 1})
		j.steps = append(j.steps, stepWindow{i, t0.Add(time.Duration(i) * time.Second), t0.Add(time.Duration(i+1) * time.Second)})
	}
	j.readVerdict(nil)
	if strings.Contains(j.sum.Verdict, "stops growing") || !strings.Contains(j.sum.Verdict, "still grows at threads 4, the last tried: not tested beyond") {
		t.Errorf("read verdict %q", j.sum.Verdict)
	}
	busy := fixture(t0, 3, map[string]float64{"client.cpu%": 40, "client.gomaxprocs": 2, "client.sched.latency_p99_ms": 0.2,
		"db.sessions.active": 6, "db.wait.CPU": 0.9, "db.wait.LWLock:WALWrite": 0.1, "host.cpu.idle%": 3})
	server := readLimit(busy, stepWindow{0, t0, t0.Add(3 * time.Second)}, 8, driver.PlacementServer)
	embedded := readLimit(busy, stepWindow{0, t0, t0.Add(3 * time.Second)}, 8, driver.PlacementEmbedded)
	if !strings.HasPrefix(server, "server-limited") || strings.Contains(embedded, "server-limited") || !strings.Contains(embedded, "runs in dbprobe's process") {
		t.Errorf("server %q, embedded %q", server, embedded)
	}
}

// TestReadOnABusyHostIsNotTheNetwork: sessions sending rows into a full
// socket are the network's doing only while the host has CPU to spare;
// on a host 11% idle (client and server on its two cores) they wait for
// a client that has no core to drain them.
func TestReadOnABusyHostIsNotTheNetwork(t *testing.T) {
	t0 := time.Now()
	w := stepWindow{0, t0, t0.Add(5 * time.Second)}
	sending := func(idle float64) []monitor.Interval {
		return fixture(t0, 5, map[string]float64{"client.cpu%": 91, "client.gomaxprocs": 2, "client.sched.latency_p99_ms": 0.3,
			"db.sessions.active": 2, "db.wait.Sending to client": 0.7, "db.wait.CPU": 0.3, "host.cpu.idle%": idle})
	}
	if v := readLimit(sending(11), w, 2, driver.PlacementServer); !strings.HasPrefix(v, "host CPU-limited: 70% of the database's sampled sessions") || !strings.Contains(v, "11% idle and the client used 91% of a core") {
		t.Errorf("busy host: %q", v)
	}
	if v := readLimit(sending(60), w, 2, driver.PlacementServer); !strings.HasPrefix(v, "network-limited: 70%") {
		t.Errorf("idle host: %q", v)
	}
}

// TestRestartCmdFailureSaysWhy: a failed --restart-cmd says what it
// printed last, or that it printed nothing, and is a run failure.
func TestRestartCmdFailureSaysWhy(t *testing.T) {
	for cmd, want := range map[string]string{"false": "it printed nothing", "echo no such service >&2; exit 3": "it printed: no such service"} {
		err := runRestart(t.Context(), cmd)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrRunFailed) {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	if got := SizeText(5e15); got != "5PB" {
		t.Errorf("SizeText(5e15) = %s", got)
	}
}

// TestReadVerdictNoAdviceAgainstADrop: "more threads may go faster" is
// not said of the best point when a later one measured slower.
func TestReadVerdictNoAdviceAgainstADrop(t *testing.T) {
	t0 := time.Now()
	idle := map[string]float64{"client.cpu%": 10, "client.gomaxprocs": 2, "client.sched.latency_p99_ms": 0.2,
		"db.sessions.active": 1, "db.wait.CPU": 0.3, "db.wait.ClientRead": 0.3, "host.cpu.idle%": 80}
	w := stepWindow{0, t0, t0.Add(5 * time.Second)}
	if v := readLimit(fixture(t0, 5, idle), w, 1, driver.PlacementServer); !strings.Contains(v, moreThreads) {
		t.Skipf("the fixture does not make the monitor advise more threads: %q", v)
	}
	j := &job{c: Config{Kind: Read, Threads: []int{1, 2}}, info: driver.Info{Placement: driver.PlacementServer}}
	j.sum.Steps = []result.StorageStep{{Label: "threads 1", Rate: 2e8, Seconds: 5}, {Label: "threads 2", Rate: 1e8, Seconds: 5}}
	j.steps = []stepWindow{w, {1, t0.Add(5 * time.Second), t0.Add(10 * time.Second)}}
	j.readVerdict(fixture(t0, 10, idle))
	if strings.Contains(j.sum.Verdict, "more threads may go faster") || !strings.Contains(j.sum.Verdict, "though threads 2 measured slower") {
		t.Errorf("verdict %q", j.sum.Verdict)
	}
}

// A write cap on a device is found in cgroup v1's blkio tree and in v2's
// io.max, the lowest of those on groups with processes.
func TestWriteCap(t *testing.T) {
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sys := t.TempDir()
	write(filepath.Join(sys, "class/block/loop3/dev"), "7:3\n")
	v1 := t.TempDir()
	write(filepath.Join(v1, "blkio/blkio.throttle.write_bps_device"), "")
	write(filepath.Join(v1, "blkio/a/blkio.throttle.write_bps_device"), "8:0 1000\n7:3 8000000\n")
	write(filepath.Join(v1, "blkio/a/cgroup.procs"), "42\n")
	write(filepath.Join(v1, "blkio/empty/blkio.throttle.write_bps_device"), "7:3 1000\n")
	write(filepath.Join(v1, "blkio/empty/cgroup.procs"), "")
	write(filepath.Join(v1, "memory/x/blkio.throttle.write_bps_device"), "7:3 10\n")
	c, ok := writeCap(v1, sys, "loop3")
	if !ok || c.bps != 8e6 || c.group != filepath.Join(v1, "blkio/a") {
		t.Errorf("v1: %+v %v", c, ok)
	}
	v2 := t.TempDir()
	write(filepath.Join(v2, "cgroup.controllers"), "io cpu\n")
	write(filepath.Join(v2, "db/io.max"), "7:3 rbps=max wbps=5000000 riops=max wiops=max\n")
	write(filepath.Join(v2, "db/cgroup.procs"), "7\n")
	if c, ok := writeCap(v2, sys, "loop3"); !ok || c.bps != 5e6 {
		t.Errorf("v2: %+v %v", c, ok)
	}
	if _, ok := writeCap(v2, sys, "loop4"); ok {
		t.Error("a cap on a device not in /sys/class/block")
	}
}

// A serial copy (one DOP, no wait samples: MariaDB's default) whose log
// device wrote at the write cap it is held to is log-bound; the same
// copy well below the cap is not.
func TestLogCopyAtTheCap(t *testing.T) {
	t0 := time.Now()
	mk := func(deviceBytes int64) *job {
		j := &job{c: Config{Kind: LogCopy, Dops: []int{1}}, local: true, caps: driver.Capabilities{Database: "MariaDB"},
			ev: &evidence{device: "loop3"}, logCap: &deviceCap{bps: 8e6, group: "/sys/fs/cgroup/blkio/g"}}
		j.sum.Steps = []result.StorageStep{{Label: "DOP 1", Seconds: 10, Bytes: 7e7, Rate: 7e6, LogBytes: 7.6e7, LogRate: 7.6e6, DeviceWriteBytes: deviceBytes, HostCores: 0.2}}
		j.steps = []stepWindow{{0, t0, t0.Add(10 * time.Second)}}
		return j
	}
	noWaits := fixture(t0, 10, map[string]float64{"db.sessions.active": 1})
	j := mk(7.9e7)
	j.logcopyVerdict(noWaits)
	if want := "log-bound: 7.6 MB/s at DOP 1: the log's device loop3 wrote at 99% of the write cap it is held to (8.0 MB/s, /sys/fs/cgroup/blkio/g)"; !strings.HasPrefix(j.sum.Verdict, want) {
		t.Errorf("at the cap: %q", j.sum.Verdict)
	}
	j = mk(3e7)
	j.logcopyVerdict(noWaits)
	if strings.HasPrefix(j.sum.Verdict, "log-bound") {
		t.Errorf("below the cap: %q", j.sum.Verdict)
	}
}

// The log-bound rule of a capped log device: the larger of the device's
// bytes over the copy's time and the median of its whole seconds within
// a copy, at 85% of the cap or more. Each case fails if one half of the
// max() is dropped, if the threshold moves, or if a claim is made with
// no cap known.
func TestLogAtCapRule(t *testing.T) {
	const cap = 8e6
	t0 := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	type copyRun struct {
		from, to float64 // seconds from t0
	}
	cases := []struct {
		name string
		cap  float64 // 0: no cap known
		// secs and devBytes are each step's copying time and the
		// device's bytes over it.
		secs, devBytes []float64
		// perSec are the device's write rates in the whole seconds
		// from t0 on.
		perSec []float64
		copies []copyRun
		want   bool
		share  float64
	}{
		{name: "slow start, the median second at the cap", cap: cap,
			secs: []float64{10}, devBytes: []float64{0.7 * cap * 10},
			perSec: []float64{0.1 * cap, 0.1 * cap, 0.3 * cap, cap, cap, cap, cap, cap, cap, 0.5 * cap},
			copies: []copyRun{{0, 10}}, want: true, share: 1},
		{name: "at the cap over the copy, the few whole seconds below it", cap: cap,
			secs: []float64{3}, devBytes: []float64{1.01 * cap * 3},
			perSec: []float64{0, 0.55 * cap, 1.05 * cap},
			copies: []copyRun{{0.5, 3.5}}, want: true, share: 1.01},
		{name: "80% both ways", cap: cap,
			secs: []float64{10}, devBytes: []float64{0.8 * cap * 10},
			perSec: []float64{0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap, 0.8 * cap},
			copies: []copyRun{{0, 10}}, want: false, share: 0.8},
		{name: "86% over the copy", cap: cap,
			secs: []float64{10}, devBytes: []float64{0.86 * cap * 10},
			copies: []copyRun{{0, 10}}, want: true, share: 0.86},
		{name: "84% over the copy", cap: cap,
			secs: []float64{10}, devBytes: []float64{0.84 * cap * 10},
			copies: []copyRun{{0, 10}}, want: false, share: 0.84},
		{name: "86% median second", cap: cap,
			secs: []float64{5}, devBytes: []float64{0.5 * cap * 5},
			perSec: []float64{0.86 * cap, 0.86 * cap, 0.86 * cap, 0.1 * cap, 0.1 * cap},
			copies: []copyRun{{0, 5}}, want: true, share: 0.86},
		{name: "84% median second", cap: cap,
			secs: []float64{5}, devBytes: []float64{0.5 * cap * 5},
			perSec: []float64{0.84 * cap, 0.84 * cap, 0.84 * cap, 0.1 * cap, 0.1 * cap},
			copies: []copyRun{{0, 5}}, want: false, share: 0.84},
		{name: "seconds at the cap outside every copy do not count", cap: cap,
			secs: []float64{4}, devBytes: []float64{0.3 * cap * 4},
			perSec: []float64{0.3 * cap, 0.3 * cap, 0.3 * cap, 0.3 * cap, cap, cap, cap, cap, cap, cap},
			copies: []copyRun{{0, 4}}, want: false, share: 0.3},
		{name: "the slowest degree decides the bytes over time", cap: cap,
			secs: []float64{10, 10}, devBytes: []float64{cap * 10, 0.5 * cap * 10},
			copies: []copyRun{{0, 10}, {10, 20}}, want: false, share: 0.5},
		{name: "no cap known", cap: 0,
			secs: []float64{10}, devBytes: []float64{cap * 10},
			perSec: []float64{cap, cap, cap, cap, cap, cap, cap, cap, cap, cap},
			copies: []copyRun{{0, 10}}, want: false, share: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &job{c: Config{Kind: LogCopy, Dops: []int{1}}, local: true, caps: driver.Capabilities{Database: "MariaDB"},
				ev: &evidence{device: "loop3"}, origin: t0}
			if tc.cap > 0 {
				j.logCap = &deviceCap{bps: tc.cap, group: "/sys/fs/cgroup/blkio/g"}
			}
			var total float64
			for i := range tc.secs {
				j.sum.Steps = append(j.sum.Steps, result.StorageStep{Label: "DOP " + strconv.Itoa(i+1), Seconds: tc.secs[i], Bytes: 7e7,
					LogBytes: int64(tc.devBytes[i]), LogRate: tc.devBytes[i] / tc.secs[i], DeviceWriteBytes: int64(tc.devBytes[i]), HostCores: 0.2})
				j.steps = append(j.steps, stepWindow{i, t0.Add(time.Duration(total * float64(time.Second))), t0.Add(time.Duration((total + tc.secs[i]) * float64(time.Second)))})
				total += tc.secs[i]
			}
			j.sum.Device = &result.DeviceFigures{Name: "loop3", UtilPct: 30}
			for i, r := range tc.perSec {
				j.sum.Device.PerSecond = append(j.sum.Device.PerSecond, result.DeviceSecond{Elapsed: float64(i + 1), Seconds: 1, WriteRate: r, UtilPct: 30})
			}
			for _, c := range tc.copies {
				j.copies = append(j.copies, span{start: t0.Add(time.Duration(c.from * float64(time.Second))), end: t0.Add(time.Duration(c.to * float64(time.Second)))})
			}
			got, share := j.logAtCap(j.sum.Steps)
			if got != tc.want || !near(share, tc.share, 0.005) {
				t.Errorf("logAtCap = %v at %.3f of the cap, want %v at %.3f", got, share, tc.want, tc.share)
			}
			// The verdict follows the rule: a log-bound claim naming the
			// write cap exactly when the rule holds.
			j.logcopyVerdict(fixture(t0, int(total), map[string]float64{"db.sessions.active": 1}))
			if claims := strings.HasPrefix(j.sum.Verdict, "log-bound") && strings.Contains(j.sum.Verdict, "write cap"); claims != tc.want {
				t.Errorf("verdict %q", j.sum.Verdict)
			}
		})
	}
}
