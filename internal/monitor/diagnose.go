package monitor

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// Limit is the class of limit a diagnosis names.
type Limit string

// The limits a diagnosis can name.
const (
	LimitCommitFlush Limit = "commit flush"
	LimitLogRate     Limit = "log rate governed"
	LimitLock        Limit = "locks and conflicts"
	LimitReadIO      Limit = "read IO"
	LimitServerCPU   Limit = "server CPU"
	LimitClient      Limit = "client"
	LimitWriter      Limit = "single writer"
	LimitRoundTrip   Limit = "round trips"
	LimitNone        Limit = "none saturated"
	// LimitNotJudged is a phase too short for the rules to mean anything.
	LimitNotJudged Limit = "not judged"
	// LimitStopped is a phase stopped early by a failure more attempts
	// cannot fix or a database that did not come back: that is what
	// limited it.
	LimitStopped Limit = "stopped"
	// LimitFailing is a phase that went on past failures more attempts
	// cannot fix (--on-error continue): its figures measure the failure.
	LimitFailing Limit = "failing"
	// LimitUnavailable is a phase in which the database served nothing
	// for at least unavailableShare of the time.
	LimitUnavailable Limit = "unavailable"
)

// Phase is what a diagnosis needs to know of the phase besides its
// monitor intervals.
type Phase struct {
	// Threads is the number of worker threads.
	Threads int
	// Span is the length of the measured part the intervals cover.
	Span time.Duration
	// Placement says whether a server's CPU, dbprobe's or nobody else's
	// is behind the host's figures and the database's waits.
	Placement driver.Placement
	// Unavailable is how long the database served nothing within Span
	// (its outages).
	Unavailable time.Duration
	// Stopped says in words what stopped the phase early ("ERROR(13
	// SQLITE_FULL) database or disk is full"); "" when nothing did.
	Stopped string
	// Failing says in words the failures more attempts cannot fix that
	// the phase went on past ("91,000 rows failed with ERROR(13
	// SQLITE_FULL)"); "" when there were none.
	Failing string
	// ThreadPerCore says that each thread does its work on one goroutine
	// at a time, so that the client saturates at one core per thread (a
	// storage read streaming rows: one reader at 94% of a core is the
	// limit, though the host has a second core idle). False for the
	// key-value workloads, whose client is judged against all its cores.
	ThreadPerCore bool
}

// unavailableShare is the share of a phase without service from which
// the outage is the verdict. A phase that served nothing for a tenth of
// its time lost at least a tenth of its throughput to it: more than the
// spread between repeated phases on a quiet machine (a few percent), so
// its figures say more about the outage than about any limit of the
// database. Below it the rules read the phase as usual, but never
// conclude that more threads may go faster.
const unavailableShare = 0.10

// faultVerdict is the verdict of a phase that a fault dominated: stopped
// early, going on past failures that cannot be fixed by retrying, or
// without service for unavailableShare of its time; ok is false when no
// fault did.
func faultVerdict(ph Phase) (d Diagnosis, ok bool) {
	share := 0.0
	if ph.Span > 0 {
		share = min(ph.Unavailable.Seconds()/ph.Span.Seconds(), 1)
	}
	ev := map[string]float64{"unavailable_share": share, "span_s": ph.Span.Seconds()}
	down := ""
	if ph.Unavailable > 0 {
		down = fmt.Sprintf("; server unavailable for %.0f%% of the phase", 100*share)
	}
	switch {
	case ph.Stopped != "":
		return Diagnosis{Limit: LimitStopped, Evidence: ev,
			Verdict: "stopped: " + ph.Stopped + down + " — the figures cover the phase up to the stop, and say nothing of the database's limit"}, true
	case ph.Failing != "":
		return Diagnosis{Limit: LimitFailing, Evidence: ev,
			Verdict: "failing: " + ph.Failing + down + " — more attempts cannot fix it (--on-error continue): the figures measure the failure, not the database's limit"}, true
	case ph.Unavailable > 0 && share >= unavailableShare:
		return Diagnosis{Limit: LimitUnavailable, Evidence: ev,
			Verdict: fmt.Sprintf("server unavailable for %.0f%% of the phase (%s without service) — the figures are what it served around the outages, and say nothing of its limit", 100*share, secondsText(ph.Unavailable))}, true
	}
	return Diagnosis{}, false
}

// The least evidence a verdict needs: one monitor interval is a single
// reading of counters that move in bursts (a checkpoint, a GC, a
// neighbour's job), and the README's first command has phases of 14-29 ms
// whose verdict changed from run to run between "none saturated" and
// "CPU".
const (
	// MinJudgedSpan is the shortest phase Diagnose judges.
	MinJudgedSpan      = 3 * time.Second
	minJudgedIntervals = 3
)

// Diagnosis names what limited a phase, with the figures behind it.
type Diagnosis struct {
	Limit Limit `json:"limit"`
	// Verdict is the one line printed after the summary.
	Verdict string `json:"verdict"`
	// Evidence are the averaged figures the rules looked at, by name.
	Evidence map[string]float64 `json:"evidence"`
}

// The thresholds of the rules. A wait class dominates when it holds this
// share of dbprobe's sampled active sessions; the client is saturated when
// it uses this share of the cores it may use, or when runnable goroutines
// wait this long for a thread at the 99th percentile.
const (
	dominantWaitShare  = 0.4
	clientSaturatedCPU = 0.9
	clientSchedLagMs   = 5.0
	// clientThrottledPct is the share of scheduling periods, in percent,
	// in which a cgroup CPU quota stopped the client, above which the
	// quota is its limit: its CPU figure can stay below 90% of the quota
	// when the rest of the host is busy too.
	clientThrottledPct = 50.0
	hostSaturatedIdle  = 10.0 // percent of all CPUs idle
	hostIOWaitHigh     = 30.0 // percent
	sessionsIdleRatio  = 0.3  // active sessions per thread below which the server waits on the client
	minimumWaitSamples = 0.05 // average active sessions below which wait shares mean nothing
	// writerSaturatedShare is the share of the time a database's single
	// writer (an embedded database that lets one connection write at a
	// time) is busy above which writes queue behind it.
	writerSaturatedShare = 0.75
)

// writerBusyMetric is the share of each second a driver's single writer
// spent on writes, from its "writer_busy_seconds" counter.
const writerBusyMetric = "db.writer_busy_seconds/s"

// WaitClass sorts a database's wait event, in the database's own words,
// into the class the diagnosis uses: "commit_flush" (the log's write or
// sync), "log_rate", "lock", "read_io", "cpu" (a session on CPU), or ""
// for an event of no class. An experiment reads its own evidence with it
// (logcopy: is the copy waiting on the log or on a core?).
func WaitClass(event string) string { return waitClass(event) }

// waitClass sorts a database's wait event, in the database's own words,
// into the classes the rules use; "" is an event of no class.
func waitClass(event string) string {
	e := strings.ToUpper(event)
	switch {
	case e == "CPU":
		return "cpu"
	// Azure SQL's log rate governance: the database's, the elastic pool's
	// and the instance's log rate limits, and the throttles its replicas
	// put on the primary. Before the commit flush class: they are not a
	// slow disk but the service tier's cap.
	case strings.HasSuffix(e, "LOG_RATE_GOVERNOR"), strings.HasPrefix(e, "HADR_THROTTLE_LOG_RATE_"):
		return "log_rate"
	// PostgreSQL: IO:WALSync, IO:WALWrite, LWLock:WALWrite, IO:WALInitSync…;
	// SQL Server: WRITELOG, HADR_SYNC_COMMIT; MariaDB's thread states
	// around a commit's log flush.
	case strings.Contains(e, "WALSYNC"), strings.Contains(e, "WALWRITE"), strings.Contains(e, "WALINIT"),
		strings.Contains(e, "WALFLUSH"), e == "WRITELOG", strings.HasPrefix(e, "HADR_SYNC_COMMIT"),
		strings.Contains(e, "COMMIT") && !strings.Contains(e, "LOCK"):
		return "commit_flush"
	// PostgreSQL Lock:transactionid…, our MySQL Lock:row, SQL Server
	// LCK_M_*, MySQL "Waiting for table … lock".
	case strings.HasPrefix(e, "LOCK:"), strings.HasPrefix(e, "LCK_M_"), strings.Contains(e, "LOCK") && strings.HasPrefix(e, "WAITING FOR"):
		return "lock"
	// PostgreSQL IO:DataFileRead, SQL Server PAGEIOLATCH_*.
	case strings.Contains(e, "DATAFILEREAD"), strings.HasPrefix(e, "PAGEIOLATCH_"):
		return "read_io"
	}
	return ""
}

// Diagnose names the limit of a phase from its monitor intervals (the
// measured part: leave the warm-up out). A fault comes first, whatever
// the figures say: a phase stopped early, one that went on past failures
// more attempts cannot fix, or one without service for a tenth of its
// time (unavailableShare) has that for its verdict. A phase shorter than
// MinJudgedSpan, or with fewer than minJudgedIntervals intervals, is not
// judged. The rules, in order: the client first (a saturated client makes
// every database figure a consequence of it), then the class of wait that
// holds most of dbprobe's active sessions if it dominates, then the host's
// CPU, then sessions that sit idle in the server waiting for the next
// request (the client's when its goroutines wait long for a thread, the
// round trip's otherwise); otherwise nothing is saturated. Without a
// database (PlacementNone) only the client can be the limit.
func Diagnose(intervals []Interval, ph Phase) Diagnosis {
	if d, ok := faultVerdict(ph); ok {
		return d
	}
	d := diagnose(intervals, ph)
	if ph.Unavailable > 0 && d.Limit != LimitNotJudged {
		// Some of the phase went without service: say so, and take back
		// any advice that more threads would go faster.
		share := ph.Unavailable.Seconds() / ph.Span.Seconds()
		d.Evidence["unavailable_share"] = share
		if d.Limit == LimitNone {
			d.Verdict = strings.Replace(d.Verdict, ": more threads may go faster", "", 1)
		}
		d.Verdict += fmt.Sprintf("; the server was unavailable for %.0f%% of the phase (%s)", 100*share, secondsText(ph.Unavailable))
	}
	return d
}

// diagnose applies the rules of Diagnose to a phase no fault dominated.
func diagnose(intervals []Interval, ph Phase) Diagnosis {
	if d, short := tooShort(intervals, ph.Span); short {
		return d
	}
	threads := ph.Threads
	ev := map[string]float64{}
	// Averages weigh each interval by its length: the first and the last
	// are cut short by the phase's start and end, and a 50 ms interval of
	// start-up must not count as much as a second of the run.
	avg := func(name string) (float64, bool) {
		var sum, weights float64
		n := 0
		for _, iv := range intervals {
			if v, ok := iv.Metrics[name]; ok {
				w := weight(iv)
				sum += v * w
				weights += w
				n++
			}
		}
		if n == 0 || weights == 0 {
			return 0, false
		}
		return sum / weights, true
	}
	// Wait shares weighted by how many sessions were active, and for how
	// long, so that a quiet or short interval does not count as much as a
	// busy one.
	classes := map[string]float64{}
	var activeSum, span float64
	for _, iv := range intervals {
		active := iv.Metrics["db.sessions.active"] * weight(iv)
		activeSum += active
		span += weight(iv)
		for name, share := range iv.Metrics {
			event, ok := strings.CutPrefix(name, "db.wait.")
			if !ok || strings.HasPrefix(event, "other.") {
				continue
			}
			if c := waitClass(event); c != "" {
				classes[c] += share * active
			}
		}
	}
	sampled := span > 0 && activeSum/span >= minimumWaitSamples
	if sampled {
		for c := range classes {
			classes[c] /= activeSum
			ev["wait."+c] = classes[c]
		}
	}

	cpu, haveCPU := avg("client.cpu%")
	procs, _ := avg("client.gomaxprocs")
	// The cores the client may use: its cgroup's quota can be well below
	// GOMAXPROCS (older results have only client.gomaxprocs).
	if cores, ok := avg("client.cores"); ok && cores > 0 {
		procs = cores
		ev["client.cores"] = cores
	}
	lag, haveLag := avg("client.sched.latency_p99_ms")
	if haveCPU {
		ev["client.cpu%"] = cpu
	}
	if haveLag {
		ev["client.sched.latency_p99_ms"] = lag
	}
	idle, haveIdle := avg("host.cpu.idle%")
	if haveIdle {
		ev["host.cpu.idle%"] = idle
	}
	iowait, haveIOWait := avg("host.cpu.iowait%")
	if haveIOWait {
		ev["host.cpu.iowait%"] = iowait
	}
	active, haveActive := avg("db.sessions.active")
	if haveActive {
		ev["db.sessions.active"] = active
	}
	writer, haveWriter := avg(writerBusyMetric)
	if haveWriter {
		ev[writerBusyMetric] = writer
	}

	sessionsIdle := haveActive && threads > 0 && active/float64(threads) < sessionsIdleRatio
	d := Diagnosis{Evidence: ev}
	pct := func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }
	throttled, haveThrottled := avg("client.cpu.throttled%")
	if haveThrottled {
		ev["client.cpu.throttled%"] = throttled
	}
	usage := fmt.Sprintf("CPU %.0f%% of its %s cores", cpu, coresText(procs))
	if ph.ThreadPerCore && threads > 0 && float64(threads) < procs {
		// The threads cannot use the cores beyond theirs: held against
		// all of them, one busy reader never looks saturated.
		usage = fmt.Sprintf("CPU %.0f%% of the %d cores its %d threads can use (of %s)", cpu, threads, threads, coresText(procs))
		if threads == 1 {
			usage = fmt.Sprintf("CPU %.0f%% of the core its one thread can use (of %s)", cpu, coresText(procs))
		}
		procs = float64(threads)
		ev["client.thread_cores"] = procs
	}
	clientCPU := haveCPU && procs > 0 && cpu >= clientSaturatedCPU*100*procs || haveThrottled && throttled >= clientThrottledPct
	if haveThrottled && throttled >= clientThrottledPct {
		usage += fmt.Sprintf(", its cgroup's CPU quota holding it back in %.0f%% of scheduling periods", throttled)
	}
	if ph.Placement == driver.PlacementNone {
		return diagnoseClientOnly(d, clientCPU, usage, lag, haveLag, idle, haveIdle)
	}
	switch {
	case clientCPU:
		d.Limit = LimitClient
		d.Verdict = fmt.Sprintf("dbprobe itself — %s, goroutines wait %.1f ms (p99) for a thread; the database figures are what this client could ask for, add client CPU or clients", usage, lag)
	case sampled && classes["log_rate"] >= dominantWaitShare:
		d.Limit = LimitLogRate
		d.Verdict = fmt.Sprintf("log rate governed by the service tier — %s of sampled dbprobe sessions wait for the log rate limit (%s); a larger service objective raises it, fewer log bytes per write go further, faster storage does not", pct(classes["log_rate"]), classWaits(intervals, "log_rate"))
	case sampled && classes["commit_flush"] >= dominantWaitShare:
		d.Limit = LimitCommitFlush
		d.Verdict = fmt.Sprintf("commit flush (log write/sync) — %s of sampled dbprobe sessions wait on it (%s); relax durability or get a faster log device", pct(classes["commit_flush"]), classWaits(intervals, "commit_flush"))
	case sampled && classes["lock"] >= dominantWaitShare:
		d.Limit = LimitLock
		d.Verdict = fmt.Sprintf("locks and conflicts — %s of sampled dbprobe sessions wait on locks (%s); spread the keys or shorten transactions", pct(classes["lock"]), classWaits(intervals, "lock"))
	case sampled && classes["read_io"] >= dominantWaitShare, haveIOWait && iowait >= hostIOWaitHigh:
		d.Limit = LimitReadIO
		d.Verdict = fmt.Sprintf("read IO — %s of sampled dbprobe sessions wait on data reads, host iowait %.0f%%; more memory for the cache or faster storage", pct(classes["read_io"]), iowait)
	// SQLite lets one connection write at a time: once that connection is
	// busy nearly all the time, more threads only lengthen its queue,
	// whatever the host's CPU says.
	case haveWriter && writer >= writerSaturatedShare:
		d.Limit = LimitWriter
		d.Verdict = fmt.Sprintf("the single writer — every write goes through one connection, busy %s of the time; more threads only queue behind it: fewer, larger transactions or cheaper commits (synchronous, a faster disk) go further", pct(writer))
		if haveIdle {
			d.Verdict += fmt.Sprintf(" (host %.0f%% idle)", idle)
		}
	case haveIdle && idle < hostSaturatedIdle:
		d.Limit = LimitServerCPU
		d.Verdict = fmt.Sprintf("CPU — the host is %.0f%% idle; dbprobe uses %.0f%% of a core of it", idle, cpu)
		if classes["cpu"] > 0 {
			d.Verdict += fmt.Sprintf(", %s of sampled dbprobe sessions run on CPU in the server", pct(classes["cpu"]))
		}
		if haveLag {
			d.Verdict += fmt.Sprintf(", goroutines wait %.1f ms (p99) for a thread", lag)
		}
	// A client that gets less CPU than it could use (a neighbour on its
	// core, a throttled container) never reaches the CPU rule, but its
	// goroutines queue for a thread while the server waits for requests.
	// Not for an embedded database, which runs in the client's own
	// threads, so that its lag is not the client's alone; for a server
	// whose sessions are not sampled (Redis), the lag alone decides.
	case haveLag && lag >= clientSchedLagMs && ph.Placement == driver.PlacementServer && (sessionsIdle || !haveActive):
		d.Limit = LimitClient
		d.Verdict = fmt.Sprintf("dbprobe itself — goroutines wait %.1f ms (p99) for a thread, %s", lag, usage)
		if haveActive {
			d.Verdict += fmt.Sprintf(", %.1f of %d sessions busy in the server", active, threads)
		}
		d.Verdict += "; the database figures are what this client could ask for, add client CPU or clients"
	case sessionsIdle:
		d.Limit = LimitRoundTrip
		d.Verdict = fmt.Sprintf("round trips — on average %.1f of %d sessions are busy in the server; the rest wait for the next request: latency between client and server, or the client's pace", active, threads)
	default:
		d.Limit = LimitNone
		d.Verdict = "none saturated — no wait class holds most sessions and the host has CPU left: more threads may go faster"
		if haveIdle {
			d.Verdict += fmt.Sprintf(" (host %.0f%% idle)", idle)
		}
	}
	return d
}

// weight is an interval's length in seconds, or 1 for an interval without
// boundaries. It is read off the wall clock (Round(0) drops the monotonic
// reading), as a result file keeps it, so that a verdict rebuilt from the
// file by dbprobe recover is the run's to the last digit.
func weight(iv Interval) float64 {
	if d := iv.End.Round(0).Sub(iv.Start.Round(0)).Seconds(); d > 0 {
		return d
	}
	return 1
}

// tooShort returns the verdict of a phase with too little evidence to
// judge, and whether it is one.
func tooShort(intervals []Interval, span time.Duration) (Diagnosis, bool) {
	whole := wholeIntervals(intervals)
	if span >= MinJudgedSpan && whole >= minJudgedIntervals {
		return Diagnosis{}, false
	}
	d := Diagnosis{Limit: LimitNotJudged, Evidence: map[string]float64{"span_s": span.Seconds(), "intervals": float64(whole)}}
	if span < MinJudgedSpan {
		d.Verdict = fmt.Sprintf("not judged — phase too short to judge: %s; run for %s or more", secondsText(span), secondsText(MinJudgedSpan))
		return d, true
	}
	// Long enough, but the monitor's interval is too long to read it
	// more than once or twice.
	each := longest(intervals)
	d.Verdict = fmt.Sprintf("not judged — %d monitor intervals in %s are too few to judge; run for %d intervals or more (or a shorter --monitor-interval)", whole, secondsText(span), minJudgedIntervals)
	if each > 0 {
		// A phase cut short (a run stopped, a result recovered) can
		// last 3 intervals' time yet hold fewer whole ones: "run for
		// 3 s or more" would then ask for what it already had.
		need := time.Duration(minJudgedIntervals) * each
		if need <= span {
			need = span + each
		}
		d.Verdict = fmt.Sprintf("not judged — %d whole monitor intervals of %s in %s are too few to judge (%d are needed); run for %s or more (or a shorter --monitor-interval)", whole, secondsText(each), secondsText(span), minJudgedIntervals, secondsText(need))
	}
	return d, true
}

// wholeIntervals counts the intervals at least half as long as the
// longest: the slivers a phase's start and end cut off the monitor's
// boundaries (a few milliseconds each) are no reading of their own.
func wholeIntervals(intervals []Interval) int {
	each := longest(intervals)
	n := 0
	for _, iv := range intervals {
		if d := iv.End.Sub(iv.Start); each == 0 || 2*d >= each {
			n++
		}
	}
	return n
}

// longest is the longest interval's length, 0 when none has boundaries.
func longest(intervals []Interval) time.Duration {
	var each time.Duration
	for _, iv := range intervals {
		each = max(each, iv.End.Sub(iv.Start))
	}
	return each
}

// diagnoseClientOnly judges a phase with no database behind it (the null
// driver): the host's CPU is the client's, and whatever limits the phase
// is dbprobe or what it shares the machine with.
func diagnoseClientOnly(d Diagnosis, clientCPU bool, usage string, lag float64, haveLag bool, idle float64, haveIdle bool) Diagnosis {
	host := ""
	if haveIdle {
		host = fmt.Sprintf(", host %.0f%% idle", idle)
	}
	switch {
	case clientCPU:
		d.Limit = LimitClient
		d.Verdict = fmt.Sprintf("dbprobe itself — %s%s, goroutines wait %.1f ms (p99) for a thread: this is the client's ceiling on this machine", usage, host, lag)
	case haveLag && lag >= clientSchedLagMs:
		d.Limit = LimitClient
		d.Verdict = fmt.Sprintf("dbprobe itself, starved — goroutines wait %.1f ms (p99) for a thread at %s%s: other work on the machine takes the CPU, so this is not the client's ceiling; give it cores of its own", lag, usage, host)
	case haveIdle && idle < hostSaturatedIdle:
		d.Limit = LimitClient
		d.Verdict = fmt.Sprintf("dbprobe itself, starved — the host is %.0f%% idle at dbprobe's %s: other work on the machine takes the CPU; give it cores of its own", idle, usage)
	default:
		d.Limit = LimitNone
		d.Verdict = fmt.Sprintf("none saturated — no database, and dbprobe uses %s with goroutines waiting %.1f ms (p99) for a thread%s: more threads may go faster", usage, lag, host)
	}
	return d
}

// coresText prints a core count: 2, or 0.5 for a cgroup's quota.
func coresText(c float64) string {
	return strconv.FormatFloat(math.Round(c*100)/100, 'f', -1, 64)
}

// secondsText prints a phase's length: 0.4 ms, 38 ms, 0.25 s, 3 s, 12 s.
func secondsText(d time.Duration) string {
	s := d.Seconds()
	if s < 0.1 {
		return strconv.FormatFloat(math.Round(s*1e4)/10, 'f', -1, 64) + " ms"
	}
	if s < 10 {
		return strconv.FormatFloat(math.Round(s*100)/100, 'f', -1, 64) + " s"
	}
	return fmt.Sprintf("%.0f s", s)
}

// classWaits lists the waits of class that a verdict's share adds up,
// every one of them, most sampled first, then the two most sampled
// others after "besides it": "IO:WALSync 32%, LWLock:WALWrite 14%;
// besides it CPU 30%, Client:ClientRead 24%". The top three alone left
// out a part of the class whenever another wait outranked it, so that
// the events named did not add up to the class's share.
func classWaits(intervals []Interval, class string) string {
	sums, total := waitSums(intervals)
	var in, out []string
	for _, n := range byShare(sums) {
		if total <= 0 || sums[n] <= 0 {
			continue
		}
		part := fmt.Sprintf("%s %.0f%%", n, 100*sums[n]/total)
		if waitClass(n) == class {
			in = append(in, part)
		} else if len(out) < 2 {
			out = append(out, part)
		}
	}
	text := strings.Join(in, ", ")
	if len(out) > 0 {
		text += "; besides it " + strings.Join(out, ", ")
	}
	return text
}

// waitSums adds up each of dbprobe's sampled waits over the intervals,
// weighted by the sessions active in each, and their total.
func waitSums(intervals []Interval) (map[string]float64, float64) {
	sums := map[string]float64{}
	for _, iv := range intervals {
		active := iv.Metrics["db.sessions.active"] * weight(iv)
		for name, share := range iv.Metrics {
			if event, ok := strings.CutPrefix(name, "db.wait."); ok && !strings.HasPrefix(event, "other.") {
				sums[event] += share * active
			}
		}
	}
	var total float64
	for _, v := range sums {
		total += v
	}
	return sums, total
}

// byShare is the waits of sums, most sampled first, ties by name.
func byShare(sums map[string]float64) []string {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		if sums[names[a]] != sums[names[b]] {
			return sums[names[a]] > sums[names[b]]
		}
		return names[a] < names[b]
	})
	return names
}
