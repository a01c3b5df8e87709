package export_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/testbin"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// The scrape interval of the test's Prometheus, and the rate window its
// queries use for Grafana's $__rate_interval: a window holds several
// scrapes and at least two of the monitor's one-second samples. A scrape
// must answer within the interval, which a machine loaded by a SQLite run
// and other tests at once does not always do at 250 ms.
const (
	liveScrape     = "500ms"
	liveRateWindow = "3s"
)

// TestDashboardQueriesHaveDataOnEveryDatabase runs a real Prometheus
// (Debian's prometheus package) scraping dbprobe's --metrics-addr during a
// short run on each local database, and asks Prometheus every query of the
// Grafana dashboard while the run goes: each must return data for every
// database its row says it has data for ("Has data for: sqlite, …" in the
// row's description).
func TestDashboardQueriesHaveDataOnEveryDatabase(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if testdb.InCI() {
			t.Fatal("no prometheus binary: apt-get install prometheus (CI=true: this test must run)")
		}
		t.Skip("no prometheus binary: apt-get install prometheus to run this test")
	}
	rows := dashboardQueries(t)
	bin := testbin.ForTest(t)
	metricsPort := freePort(t)
	prom := startPrometheus(t, promBin, fmt.Sprintf("127.0.0.1:%d", metricsPort))

	// SQLite and Redis run with --metrics-addr alone, so that the
	// histograms are shown to come without --out; PostgreSQL and MariaDB
	// with --out too, whose header gives the run id.
	databases := []struct {
		driver string
		out    bool
		url    func(t *testing.T) string
	}{
		{"sqlite", false, func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "ycsb.db") }},
		{"postgres", true, func(t *testing.T) string { return testdb.FreshPostgresDatabase(t) }},
		{"mysql", true, func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) }},
		{"redis", false, func(t *testing.T) string { return testdb.FreshRedisDatabase(t) }},
	}
	for _, db := range databases {
		t.Run(db.driver, func(t *testing.T) {
			var want []dashboardQuery
			for _, r := range rows {
				if r.has[db.driver] {
					want = append(want, r.queries...)
				}
			}
			if len(want) == 0 {
				t.Fatalf("no row of the dashboard says it has data for %s", db.driver)
			}
			out := filepath.Join(t.TempDir(), "result.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := []string{"ycsb", "--db", db.url(t), "--records", "500", "--threads", "2",
				"--duration", "7s", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", metricsPort)}
			if db.out {
				args = append(args, "--out", out)
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			start := time.Now()
			var stderr strings.Builder
			cmd.Stdout, cmd.Stderr = nil, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var runID string
			if db.out {
				runID = waitRunID(t, out, done, &stderr)
			} else {
				runID = waitRunIDIn(t, prom, db.driver, done, &stderr)
			}
			// Wait for the run phase in Prometheus, then for a rate window
			// and the monitor's first rates.
			phaseSeen := waitFor(t, done, 20*time.Second, func() bool {
				return len(prom.query(t, fmt.Sprintf(`dbprobe_transactions_total{run_id=%q,phase="run"}`, runID))) > 0
			})
			if !phaseSeen {
				t.Fatalf("Prometheus never saw the run phase of %s; dbprobe said:\n%s", runID, stderr.String())
			}
			time.Sleep(3500 * time.Millisecond)
			// Every query is asked at this one instant, so that how long
			// the queries take does not move their windows towards the
			// run's end. The window must hold the run going: past its end
			// every rate is 0, which is a finite value a counter's panel
			// would pass with, and a histogram_quantile NaN.
			at := time.Now()
			progress := fmt.Sprintf(`sum(rate(dbprobe_transactions_total{run_id=%q,phase="run"}[%s]))`, runID, liveRateWindow)
			if v := prom.queryAt(t, progress, at); len(v) == 0 || !(v[0] > 0) {
				state := "still running"
				select {
				case err := <-done:
					state = fmt.Sprintf("exited (%v) and said:\n%s", err, stderr.String())
				default:
				}
				t.Fatalf("the run of %s made no progress in the %s before %s (%v); dbprobe %s\nPrometheus has:\n%s",
					runID, liveRateWindow, at.Format(time.StampMilli), v, state,
					prom.samples(t, fmt.Sprintf(`{__name__=~"dbprobe_transactions_total|up|scrape_duration_seconds",job="dbprobe",run_id=~"%s|",phase=~"run|"}[%s]`,
						regexp.QuoteMeta(runID), time.Since(start).Round(time.Second)+time.Second), at))
			}
			var empty []string
			for _, q := range want {
				expr := strings.NewReplacer("$run_id", regexp.QuoteMeta(runID), "$__rate_interval", liveRateWindow).Replace(q.expr)
				if !hasFiniteValue(prom.queryAt(t, expr, at)) {
					empty = append(empty, fmt.Sprintf("%s: %s", q.panel, expr))
				}
			}
			// The queries are answered: the rest of the run would only be
			// waited for. A Ctrl-C ends it as a person would, with its
			// summary (exit status 130); one that already ended exits 0.
			cmd.Process.Signal(os.Interrupt)
			if err := <-done; err != nil && !interrupted(err, stderr.String()) {
				t.Fatalf("dbprobe: %v\n%s", err, stderr.String())
			}
			for _, e := range empty {
				t.Errorf("no data on %s for %s", db.driver, e)
			}
		})
	}
}

// interrupted says whether dbprobe's exit (err) and stderr are those of
// a run stopped by a Ctrl-C and nothing else.
func interrupted(err error, stderr string) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 130 &&
		strings.Contains(stderr, "dbprobe: interrupted (SIGINT)")
}

// dashboardRow is a row of the dashboard: the databases its description
// says it has data for, and the queries of the panels under it.
type dashboardRow struct {
	has     map[string]bool
	queries []dashboardQuery
}

type dashboardQuery struct{ panel, expr string }

func dashboardQueries(t *testing.T) []dashboardRow {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/grafana/dbprobe-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title, Description string
			Targets                  []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var rows []dashboardRow
	for _, p := range d.Panels {
		if p.Type == "row" {
			_, list, ok := strings.Cut(p.Description, "Has data for: ")
			if !ok {
				t.Fatalf("row %q does not say which databases it has data for", p.Title)
			}
			has := map[string]bool{}
			for _, db := range strings.Split(strings.TrimSuffix(list, "."), ",") {
				has[strings.TrimSpace(db)] = true
			}
			rows = append(rows, dashboardRow{has: has})
			continue
		}
		if len(rows) == 0 {
			t.Fatalf("panel %q comes before any row", p.Title)
		}
		for _, tg := range p.Targets {
			rows[len(rows)-1].queries = append(rows[len(rows)-1].queries, dashboardQuery{p.Title, tg.Expr})
		}
	}
	return rows
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type prometheusServer struct{ base string }

// startPrometheus starts Prometheus on a free loopback port with its own
// data directory, scraping target every liveScrape, and stops it when the
// test ends. It returns once Prometheus has tried target once: ready is
// not scraping, since its scrape manager takes up the configured targets
// only on a 5-second reload tick (5.4 s after the start, measured), and a
// run started at ready would lose most of its seconds to that.
func startPrometheus(t *testing.T, bin, target string) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n  - job_name: dbprobe\n    static_configs:\n      - targets: [%q]\n",
		liveScrape, liveScrape, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	p := &prometheusServer{base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && len(p.query(t, `up{job="dbprobe"}`)) > 0 {
				return p
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("Prometheus not ready or not scraping after 30 s:\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// query runs an instant query now and returns its samples' values.
func (p *prometheusServer) query(t *testing.T, expr string) []float64 {
	t.Helper()
	return p.queryAt(t, expr, time.Time{})
}

// queryAt runs an instant query evaluated at the instant at (now when at
// is zero) and returns its samples' values.
func (p *prometheusServer) queryAt(t *testing.T, expr string, at time.Time) []float64 {
	t.Helper()
	u := p.base + "/api/v1/query?query=" + url.QueryEscape(expr)
	if !at.IsZero() {
		u += "&time=" + promTime(at)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", expr, r.Error)
	}
	var out []float64
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", expr, s.Value)
		}
		out = append(out, v)
	}
	return out
}

// samples runs a range-vector query evaluated at at and returns its
// samples as text, a line a series, for a failure's message.
func (p *prometheusServer) samples(t *testing.T, expr string, at time.Time) string {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr) + "&time=" + promTime(at))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, s := range r.Data.Result {
		fmt.Fprintf(&b, "%v:", s.Metric)
		for _, v := range s.Values {
			ts, _ := v[0].(float64)
			fmt.Fprintf(&b, " %s=%v", time.UnixMilli(int64(ts*1000)).Format(time.StampMilli), v[1])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// promTime is an instant as the query API takes it: Unix seconds.
func promTime(at time.Time) string {
	return strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
}

func hasFiniteValue(values []float64) bool {
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// waitRunID reads the run id from the JSON result's first header.
func waitRunID(t *testing.T, path string, done chan error, stderr *strings.Builder) string {
	t.Helper()
	var id string
	ok := waitFor(t, done, 30*time.Second, func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		line, err := bufio.NewReader(f).ReadString('\n')
		if err != nil {
			return false
		}
		var h struct {
			Type  string `json:"type"`
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(line), &h) != nil || h.Type != "header" {
			return false
		}
		id = h.RunID
		return true
	})
	if !ok || id == "" {
		t.Fatalf("no run id in %s's header; dbprobe said:\n%s", path, stderr.String())
	}
	return id
}

// waitRunIDIn reads the run id of the one run of driver from Prometheus.
func waitRunIDIn(t *testing.T, prom *prometheusServer, driver string, done chan error, stderr *strings.Builder) string {
	t.Helper()
	var id string
	ok := waitFor(t, done, 30*time.Second, func() bool {
		ids := prom.labels(t, fmt.Sprintf(`group by (run_id) (dbprobe_transactions_total{driver=%q})`, driver), "run_id")
		if len(ids) == 1 {
			id = ids[0]
		}
		return id != ""
	})
	if !ok {
		t.Fatalf("Prometheus has no run of %s; dbprobe said:\n%s", driver, stderr.String())
	}
	return id
}

// labels runs an instant query and returns the values of one label.
func (p *prometheusServer) labels(t *testing.T, expr, label string) []string {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	var out []string
	for _, s := range r.Data.Result {
		out = append(out, s.Metric[label])
	}
	return out
}

// waitFor polls cond until it holds or the timeout passes; it gives up
// early when dbprobe has exited (its error is put back for the caller).
func waitFor(t *testing.T, done chan error, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case err := <-done:
			done <- err
			return cond()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}
