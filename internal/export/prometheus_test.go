package export

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/measure"
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

// encode returns values (microseconds) as an encoded HDR histogram, as
// the runner puts it in Summary.Histogram.
func encode(t *testing.T, values ...int64) string {
	t.Helper()
	h := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hasSample reports whether body has the sample want ("name{labels}
// value"), its value equal to within rounding.
func hasSample(body, want string) bool {
	i := strings.LastIndexByte(want, ' ')
	wantV, err := strconv.ParseFloat(want[i+1:], 64)
	if err != nil {
		return strings.Contains(body, want+"\n")
	}
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), want[:i+1]); ok {
			got, err := strconv.ParseFloat(v, 64)
			return err == nil && math.Abs(got-wantV) <= 1e-9*math.Max(1, math.Abs(wantV))
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// exposedSeries are one interval's series as the runner gives them with
// histograms: READ with successes, a NOT_FOUND and two errors, its
// failures' latencies, an UPDATE retried twice, and an open-loop series.
func exposedSeries(t *testing.T) []measure.Summary {
	return []measure.Summary{
		{Name: "READ", Count: 4, MeanMicros: 2750, Histogram: encode(t, 100, 1000, 2000, 7900), Retries: ptr(int64(0)),
			Statuses: []measure.StatusCount{{Status: "OK", Count: 4}, {Status: "ERROR", Count: 2}, {Status: "ERROR(40001 serialization_failure)", Count: 2}, {Status: "NOT_FOUND", Count: 1}}},
		{Name: "READ-FAILED", Count: 3, MeanMicros: 50, Histogram: encode(t, 50, 50, 50)},
		{Name: "UPDATE x,y=z", Count: 1, MeanMicros: 12000, Histogram: encode(t, 12000), Retries: ptr(int64(2)), RetriesByCode: map[string]int64{"40P01": 2},
			Statuses: []measure.StatusCount{{Status: "OK", Count: 1}}},
		{Name: "Intended-READ", Count: 1, MeanMicros: 9000, Histogram: encode(t, 9000)},
	}
}

func TestPrometheusExposition(t *testing.T) {
	p := NewPrometheus(map[string]string{"driver": "postgres", "run-id": "r1", "phase": "dropped"})
	p.Interval(result.Interval{Phase: "run", End: t1, Ops: 1500, OpsPerSec: 1500, Series: exposedSeries(t)})
	p.Interval(result.Interval{Phase: "run", End: t1, Ops: 500, OpsPerSec: 500, Series: exposedSeries(t)[:1]})
	body := scrape(t, p.Handler())
	l := `driver="postgres",`
	want := []string{
		`# TYPE dbprobe_operations_total counter`,
		`dbprobe_transactions_total{` + l + `phase="run",run_id="r1"} 2000`,
		`dbprobe_operations_total{` + l + `op="READ",outcome="OK",phase="run",run_id="r1"} 8`,
		`dbprobe_operations_total{` + l + `op="READ",outcome="ERROR",phase="run",run_id="r1"} 4`,
		`dbprobe_operations_total{` + l + `op="READ",outcome="NOT_FOUND",phase="run",run_id="r1"} 2`,
		`dbprobe_operations_total{` + l + `op="UPDATE x,y=z",outcome="ERROR",phase="run",run_id="r1"} 0`,
		`dbprobe_errors_total{code="40001 serialization_failure",` + l + `op="READ",phase="run",run_id="r1"} 4`,
		`dbprobe_retries_total{` + l + `op="READ",phase="run",run_id="r1"} 0`,
		`dbprobe_retries_total{` + l + `op="UPDATE x,y=z",phase="run",run_id="r1"} 2`,
		`dbprobe_retries_by_code_total{code="40P01",` + l + `op="UPDATE x,y=z",phase="run",run_id="r1"} 2`,
		`# TYPE dbprobe_latency_seconds histogram`,
		// 100 µs, 1 ms, 2 ms and 7.9 ms, twice each.
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.0001"} 2`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.001"} 4`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.0016"} 4`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.0025"} 6`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.0063"} 6`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="0.01"} 8`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="OK",phase="run",run_id="r1",le="+Inf"} 8`,
		`dbprobe_latency_seconds_count{` + l + `op="READ",outcome="OK",phase="run",run_id="r1"} 8`,
		`dbprobe_latency_seconds_count{` + l + `op="READ",outcome="FAILED",phase="run",run_id="r1"} 3`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="FAILED",phase="run",run_id="r1",le="4e-05"} 0`,
		`dbprobe_latency_seconds_bucket{` + l + `op="READ",outcome="FAILED",phase="run",run_id="r1",le="6.3e-05"} 3`,
		`dbprobe_intended_latency_seconds_count{` + l + `op="READ",outcome="OK",phase="run",run_id="r1"} 1`,
	}
	for _, w := range want {
		if !hasSample(body, w) {
			t.Errorf("scrape lacks %q", w)
		}
	}
	// The sum is HDR's: each value as the middle of its bucket.
	sum := regexp.MustCompile(`dbprobe_latency_seconds_sum\{` + l + `op="READ",outcome="OK",phase="run",run_id="r1"\} (\S+)`).FindStringSubmatch(body)
	if sum == nil {
		t.Error("no sum for READ")
	} else if v, _ := strconv.ParseFloat(sum[1], 64); math.Abs(v-0.022) > 0.022e-3 {
		t.Errorf("READ's sum %v s, want 0.022 s to HDR's precision", v)
	}
	for _, bad := range []string{`op="READ-FAILED"`, `op="Intended-READ"`, `outcome="ERROR(`, "gauge"} {
		if strings.Contains(body, bad) {
			t.Errorf("scrape has %q:\n%s", bad, body)
		}
	}
}

// TestHistogramsAddUpAcrossClients checks what the fixed buckets are for:
// the histograms of two clients, summed bucket by bucket, are the
// histogram of one client that recorded both, and each bucket counts
// exactly the values at or below its bound.
func TestHistogramsAddUpAcrossClients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a, b, all []int64
	for i := range 20000 {
		v := int64(math.Exp(rng.NormFloat64()*1.5+7)) + 1 // log-normal around 1 ms
		all = append(all, v)
		if i%3 == 0 {
			a = append(a, v)
		} else {
			b = append(b, v)
		}
	}
	// a and b come encoded, as in a result read back; all as the runner
	// hands a tick's histogram (Summary.HDR).
	gather := func(values []int64, raw bool) map[float64]uint64 {
		p := NewPrometheus(nil)
		s := measure.Summary{Name: "READ", Count: int64(len(values)), Histogram: encode(t, values...)}
		if raw {
			s.HDR = hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
			for _, v := range values {
				s.HDR.RecordValue(v)
			}
			s.Histogram = ""
		}
		p.Interval(result.Interval{Phase: "run", Series: []measure.Summary{s}})
		families, err := p.registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[float64]uint64{}
		for _, f := range families {
			if f.GetName() != latencyName {
				continue
			}
			for _, bk := range f.GetMetric()[0].GetHistogram().GetBucket() {
				out[bk.GetUpperBound()] = bk.GetCumulativeCount()
			}
		}
		return out
	}
	if bucketTable(hdr.New(1, measure.HighestMicros, measure.SignificantFigures).Export()) == nil {
		t.Error("no bucket table for the runner's geometry: histograms take the slow path")
	}
	ga, gb, gall := gather(a, false), gather(b, false), gather(all, true)
	if len(gall) != len(LatencyBuckets) {
		t.Fatalf("%d buckets, want %d", len(gall), len(LatencyBuckets))
	}
	for _, le := range LatencyBuckets {
		if ga[le]+gb[le] != gall[le] {
			t.Errorf("le=%g: %d + %d != %d", le, ga[le], gb[le], gall[le])
		}
		// Exact but for values HDR cannot tell from the bound (3
		// significant digits: within 0.1% of it).
		var low, high uint64
		for _, v := range all {
			us := le * 1e6
			if float64(v) <= us*(1-1e-3) {
				low++
			}
			if float64(v) <= us*(1+1e-3) {
				high++
			}
		}
		if gall[le] < low || gall[le] > high {
			t.Errorf("le=%g: bucket holds %d, want %d to %d", le, gall[le], low, high)
		}
	}
}

func TestLatencyBuckets(t *testing.T) {
	if !slices.IsSorted(LatencyBuckets) || LatencyBuckets[0] != 1e-6 || LatencyBuckets[len(LatencyBuckets)-1] != 100 {
		t.Fatalf("buckets %v", LatencyBuckets)
	}
	for i := 1; i < len(LatencyBuckets); i++ {
		if r := LatencyBuckets[i] / LatencyBuckets[i-1]; r > 2.51 || r < 1.5 {
			t.Errorf("bucket %g follows %g: ratio %.3f", LatencyBuckets[i], LatencyBuckets[i-1], r)
		}
	}
}

func TestPrometheusMonitorCounters(t *testing.T) {
	p := NewPrometheus(map[string]string{"run_id": "r1"})
	p.Monitor(withPhase("run", sampleInterval()))
	next := sampleInterval()
	next.Start, next.End = t1, t1.Add(2*time.Second)
	next.Metrics["db.numbackends"] = 9
	delete(next.Metrics, "db.sessions.active")
	p.Monitor(withPhase("run", next))
	body := scrape(t, p.Handler())
	want := []string{
		`# TYPE dbprobe_db_xact_commit_total counter`,
		`dbprobe_db_xact_commit_total{phase="run",run_id="r1"} 4440`, // 1480/s over 1 s, then 2 s
		`dbprobe_db_wal_bytes_total{phase="run",run_id="r1"} 7.5e+06`,
		`dbprobe_db_active_session_seconds_total{phase="run",run_id="r1",sessions="dbprobe"} 7.5`,
		`dbprobe_db_wait_session_seconds_total{event="IO:WALSync",phase="run",run_id="r1",sessions="dbprobe"} 3`, // 0.4 × 7.5 × 1 s; 0 sessions after
		`dbprobe_db_wait_session_seconds_total{event="CPU",phase="run",run_id="r1",sessions="dbprobe"} 2.625`,
		`dbprobe_host_cpu_share_seconds_total{mode="user",phase="run",run_id="r1"} 1.2375`,
		`dbprobe_host_disk_busy_seconds_total{device="nvme0n1",phase="run",run_id="r1"} 1.65`,
		`dbprobe_host_disk_write_bytes_total{device="nvme0n1",phase="run",run_id="r1"} 9e+06`,
		`dbprobe_host_disk_queue_seconds_total{device="dm-0",phase="run",run_id="r1"} 2.25`,
		`dbprobe_client_cpu_seconds_total{phase="run",run_id="r1"} 3.6`,
		`dbprobe_client_gc_pause_seconds_total{phase="run",run_id="r1"} 0.004`,
		`# TYPE dbprobe_client_sched_latency_p99_seconds gauge`,
		`dbprobe_client_sched_latency_p99_seconds{phase="run",run_id="r1"} 0.0008`,
		`dbprobe_db_numbackends{phase="run",run_id="r1"} 9`,
		`dbprobe_host_mem_used_ratio{phase="run",run_id="r1"} 0.5`,
		`dbprobe_client_goroutines{phase="run",run_id="r1"} 40`,
		`dbprobe_orphan{phase="run",run_id="r1"} 1`,
	}
	for _, w := range want {
		if !hasSample(body, w) {
			t.Errorf("scrape lacks %q", w)
		}
	}
	for _, bad := range []string{"per_second", "_percent", "nvme0n1_", "IO_WALSync", "dbprobe_db_wait_IO"} {
		if strings.Contains(body, bad) {
			t.Errorf("scrape has %q:\n%s", bad, body)
		}
	}
	// A gauge missing from a sample keeps its value in the phase; the
	// next phase has only its own.
	p.Monitor(result.MonitorSample{Phase: "run", Start: t1, End: t1.Add(time.Second), Metrics: map[string]float64{"db.xact_commit/s": 10}})
	body = scrape(t, p.Handler())
	if !hasSample(body, `dbprobe_db_numbackends{phase="run",run_id="r1"} 9`) || !hasSample(body, `dbprobe_db_xact_commit_total{phase="run",run_id="r1"} 4450`) {
		t.Errorf("want the latest gauges of the phase and the counters of all:\n%s", body)
	}
	p.Monitor(result.MonitorSample{Phase: "cleanup", Start: t1, End: t1.Add(time.Second), Metrics: map[string]float64{"db.numbackends": 1}})
	body = scrape(t, p.Handler())
	if strings.Contains(body, `dbprobe_db_numbackends{phase="run"`) || !hasSample(body, `dbprobe_db_numbackends{phase="cleanup",run_id="r1"} 1`) {
		t.Errorf("want the gauges of the new phase only:\n%s", body)
	}
	if !hasSample(body, `dbprobe_db_xact_commit_total{phase="run",run_id="r1"} 4450`) {
		t.Errorf("the counters of an earlier phase must stay:\n%s", body)
	}
}

func TestMetricName(t *testing.T) {
	tests := map[string]string{
		"db.xact_commit":                   "dbprobe_db_xact_commit",
		"db.Innodb_os_log_written":         "dbprobe_db_Innodb_os_log_written",
		"client.sched.latency_p99_ms":      "dbprobe_client_sched_latency_p99_ms",
		"db.weird name:with-dashes/x":      "dbprobe_db_weird_name_with_dashes_x",
		"db.über":                          "dbprobe_db_ber",
		"db.SQLServer:Databases.Log Bytes": "dbprobe_db_SQLServer_Databases_Log_Bytes",
		"db.Page lookups/sec":              "dbprobe_db_Page_lookups_sec",
	}
	for in, want := range tests {
		if got := metricName(in); got != want {
			t.Errorf("metricName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrometheusCollidingNamesDoNotBreakTheScrape(t *testing.T) {
	p := NewPrometheus(nil)
	p.Interval(result.Interval{Phase: "run", Series: []measure.Summary{{Name: "READ", Count: 1, Histogram: encode(t, 5)}}})
	m := result.MonitorSample{Phase: "run", Start: t0, End: t1, Metrics: map[string]float64{
		"db.a/s": 1, "db.a_total": 2, "db.a.total/s": 3, "operations/s": 3, "latency_seconds_count": 4, "latency_seconds": 5,
		"db.wait_session_seconds/s": 4, "host.disk.sda.reads/s": 1, "host.disk_reads/s": 2,
	}}
	p.Monitor(m)
	p.Monitor(m)
	body := scrape(t, p.Handler())
	if !strings.Contains(body, `dbprobe_db_a_total{phase="run"} 2`+"\n") {
		t.Errorf("want the counter of the first name in sorted order:\n%s", body)
	}
	if strings.Contains(body, "dbprobe_latency_seconds_count 4") || strings.Contains(body, `dbprobe_latency_seconds{phase`) {
		t.Errorf("a monitor name took a name the exporter uses:\n%s", body)
	}
}

func TestServeOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewPrometheus(nil)
	p.Interval(result.Interval{Phase: "load", End: t1, Ops: 10, OpsPerSec: 10, Series: nil})
	addr, err := p.Serve(ctx, "127.0.0.1:0", false)
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
	if !strings.Contains(string(body), `dbprobe_transactions_total{phase="load"} 10`) {
		t.Errorf("GET /metrics lacks the transactions:\n%s", body)
	}

	// The same port again is in use: bad input, in one line.
	_, err = NewPrometheus(nil).Serve(ctx, addr.String(), false)
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "in use") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Serve on a port in use = %v, want one line of bad input saying so", err)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:9464", "no-port"} {
		t.Run(addr, func(t *testing.T) {
			_, err := NewPrometheus(nil).Serve(t.Context(), addr, false)
			if err == nil || !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Serve(%q) = %v, want one line of bad input", addr, err)
			} else if addr != "no-port" && !strings.Contains(err.Error(), "--metrics-allow-remote") {
				t.Errorf("Serve(%q) = %v, want it to name --metrics-allow-remote", addr, err)
			}
		})
	}
	// Allowed, an address this machine does not have still fails as bad
	// input rather than a plain error (nothing is bound).
	if _, err := NewPrometheus(nil).Serve(t.Context(), "192.0.2.1:0", true); err == nil || !badinput.Is(err) {
		t.Errorf("Serve on an address of no interface = %v, want bad input", err)
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

	// What the exporter produces from a run monitored with the standard
	// counters, waits, the host and the client.
	p := NewPrometheus(map[string]string{"run_id": "r1"})
	p.Interval(result.Interval{Phase: "run", End: t1, Ops: 1, OpsPerSec: 1, Series: exposedSeries(t)})
	iv := sampleInterval()
	for _, name := range []string{"host.cpu.system%", "host.disk.vda.read_bytes/s", "client.cores", "client.gc.pause_ms",
		"db.commits/s", "db.log_bytes/s", "db.device_read_bytes/s", "db.device_write_bytes/s", "db.logical_reads/s", "db.physical_reads/s"} {
		iv.Metrics[name] = 1
	}
	p.Monitor(withPhase("run", iv))
	exposed := map[string]bool{}
	for line := range strings.Lines(scrape(t, p.Handler())) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(name)
			exposed[f[0]] = true
			if f[1] == "histogram" {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					exposed[f[0]+suffix] = true
				}
			}
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
