package export

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

// The metric names Tick produces. Monitor's names are made from the
// monitor's own by metricName, except the wait shares, which are one
// vector each with the event as a label.
const (
	opsPerSecondName       = "dbprobe_ops_per_second"
	intervalOperationsName = "dbprobe_interval_operations"
	latencyName            = "dbprobe_latency_microseconds"
	latencyMeanName        = "dbprobe_latency_mean_microseconds"
	latencyMaxName         = "dbprobe_latency_max_microseconds"
	waitShareName          = "dbprobe_db_wait_share"
	otherWaitShareName     = "dbprobe_db_wait_other_share"
)

// The monitor's prefixes for wait shares (see package monitor).
const (
	waitPrefix      = "db.wait."
	otherWaitPrefix = "db.wait.other."
)

// Labels the exporter sets itself; a constant label of the same name is
// dropped rather than made to clash.
var ownLabels = []string{"phase", "op", "quantile", "event"}

// Prometheus keeps the latest interval's figures as gauges in a registry
// of its own, for a Prometheus server to scrape. Each Tick replaces the
// previous tick's figures and each Monitor the previous interval's, so a
// series that stopped (an operation no longer run, a wait no longer seen,
// a phase that ended) disappears from the next scrape instead of showing
// its last value for ever.
type Prometheus struct {
	result.Ignore
	registry    *prometheus.Registry
	constLabels prometheus.Labels

	mu   sync.Mutex // Tick and Monitor come from different goroutines
	tick []prometheus.Metric
	mon  []prometheus.Metric
}

// NewPrometheus returns an exporter whose every metric carries constLabels
// (a run id, the driver…). Label names Prometheus does not accept are
// mapped like metric names; labels named phase, op, quantile or event are
// dropped, since the exporter sets those itself.
func NewPrometheus(constLabels map[string]string) *Prometheus {
	labels := prometheus.Labels{}
	for k, v := range constLabels {
		name := labelName(k)
		if name == "" || slices.Contains(ownLabels, name) {
			continue
		}
		labels[name] = v
	}
	p := &Prometheus{registry: prometheus.NewRegistry(), constLabels: labels}
	p.registry.MustRegister(collector{p})
	return p
}

// Interval replaces the runner's figures: dbprobe_ops_per_second{phase},
// dbprobe_interval_operations{phase,op} (operations in the interval) and,
// for series with operations in the interval,
// dbprobe_latency_microseconds{phase,op,quantile} (quantile 0.99 for the
// 99th percentile), dbprobe_latency_mean_microseconds{phase,op} and
// dbprobe_latency_max_microseconds{phase,op}. end and ops are not used:
// a gauge has no timestamp of its own, and the rate says what ops would.
func (p *Prometheus) Interval(iv result.Interval) error {
	phase := iv.Phase
	b := p.newBuilder()
	b.add(opsPerSecondName, "Operations per second in the latest interval.", iv.OpsPerSec, "phase", phase)
	for _, s := range iv.Series {
		b.add(intervalOperationsName, "Operations recorded in the latest interval, by series.", float64(s.Count), "phase", phase, "op", s.Name)
		if s.Count == 0 {
			continue // a latency of 0 would be a figure nobody measured
		}
		for _, pc := range s.Percentiles {
			b.add(latencyName, "Latency percentile of the latest interval, by series, in microseconds.", float64(pc.Micros),
				"phase", phase, "op", s.Name, "quantile", strconv.FormatFloat(pc.Percentile/100, 'g', 12, 64))
		}
		b.add(latencyMeanName, "Mean latency of the latest interval, by series, in microseconds.", s.MeanMicros, "phase", phase, "op", s.Name)
		b.add(latencyMaxName, "Maximum latency of the latest interval, by series, in microseconds.", float64(s.MaxMicros), "phase", phase, "op", s.Name)
	}
	p.mu.Lock()
	p.tick = b.metrics
	p.mu.Unlock()
	return nil
}

// Monitor replaces the monitor's figures. "db.wait.<event>" becomes
// dbprobe_db_wait_share{event="<event>"} and "db.wait.other.<event>"
// dbprobe_db_wait_other_share{event="<event>"}; every other name becomes
// a gauge of its own named by metricName ("db.xact_commit/s" →
// dbprobe_db_xact_commit_per_second). When two names map to the same
// gauge, the first in sorted order is kept, so a scrape never fails on a
// duplicate.
func (p *Prometheus) Monitor(iv result.MonitorSample) error {
	phase := iv.Phase
	b := p.newBuilder()
	for _, name := range slices.Sorted(maps.Keys(iv.Metrics)) {
		v := iv.Metrics[name]
		if event, ok := strings.CutPrefix(name, otherWaitPrefix); ok {
			b.add(otherWaitShareName, "Share (0-1) of the server's other active sessions in a wait, by event.", v, "phase", phase, "event", event)
			continue
		}
		if event, ok := strings.CutPrefix(name, waitPrefix); ok {
			b.add(waitShareName, "Share (0-1) of dbprobe's active sessions in a wait, by event; event CPU for those running.", v, "phase", phase, "event", event)
			continue
		}
		metric := metricName(name)
		if slices.Contains(tickNames, metric) || metric == waitShareName || metric == otherWaitShareName {
			continue
		}
		b.add(metric, "dbprobe monitor figure "+name+" (see dbprobe's monitor package for its unit).", v, "phase", phase)
	}
	p.mu.Lock()
	p.mon = b.metrics
	p.mu.Unlock()
	return nil
}

var tickNames = []string{opsPerSecondName, intervalOperationsName, latencyName, latencyMeanName, latencyMaxName}

// Handler serves the exporter's registry (not the process-wide default
// one, so that nothing else registered in the process leaks into it).
func (p *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(p.registry, promhttp.HandlerOpts{})
}

// Serve listens on addr, which must be a loopback address or localhost
// (the figures describe the database and its host, and this project
// serves nothing beyond the machine), and serves /metrics until ctx ends.
// It returns the address it listens on, so that ":0" ports can be found.
func (p *Prometheus) Serve(ctx context.Context, addr string) (net.Addr, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, badinput.New("metrics address %q is not host:port (%w); give e.g. 127.0.0.1:9464", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, badinput.New("metrics address %q is not a loopback address; give 127.0.0.1:PORT, [::1]:PORT or localhost:PORT", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics endpoint: %w", err)
	}
	// localhost is whatever the resolver says; check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return nil, badinput.New("metrics address %q resolved to %v, which is not a loopback address; give 127.0.0.1:PORT", addr, ln.Addr())
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", p.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		// ErrServerClosed is the normal end; anything else has no one to
		// tell but the scraper, which sees the connection refused.
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = ln.Close()
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(shutdown) != nil {
			_ = srv.Close()
		}
	}()
	return ln.Addr(), nil
}

// metricName maps a monitor name to a Prometheus metric name: a trailing
// "/s" becomes "_per_second", "%" "_percent", anything else that is not a
// letter, digit or underscore "_" (colons are valid but reserved for
// recording rules), runs of "_" one, all after "dbprobe_".
func metricName(name string) string {
	if base, ok := strings.CutSuffix(name, "/s"); ok {
		name = base + "_per_second"
	}
	name = strings.ReplaceAll(name, "%", "_percent")
	return "dbprobe_" + underscores(name)
}

// labelName maps a label name the same way; "" when nothing is left, and
// no leading digit or "__" (reserved for Prometheus's own labels).
func labelName(name string) string {
	s := strings.TrimLeft(underscores(name), "_")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "l_" + s
	}
	return s
}

// underscores replaces every character outside [A-Za-z0-9_] by "_" and
// collapses runs of "_".
func underscores(s string) string {
	var b strings.Builder
	for _, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			r = '_'
		}
		if r == '_' && strings.HasSuffix(b.String(), "_") {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// builder makes one call's constant metrics, one Desc per metric name so
// that a family's metrics share their help and label names, as the
// registry requires.
type builder struct {
	constLabels prometheus.Labels
	descs       map[string]*prometheus.Desc
	seen        map[string]bool // name and label values already added
	metrics     []prometheus.Metric
}

func (p *Prometheus) newBuilder() *builder {
	return &builder{constLabels: p.constLabels, descs: map[string]*prometheus.Desc{}, seen: map[string]bool{}}
}

// add appends one gauge; labelPairs alternate names and values. A second
// gauge with the same name and label values is skipped, since the registry
// would fail the whole scrape on it; so is one with a label value
// Prometheus rejects (invalid UTF-8). NaN and ±Inf are valid samples.
func (b *builder) add(name, help string, v float64, labelPairs ...string) {
	var names, values []string
	for i := 0; i+1 < len(labelPairs); i += 2 {
		names = append(names, labelPairs[i])
		values = append(values, labelPairs[i+1])
	}
	key := name + "\xff" + strings.Join(values, "\xff")
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	desc, ok := b.descs[name]
	if !ok {
		desc = prometheus.NewDesc(name, help, names, b.constLabels)
		b.descs[name] = desc
	}
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, values...)
	if err != nil {
		return
	}
	b.metrics = append(b.metrics, m)
}

// collector hands the registry the latest figures. It describes nothing
// (an "unchecked" collector) because the monitor's metric names are only
// known once its figures arrive.
type collector struct{ p *Prometheus }

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.p.mu.Lock()
	metrics := slices.Concat(c.p.tick, c.p.mon)
	c.p.mu.Unlock()
	for _, m := range metrics {
		ch <- m
	}
}
