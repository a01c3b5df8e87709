// Package export hands a run's figures to outside tools while the run goes:
// Influx writes them as InfluxDB line protocol (for a file the user loads
// into InfluxDB or Telegraf later), Prometheus keeps the latest ones as
// gauges for a Prometheus server to scrape, and deploy/grafana holds a
// dashboard over those gauges.
//
// Both take the same two calls: Tick with the runner's per-interval
// throughput and latency summaries, and Monitor with the monitor's
// per-interval figures (see package monitor for their names). Both may be
// called from different goroutines at the same time, as the runner and the
// monitor do.
//
// Monitor names are mapped, not invented: "db.xact_commit/s" is field
// "xact_commit/s" of measurement dbprobe_db in line protocol, and gauge
// dbprobe_db_xact_commit_per_second in Prometheus, so a DBA finds the
// database's own counter name in either.
//
// Hlog writes the per-interval histograms as an HdrHistogram interval log
// (.hlog) for HdrHistogram's own tools; IntervalsCSV and MonitorCSV turn
// a JSON result read back into CSV tables for a spreadsheet (dbprobe
// export).
package export
