package experiment

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

// MonitorConfig is how the monitor watches each phase.
type MonitorConfig struct {
	// Off is --no-monitor.
	Off bool
	// Interval is --monitor-interval; WaitSamples --monitor-wait-samples.
	Interval    time.Duration
	WaitSamples int
	// Prefix, when set, makes a monitor of one database among several (a
	// shard): it keeps only the database's figures (db.*), renamed
	// Prefix.* ("shard2.xact_commit/s"), since the phase's own monitor
	// samples the host and dbprobe once for all of them.
	Prefix string
}

// Validate refuses what the monitor cannot do.
func (c MonitorConfig) Validate() error {
	switch {
	case c.Off:
		return nil
	case c.WaitSamples < 1 || c.WaitSamples > 100:
		return badinput.New("--monitor-wait-samples %d: give 1 to 100 samples per interval (default 10)", c.WaitSamples)
	case c.Interval < 10*time.Millisecond:
		return badinput.New("--monitor-interval %s is too short: give 10ms or more (default 1s), or --no-monitor", c.Interval)
	}
	return nil
}

// Monitoring is the monitor of one phase: its samples go to the outputs
// and are kept for the verdict.
type Monitoring struct {
	mon       *monitor.Monitor
	intervals []monitor.Interval
	seen      int // notes already in the header
	late      []string
	placement driver.Placement
	off       bool
}

// StartMonitor starts sampling the database, the host (when the database's
// CPU is this machine's) and dbprobe itself for one phase, sending each
// interval to outs. A monitor that cannot start is a note, never a failed
// run; with c.Off it returns a Monitoring that samples nothing. The notes
// are for the phase's header.
func StartMonitor(ctx context.Context, c MonitorConfig, db driver.DB, target driver.Target, phase string, outs *Outputs) (*Monitoring, []string) {
	m := &Monitoring{placement: db.Info().Placement}
	if c.Off {
		m.off = true
		return m, []string{"monitor: off (--no-monitor)"}
	}
	opts := monitor.Options{Interval: c.Interval, WaitSamples: c.WaitSamples, Host: hostIsTheDatabases(db, target) && c.Prefix == "",
		Describe: target.ScrubError, DescribeText: target.Scrub}
	mon, err := monitor.Start(ctx, db, opts, func(iv monitor.Interval) {
		if c.Prefix != "" {
			iv.Metrics = prefixed(iv.Metrics, c.Prefix)
		}
		// Called from the monitor's goroutine until Stop returns, after
		// which Diagnose reads the intervals.
		m.intervals = append(m.intervals, iv)
		// A failed write shows when the summary is written.
		outs.Monitor(result.MonitorSample{Phase: phase, Start: iv.Start, End: iv.End, Metrics: iv.Metrics})
	})
	if err != nil {
		return m, []string{"monitor: not started: " + target.ScrubError(err)}
	}
	m.mon = mon
	host := ""
	if opts.Host {
		host = ", the host"
	}
	what := "the database's counters and waits" + host + ", and dbprobe itself"
	if _, ok := db.(driver.Monitorable); !ok {
		what = strings.TrimPrefix(host, ", ") + " and dbprobe itself: the database has no counters dbprobe reads"
		if !opts.Host {
			what = "dbprobe itself: the database has no counters dbprobe reads"
		}
	}
	switch {
	case c.Prefix != "" && m.placement == driver.PlacementNone:
		what = "nothing: there is no database"
	case c.Prefix != "":
		what = "the database's counters and waits, as " + c.Prefix + ".*"
	case m.placement == driver.PlacementNone:
		what = "the host and dbprobe itself: there is no database"
	}
	notes := []string{fmt.Sprintf("monitor: every %s (%s); %s", opts.Interval, what, outs.samplesNote())}
	for _, n := range mon.Notes() {
		notes = append(notes, "monitor: "+n)
	}
	m.seen = len(mon.Notes())
	return m, notes
}

// prefixed keeps the database's figures of metrics, renamed prefix.*.
func prefixed(metrics map[string]float64, prefix string) map[string]float64 {
	out := make(map[string]float64, len(metrics))
	for k, v := range metrics {
		if rest, ok := strings.CutPrefix(k, "db."); ok {
			out[prefix+"."+rest] = v
		}
	}
	return out
}

// Align makes the monitor's intervals end on the runner's: whole seconds
// from origin.
func (m *Monitoring) Align(origin time.Time) {
	if m.mon != nil {
		m.mon.Align(origin)
	}
}

// Stop ends the monitor after its last interval, which belongs before the
// phase's summary. It may be called more than once.
func (m *Monitoring) Stop() { m.stop(false) }

// Abandon is Stop for a phase that ended while the database was not
// answering: the monitor does not wait on it (monitor.Abandon).
func (m *Monitoring) Abandon() { m.stop(true) }

func (m *Monitoring) stop(abandon bool) {
	if m.mon == nil {
		return
	}
	if abandon {
		m.mon.Abandon()
	} else {
		m.mon.Stop()
	}
	for _, n := range m.mon.Notes()[m.seen:] {
		m.late = append(m.late, "monitor: "+n)
	}
	m.mon = nil
}

// Intervals are the intervals the monitor took during the phase, in
// order: an experiment reads its own evidence from them (the log rate of
// each second, the host's CPU during a step). Call it once Stop returned.
func (m *Monitoring) Intervals() []monitor.Interval { return m.intervals }

// LateNotes are what the monitor lost during the phase, for its summary.
func (m *Monitoring) LateNotes() []string { return m.late }

// Mean is the average of metric (a rate such as "db.device_read_bytes/s")
// over the intervals of start to end, each interval belonging to it when
// most of it does (as for the verdict), weighted by its length; false
// when none of them has the metric. Call it after Stop.
func (m *Monitoring) Mean(start, end time.Time, metric string) (float64, bool) {
	var sum, span float64
	for _, iv := range m.intervals {
		mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
		v, ok := iv.Metrics[metric]
		if !ok || mid.Before(start) || mid.After(end) {
			continue
		}
		d := iv.End.Sub(iv.Start).Seconds()
		sum += v * d
		span += d
	}
	if span <= 0 {
		return 0, false
	}
	return sum / span, true
}

// Faults are what went wrong in a phase, for its verdict: a fault comes
// before any limit the figures would show (see monitor.Diagnose).
type Faults struct {
	// Outages are the spans without service; those parts of them within
	// the measured part count.
	Outages []result.Outage
	// Stopped says in words what stopped the phase early; Failing the
	// failures more attempts cannot fix that it went on past.
	Stopped, Failing string
}

// dominates reports whether a fault is the verdict of start to end
// whatever the monitor sampled: a stop, failures gone on past, or no
// service for a tenth of the time (monitor.Diagnose's threshold).
func (f Faults) dominates(start, end time.Time) bool {
	return f.Stopped != "" || f.Failing != "" || 10*f.unavailable(start, end) >= end.Sub(start)
}

// unavailable is how long the outages cover of start to end.
func (f Faults) unavailable(start, end time.Time) time.Duration {
	var d time.Duration
	for _, o := range f.Outages {
		from, to := o.Start, o.End
		if from.Before(start) {
			from = start
		}
		if to.After(end) {
			to = end
		}
		if to.After(from) {
			d += to.Sub(from)
		}
	}
	return d
}

// Diagnose names the phase's limit from the intervals the monitor took in
// its measured part, start to end (after the warm-up), or the fault that
// dominated it; nil when the monitor was off and nothing went wrong, or
// when it did not sample a phase long enough to judge (it could not
// start).
func (m *Monitoring) Diagnose(start, end time.Time, threads int, faults Faults) *result.Diagnosis {
	if m.off && faults.Stopped == "" && faults.Failing == "" {
		return nil
	}
	return diagnose(m.intervals, start, end, threads, m.placement, faults)
}

func diagnose(intervals []monitor.Interval, start, end time.Time, threads int, placement driver.Placement, faults Faults) *result.Diagnosis {
	var measured []monitor.Interval
	for _, iv := range intervals {
		// An interval belongs to the measured part when most of it does.
		mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
		if !mid.Before(start) && !mid.After(end) {
			measured = append(measured, iv)
		}
	}
	if len(measured) == 0 && end.Sub(start) >= monitor.MinJudgedSpan && !faults.dominates(start, end) {
		// Long enough to judge, but the monitor did not sample it.
		return nil
	}
	d := monitor.Diagnose(measured, monitor.Phase{Threads: threads, Span: end.Sub(start), Placement: placement,
		Unavailable: faults.unavailable(start, end), Stopped: faults.Stopped, Failing: faults.Failing})
	return &result.Diagnosis{Limit: string(d.Limit), Verdict: d.Verdict, Evidence: d.Evidence}
}

// DiagnoseRecovered gives a summary rebuilt by dbprobe recover the verdict
// the run would have printed, from the monitor samples its result holds.
func DiagnoseRecovered(p result.Phase, s *result.Summary) {
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
	s.Diagnosis = diagnose(intervals, start, end, p.Header.SettingInt("threadcount"), placement, Faults{})
}

// hostIsTheDatabases reports whether the host's CPU and disks are the
// database's or dbprobe's alone: an embedded database, no database at
// all, or a server on a loopback address or a Unix socket.
func hostIsTheDatabases(db driver.DB, target driver.Target) bool {
	if db.Info().Placement != driver.PlacementServer {
		return true
	}
	u := target.URL
	if u == nil {
		return false
	}
	return isLocalHost(u.Hostname())
}

// isLocalHost reports whether host names this machine: a socket path,
// localhost, a loopback address, this machine's own name, or an address
// of one of its interfaces (a URL with the host's 10.0.0.5 is as local as
// 127.0.0.1). No name is looked up in DNS: a lookup could hang, and a
// name that is not this machine's is taken as remote.
func isLocalHost(host string) bool {
	if host == "" || strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	if name, err := os.Hostname(); err == nil && strings.EqualFold(host, name) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
