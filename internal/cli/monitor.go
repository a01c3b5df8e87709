package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"dbprobe/internal/driver"
	"dbprobe/internal/monitor"
	"dbprobe/internal/result"
	"dbprobe/internal/runner"
)

// startMonitor starts sampling the database, the host and dbprobe itself
// for one phase, writing each interval to the JSON result. It returns nil
// when monitoring is off; a monitor that cannot start is a note, never a
// failed run.
func (j *job) startMonitor(ctx context.Context, ph runner.Phase, keep *[]monitor.Interval) (*monitor.Monitor, []string) {
	if j.opts.noMonitor {
		return nil, []string{"monitor: off (--no-monitor)"}
	}
	opts := monitor.Options{Interval: j.opts.monitorInterval, WaitSamples: j.opts.waitSamples, Host: j.databaseIsLocal(), Describe: j.target.ScrubError, DescribeText: j.target.Scrub}
	m, err := monitor.Start(ctx, j.db, opts, func(iv monitor.Interval) {
		// Called from the monitor's goroutine until Stop returns, after
		// which the caller reads keep.
		*keep = append(*keep, iv)
		// A failed write shows when the summary is written.
		j.outs.Monitor(result.MonitorSample{Phase: ph.String(), Start: iv.Start, End: iv.End, Metrics: iv.Metrics})
	})
	if err != nil {
		return nil, []string{"monitor: not started: " + j.target.ScrubError(err)}
	}
	host := ""
	if opts.Host {
		host = ", the host"
	}
	kept := "the samples are in the JSON result (--out)"
	switch {
	case j.kept:
	case j.opts.influxOut != "":
		kept = "the samples are in --influx-out " + j.opts.influxOut + "; --out FILE also keeps them in a JSON result"
	case j.opts.metricsAddr != "":
		kept = "the samples are served at --metrics-addr while the run goes, and not kept: --out FILE keeps them in a JSON result"
	default:
		kept = "the samples are not kept: --out FILE keeps them in a JSON result"
	}
	what := "the database's counters and waits" + host + ", and dbprobe itself"
	if j.db.Info().Placement == driver.PlacementNone {
		what = "the host and dbprobe itself: there is no database"
	}
	notes := []string{fmt.Sprintf("monitor: every %s (%s); %s", opts.Interval, what, kept)}
	for _, n := range m.Notes() {
		notes = append(notes, "monitor: "+n)
	}
	return m, notes
}

// diagnose names the phase's limit from the monitor intervals that fall in
// its measured part, start to end (after the warm-up), or returns nil when
// there are none.
func diagnose(intervals []monitor.Interval, start, end time.Time, threads int, placement driver.Placement) *result.Diagnosis {
	var measured []monitor.Interval
	for _, iv := range intervals {
		// An interval belongs to the measured part when most of it does.
		mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
		if !mid.Before(start) && !mid.After(end) {
			measured = append(measured, iv)
		}
	}
	if len(measured) == 0 && end.Sub(start) >= monitor.MinJudgedSpan {
		// Long enough to judge, but the monitor did not sample it.
		return nil
	}
	d := monitor.Diagnose(measured, monitor.Phase{Threads: threads, Span: end.Sub(start), Placement: placement})
	return &result.Diagnosis{Limit: string(d.Limit), Verdict: d.Verdict, Evidence: d.Evidence}
}

// diagnoseRecovered gives a summary rebuilt by recover the diagnosis the
// run would have printed, from the monitor samples its result holds.
func diagnoseRecovered(p result.Phase, s *result.Summary) {
	start, end, ok := p.MeasuredWindow()
	if !ok || len(p.Monitor) == 0 {
		return
	}
	intervals := make([]monitor.Interval, len(p.Monitor))
	for i, m := range p.Monitor {
		intervals[i] = monitor.Interval{Start: m.Start, End: m.End, Metrics: m.Metrics}
	}
	var placement driver.Placement
	// A result written before placements were recorded reads as a server.
	_ = placement.UnmarshalText([]byte(p.Header.Database.Placement))
	s.Diagnosis = diagnose(intervals, start, end, p.Header.SettingInt("threadcount"), placement)
}

// databaseIsLocal reports whether the host's CPU and disks are the
// database's or dbprobe's alone: an embedded database, no database at
// all, or a server on a loopback address or a Unix socket.
func (j *job) databaseIsLocal() bool {
	if j.db.Info().Placement != driver.PlacementServer {
		return true
	}
	u := j.target.URL
	if u == nil {
		return false
	}
	host := u.Hostname()
	if host == "" || strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
