package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// series repeats one interval's metrics n times.
func series(n int, metrics map[string]float64) []Interval {
	out := make([]Interval, n)
	for i := range out {
		m := make(map[string]float64, len(metrics))
		for k, v := range metrics {
			m[k] = v
		}
		out[i] = Interval{Metrics: m}
	}
	return out
}

func TestDiagnoseNamesTheLimit(t *testing.T) {
	client := map[string]float64{"client.cpu%": 40, "client.gomaxprocs": 2, "client.sched.latency_p99_ms": 0.2}
	with := func(extra map[string]float64) map[string]float64 {
		m := map[string]float64{}
		for k, v := range client {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		metrics map[string]float64
		threads int
		want    Limit
		verdict string
		// placement is the server's unless a case says otherwise.
		placement driver.Placement
	}{
		{"PostgreSQL waiting on the WAL", with(map[string]float64{"db.sessions.active": 7, "db.wait.LWLock:WALWrite": 0.5, "db.wait.IO:WALSync": 0.2, "db.wait.CPU": 0.3, "host.cpu.idle%": 20}),
			8, LimitCommitFlush, "70% of sampled dbprobe sessions", driver.PlacementServer},
		// The waits named add up to the share: a part of the class that
		// another wait outranks is still named, the others after it.
		{"PostgreSQL WAL waits below CPU", with(map[string]float64{"db.sessions.active": 4, "db.wait.IO:WALSync": 0.3, "db.wait.CPU": 0.3, "db.wait.Client:ClientRead": 0.25, "db.wait.LWLock:WALWrite": 0.15, "host.cpu.idle%": 20}),
			8, LimitCommitFlush, "45% of sampled dbprobe sessions wait on it (IO:WALSync 30%, LWLock:WALWrite 15%; besides it CPU 30%, Client:ClientRead 25%)", driver.PlacementServer},
		{"Azure SQL log rate governor", with(map[string]float64{"db.sessions.active": 20, "db.wait.LOG_RATE_GOVERNOR": 0.55, "db.wait.WRITELOG": 0.3, "db.wait.CPU": 0.15}), 32, LimitLogRate, "log rate governed by the service tier — 55% of sampled", driver.PlacementServer},
		{"Azure SQL pool and replica throttles", with(map[string]float64{"db.sessions.active": 20, "db.wait.POOL_LOG_RATE_GOVERNOR": 0.3, "db.wait.HADR_THROTTLE_LOG_RATE_SEND_RECV_QUEUE_SIZE": 0.2, "db.wait.CPU": 0.5}), 32, LimitLogRate, "50% of sampled", driver.PlacementServer},
		{"SQL Server WRITELOG", with(map[string]float64{"db.sessions.active": 30, "db.wait.WRITELOG": 0.8, "db.wait.CPU": 0.2}), 32, LimitCommitFlush, "WRITELOG 80%", driver.PlacementServer},
		{"row locks", with(map[string]float64{"db.sessions.active": 10, "db.wait.Lock:transactionid": 0.6, "db.wait.CPU": 0.4}), 16, LimitLock, "locks", driver.PlacementServer},
		{"SQL Server page reads", with(map[string]float64{"db.sessions.active": 10, "db.wait.PAGEIOLATCH_SH": 0.7, "db.wait.CPU": 0.3}), 16, LimitReadIO, "read IO", driver.PlacementServer},
		{"host CPU", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 0.9, "db.wait.LWLock:WALWrite": 0.1, "host.cpu.idle%": 3}), 8, LimitServerCPU, "3% idle; dbprobe uses 40% of a core of it, 90% of sampled", driver.PlacementServer},
		{"client CPU saturated", with(map[string]float64{"client.cpu%": 195, "db.sessions.active": 1, "db.wait.IO:WALSync": 0.9}), 8, LimitClient, "dbprobe itself", driver.PlacementServer},
		{"client on one core, starved", with(map[string]float64{"client.cpu%": 97, "client.gomaxprocs": 1, "client.sched.latency_p99_ms": 12, "db.sessions.active": 1, "db.wait.IO:WALSync": 0.9}), 8, LimitClient, "12.0 ms", driver.PlacementServer},
		{"scheduling lag on a saturated shared host is the host's", with(map[string]float64{"client.sched.latency_p99_ms": 15, "db.sessions.active": 3, "db.wait.CPU": 1, "host.cpu.idle%": 4}), 8, LimitServerCPU, "15.0 ms", driver.PlacementServer},
		{"client starved of CPU it cannot get, sessions idle", with(map[string]float64{"client.cpu%": 70, "client.gomaxprocs": 1, "client.sched.latency_p99_ms": 25, "db.sessions.active": 0.4, "db.wait.CPU": 1, "host.cpu.idle%": 30}), 8, LimitClient, "25.0 ms (p99) for a thread, CPU 70% of its 1 cores, 0.4 of 8 sessions", driver.PlacementServer},
		{"scheduling lag in an embedded database is not the client's alone", with(map[string]float64{"client.cpu%": 140, "client.sched.latency_p99_ms": 10, "host.cpu.idle%": 18}), 32, LimitNone, "none saturated", driver.PlacementEmbedded},
		{"scheduling lag with a server whose sessions are not sampled is the client's", with(map[string]float64{"client.cpu%": 60, "client.sched.latency_p99_ms": 10}), 32, LimitClient, "10.0 ms (p99) for a thread, CPU 60% of its 2 cores;", driver.PlacementServer},
		{"a cgroup quota below GOMAXPROCS saturates the client", with(map[string]float64{"client.cpu%": 48, "client.cores": 0.5, "db.sessions.active": 1, "host.cpu.idle%": 60}), 8, LimitClient, "CPU 48% of its 0.5 cores", driver.PlacementServer},
		// The case: --db null, unpinned, 120% of 2 cores, 84 ms lag.
		{"no database, unpinned, starved", with(map[string]float64{"client.cpu%": 120, "client.sched.latency_p99_ms": 84, "host.cpu.idle%": 2}), 4, LimitClient, "starved — goroutines wait 84.0 ms", driver.PlacementNone},
		{"no database, client at its cores", with(map[string]float64{"client.cpu%": 190, "client.sched.latency_p99_ms": 3}), 4, LimitClient, "this is the client's ceiling", driver.PlacementNone},
		{"a client its cgroup's quota holds back, below 90% of it", with(map[string]float64{"client.cpu%": 26, "client.cores": 0.3, "client.cpu.throttled%": 85, "host.cpu.idle%": 13}), 2, LimitClient, "CPU 26% of its 0.3 cores, its cgroup's CPU quota holding it back in 85% of scheduling periods", driver.PlacementNone},
		{"a server's client its quota holds back", with(map[string]float64{"client.cpu%": 40, "client.cores": 0.5, "client.cpu.throttled%": 70, "db.sessions.active": 1, "host.cpu.idle%": 50}), 8, LimitClient, "holding it back in 70%", driver.PlacementServer},
		{"an occasional throttle is no limit", with(map[string]float64{"client.cpu%": 20, "client.cores": 1, "client.cpu.throttled%": 5, "client.sched.latency_p99_ms": 0.1, "host.cpu.idle%": 50}), 2, LimitNone, "none saturated", driver.PlacementNone},
		{"no database, host busy without lag", with(map[string]float64{"client.cpu%": 100, "client.sched.latency_p99_ms": 1, "host.cpu.idle%": 4}), 4, LimitClient, "host is 4% idle", driver.PlacementNone},
		{"no database, headroom", with(map[string]float64{"client.cpu%": 60, "client.sched.latency_p99_ms": 0.2, "host.cpu.idle%": 65}), 1, LimitNone, "no database, and dbprobe uses CPU 60% of its 2 cores", driver.PlacementNone},
		{"no database: a host without idle CPU is not a server's", with(map[string]float64{"client.cpu%": 50, "host.cpu.idle%": 3}), 1, LimitClient, "dbprobe itself", driver.PlacementNone},
		{"scheduling lag while the server is busy is not the client's", with(map[string]float64{"client.sched.latency_p99_ms": 8, "db.sessions.active": 6, "db.wait.CPU": 0.7, "db.wait.LWLock:WALWrite": 0.3, "host.cpu.idle%": 45}), 8, LimitNone, "none saturated", driver.PlacementServer},
		{"sessions idle in the server", with(map[string]float64{"db.sessions.active": 1.5, "db.wait.CPU": 1, "host.cpu.idle%": 60}), 32, LimitRoundTrip, "1.5 of 32", driver.PlacementServer},
		{"an embedded database's single writer", with(map[string]float64{"client.cpu%": 150, "db.writer_busy_seconds/s": 0.86, "host.cpu.idle%": 6}), 32, LimitWriter, "busy 86% of the time", driver.PlacementEmbedded},
		{"a single writer with time to spare", with(map[string]float64{"client.cpu%": 60, "db.writer_busy_seconds/s": 0.4, "host.cpu.idle%": 40}), 8, LimitNone, "none saturated", driver.PlacementEmbedded},
		{"headroom", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 0.7, "db.wait.LWLock:WALWrite": 0.3, "host.cpu.idle%": 45}), 8, LimitNone, "45% idle", driver.PlacementServer},
		{"other sessions' waits do not count", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 1, "db.wait.other.IO:WALSync": 1, "host.cpu.idle%": 45}), 8, LimitNone, "none saturated", driver.PlacementServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(series(5, tt.metrics), Phase{Threads: tt.threads, Span: 5 * time.Second, Placement: tt.placement})
			if d.Limit != tt.want || !strings.Contains(d.Verdict, tt.verdict) {
				t.Errorf("Diagnose = %q: %s; want %q containing %q (evidence %v)", d.Limit, d.Verdict, tt.want, tt.verdict, d.Evidence)
			}
			if strings.Contains(d.Verdict, "\n") || len(d.Evidence) == 0 {
				t.Errorf("verdict %q must be one line with evidence, got %v", d.Verdict, d.Evidence)
			}
		})
	}
}

// A busy interval weighs more than a quiet one: the shares are of sampled
// sessions, not of intervals.
func TestDiagnoseWeighsIntervalsBySessions(t *testing.T) {
	busy := series(1, map[string]float64{"db.sessions.active": 9, "db.wait.IO:WALSync": 0.9, "db.wait.CPU": 0.1})
	quiet := series(4, map[string]float64{"db.sessions.active": 1, "db.wait.CPU": 1})
	d := Diagnose(append(busy, quiet...), Phase{Threads: 10, Span: 5 * time.Second})
	// (9×0.9) / (9+4) = 0.62 of sampled sessions waited on the flush.
	if d.Limit != LimitCommitFlush || d.Evidence["wait.commit_flush"] < 0.6 || d.Evidence["wait.commit_flush"] > 0.63 {
		t.Errorf("Diagnose = %s, evidence %v", d.Verdict, d.Evidence)
	}
}

func TestDiagnoseWithoutSamples(t *testing.T) {
	// No database waits (Redis, a database that cannot be monitored): the
	// host and the client still decide.
	d := Diagnose(series(3, map[string]float64{"client.cpu%": 50, "client.gomaxprocs": 2, "host.cpu.idle%": 2}), Phase{Threads: 8, Span: 3 * time.Second})
	if d.Limit != LimitServerCPU {
		t.Errorf("host without idle CPU: %s", d.Verdict)
	}
}

func TestWaitClasses(t *testing.T) {
	for event, want := range map[string]string{
		"IO:WALSync": "commit_flush", "LWLock:WALWrite": "commit_flush", "WRITELOG": "commit_flush", "HADR_SYNC_COMMIT": "commit_flush",
		"Lock:transactionid": "lock", "Lock:row": "lock", "LCK_M_X": "lock", "Waiting for table level lock": "lock",
		"IO:DataFileRead": "read_io", "PAGEIOLATCH_EX": "read_io", "CPU": "cpu",
		"Client:ClientRead": "", "SOS_SCHEDULER_YIELD": "",
		"LOG_RATE_GOVERNOR": "log_rate", "POOL_LOG_RATE_GOVERNOR": "log_rate", "INSTANCE_LOG_RATE_GOVERNOR": "log_rate",
		"HADR_THROTTLE_LOG_RATE_GOVERNOR": "log_rate", "HADR_THROTTLE_LOG_RATE_SEND_RECV_QUEUE_SIZE": "log_rate",
		"HADR_THROTTLE_LOG_RATE_LOG_SIZE": "log_rate", "HADR_THROTTLE_LOG_RATE_MISMATCHED_SLO": "log_rate",
	} {
		if got := waitClass(event); got != want {
			t.Errorf("waitClass(%q) = %q, want %q", event, got, want)
		}
	}
}

// A phase too short, or read too few times, gets no verdict but the reason:
// the README's first command has phases of tens of milliseconds, whose
// verdicts changed from run to run.
func TestDiagnoseRefusesTooLittleEvidence(t *testing.T) {
	// A 4 s phase under a 2 s monitor interval: two whole intervals, and
	// the slivers the phase's start and end cut off the boundaries.
	slivered := func() []Interval {
		start := time.Unix(1000, 0)
		ivs := series(4, map[string]float64{"client.cpu%": 199, "client.gomaxprocs": 2})
		bounds := []time.Duration{0, 5 * time.Millisecond, 2005 * time.Millisecond, 4005 * time.Millisecond, 4010 * time.Millisecond}
		for i := range ivs {
			ivs[i].Start, ivs[i].End = start.Add(bounds[i]), start.Add(bounds[i+1])
		}
		return ivs
	}
	saturated := map[string]float64{"client.cpu%": 199, "client.gomaxprocs": 2, "db.sessions.active": 8, "db.wait.IO:WALSync": 1, "host.cpu.idle%": 0}
	interval := func(n int, each time.Duration) []Interval {
		ivs := series(n, saturated)
		start := time.Unix(1000, 0)
		for i := range ivs {
			ivs[i].Start, ivs[i].End = start.Add(time.Duration(i)*each), start.Add(time.Duration(i+1)*each)
		}
		return ivs
	}
	tests := []struct {
		name      string
		intervals []Interval
		span      time.Duration
		verdict   string
	}{
		{"30 ms", interval(1, 30*time.Millisecond), 30 * time.Millisecond, "not judged — phase too short to judge: 30 ms; run for 3 s or more"},
		{"0.4 ms", interval(1, 400*time.Microsecond), 400 * time.Microsecond, "phase too short to judge: 0.4 ms;"},
		{"0.25 s", interval(1, 250*time.Millisecond), 250 * time.Millisecond, "phase too short to judge: 0.25 s;"},
		{"2.9 s", interval(3, time.Second), 2900 * time.Millisecond, "phase too short to judge: 2.9 s; run for 3 s or more"},
		{"no intervals", nil, 10 * time.Millisecond, "phase too short to judge: 10 ms"},
		{"two long intervals", interval(2, 5*time.Second), 10 * time.Second, "not judged — 2 whole monitor intervals of 5 s in 10 s are too few to judge (3 are needed); run for 15 s or more"},
		{"two long intervals between slivers", slivered(), 4010 * time.Millisecond, "not judged — 2 whole monitor intervals of 2 s in 4.01 s are too few to judge (3 are needed); run for 6 s or more"},
		// A phase cut short whose samples stopped before its end: it
		// lasted three intervals' time, so more than that is asked for.
		{"cut short", interval(2, time.Second), 3180 * time.Millisecond, "not judged — 2 whole monitor intervals of 1 s in 3.18 s are too few to judge (3 are needed); run for 4.18 s or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(tt.intervals, Phase{Threads: 8, Span: tt.span})
			if d.Limit != LimitNotJudged || !strings.HasPrefix(d.Verdict, "not judged — ") || !strings.Contains(d.Verdict, tt.verdict) {
				t.Errorf("Diagnose = %q: %q; want %q containing %q", d.Limit, d.Verdict, LimitNotJudged, tt.verdict)
			}
		})
	}
	// Three whole intervals over 3 s are enough, slivers or not.
	if d := Diagnose(interval(3, time.Second), Phase{Threads: 8, Span: 3 * time.Second}); d.Limit != LimitClient {
		t.Errorf("3 intervals over 3 s: %q: %s", d.Limit, d.Verdict)
	}
}

// The phase's first and last intervals are cut short by its start and end:
// a 50 ms interval weighs a twentieth of a whole second.
func TestDiagnoseWeighsIntervalsByLength(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(from, to time.Duration, m map[string]float64) Interval {
		return Interval{Start: start.Add(from), End: start.Add(to), Metrics: m}
	}
	calm := map[string]float64{"client.cpu%": 20, "client.cores": 2, "db.sessions.active": 6, "db.wait.CPU": 1, "host.cpu.idle%": 60}
	burst := map[string]float64{"client.cpu%": 199, "client.cores": 2, "db.sessions.active": 8, "db.wait.IO:WALSync": 1, "host.cpu.idle%": 0}
	ivs := []Interval{at(0, 50*time.Millisecond, burst), at(50*time.Millisecond, time.Second, calm), at(time.Second, 2*time.Second, calm),
		at(2*time.Second, 3*time.Second, calm), at(3*time.Second, 3050*time.Millisecond, burst)}
	d := Diagnose(ivs, Phase{Threads: 8, Span: 3050 * time.Millisecond})
	if d.Limit != LimitNone || d.Evidence["client.cpu%"] > 30 {
		t.Errorf("Diagnose = %q: %s (evidence %v); want the three whole seconds to decide", d.Limit, d.Verdict, d.Evidence)
	}
}

// A fault is the verdict, whatever the figures would say: a phase
// stopped early, one that went on past failures more attempts cannot
// fix, one without service for a tenth of its time or more. Below that
// share the figures are judged, the outage said, and never "more threads
// may go faster".
func TestFaultsComeFirst(t *testing.T) {
	// What an idle host and idle sessions say: none saturated, more
	// threads may go faster; a busy single writer says the writer.
	idle := series(10, map[string]float64{"client.cpu%": 5, "client.gomaxprocs": 2, "host.cpu.idle%": 99, "db.sessions.active": 7})
	writer := series(10, map[string]float64{"client.cpu%": 50, "client.gomaxprocs": 2, "host.cpu.idle%": 60, writerBusyMetric: 0.95})
	span := 10 * time.Second
	tests := []struct {
		name      string
		intervals []Interval
		ph        Phase
		want      Limit
		verdict   string
	}{
		{"disk full stops a load", writer, Phase{Threads: 1, Span: span, Placement: driver.PlacementEmbedded, Stopped: "ERROR(13 SQLITE_FULL) database or disk is full"},
			LimitStopped, "stopped: ERROR(13 SQLITE_FULL) database or disk is full — the figures cover the phase up to the stop"},
		{"a stop judged even when too short to judge", nil, Phase{Threads: 1, Span: 200 * time.Millisecond, Stopped: "ERROR(53100 disk_full) could not extend file"},
			LimitStopped, "stopped: ERROR(53100 disk_full)"},
		{"a server that did not come back", idle, Phase{Threads: 8, Span: span, Unavailable: 6 * time.Second, Stopped: "PostgreSQL at 127.0.0.1:5432 did not answer for 60 s"},
			LimitStopped, "did not answer for 60 s; server unavailable for 60% of the phase"},
		{"going on past a full disk", writer, Phase{Threads: 1, Span: span, Placement: driver.PlacementEmbedded, Failing: "91,000 rows failed with ERROR(13 SQLITE_FULL)"},
			LimitFailing, "failing: 91,000 rows failed with ERROR(13 SQLITE_FULL) — more attempts cannot fix it"},
		{"an outage of 58%", idle, Phase{Threads: 8, Span: span, Unavailable: 5800 * time.Millisecond},
			LimitUnavailable, "server unavailable for 58% of the phase (5.8 s without service)"},
		{"an outage of exactly 10%", idle, Phase{Threads: 8, Span: span, Unavailable: time.Second},
			LimitUnavailable, "server unavailable for 10% of the phase"},
		{"a short outage is said, and takes back the advice", idle, Phase{Threads: 8, Span: span, Unavailable: 500 * time.Millisecond},
			LimitNone, "host has CPU left (host 99% idle); the server was unavailable for 5% of the phase (0.5 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(tt.intervals, tt.ph)
			if d.Limit != tt.want || !strings.Contains(d.Verdict, tt.verdict) {
				t.Fatalf("Diagnose = %q: %s; want %q containing %q", d.Limit, d.Verdict, tt.want, tt.verdict)
			}
			for _, never := range []string{"more threads may go faster", "none saturated"} {
				if strings.Contains(d.Verdict, never) && (tt.want != LimitNone || never != "none saturated") {
					t.Fatalf("verdict %q says %q", d.Verdict, never)
				}
			}
		})
	}
	// Without a fault the same figures give the usual verdict.
	if d := Diagnose(idle, Phase{Threads: 8, Span: span}); d.Limit != LimitNone || !strings.Contains(d.Verdict, "more threads may go faster") {
		t.Fatalf("without a fault: %q: %s", d.Limit, d.Verdict)
	}
}
