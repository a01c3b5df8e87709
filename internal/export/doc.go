// Package export hands a run's figures to outside tools while the run goes:
// Influx writes them as InfluxDB line protocol (for a file the user loads
// into InfluxDB or Telegraf later), Prometheus serves them for a
// Prometheus server to scrape, and deploy/grafana holds a dashboard over
// those.
//
// Both take the same two calls: Interval with the runner's per-interval
// series (counts, statuses, retries, percentiles and the encoded HDR
// histogram), and Monitor with the monitor's per-interval figures (see
// package monitor for their names). Both may be called from different
// goroutines at the same time, as the runner and the monitor do.
//
// Prometheus exports what adds up: counters of operations, errors and
// retries, histograms of latency with fixed buckets (LatencyBuckets) made
// from the HDR histograms, and the monitor's rates and shares as counters
// of what each interval added, so that rate() over any window, and sums
// over several clients, give the figures back. Only states at an instant
// are gauges. Devices, CPU modes and wait events are labels; every series
// carries the run id.
//
// Monitor names are mapped, not invented: "db.xact_commit/s" is field
// "xact_commit/s" of measurement dbprobe_db in line protocol, and counter
// dbprobe_db_xact_commit_total in Prometheus, so a DBA finds the
// database's own counter name in either.
//
// Hlog writes the per-interval histograms as an HdrHistogram interval log
// (.hlog) for HdrHistogram's own tools; IntervalsCSV and MonitorCSV turn
// a JSON result read back into CSV tables for a spreadsheet (dbprobe
// export).
package export
