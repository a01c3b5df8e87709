package monitor

import (
	"strings"
	"testing"
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
	}{
		{"PostgreSQL waiting on the WAL", with(map[string]float64{"db.sessions.active": 7, "db.wait.LWLock:WALWrite": 0.5, "db.wait.IO:WALSync": 0.2, "db.wait.CPU": 0.3, "host.cpu.idle%": 20}),
			8, LimitCommitFlush, "70% of sampled dbprobe sessions"},
		{"Azure SQL log rate governor", with(map[string]float64{"db.sessions.active": 20, "db.wait.LOG_RATE_GOVERNOR": 0.55, "db.wait.WRITELOG": 0.3, "db.wait.CPU": 0.15}), 32, LimitLogRate, "log rate governed by the service tier — 55% of sampled"},
		{"Azure SQL pool and replica throttles", with(map[string]float64{"db.sessions.active": 20, "db.wait.POOL_LOG_RATE_GOVERNOR": 0.3, "db.wait.HADR_THROTTLE_LOG_RATE_SEND_RECV_QUEUE_SIZE": 0.2, "db.wait.CPU": 0.5}), 32, LimitLogRate, "50% of sampled"},
		{"SQL Server WRITELOG", with(map[string]float64{"db.sessions.active": 30, "db.wait.WRITELOG": 0.8, "db.wait.CPU": 0.2}), 32, LimitCommitFlush, "WRITELOG 80%"},
		{"row locks", with(map[string]float64{"db.sessions.active": 10, "db.wait.Lock:transactionid": 0.6, "db.wait.CPU": 0.4}), 16, LimitLock, "locks"},
		{"SQL Server page reads", with(map[string]float64{"db.sessions.active": 10, "db.wait.PAGEIOLATCH_SH": 0.7, "db.wait.CPU": 0.3}), 16, LimitReadIO, "read IO"},
		{"host CPU", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 0.9, "db.wait.LWLock:WALWrite": 0.1, "host.cpu.idle%": 3}), 8, LimitServerCPU, "3% idle; dbprobe uses 40% of a core of it, 90% of sampled"},
		{"client CPU saturated", with(map[string]float64{"client.cpu%": 195, "db.sessions.active": 1, "db.wait.IO:WALSync": 0.9}), 8, LimitClient, "dbprobe itself"},
		{"client on one core, starved", with(map[string]float64{"client.cpu%": 97, "client.gomaxprocs": 1, "client.sched.latency_p99_ms": 12, "db.sessions.active": 1, "db.wait.IO:WALSync": 0.9}), 8, LimitClient, "12.0 ms"},
		{"scheduling lag on a saturated shared host is the host's", with(map[string]float64{"client.sched.latency_p99_ms": 15, "db.sessions.active": 3, "db.wait.CPU": 1, "host.cpu.idle%": 4}), 8, LimitServerCPU, "15.0 ms"},
		{"client starved of CPU it cannot get, sessions idle", with(map[string]float64{"client.cpu%": 70, "client.gomaxprocs": 1, "client.sched.latency_p99_ms": 25, "db.sessions.active": 0.4, "db.wait.CPU": 1, "host.cpu.idle%": 30}), 8, LimitClient, "25.0 ms (p99) for a thread, CPU 70% of its 1 cores, 0.4 of 8 sessions"},
		{"scheduling lag without sampled sessions (an embedded database) is not the client's alone", with(map[string]float64{"client.cpu%": 140, "client.sched.latency_p99_ms": 10, "host.cpu.idle%": 18}), 32, LimitNone, "none saturated"},
		{"scheduling lag while the server is busy is not the client's", with(map[string]float64{"client.sched.latency_p99_ms": 8, "db.sessions.active": 6, "db.wait.CPU": 0.7, "db.wait.LWLock:WALWrite": 0.3, "host.cpu.idle%": 45}), 8, LimitNone, "none saturated"},
		{"sessions idle in the server", with(map[string]float64{"db.sessions.active": 1.5, "db.wait.CPU": 1, "host.cpu.idle%": 60}), 32, LimitRoundTrip, "1.5 of 32"},
		{"an embedded database's single writer", with(map[string]float64{"client.cpu%": 150, "db.writer_busy_seconds/s": 0.86, "host.cpu.idle%": 6}), 32, LimitWriter, "busy 86% of the time"},
		{"a single writer with time to spare", with(map[string]float64{"client.cpu%": 60, "db.writer_busy_seconds/s": 0.4, "host.cpu.idle%": 40}), 8, LimitNone, "none saturated"},
		{"headroom", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 0.7, "db.wait.LWLock:WALWrite": 0.3, "host.cpu.idle%": 45}), 8, LimitNone, "45% idle"},
		{"other sessions' waits do not count", with(map[string]float64{"db.sessions.active": 6, "db.wait.CPU": 1, "db.wait.other.IO:WALSync": 1, "host.cpu.idle%": 45}), 8, LimitNone, "none saturated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(series(5, tt.metrics), tt.threads)
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
	d := Diagnose(append(busy, quiet...), 10)
	// (9×0.9) / (9+4) = 0.62 of sampled sessions waited on the flush.
	if d.Limit != LimitCommitFlush || d.Evidence["wait.commit_flush"] < 0.6 || d.Evidence["wait.commit_flush"] > 0.63 {
		t.Errorf("Diagnose = %s, evidence %v", d.Verdict, d.Evidence)
	}
}

func TestDiagnoseWithoutSamples(t *testing.T) {
	if d := Diagnose(nil, 8); d.Limit != LimitNone {
		t.Errorf("no intervals: %s", d.Verdict)
	}
	// No database waits (Redis, a database that cannot be monitored): the
	// host and the client still decide.
	d := Diagnose(series(3, map[string]float64{"client.cpu%": 50, "client.gomaxprocs": 2, "host.cpu.idle%": 2}), 8)
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
