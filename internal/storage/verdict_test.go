package storage

import (
	"errors"
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
