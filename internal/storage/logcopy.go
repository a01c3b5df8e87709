package storage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// The thresholds of logcopy's verdict.
const (
	// almostNoLog is the log bytes per byte copied below which a copy
	// wrote almost no log: a database that skips the log for a table
	// created in the same transaction (PostgreSQL at wal_level=minimal)
	// writes the table and syncs it instead.
	almostNoLog = 0.1
	// flatLogRate is how far apart the log rates of the degrees may be
	// (max ÷ min) for more degrees to have made no difference.
	flatLogRate = 1.15
	// logWaitShare is the share of the database's sampled sessions
	// waiting on its log from which the log is what the copy waited on;
	// cpuShare the share on CPU from which a core was.
	logWaitShare = 0.4
	cpuShare     = 0.6
	// busyDevice is the utilisation of the log's device from which it is
	// saturated.
	busyDevice = 80.0
)

// logcopy fills the source table and copies it on the server at each
// --dop in turn, copy after copy until --duration is up for each (at
// least once), the copy dropped between two; the log bytes come from the
// database's counters.
func (j *job) logcopy(ctx context.Context) error {
	names := j.tableNames()
	src, dst := j.dataTable(names[0]), j.dataTable(names[1])
	size, err := j.filledTable(ctx, src)
	if err != nil {
		return err
	}
	j.sum.BytesAre = "the source table's size on disk as the database reports it (" + size.How + "), once per copy"
	dops := j.c.Dops
	if slices.ContainsFunc(dops, func(d int) bool { return d > 1 }) && !j.caps.OK(driver.CapParallelCopy) {
		// The driver's note already says why it copies serially.
		j.notes = append(j.notes, fmt.Sprintf("--dop %s: %s cannot copy in parallel (%s): the copy runs once at DOP 1", joinInts(dops), j.caps.Database, j.caps.Support(driver.CapParallelCopy).Note))
		dops = []int{1}
	}
	j.notes = append(j.notes, fmt.Sprintf("logcopy: %s copied into %s (%s) at DOP %s, copy after copy for --duration %s each (at least once), the copy dropped between two; log bytes from the database's %s counter where it keeps one (the verdict says when not)",
		src.Name, dst.Name, j.caps.Support(driver.CapCopy).Note, joinInts(dops), j.c.Duration, driver.CounterLogBytes))
	// The log's device, which may not be the data's, is the one whose
	// figures say whether the log held the copy back.
	watch := j.dataDir
	if dir := experiment.LogDirectory(ctx, j.db, j.target.Target); dir != "" {
		watch = dir
		j.notes = append(j.notes, "logcopy: the device figures are the log's device's: the log directory "+dir+" (another device than the data's when the log has one of its own)")
	}
	if err := j.startPhase(ctx, watch); err != nil {
		return err
	}
	copier := j.db.(driver.TableCopier)
	whole := j.ev.read(ctx)
	var copies []span
	for _, dop := range dops {
		if j.halted(ctx) {
			break
		}
		w := &copyWorker{db: copier, src: src, dst: dst, degree: dop, op: opOf("COPY")}
		// What ran before (the fill, the last degree's drop) is published
		// first, so that it is not counted as this degree's.
		settle(ctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, src) })
		j.around("DOP "+strconv.Itoa(dop), false)
		before := j.ev.read(ctx)
		start := time.Now()
		deadline := start.Add(j.c.Duration)
		var secs float64
		n := 0
		for first := true; first || (time.Now().Before(deadline) && !j.halted(ctx)); first = false {
			plan := j.plan(w.op.Name, 1, runner.PerWorker, func(int) runner.Worker { return w })
			out, err := j.execute(ctx, plan, 1, 1, 0, func() float64 { return 0 })
			if err != nil {
				return j.statementError(fmt.Sprintf("copying at DOP %d", dop), err)
			}
			if w.made {
				j.made = append(j.made, dst)
				w.made = false
				copies = append(copies, span{start: w.start, end: w.end, bytes: float64(size.Bytes)})
				secs += w.end.Sub(w.start).Seconds()
				n++
				if err := j.dropOne(context.WithoutCancel(ctx), dst); err != nil {
					return err
				}
			}
			if out.Failed > 0 {
				break
			}
		}
		end := time.Now()
		dctx := context.WithoutCancel(ctx)
		settle(dctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, src) })
		d := j.ev.read(dctx).since(before)
		j.around("DOP "+strconv.Itoa(dop), true)
		j.stepWindow(len(j.sum.Steps), start, end)
		step := result.StorageStep{Label: "DOP " + strconv.Itoa(dop), Seconds: secs, Bytes: int64(n) * size.Bytes, Rows: int64(n) * w.res.Rows,
			LogBytes: d.log, PhysicalBytes: -1, DeviceReadBytes: d.deviceRead(), DeviceWriteBytes: d.deviceWrite(), Checkpoints: d.checkpoints, Degree: w.res.Degree, How: w.res.How}
		if secs > 0 {
			step.Rate = float64(step.Bytes) / secs
			if d.log >= 0 {
				step.LogRate = float64(d.log) / secs
			}
		}
		if n > 1 {
			step.How = fmt.Sprintf("%d copies; %s", n, step.How)
		}
		j.sum.Steps = append(j.sum.Steps, step)
		j.sum.Bytes += step.Bytes
		j.sum.Seconds += secs
		j.sum.Rows += step.Rows
	}
	j.sum.Device = j.ev.read(context.WithoutCancel(ctx)).since(whole).figures()
	// The cap is looked for once the copies ran: it may have been set
	// while they did.
	if c, ok := writeCap(cgroupRoot, "/sys", j.ev.device); ok {
		j.logCap = &c
	}
	j.copies = copies
	// A copy's bytes are known only at its end: the per-second series
	// spreads each over the seconds it took.
	j.spans = spread(copies, j.origin)
	j.verdict = j.logcopyVerdict
	return j.finish(ctx)
}

// logcopyVerdict tells a log-bound copy (the log's rate flat across the
// degrees, the sessions waiting on the log or its device saturated) from
// a CPU-bound one (the writer on a core: PostgreSQL parallelizes only the
// SELECT of a CREATE TABLE AS, and a leader at 100% of a core is not a
// log wall), and says when the copy wrote almost no log.
func (j *job) logcopyVerdict(intervals []monitor.Interval) {
	steps := j.sum.Steps
	if len(steps) == 0 {
		j.sum.Verdict = "nothing was copied"
		return
	}
	var logBytes, copied, device int64
	for _, s := range steps {
		if s.DeviceWriteBytes < 0 || device < 0 {
			device = -1
		} else {
			device += s.DeviceWriteBytes
		}
		if s.LogBytes < 0 {
			j.sum.Verdict = fmt.Sprintf("%s does not count its log bytes here: the copy took %s; no log rate to judge", j.caps.Database, stepRates(steps, false))
			return
		}
		logBytes += s.LogBytes
		copied += s.Bytes
	}
	j.sum.Proof = &result.StorageProof{Bytes: copied, DatabaseBytes: logBytes, Counter: "the database's log bytes (" + driver.CounterLogBytes + ")", DeviceBytes: device, Device: j.ev.device}
	if float64(logBytes) < almostNoLog*float64(copied) {
		j.sum.Verdict = fmt.Sprintf("almost no log: %s of log for %s copied (%.3f bytes per byte): the database wrote the copy without logging its rows (as PostgreSQL does at wal_level=minimal for a table created in the same transaction, syncing the table instead), so this is not the log's rate; copies: %s",
			result.BytesText(logBytes), result.BytesText(copied), float64(logBytes)/float64(copied), stepRates(steps, false))
		return
	}
	var logWait, cpu float64
	judged := 0
	for _, w := range j.steps {
		if l, c, ok := waitShares(within(intervals, w)); ok {
			logWait += l
			cpu += c
			judged++
		}
	}
	if judged > 0 {
		logWait /= float64(judged)
		cpu /= float64(judged)
	}
	lo, hi := steps[0].LogRate, steps[0].LogRate
	for _, s := range steps {
		lo, hi = min(lo, s.LogRate), max(hi, s.LogRate)
	}
	flat := len(steps) > 1 && lo > 0 && hi/lo <= flatLogRate
	busy := j.sum.Device != nil && j.sum.Device.UtilPct >= busyDevice
	rate := result.RateText("log", (lo+hi)/2)
	dopList := joinWords(steps)
	waits := " (no wait samples: " + j.caps.Database + " gave none here, so the sessions' waits do not tell)"
	if judged > 0 {
		rest := otherWaits(intervals, j.steps)
		switch {
		case logWait < 0.005 && cpu < 0.005 && rest != "":
			// MariaDB's thread states, for one, never name a wait on the
			// log's write during a copy: "0% waited" would read as a
			// measured absence.
			waits = " (the sampled sessions' states name neither a wait on the log nor CPU: " + rest + ")"
		case rest != "":
			waits = fmt.Sprintf(" (%.0f%% of the database's sampled sessions waited on the log, %.0f%% were on CPU; of the rest %s)", 100*logWait, 100*cpu, rest)
		default:
			waits = fmt.Sprintf(" (%.0f%% of the database's sampled sessions waited on the log, %.0f%% were on CPU)", 100*logWait, 100*cpu)
		}
	}
	logShown := judged > 0 && logWait >= logWaitShare
	devBusy := ""
	if busy {
		devBusy = fmt.Sprintf("; the device %s was %.0f%% busy", j.sum.Device.Name, j.sum.Device.UtilPct)
	} else if d := j.sum.Device; d != nil && d.UtilPct >= 0 {
		devBusy = fmt.Sprintf("; the log's device %s was %.0f%% busy", d.Name, d.UtilPct)
	}
	// The host's cores all busy (a database on this machine, which
	// dbprobe shares) hold the copy back whatever the sessions' waits say.
	saturated := ""
	for _, s := range steps {
		if j.local && s.HostCores >= saturatedHost*float64(hostCPUs()) {
			saturated = fmt.Sprintf("host CPU %.2f of %d cores at %s", s.HostCores, hostCPUs(), s.Label)
			break
		}
	}
	// The log's device writing at the cap the host holds it to is the
	// wall itself, whatever the samples say: a throttled device's
	// utilisation stays low, since the cap holds requests back before
	// they reach it.
	atCap, capShare := j.logAtCap(steps)
	switch {
	case atCap:
		j.sum.Verdict = fmt.Sprintf("log-bound: %s at %s: the log's device %s wrote at %.0f%% of the write cap it is held to (%s, %s); more cores do not copy faster%s",
			rate, dopList, j.ev.device, 100*capShare, result.RateText("", j.logCap.bps), j.logCap.group, waits)
	case saturated != "" && !(judged > 0 && logWait >= logWaitShare):
		j.sum.Verdict = fmt.Sprintf("CPU-bound on the host: %s: every core was busy (the database and dbprobe share them), so the copy's rate is the host's CPU's, not the log's: log %s%s", saturated, stepRates(steps, true), waits)
	case judged > 0 && cpu >= cpuShare && logWait < logWaitShare:
		j.sum.Verdict = fmt.Sprintf("CPU-bound: the copy's writer was on a core%s, at log %s; a higher DOP parallelizes the reading, not the writing of rows, so more cores do not copy faster, and this is no log wall; copies: %s", waits, stepRates(steps, true), stepRates(steps, false))
	case flat && (logShown || busy):
		j.sum.Verdict = fmt.Sprintf("log-bound: %s at %s; more cores do not copy faster%s%s", rate, dopList, waits, devBusy)
	case flat:
		// A rate flat across the degrees shows a serial part, not which:
		// PostgreSQL's leader writes every row of a CREATE TABLE AS,
		// extending the table and the log alike.
		j.sum.Verdict = fmt.Sprintf("serial-bound: %s at %s, within %.0f%%: more cores do not copy faster, but the samples do not show the log as the wall%s%s; the part of the copy that does not parallelize holds it (each degree's line says who writes the rows)",
			rate, dopList, 100*(flatLogRate-1), waits, devBusy)
	case logShown, busy:
		j.sum.Verdict = fmt.Sprintf("log-bound: %s at %s: the copy waited on the log%s%s", rate, dopList, waits, devBusy)
	case len(steps) > 1 && steps[len(steps)-1].LogRate > steps[0].LogRate*flatLogRate:
		j.sum.Verdict = fmt.Sprintf("scales with the DOP: log %s; neither the log nor one core held it back%s", stepRates(steps, true), waits)
	case len(steps) > 1:
		j.sum.Verdict = fmt.Sprintf("more DOP does not copy faster, and the samples name neither the log nor a core: log %s%s; give a longer --duration or look at the device and the host", stepRates(steps, true), waits)
	default:
		j.sum.Verdict = fmt.Sprintf("neither log- nor CPU-bound by the samples: log %s at %s%s", rate, dopList, waits)
	}
}

// capShare is the share of its write cap from which the log's device
// is taken as held at it.
const capShare = 0.85

// logAtCap says whether the log's device wrote at its write cap
// (capShare of it or more) while the copies ran, and at what share of
// it: the larger of the device's bytes over the copies' time in the
// slowest step and the median of its whole seconds that lie within a
// copy (a copy fills the log's buffer on a core before it writes, and
// its first and last seconds are partly idle).
func (j *job) logAtCap(steps []result.StorageStep) (bool, float64) {
	if j.logCap == nil || len(steps) == 0 {
		return false, 0
	}
	var inCopy []float64
	if d := j.sum.Device; d != nil {
		origin := j.clockOrigin()
		for _, sec := range d.PerSecond {
			end := origin.Add(time.Duration(sec.Elapsed * float64(time.Second)))
			start := end.Add(-time.Duration(sec.Seconds * float64(time.Second)))
			if sec.Seconds < minSpanShare {
				continue
			}
			for _, c := range j.copies {
				if !start.Before(c.start) && !end.After(c.end) {
					inCopy = append(inCopy, sec.WriteRate)
					break
				}
			}
		}
	}
	// Over a copy's whole time the device cannot write faster than its
	// cap, so bytes over time at capShare or more mean it was at the cap
	// nearly all along; the whole seconds' median tells the same when
	// the copy's idle start pulls the average down. Either suffices: with
	// only two whole seconds in a 3 s copy (1.1 and 2.1 MB/s at a 2 MB/s
	// cap) the median alone said 79% of a device that wrote 101% of it.
	share := -1.0
	for _, s := range steps {
		if s.DeviceWriteBytes < 0 || s.Seconds <= 0 {
			share = 0
			break
		}
		r := float64(s.DeviceWriteBytes) / s.Seconds / j.logCap.bps
		if share < 0 || r < share {
			share = r
		}
	}
	if len(inCopy) > 0 {
		slices.Sort(inCopy)
		share = max(share, median(inCopy)/j.logCap.bps)
	}
	return share >= capShare, share
}

// saturatedHost is the share of the host's cores busy at which the host's
// CPU is taken as the limit.
const saturatedHost = 0.9

// waitShares is the share of the database's sampled active sessions, its
// own and the server's others (the copy runs on a connection of the
// pool, which the monitor may count as another's), that waited on the
// log and that were on CPU; ok is false when none were sampled.
func waitShares(intervals []monitor.Interval) (logWait, cpu float64, ok bool) {
	active, sampled := weighedWaits(intervals, func(event string, sessions float64) {
		switch monitor.WaitClass(event) {
		case "commit_flush":
			logWait += sessions
		case "cpu":
			cpu += sessions
		}
	})
	// No wait figure at all is no sample, not "0% waited".
	if active <= 0 || !sampled {
		return 0, 0, false
	}
	return logWait / active, cpu / active, true
}

// weighedWaits calls add with each wait event the monitor sampled in
// intervals and the sessions that waited on it, weighed by the interval's
// length: its share of the run's own active sessions, or with the
// "other." prefix of the server's others. It returns the active sessions,
// weighed the same, and whether any wait was sampled at all.
func weighedWaits(intervals []monitor.Interval, add func(event string, sessions float64)) (active float64, sampled bool) {
	for _, iv := range intervals {
		wgt := iv.End.Sub(iv.Start).Seconds()
		own, other := iv.Metrics["db.sessions.active"]*wgt, iv.Metrics["db.sessions.other.active"]*wgt
		active += own + other
		for name, share := range iv.Metrics {
			event, isWait := strings.CutPrefix(name, "db.wait.")
			if !isWait {
				continue
			}
			sampled = true
			n := own
			if e, isOther := strings.CutPrefix(event, "other."); isOther {
				event, n = e, other
			}
			add(event, share*n)
		}
	}
	return active, sampled
}

// minOtherWait is the share of the sampled sessions from which a wait of
// neither the log's nor the CPU's class is named beside them.
const minOtherWait = 0.05

// otherWaits names the waits, in the database's own words, of neither
// the log's class nor the CPU's that held minOtherWait or more of the
// sampled sessions during the steps, the largest first (at most three):
// "IO:DataFileExtend 15%, IPC:MessageQueueSend 14%". Shares are averaged
// over the steps, as the log's and the CPU's are, so that they add up.
func otherWaits(intervals []monitor.Interval, steps []stepWindow) string {
	shares := map[string]float64{}
	judged := 0
	for _, w := range steps {
		byEvent := map[string]float64{}
		active, sampled := weighedWaits(within(intervals, w), func(event string, sessions float64) {
			if c := monitor.WaitClass(event); c != "commit_flush" && c != "cpu" {
				byEvent[event] += sessions
			}
		})
		if active <= 0 || !sampled {
			continue
		}
		judged++
		for e, n := range byEvent {
			shares[e] += n / active
		}
	}
	events := make([]string, 0, len(shares))
	for e := range shares {
		shares[e] /= float64(max(judged, 1))
		if shares[e] >= minOtherWait {
			events = append(events, e)
		}
	}
	slices.SortFunc(events, func(a, b string) int {
		if c := cmp.Compare(shares[b], shares[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, 3)
	for _, e := range events[:min(len(events), 3)] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", e, 100*shares[e]))
	}
	return strings.Join(parts, ", ")
}

// stepRates lists each step's log rate (log) or copy rate.
func stepRates(steps []result.StorageStep, log bool) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		if log {
			parts[i] = result.RateText("log", s.LogRate) + " at " + s.Label
		} else {
			parts[i] = fmt.Sprintf("%s in %.1f s at %s", result.BytesText(s.Bytes), s.Seconds, s.Label)
		}
	}
	return strings.Join(parts, ", ")
}

// joinWords says "DOP 2, 4 and 8".
func joinWords(steps []result.StorageStep) string {
	dops := make([]string, len(steps))
	for i, s := range steps {
		dops[i] = strings.TrimPrefix(s.Label, "DOP ")
	}
	if len(dops) == 1 {
		return "DOP " + dops[0]
	}
	return "DOP " + strings.Join(dops[:len(dops)-1], ", ") + " and " + dops[len(dops)-1]
}

// joinInts says a list as the flag takes it.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// copyWorker runs one copy per step.
type copyWorker struct {
	db         driver.TableCopier
	src, dst   driver.DataTable
	degree     int
	op         runner.Op
	res        driver.CopyResult
	made       bool
	start, end time.Time
}

func (w *copyWorker) Open(context.Context) error { return nil }
func (w *copyWorker) Close() error               { return nil }

func (w *copyWorker) Step(ctx context.Context, s *runner.Step) {
	t0 := measure.Now()
	var res driver.CopyResult
	err := s.Call(ctx, &w.op, func(ctx context.Context) error {
		var err error
		res, err = w.db.CopyTable(ctx, w.src, w.dst, w.degree)
		return err
	})
	t1 := measure.Now()
	s.Finish(&w.op, err, t0, t1, 0)
	if err == nil {
		w.res, w.made = res, true
		w.start, w.end = measure.Wall(t0), measure.Wall(t1)
	}
}
