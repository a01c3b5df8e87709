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
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// The metric names Interval produces.
const (
	operationsName       = "dbprobe_operations_total"
	errorsName           = "dbprobe_errors_total"
	retriesName          = "dbprobe_retries_total"
	retryCodesName       = "dbprobe_retries_by_code_total"
	transactionsName     = "dbprobe_transactions_total"
	latencyName          = "dbprobe_latency_seconds"
	intendedLatencyName  = "dbprobe_intended_latency_seconds"
	activeSessionsName   = "dbprobe_db_active_session_seconds_total"
	waitSessionsName     = "dbprobe_db_wait_session_seconds_total"
	hostCPUName          = "dbprobe_host_cpu_share_seconds_total"
	diskNamePrefix       = "dbprobe_host_disk_"
	clientCPUName        = "dbprobe_client_cpu_seconds_total"
	clientThrottledName  = "dbprobe_client_cpu_throttled_share_seconds_total"
	clientGCPauseName    = "dbprobe_client_gc_pause_seconds_total"
	clientSchedLagName   = "dbprobe_client_sched_latency_p99_seconds"
	hostMemUsedRatioName = "dbprobe_host_mem_used_ratio"
)

// Outcomes of an operation, as its series and statuses name them: a
// series "READ" holds the successes' latencies and the statuses of every
// attempt (Return=OK, NOT_FOUND, ERROR, ERROR(code)); "READ-FAILED" holds
// the failures' latencies; "Intended-READ" and "Intended-READ-FAILED" the
// same measured from the intended start in open loop.
const (
	outcomeOK     = "OK"
	outcomeError  = "ERROR"
	outcomeFailed = "FAILED"
	failedSuffix  = "-FAILED"
	intendedStart = "Intended-"
)

// LatencyBuckets are the upper bounds, in seconds, of every latency
// histogram: the same for every client and every run, so that the
// histograms of several clients add up bucket by bucket. They are 1, 2 and
// 5 µs, then the Renard R5 series (five steps a decade, each about 1.58×
// the last: 1, 1.6, 2.5, 4, 6.3) from 10 µs to 100 s. histogram_quantile
// interpolates inside a bucket, which for a smooth distribution is within
// a few percent; finer buckets cost every scrape: R10's 78 lines per
// histogram took dbprobe's scrape to 1.1% of its CPU on PostgreSQL at 32
// threads (bench/RESULTS.md), over the 1% it may take.
var LatencyBuckets = func() []float64 {
	b := []float64{1e-6, 2e-6, 5e-6}
	for exp := -5; exp < 2; exp++ {
		for _, step := range []string{"1", "1.6", "2.5", "4", "6.3"} {
			// Parsed from decimal text, so that a bound is the float
			// nearest 1.6e-05 rather than 1.6 × 1e-05's rounding.
			v, _ := strconv.ParseFloat(step+"e"+strconv.Itoa(exp), 64)
			b = append(b, v)
		}
	}
	return append(b, 100)
}()

// Labels the exporter sets itself; a constant label of the same name is
// dropped rather than made to clash.
var ownLabels = []string{"phase", "op", "outcome", "code", "event", "sessions", "mode", "device", "le"}

// Prometheus serves a run's figures for a Prometheus server to scrape, as
// counters and histograms that add up over any window and across clients:
// operations, errors and retries by operation and outcome, a latency
// histogram per operation with the fixed LatencyBuckets, and the monitor's
// rates as counters. Only what is a state at an instant (connections, a
// page size, memory in use) is a gauge, and it shows the latest sample.
// Counters start at 0 when the process starts and carry the run id label,
// so that two runs are never mistaken for one.
type Prometheus struct {
	result.Ignore
	registry    *prometheus.Registry
	constLabels prometheus.Labels

	mu       sync.Mutex        // Interval and Monitor come from different goroutines
	descs    map[string]family // by metric name
	counters map[string]*counter
	hists    map[string]*histogram
	gauges   map[string]gauge // the latest value of each, in the current phase
}

// gauge is one gauge's latest value.
type gauge struct {
	phase string
	m     prometheus.Metric
}

// family is a metric name's one Desc, its kind and label names.
type family struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	labels string
}

// counter is one labelled counter's running total.
type counter struct {
	desc   *prometheus.Desc
	values []string
	v      float64
}

// histogram is one latency histogram's counts in LatencyBuckets (the last
// element counts the values above the last bound).
type histogram struct {
	desc   *prometheus.Desc
	values []string
	counts []uint64
	count  uint64
	sum    float64 // seconds
}

// NewPrometheus returns an exporter whose every metric carries constLabels
// (the run id, the driver…). Label names Prometheus does not accept are
// mapped like metric names; labels the exporter sets itself (phase, op,
// outcome…) are dropped.
func NewPrometheus(constLabels map[string]string) *Prometheus {
	labels := prometheus.Labels{}
	for k, v := range constLabels {
		name := labelName(k)
		if name == "" || slices.Contains(ownLabels, name) {
			continue
		}
		labels[name] = v
	}
	p := &Prometheus{
		registry: prometheus.NewRegistry(), constLabels: labels,
		descs: map[string]family{}, counters: map[string]*counter{}, hists: map[string]*histogram{}, gauges: map[string]gauge{},
	}
	p.registry.MustRegister(collector{p})
	return p
}

// Interval adds one interval of the runner's series to the counters and
// histograms:
//
//	dbprobe_transactions_total{phase}
//	dbprobe_operations_total{phase,op,outcome}      outcome OK, NOT_FOUND, ERROR
//	dbprobe_errors_total{phase,op,code}             ERROR(code) by code
//	dbprobe_retries_total{phase,op}                 attempts repeated
//	dbprobe_retries_by_code_total{phase,op,code}
//	dbprobe_latency_seconds{phase,op,outcome}       histogram, outcome OK or FAILED
//	dbprobe_intended_latency_seconds{phase,op,outcome}  the same from the intended start (open loop)
//
// An operation's OK and ERROR counts are there from its first interval on,
// zero included, so that a rate of errors is 0 rather than no data. The
// histograms are made from the series' HDR histograms (Summary.HDR, or
// Summary.Histogram decoded); a series without one adds to the counters
// only. Warm-up intervals count too: the operations happened.
func (p *Prometheus) Interval(iv result.Interval) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	phase := iv.Phase
	p.add(transactionsName, "Transactions finished (a read-modify-write is one).", float64(iv.Ops), "phase", phase)
	var errs []error
	for _, s := range iv.Series {
		op, outcome, intended := splitSeries(s.Name)
		if outcome == outcomeOK && !intended {
			p.add(operationsName, "Operations finished, by operation and outcome (YCSB's Return= status: OK, NOT_FOUND, ERROR).", 0, "phase", phase, "op", op, "outcome", outcomeOK)
			p.add(operationsName, "", 0, "phase", phase, "op", op, "outcome", outcomeError)
			for _, st := range s.Statuses {
				if code, ok := strings.CutPrefix(st.Status, outcomeError+"("); ok {
					p.add(errorsName, "Failed operations by error code (the code and its name in the database's words).", float64(st.Count), "phase", phase, "op", op, "code", strings.TrimSuffix(code, ")"))
					continue
				}
				p.add(operationsName, "", float64(st.Count), "phase", phase, "op", op, "outcome", st.Status)
			}
			if s.Retries != nil {
				p.add(retriesName, "Attempts that failed with a retryable error and were repeated, by operation.", float64(*s.Retries), "phase", phase, "op", op)
			}
			for _, code := range slices.Sorted(maps.Keys(s.RetriesByCode)) {
				p.add(retryCodesName, "Attempts repeated, by operation and the code of the error that caused the retry.", float64(s.RetriesByCode[code]), "phase", phase, "op", op, "code", code)
			}
		}
		if s.HDR == nil && s.Histogram == "" {
			continue
		}
		name, help := latencyName, "Latency of operations, by operation and outcome (FAILED: NOT_FOUND and ERROR), from dbprobe's HDR histograms."
		if intended {
			name, help = intendedLatencyName, "Latency of open-loop operations measured from their intended start, by operation and outcome."
		}
		if err := p.observe(name, help, s, "phase", phase, "op", op, "outcome", outcome); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// bucketTables holds, by HDR geometry, the LatencyBuckets index of every
// HDR count index, so that a histogram is bucketed by one pass over its
// counts rather than by Distribution, which allocates a bar per count up
// to the largest value (measured: most of the exporter's CPU).
var bucketTables sync.Map // [3]int64 → []uint8

// bucketTable returns the table of snap's geometry, built once with the
// library's own index-to-value mapping: the Distribution of a histogram
// of that geometry holding 1 at every index lists each index's lowest
// value in counts order. Nil when that does not hold (a library whose
// Distribution does not walk every index).
func bucketTable(snap *hdr.Snapshot) []uint8 {
	key := [3]int64{snap.LowestTrackableValue, snap.HighestTrackableValue, snap.SignificantFigures}
	if t, ok := bucketTables.Load(key); ok {
		return t.([]uint8)
	}
	ones := *snap
	ones.Counts = make([]int64, len(snap.Counts))
	for i := range ones.Counts {
		ones.Counts[i] = 1
	}
	bars := hdr.Import(&ones).Distribution()
	var table []uint8
	if len(bars) == len(ones.Counts) && len(LatencyBuckets) < 255 {
		table = make([]uint8, len(bars))
		b := 0
		for i, bar := range bars {
			v := float64(bar.From) / 1e6
			for b < len(LatencyBuckets) && v > LatencyBuckets[b] {
				b++
			}
			table[i] = uint8(b)
		}
	}
	bucketTables.Store(key, table)
	return table
}

// splitSeries reads a series name: "Intended-READ-FAILED" is operation
// READ, outcome FAILED, measured from the intended start.
func splitSeries(name string) (op, outcome string, intended bool) {
	op, intended = strings.CutPrefix(name, intendedStart)
	outcome = outcomeOK
	if base, ok := strings.CutSuffix(op, failedSuffix); ok && base != "" {
		op, outcome = base, outcomeFailed
	}
	return op, outcome, intended
}

// observe adds a series' HDR histogram (microseconds) to a latency
// histogram: the histogram itself when the runner hands it (Summary.HDR),
// else its encoding (Summary.Histogram, as in a result read back). Each
// HDR bar counts in the first bucket whose bound is at least the bar's
// lowest value, so a bound is exact to HDR's precision (3 significant
// digits).
func (p *Prometheus) observe(name, help string, s measure.Summary, labelPairs ...string) error {
	h := s.HDR
	if h == nil {
		var err error
		if h, err = hdr.Decode([]byte(s.Histogram)); err != nil {
			return fmt.Errorf("bad histogram: %w", err)
		}
	}
	if h.TotalCount() == 0 {
		return nil
	}
	names, values := splitPairs(labelPairs)
	key := name + "\xff" + strings.Join(values, "\xff")
	st, ok := p.hists[key]
	if !ok {
		desc := p.desc(name, histogramKind, help, names)
		if desc == nil {
			return nil
		}
		st = &histogram{desc: desc, values: values, counts: make([]uint64, len(LatencyBuckets)+1)}
		p.hists[key] = st
	}
	snap := h.Export()
	if table := bucketTable(snap); table != nil {
		for i, n := range snap.Counts {
			if n > 0 {
				st.counts[table[i]] += uint64(n)
			}
		}
	} else {
		i := 0
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			v := float64(bar.From) / 1e6
			for i < len(LatencyBuckets) && v > LatencyBuckets[i] {
				i++
			}
			st.counts[i] += uint64(bar.Count)
		}
	}
	st.count += uint64(h.TotalCount())
	// The summary's mean is HDR's, already computed: Mean walks every
	// count again (measured: half the exporter's CPU).
	mean := s.MeanMicros
	if s.Count != h.TotalCount() {
		mean = h.Mean()
	}
	st.sum += mean * float64(h.TotalCount()) / 1e6
	return nil
}

// Monitor adds one interval of the monitor's figures. A rate ("/s") and a
// share of the interval ("%") become counters of what the interval added
// (rate × interval, share × interval), so that rate() over any window gives
// the figure back and a scrape every 15 s misses nothing; a database's
// counters keep its own names, the standard ones included
// (db.log_bytes/s → dbprobe_db_log_bytes_total). Devices, CPU modes,
// wait events and whose sessions are labels:
//
//	db.wait.<event>, db.wait.other.<event>    dbprobe_db_wait_session_seconds_total{sessions,event}
//	db.sessions.active, …other.active         dbprobe_db_active_session_seconds_total{sessions}
//	host.cpu.<mode>%                          dbprobe_host_cpu_share_seconds_total{mode}
//	host.disk.<dev>.read_bytes/s …            dbprobe_host_disk_read_bytes_total{device} …
//	host.disk.<dev>.queue_ms/s, util%         …_queue_seconds_total, …_busy_seconds_total
//	client.cpu%                               dbprobe_client_cpu_seconds_total
//	client.gc.pause_ms                        dbprobe_client_gc_pause_seconds_total
//
// The rate of a session-seconds counter is an average number of sessions
// (the database's "average active sessions"). Values at an instant
// (db.<gauge>, host.mem.*, client.goroutines, client.cores…) and the
// interval's scheduling p99 are gauges of the latest sample that had them
// in the phase, in base units (seconds, ratios). The monitor's rates divide each counter's change by
// the time between its readings, which is within milliseconds of the
// interval, so a counter is exact to that.
func (p *Prometheus) Monitor(m result.MonitorSample) error {
	dt := m.End.Sub(m.Start).Seconds()
	if m.Start.IsZero() || dt <= 0 {
		dt = 0 // no interval: no amounts to add, only the gauges
	}
	phase := m.Phase
	p.mu.Lock()
	defer p.mu.Unlock()
	// A gauge keeps its last value while the phase goes on, since a
	// sample may lack a figure now and then (a scheduling percentile with
	// nothing scheduled): a series that vanished from one scrape would be
	// marked stale. Those of an earlier phase go.
	for k, g := range p.gauges {
		if g.phase != phase {
			delete(p.gauges, k)
		}
	}
	setGauge := func(name, help string, v float64, labelPairs ...string) {
		names, values := splitPairs(labelPairs)
		desc := p.desc(name, prometheus.GaugeValue, help, names)
		if desc == nil {
			return
		}
		if g, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, values...); err == nil {
			p.gauges[name+"\xff"+strings.Join(values, "\xff")] = gauge{phase: phase, m: g}
		}
	}
	seen := map[string]bool{} // two names mapped to one series: the first in sorted order
	count := func(name, help string, v float64, labelPairs ...string) {
		key := name + "\xff" + strings.Join(labelPairs, "\xff")
		if seen[key] || dt == 0 {
			return
		}
		seen[key] = true
		p.add(name, help, v, labelPairs...)
	}
	active := map[string]float64{"dbprobe": m.Metrics["db.sessions.active"], "other": m.Metrics["db.sessions.other.active"]}
	for _, name := range slices.Sorted(maps.Keys(m.Metrics)) {
		v := m.Metrics[name]
		switch {
		case name == "db.sessions.active" || name == "db.sessions.other.active":
			sessions := "dbprobe"
			if strings.Contains(name, ".other.") {
				sessions = "other"
			}
			count(activeSessionsName, "Active sessions × seconds, sampled (sessions: dbprobe's or the server's other ones); its rate is the average number of active sessions.", v*dt, "phase", phase, "sessions", sessions)
		case strings.HasPrefix(name, "db.wait."):
			event, sessions := strings.TrimPrefix(name, "db.wait."), "dbprobe"
			if e, ok := strings.CutPrefix(event, "other."); ok {
				event, sessions = e, "other"
			}
			count(waitSessionsName, "Sessions × seconds in a wait, by event (CPU for those running), sampled; its rate is the average number of sessions in that wait.", v*active[sessions]*dt, "phase", phase, "sessions", sessions, "event", event)
		case strings.HasPrefix(name, "host.cpu.") && strings.HasSuffix(name, "%"):
			mode := strings.TrimSuffix(strings.TrimPrefix(name, "host.cpu."), "%")
			count(hostCPUName, "Seconds × the share of all the host's CPUs in a mode; its rate is the share (0-1).", v/100*dt, "phase", phase, "mode", mode)
		case strings.HasPrefix(name, "host.disk."):
			rest := strings.TrimPrefix(name, "host.disk.")
			dot := strings.LastIndexByte(rest, '.')
			if dot <= 0 {
				continue
			}
			device, what := rest[:dot], rest[dot+1:]
			switch what {
			case "queue_ms/s":
				count(diskNamePrefix+"queue_seconds_total", "Seconds spent on I/O weighted by the requests in flight (/proc/diskstats); its rate is the average queue length.", v/1000*dt, "phase", phase, "device", device)
			case "util%":
				count(diskNamePrefix+"busy_seconds_total", "Seconds the device had I/O in flight; its rate is the utilisation (0-1).", v/100*dt, "phase", phase, "device", device)
			default:
				base, ok := strings.CutSuffix(what, "/s")
				if !ok {
					continue
				}
				count(diskNamePrefix+underscores(base)+"_total", "Host disk "+base+" (/proc/diskstats), by device.", v*dt, "phase", phase, "device", device)
			}
		case name == "client.cpu%":
			count(clientCPUName, "CPU seconds dbprobe used; its rate is the cores it kept busy.", v/100*dt, "phase", phase)
		case name == "client.cpu.throttled%":
			count(clientThrottledName, "Seconds × the share of dbprobe's cgroup CPU periods that were throttled; its rate is that share (0-1).", v/100*dt, "phase", phase)
		case name == "client.gc.pause_ms":
			count(clientGCPauseName, "Seconds of stop-the-world garbage collection pauses in dbprobe.", v/1000, "phase", phase)
		case name == "client.sched.latency_p99_ms":
			setGauge(clientSchedLagName, "99th percentile of how long dbprobe's runnable goroutines waited for a thread, over the latest monitor interval.", v/1000, "phase", phase)
		case name == "host.mem.used%":
			setGauge(hostMemUsedRatioName, "Share (0-1) of the host's memory in use, at the latest sample.", v/100, "phase", phase)
		case strings.HasSuffix(name, "/s"):
			base := strings.TrimSuffix(name, "/s")
			count(metricName(base)+"_total", "Counter "+base+" as the monitor reads it (see dbprobe's monitor package for its unit), from the start of the run.", v*dt, "phase", phase)
		case strings.HasSuffix(name, "%"):
			setGauge(metricName(strings.TrimSuffix(name, "%"))+"_ratio", "Monitor figure "+name+" as a ratio (0-1), at the latest sample.", v/100, "phase", phase)
		default:
			setGauge(metricName(name), "Monitor figure "+name+" at the latest sample (see dbprobe's monitor package for its unit).", v, "phase", phase)
		}
	}
	return nil
}

// add adds v to a counter, creating it (at v) the first time; labelPairs
// alternate names and values. A counter whose name is taken by a family
// of other label names, or with a label value Prometheus refuses, is
// left out rather than made to fail the scrape.
func (p *Prometheus) add(name, help string, v float64, labelPairs ...string) {
	names, values := splitPairs(labelPairs)
	key := name + "\xff" + strings.Join(values, "\xff")
	c, ok := p.counters[key]
	if !ok {
		desc := p.desc(name, prometheus.CounterValue, help, names)
		if desc == nil {
			return
		}
		c = &counter{desc: desc, values: values}
		p.counters[key] = c
	}
	if v > 0 { // a counter never goes down, whatever a figure says
		c.v += v
	}
}

// desc returns the one Desc of a metric name, or nil when the name is
// already in use by a metric of another kind or other label names (the
// registry would fail the whole scrape on it), or when a histogram's
// series names (_bucket, _sum, _count) would clash with another metric.
func (p *Prometheus) desc(name string, kind prometheus.ValueType, help string, labelNames []string) *prometheus.Desc {
	key := strings.Join(labelNames, "\xff")
	if f, ok := p.descs[name]; ok {
		if f.kind != kind || f.labels != key {
			return nil
		}
		return f.desc
	}
	for n, f := range p.descs {
		if histogramClash(n, f.kind, name) || histogramClash(name, kind, n) {
			return nil
		}
	}
	if help == "" {
		help = name
	}
	d := prometheus.NewDesc(name, help, labelNames, p.constLabels)
	p.descs[name] = family{desc: d, kind: kind, labels: key}
	return d
}

// histogramKind marks a histogram's family in Prometheus.descs.
const histogramKind prometheus.ValueType = -1

// histogramClash reports whether other is one of the series names of
// family name when that is a histogram.
func histogramClash(name string, kind prometheus.ValueType, other string) bool {
	if kind != histogramKind {
		return false
	}
	s, ok := strings.CutPrefix(other, name)
	return ok && (s == "_bucket" || s == "_sum" || s == "_count")
}

func splitPairs(labelPairs []string) (names, values []string) {
	for i := 0; i+1 < len(labelPairs); i += 2 {
		names = append(names, labelPairs[i])
		values = append(values, labelPairs[i+1])
	}
	return names, values
}

// Handler serves the exporter's registry (not the process-wide default
// one, so that nothing else registered in the process leaks into it).
// It never compresses: gzip was half the CPU of a scrape (measured, see
// bench/RESULTS.md), to save some 50 KB a second that a scraper on the
// same machine or network does not miss.
func (p *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(p.registry, promhttp.HandlerOpts{DisableCompression: true})
}

// Serve listens on addr and serves /metrics until ctx ends. Unless remote
// is set, addr must be a loopback address or localhost: the figures
// describe the database and its host, and are for this machine unless the
// user says otherwise (--metrics-allow-remote). A bad address or a port in
// use is bad input. It returns the address it listens on, so that ":0"
// ports can be found.
func (p *Prometheus) Serve(ctx context.Context, addr string, remote bool) (net.Addr, error) {
	if err := CheckMetricsAddr(addr, remote); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, badinput.New("--metrics-addr %s: the port is in use by another program; give another port (or port 0 for any free one)", addr)
		}
		return nil, badinput.New("--metrics-addr %s: cannot listen there (%v); give an address of this machine, e.g. 127.0.0.1:9464", addr, shortNetError(err))
	}
	// localhost is whatever the resolver says; check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !remote && (!ok || !tcp.IP.IsLoopback()) {
		_ = ln.Close()
		return nil, badinput.New("--metrics-addr %q resolved to %v, which is not a loopback address; give 127.0.0.1:PORT, or add --metrics-allow-remote", addr, ln.Addr())
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

// shortNetError is the innermost part of a listen error ("cannot assign
// requested address"), the address being in the message already.
func shortNetError(err error) error {
	var sys *net.OpError
	if errors.As(err, &sys) && sys.Err != nil {
		return sys.Err
	}
	return err
}

// metricName maps a monitor name to a Prometheus metric name: "%" becomes
// "_percent", anything else that is not a letter, digit or underscore "_"
// (colons are valid but reserved for recording rules), runs of "_" one,
// all after "dbprobe_".
func metricName(name string) string {
	name = strings.ReplaceAll(name, "%", "_percent")
	return "dbprobe_" + strings.TrimSuffix(underscores(name), "_")
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

// collector hands the registry the counters, histograms and gauges as
// constant metrics made at scrape time. It describes nothing (an
// "unchecked" collector) because the monitor's metric names are only
// known once its figures arrive.
type collector struct{ p *Prometheus }

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	p := c.p
	p.mu.Lock()
	metrics := make([]prometheus.Metric, 0, len(p.counters)+len(p.hists)+len(p.gauges))
	for _, k := range p.counters {
		if m, err := prometheus.NewConstMetric(k.desc, prometheus.CounterValue, k.v, k.values...); err == nil {
			metrics = append(metrics, m)
		}
	}
	for _, h := range p.hists {
		buckets := make(map[float64]uint64, len(LatencyBuckets))
		var below uint64
		for i, le := range LatencyBuckets {
			below += h.counts[i]
			buckets[le] = below
		}
		if m, err := prometheus.NewConstHistogram(h.desc, h.count, h.sum, buckets, h.values...); err == nil {
			metrics = append(metrics, m)
		}
	}
	for _, g := range p.gauges {
		metrics = append(metrics, g.m)
	}
	p.mu.Unlock()
	for _, m := range metrics {
		ch <- m
	}
}

// CheckMetricsAddr refuses, as bad input, a --metrics-addr that is not
// host:port, or that is not loopback or localhost unless remote. It
// listens on nothing, so that a command checks the flag before it makes
// anything (a temporary database, a table) and Serve checks it again.
func CheckMetricsAddr(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return badinput.New("--metrics-addr %q is not host:port (%v); give e.g. 127.0.0.1:9464", addr, err)
	}
	if ip := net.ParseIP(host); !remote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return badinput.New("--metrics-addr %q is not a loopback address; give 127.0.0.1:PORT, or add --metrics-allow-remote to serve the metrics to other machines", addr)
	}
	return nil
}
