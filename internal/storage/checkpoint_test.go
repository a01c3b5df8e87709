package storage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// fakeLogMonitor is a database monitor that names its log's size setting
// and what it cannot see.
type fakeLogMonitor struct {
	driver.Monitor
	setting     string
	unavailable []string
}

func (m fakeLogMonitor) LogSizeSetting() string { return m.setting }
func (m fakeLogMonitor) Unavailable() []string  { return m.unavailable }

// The checkpoint age's peak is the fullest sample within the steps, its
// share of the maximum said; from 75% of it the verdict says the writes
// waited on checkpoints and names the setting that makes the log
// larger; below, or with no maximum known, it says nothing of them.
func TestCheckpointAgePeak(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	const most = 100e6
	mk := func(kind Kind, ages ...float64) (*job, []monitor.Interval) {
		j := &job{c: Config{Kind: kind}, caps: driver.Capabilities{Database: "MariaDB"}, origin: t0,
			ev: &evidence{mon: fakeLogMonitor{setting: "innodb_log_file_size"}}}
		var ivs []monitor.Interval
		for i, a := range ages {
			m := map[string]float64{metricCheckpointAge: a, metricCheckpointAgeMax: most}
			ivs = append(ivs, monitor.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second), Metrics: m})
		}
		// Two steps of two seconds each, then one interval after them
		// (the drop of the last copy, the settling) that does not count.
		j.sum.Steps = []result.StorageStep{{Label: "DOP 1", Seconds: 2}, {Label: "DOP 2", Seconds: 2}}
		j.steps = []stepWindow{{0, t0, t0.Add(2 * time.Second)}, {1, t0.Add(2 * time.Second), t0.Add(4 * time.Second)}}
		return j, ivs
	}
	for _, tc := range []struct {
		name  string
		kind  Kind
		ages  []float64
		peak  float64
		share float64
		point string
		full  bool
	}{
		{"full at DOP 2", LogCopy, []float64{10e6, 40e6, 80e6, 60e6, 99e6}, 80e6, 0.8, "DOP 2", true},
		{"76%", Write, []float64{76e6, 1e6, 1e6, 1e6}, 76e6, 0.76, "", true},
		{"74%", Write, []float64{74e6, 1e6, 1e6, 1e6}, 74e6, 0.74, "", false},
		{"an empty log", Bulk, []float64{0, 0, 0, 0}, 0, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, ivs := mk(tc.kind, tc.ages...)
			if tc.kind != LogCopy {
				j.sum.Steps, j.steps = j.sum.Steps[:1], []stepWindow{{0, t0, t0.Add(4 * time.Second)}}
			}
			c := j.checkpointAge(ivs, false)
			if c == nil || c.NotSampled != "" || c.Samples != 4 || c.PeakBytes != int64(tc.peak) || c.MaxBytes != most ||
				c.Share != tc.share || c.Full != tc.full || c.Point != tc.point || c.Setting != "innodb_log_file_size" {
				t.Fatalf("checkpoint age %+v", c)
			}
			line := checkpointVerdict(tc.kind, c)
			if tc.full != (line != "") {
				t.Errorf("verdict line %q", line)
			}
			if tc.full && (!strings.Contains(line, "full of changes not yet checkpointed") || !strings.Contains(line, "waited on the database's checkpoints") ||
				!strings.Contains(line, "a larger innodb_log_file_size")) {
				t.Errorf("verdict line %q", line)
			}
			if strings.Contains(c.Text(), "not sampled") || !strings.Contains(c.Text(), "of at most 100.0 MB") {
				t.Errorf("text %q", c.Text())
			}
		})
	}
	// The full line reads as the brief's DBA expects.
	j, ivs := mk(LogCopy, 10e6, 40e6, 80e6, 60e6)
	if want := "the log was 80% full of changes not yet checkpointed (checkpoint age 80.0 MB of at most 100.0 MB, at 3.0 s): the copy waited on the database's checkpoints, which a faster log device does not help; a larger innodb_log_file_size lets the copy run further ahead of them"; checkpointVerdict(LogCopy, j.checkpointAge(ivs, false)) != want {
		t.Errorf("line %q", checkpointVerdict(LogCopy, j.checkpointAge(ivs, false)))
	}
	// No maximum: the peak, and no claim.
	j, ivs = mk(Write, 90e6, 1e6)
	for _, iv := range ivs {
		delete(iv.Metrics, metricCheckpointAgeMax)
	}
	j.sum.Steps, j.steps = j.sum.Steps[:1], []stepWindow{{0, t0, t0.Add(2 * time.Second)}}
	if c := j.checkpointAge(ivs, false); c.PeakBytes != 90e6 || c.Full || checkpointVerdict(Write, c) != "" || !strings.Contains(c.Text(), "does not say the most") {
		t.Errorf("no maximum: %+v", c)
	}
	// Not a writing experiment: no figure at all.
	j, ivs = mk(Scan, 90e6)
	if c := j.checkpointAge(ivs, false); c != nil {
		t.Errorf("scan: %+v", c)
	}
}

// When no checkpoint age was sampled the result says why: the monitor
// off, the database's monitor's own reason, none given, or the writes
// over before an interval ended.
func TestCheckpointAgeNotSampled(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	mk := func(mon driver.Monitor) *job {
		j := &job{c: Config{Kind: Write}, caps: driver.Capabilities{Database: "PostgreSQL"}, origin: t0, ev: &evidence{mon: mon}}
		j.sum.Steps = []result.StorageStep{{Label: "chunks", Seconds: 2}}
		j.steps = []stepWindow{{0, t0, t0.Add(2 * time.Second)}}
		return j
	}
	noAge := fixture(t0, 2, map[string]float64{"db.sessions.active": 1})
	cases := []struct {
		name string
		j    *job
		ivs  []monitor.Interval
		off  bool
		want string
	}{
		{"monitor off", mk(fakeLogMonitor{}), nil, true, "the monitor is off (--no-monitor)"},
		{"no database monitor", mk(nil), noAge, false, "PostgreSQL has no monitor here"},
		{"the driver says why", mk(fakeLogMonitor{unavailable: []string{"checkpoint age: this server gives neither X nor Y"}}), noAge, false, "this server gives neither X nor Y"},
		{"the driver gives none", mk(fakeLogMonitor{}), noAge, false, "PostgreSQL gives dbprobe no checkpoint age (checkpoint_age)"},
		{"outside the writes", mk(fakeLogMonitor{}), []monitor.Interval{{Start: t0.Add(3 * time.Second), End: t0.Add(4 * time.Second), Metrics: map[string]float64{metricCheckpointAge: 5}}}, false, "no monitor interval fell within the writes"},
	}
	for _, tc := range cases {
		c := tc.j.checkpointAge(tc.ivs, tc.off)
		if c == nil || !strings.HasPrefix(c.NotSampled, tc.want) || c.Full || checkpointVerdict(Write, c) != "" || c.Text() != "not sampled: "+c.NotSampled {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// A write through a redo log far too small for it runs the log full of
// changes not yet checkpointed, and the verdict says so and names the
// setting: a throwaway MariaDB of the test's own with a 4 MB redo log,
// written 24 MB in chunks of 4 MB.
func TestSmallRedoLogWaitsOnCheckpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := instance.Start(ctx, instance.MariaDB, instance.Options{Settings: map[string]string{"innodb_log_file_size": "4M"}})
	if err != nil {
		testdb.Unavailable(t, "MariaDB did not start: "+err.Error())
	}
	t.Cleanup(func() { srv.Close() })
	c := small(t, Write, srv.URL())
	c.Size, c.Chunk, c.Duration = 24_000_000, 4_000_000, time.Minute
	c.Monitor.Interval = 100 * time.Millisecond
	o, st := mustRun(t, c)
	ca := st.CheckpointAge
	// The age overshoots its maximum a little while the writes wait:
	// InnoDB's maximum is where it makes them wait, not a hard end.
	if ca == nil || !ca.Full || ca.Setting != "innodb_log_file_size" || ca.Share > 1.1 ||
		!strings.Contains(st.Verdict, "full of changes not yet checkpointed") || !strings.Contains(st.Verdict, "a larger innodb_log_file_size") {
		t.Errorf("checkpoint age %+v, verdict %q\n%s", ca, st.Verdict, o.text)
	}
	if ca != nil {
		t.Logf("%s; verdict: %s", ca.Text(), st.Verdict)
	}
}
