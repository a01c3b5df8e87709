package export

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: status %d: %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestPrometheusExposition(t *testing.T) {
	p := NewPrometheus(map[string]string{"driver": "postgres", "run-id": "r1", "phase": "dropped"})
	p.Interval(result.Interval{Phase: "run", End: t1, Ops: 1500, OpsPerSec: 1500, Series: sampleSeries()})
	p.Monitor(withPhase("run", sampleInterval()))
	body := scrape(t, p.Handler())
	tests := []string{
		`# TYPE dbprobe_ops_per_second gauge`,
		`dbprobe_ops_per_second{driver="postgres",phase="run",run_id="r1"} 1500`,
		`dbprobe_latency_microseconds{driver="postgres",op="READ",phase="run",quantile="0.99",run_id="r1"} 1500`,
		`dbprobe_latency_microseconds{driver="postgres",op="READ",phase="run",quantile="0.999",run_id="r1"} 7000`,
		`dbprobe_latency_mean_microseconds{driver="postgres",op="READ",phase="run",run_id="r1"} 250.5`,
		`dbprobe_latency_max_microseconds{driver="postgres",op="UPDATE x,y=z",phase="run",run_id="r1"} 12000`,
		`dbprobe_interval_operations{driver="postgres",op="SCAN",phase="run",run_id="r1"} 0`,
		`dbprobe_db_xact_commit_per_second{driver="postgres",phase="run",run_id="r1"} 1480`,
		`dbprobe_db_wal_bytes_per_second{driver="postgres",phase="run",run_id="r1"} 2.5e+06`,
		`dbprobe_db_wait_share{driver="postgres",event="IO:WALSync",phase="run",run_id="r1"} 0.4`,
		`dbprobe_db_wait_share{driver="postgres",event="CPU",phase="run",run_id="r1"} 0.35`,
		`dbprobe_db_wait_other_share{driver="postgres",event="Lock:relation",phase="run",run_id="r1"} 0.1`,
		`dbprobe_host_cpu_user_percent{driver="postgres",phase="run",run_id="r1"} 41.25`,
		`dbprobe_host_disk_nvme0n1_util_percent{driver="postgres",phase="run",run_id="r1"} 55`,
		`dbprobe_client_cpu_percent{driver="postgres",phase="run",run_id="r1"} 120`,
		`dbprobe_client_sched_latency_p99_ms{driver="postgres",phase="run",run_id="r1"} 0.8`,
		`dbprobe_orphan{driver="postgres",phase="run",run_id="r1"} 1`,
	}
	for _, want := range tests {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(body, `op="SCAN",phase="run",quantile`) {
		t.Error("a series with no operations has latency gauges")
	}
	if strings.Contains(body, "dbprobe_db_wait_IO") {
		t.Error("a wait event became a metric of its own")
	}

	// The next interval replaces the previous one: what is gone is gone.
	p.Monitor(result.MonitorSample{Phase: "run", End: t1, Metrics: map[string]float64{"db.wait.CPU": 1}})
	body = scrape(t, p.Handler())
	if strings.Contains(body, "IO:WALSync") || strings.Contains(body, "xact_commit") {
		t.Error("figures of an earlier interval are still exposed")
	}
	if !strings.Contains(body, `event="CPU",phase="run",run_id="r1"} 1`) || !strings.Contains(body, "dbprobe_ops_per_second") {
		t.Error("the latest figures are missing")
	}
}

func TestMetricName(t *testing.T) {
	tests := map[string]string{
		"db.xact_commit/s":                 "dbprobe_db_xact_commit_per_second",
		"host.cpu.user%":                   "dbprobe_host_cpu_user_percent",
		"host.disk.sda.read_bytes/s":       "dbprobe_host_disk_sda_read_bytes_per_second",
		"db.Innodb_os_log_written/s":       "dbprobe_db_Innodb_os_log_written_per_second",
		"client.sched.latency_p99_ms":      "dbprobe_client_sched_latency_p99_ms",
		"db.weird name:with-dashes/x":      "dbprobe_db_weird_name_with_dashes_x",
		"host.disk.dm-0.queue_ms/s":        "dbprobe_host_disk_dm_0_queue_ms_per_second",
		"db.über":                          "dbprobe_db_ber",
		"db.SQLServer:Databases.Log Bytes": "dbprobe_db_SQLServer_Databases_Log_Bytes",
	}
	for in, want := range tests {
		if got := metricName(in); got != want {
			t.Errorf("metricName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrometheusCollidingNamesDoNotBreakTheScrape(t *testing.T) {
	p := NewPrometheus(nil)
	p.Monitor(result.MonitorSample{Phase: "run", End: t1, Metrics: map[string]float64{"db.a/s": 1, "db.a_per_second": 2, "ops_per_second": 3, "db.wait_share": 4}})
	body := scrape(t, p.Handler())
	if !strings.Contains(body, `dbprobe_db_a_per_second{phase="run"} 1`) {
		t.Errorf("want the first name in sorted order kept:\n%s", body)
	}
	if strings.Contains(body, "dbprobe_ops_per_second") || strings.Contains(body, "dbprobe_db_wait_share") {
		t.Errorf("a monitor name took a name the exporter reserves:\n%s", body)
	}
}

func TestServeOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewPrometheus(nil)
	p.Interval(result.Interval{Phase: "load", End: t1, Ops: 10, OpsPerSec: 10, Series: nil})
	addr, err := p.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	if !strings.Contains(string(body), `dbprobe_ops_per_second{phase="load"} 10`) {
		t.Errorf("GET /metrics lacks ops per second:\n%s", body)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:9464", "no-port"} {
		t.Run(addr, func(t *testing.T) {
			_, err := NewPrometheus(nil).Serve(t.Context(), addr)
			if err == nil || !badinput.Is(err) {
				t.Errorf("Serve(%q) = %v, want a bad-input error", addr, err)
			}
		})
	}
}

// TestDashboardUsesExportedMetrics checks that every metric the Grafana
// dashboard queries is one the exporter produces from the monitor's and
// the runner's figures, so that no panel stays empty for a renamed metric.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/dbprobe-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard any
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dashboard)
	if len(exprs) < 7 {
		t.Fatalf("found %d PromQL expressions, want one per panel at least", len(exprs))
	}

	// What the exporter produces from a run monitored on PostgreSQL and on
	// MySQL (their commit and log counters are named differently).
	p := NewPrometheus(nil)
	p.Interval(result.Interval{Phase: "run", End: t1, Ops: 1, OpsPerSec: 1, Series: sampleSeries()})
	iv := sampleInterval()
	for _, name := range []string{"host.cpu.system%", "host.cpu.steal%", "host.cpu.idle%", "db.Com_commit/s", "db.Innodb_os_log_written/s", "client.gc.pause_ms", "client.gomaxprocs"} {
		iv.Metrics[name] = 1
	}
	p.Monitor(withPhase("run", iv))
	exposed := map[string]bool{}
	for line := range strings.Lines(scrape(t, p.Handler())) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			exposed[strings.Fields(name)[0]] = true
		}
	}
	metric := regexp.MustCompile(`\bdbprobe_[A-Za-z0-9_]+`)
	for _, e := range exprs {
		names := metric.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("expression %q queries no dbprobe metric", e)
		}
		for _, n := range names {
			if !exposed[n] {
				t.Errorf("expression %q uses %s, which the exporter does not produce", e, n)
			}
		}
	}
}
