package storage

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// The cache experiment's figures and rules.
const (
	// cacheThreshold is the hit share below which the database's cache
	// no longer holds the working set: the 95%. With reads at
	// random over S, a cache of C holds about C/S of them, so the share
	// crosses 95% just past S = C.
	cacheThreshold = 0.95
	// DefaultCacheThreads is the readers of each working set: two keep a
	// server busy enough for thousands of lookups a second without
	// making the latency a queue's.
	DefaultCacheThreads = 2
	// DefaultSettleLimit bounds the reading of one working set whose hit
	// share does not settle.
	DefaultSettleLimit = 60 * time.Second
	// cacheWindow is how long one reading of the hit share lasts.
	cacheWindow = time.Second
	// settleWindows is how many windows in a row must agree, after the
	// first (which the warm-up's counts and a database's lag in
	// publishing them may be in), for the share to count as settled.
	settleWindows = 3
	// settleBand is how far each of those windows may be from their
	// mean: one point, the resolution the 95% threshold is judged at.
	// The last may differ from the first by half of it at most: a cache
	// still filling rises slowly near its end (PostgreSQL's, with a
	// working set of 93% of shared_buffers: 94%, 97%, 98.4%, 98.8%,
	// 99.2% …), within a point of the mean yet not settled.
	settleBand = 0.01
	// minWindowRequests is the fewest pages a window counts; a shorter
	// one is extended. At 95% hits a share of 5,000 pages is ±0.3 points
	// (one standard error), well inside settleBand.
	minWindowRequests = 5000
	// refinements is how many times the interval around the knee is
	// halved after the doubling.
	refinements = 2
	// defaultCacheMax, floorCacheMax: --max-size's default is the smaller
	// of 4 GB and twice the database's cache, 256 MB at least.
	defaultCacheMax = 4_000_000_000
	floorCacheMax   = 256_000_000
	// minCacheMax is the smallest --max-size taken.
	minCacheMax = 16_000_000
	// minWorkingSet is the smallest working set read: the doubling starts
	// at --max-size halved until the next halving would be below it.
	minWorkingSet = 8_000_000
	// cacheSpaceFactor is how many times --max-size the table takes at
	// most on disk: its rows' headers and its key's index.
	cacheSpaceFactor = 1.5
)

// lookupSQL is one read by key; warmSQL reads a key range on the server,
// every row's page visited (the payload is compared), for the warm-up.
func lookupSQL(table string) string {
	return "SELECT " + driver.DataPayloadColumn + " FROM " + table + " WHERE " + driver.DataKeyColumn + " = :id"
}

func warmSQL(table string) string {
	return "SELECT count(*) FROM " + table + " WHERE " + driver.DataKeyColumn + " BETWEEN :lo AND :hi AND " + driver.DataPayloadColumn + " <> ''"
}

// workingSets are the sizes the doubling reads: max halved until the next
// halving would be under minWorkingSet, then doubled back up to max.
func workingSets(max int64) []int64 {
	s := max
	for s/2 >= minWorkingSet {
		s /= 2
	}
	var out []int64
	for ; s < max; s *= 2 {
		out = append(out, s)
	}
	return append(out, max)
}

// cacheMax is --max-size, or its default from the database's cache.
func cacheMax(given int64, cache int64, known bool) (int64, string) {
	if given > 0 {
		return given, ""
	}
	if !known {
		return defaultCacheMax, fmt.Sprintf("--max-size %s (default): the database's cache size is not known", SizeText(defaultCacheMax))
	}
	m := max(floorCacheMax, min(defaultCacheMax, 2*cache))
	return m, fmt.Sprintf("--max-size %s (default): the smaller of %s and twice the database's cache (%s), %s at least", SizeText(m), SizeText(defaultCacheMax), SizeText(cache), SizeText(floorCacheMax))
}

// cacheState is what the cache experiment knows while it runs.
type cacheState struct {
	t       driver.DataTable
	counter driver.CacheCounter
	rows    int64
	bytes   int64
	counts  driver.CacheCounts
	threads int
	points  []result.CachePoint
	// seed differs from run to run: what is measured is the cache, not
	// one sequence of keys.
	seed     uint64
	lookupOp runner.Op
}

// cache fills a table of --max-size, then reads working sets of
// doubling sizes by key at random (the largest first), each until the
// database's own hit share settles, then halves the interval around the
// knee twice.
func (j *job) cache(ctx context.Context) error {
	cs := &cacheState{counter: j.db.(driver.CacheCounter), threads: j.c.Threads[0], seed: uint64(time.Now().UnixNano()), lookupOp: opOf("CACHE-READ")}
	cs.t = j.dataTable(j.tableNames()[0])
	size, err := j.filledTable(ctx, cs.t)
	if err != nil {
		return err
	}
	cs.rows, cs.bytes = j.sum.Table.Rows, size.Bytes
	if cs.counts, err = cs.counter.CacheCounts(ctx, cs.t); err != nil {
		return j.statementError("reading the cache counters", err)
	}
	fig := &result.CacheFigures{Threshold: cacheThreshold, Configured: -1, HostMemory: -1,
		Counters: cs.counts.How, PerTable: cs.counts.PerTable, OSCache: cs.counts.OSCache.String(), OSCacheHow: cs.counts.OSCacheHow,
		Settle: fmt.Sprintf("each working set is read by %s, one key at random per lookup, until %d windows in a row of %s or more (and %s pages or more) after the first have hit shares within ±%.0f point of their mean (or three standard errors of a binomial share, if more), the last within half that of the first, or --settle-limit %s is up",
			result.Plural(cs.threads, "connection"), settleWindows, j.c.Window, result.Grouped(minWindowRequests), 100*settleBand, j.c.SettleLimit)}
	if c, err := j.cacheSize(ctx); err == nil {
		fig.Configured, fig.ConfiguredHow = c.Bytes, c.How
	} else {
		fig.ConfiguredHow = err.Error()
	}
	if j.local {
		if total, _, err := monitor.HostMemory(); err == nil {
			fig.HostMemory = int64(total)
		}
	}
	j.sum.Cache = fig
	j.sum.BytesAre = "payload returned by the lookups by key (the rate is not the experiment's figure: the hit shares are)"
	scope := "the whole server's: other sessions' reads are in them"
	if cs.counts.PerTable {
		scope = "the table's own"
	}
	j.notes = append(j.notes,
		fmt.Sprintf("cache: working sets of %s (read from the largest down, then two halvings around the knee), the first rows of %s (%s on disk, %s rows), each read after one pass over it by key range (%q), then at random by key (%q)",
			sizesText(workingSets(j.c.MaxSize)), cs.t.Name, SizeText(cs.bytes), result.Grouped(cs.rows), warmSQL(cs.t.Name), lookupSQL(cs.t.Name)),
		"cache: the hit share is the database's own counters' ("+cs.counts.How+"), "+scope,
		"cache: "+fig.Settle)
	if err := j.startPhase(ctx, j.dataDir); err != nil {
		return err
	}
	// The doubling's sizes are read from the largest down. Read upwards,
	// a working set just under the cache finds it full of what came
	// before — the fill's last pages, which each row inserted made hotter
	// in PostgreSQL's clock sweep — and its hit share creeps up so slowly
	// that it looks settled. A larger working set's pages, read at
	// random, are each cold, and a smaller one takes their place at once.
	sizes := workingSets(j.c.MaxSize)
	slices.Reverse(sizes)
	for _, s := range sizes {
		if j.halted(ctx) {
			break
		}
		if err := j.cachePoint(ctx, cs, s, "doubling"); err != nil {
			return err
		}
	}
	// Refine: halve the interval around the knee, keeping the half the
	// crossing is in.
	for range refinements {
		if j.halted(ctx) {
			break
		}
		e := estimate(cs.points)
		// A bracket of a few MB is as narrow as the counters can tell.
		if e.Low == 0 || e.High == 0 || e.High-e.Low < 2_000_000 {
			break
		}
		if err := j.cachePoint(ctx, cs, (e.Low+e.High)/2, "refinement"); err != nil {
			return err
		}
	}
	slices.SortStableFunc(cs.points, func(a, b result.CachePoint) int { return int(a.Bytes - b.Bytes) })
	fig.Points = cs.points
	fig.Estimate = estimate(cs.points)
	fig.Layers = layers(fig, j.local, j.ev.device)
	j.sum.Verdict = cacheVerdict(fig, j.caps.Database, j.refinedNote(cs))
	return j.finish(ctx)
}

// refinedNote says how the bracket was narrowed, or why not.
func (j *job) refinedNote(cs *cacheState) string {
	n := 0
	for _, p := range cs.points {
		if p.Stage == "refinement" {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	if n == 1 {
		return "the doubling's bracket halved once"
	}
	return fmt.Sprintf("the doubling's bracket halved %d times", n)
}

// sizesText lists sizes.
func sizesText(sizes []int64) string {
	var out []string
	for _, s := range sizes {
		out = append(out, SizeText(s))
	}
	return strings.Join(out, ", ")
}

// cacheWindowed is one window of counter readings.
type cacheWindowed struct {
	from, to         time.Time
	requests, misses int64
	device           int64 // -1 when not seen
}

func (w cacheWindowed) share() float64 {
	if w.requests <= 0 {
		return -1
	}
	return 1 - float64(w.misses)/float64(w.requests)
}

// cachePoint reads the working set of s bytes: a warm-up pass, then
// lookups at random until the hit share settles, and adds its figures.
func (j *job) cachePoint(ctx context.Context, cs *cacheState, s int64, stage string) error {
	rows := max(1, min(cs.rows, int64(float64(s)*float64(cs.rows)/float64(cs.bytes))))
	fmt.Fprintf(j.c.Stderr, "dbprobe: working set %s (%s rows): warming it by key ranges, then reading it at random\n", SizeText(s), result.Grouped(rows))
	if err := j.warm(ctx, cs.t, rows); err != nil {
		if ctx.Err() != nil {
			// Ctrl-C: the sizes measured so far are kept.
			j.intr = true
			return nil
		}
		return err
	}
	var mu sync.Mutex
	var ticks []runner.Tick
	j.tickHook = func(t runner.Tick) {
		mu.Lock()
		ticks = append(ticks, t)
		mu.Unlock()
	}
	defer func() { j.tickHook = nil }()
	sizeCtx, stop := context.WithCancel(ctx)
	defer stop()
	j.ownStop = func() bool { return ctx.Err() == nil }
	defer func() { j.ownStop = nil }()
	// The sampler reads the counters every window from the execution's
	// start, and ends it once the share settles.
	wt := &cacheWatch{j: j, cs: cs, stop: stop, done: make(chan struct{})}
	order := len(cs.points) + 1
	sh := &lookupShared{sql: j.db.(driver.SQLRunner), text: lookupSQL(cs.t.Name), rows: rows, op: cs.lookupOp}
	plan := j.plan(cs.lookupOp.Name, 0, runner.PerWorker, func(i int) runner.Worker {
		return &lookupWorker{sh: sh, rng: rand.New(rand.NewPCG(cs.seed, uint64(order*1024+i)))}
	})
	started := make(chan struct{})
	j.startHook = func() { close(started) }
	defer func() { j.startHook = nil }()
	go wt.run(sizeCtx, started)
	out, err := j.execute(sizeCtx, plan, cs.threads, 1, j.c.SettleLimit, func() float64 { return float64(cs.t.PayloadBytes) })
	stop()
	<-wt.done
	if err != nil && ctx.Err() != nil {
		// Ctrl-C while the readers connected: nothing of this working
		// set was measured; those before it are kept.
		j.intr = true
		return nil
	}
	if err != nil {
		return j.statementError("reading the working set of "+SizeText(s), err)
	}
	if wt.err != nil {
		return j.statementError("reading the cache counters", wt.err)
	}
	p := result.CachePoint{Bytes: s, Rows: rows, Order: order, Stage: stage, HitShare: -1, DeviceReadBytes: -1, OSShare: -1,
		Seconds: out.RunTime.Seconds(), Lookups: out.Ops - out.Failed, Settled: wt.settled}
	if p.Seconds > 0 {
		p.LookupsPerSec = float64(p.Lookups) / p.Seconds
	}
	for _, w := range wt.windows {
		p.Windows = append(p.Windows, round3(w.share()))
	}
	used := wt.used()
	if len(used) > 0 {
		dev := int64(0)
		for _, w := range used {
			p.Requests += w.requests
			p.Misses += w.misses
			if w.device < 0 || dev < 0 {
				dev = -1
			} else {
				dev += w.device
			}
		}
		if p.Requests > 0 {
			p.HitShare = round3(1 - float64(p.Misses)/float64(p.Requests))
		}
		p.MissBytes = p.Misses * cs.counts.PageBytes
		p.DeviceReadBytes = dev
		if dev >= 0 && p.MissBytes > 0 {
			p.OSShare = round3(max(0, 1-float64(dev)/float64(p.MissBytes)))
		}
	}
	p.P50Micros, p.P99Micros = latencyOf(ticks, out, used)
	cs.points = append(cs.points, p)
	j.sum.Bytes += p.Lookups * int64(cs.t.PayloadBytes)
	j.sum.Seconds += p.Seconds
	j.sum.Rows += p.Lookups
	fmt.Fprintf(j.c.Stderr, "dbprobe: working set %s: %s hits in the database's cache, p50 %d µs, p99 %d µs (%s)\n",
		SizeText(s), pctText(p.HitShare), p.P50Micros, p.P99Micros, map[bool]string{true: "settled", false: "not settled within --settle-limit"}[p.Settled])
	return nil
}

// pctText says a hit share as the text does (result.ShareText).
func pctText(v float64) string { return result.ShareText(v) }

// latencyOf is the lookups' p50 and p99 over the ticks within the settled
// windows, merged exactly; over the whole reading when no tick is.
func latencyOf(ticks []runner.Tick, out *runner.Outcome, used []cacheWindowed) (int64, int64) {
	var m measure.Merger
	if len(used) > 0 {
		from, to := used[0].from, used[len(used)-1].to
		for _, t := range ticks {
			mid := t.Start.Add(t.End.Sub(t.Start) / 2)
			if mid.Before(from) || mid.After(to) || len(t.Series) == 0 {
				continue
			}
			if m.Add(t.Series[0]) != nil {
				m = measure.Merger{}
				break
			}
		}
	}
	var s measure.Summary
	if m.Count() > 0 {
		m.Describe(&s, []float64{50, 99})
	} else if len(out.Series) > 0 {
		s = out.Series[0]
	}
	var p50, p99 int64
	for _, p := range s.Percentiles {
		switch p.Percentile {
		case 50:
			p50 = p.Micros
		case 99:
			p99 = p.Micros
		}
	}
	return p50, p99
}

// warm reads the first rows of t once by key ranges on one connection, so
// that the working set starts in the caches as far as they hold it,
// rather than filling them slowly by random reads.
func (j *job) warm(ctx context.Context, t driver.DataTable, rows int64) error {
	conn, err := j.db.(driver.SQLRunner).SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		return j.statementError("connecting for the warm-up", err)
	}
	defer conn.Close()
	st, err := conn.Prepare(ctx, warmSQL(t.Name))
	if err != nil {
		return j.statementError("preparing the warm-up", err)
	}
	defer st.Close()
	step := max(1, readRangeBytes/int64(t.PayloadBytes))
	for lo := int64(1); lo <= rows; lo += step {
		if _, err := conn.Run(ctx, st, []any{lo, min(rows, lo+step-1)}, nil); err != nil {
			return j.statementError("warming the working set", err)
		}
	}
	return nil
}

// cacheWatch reads the cache counters every window while a working set
// is read at random, and stops the reading once the share settles.
type cacheWatch struct {
	j       *job
	cs      *cacheState
	stop    func()
	done    chan struct{}
	windows []cacheWindowed
	settled bool
	err     error
	// first is the index of the settled run of windows.
	first int
}

// run samples until ctx ends: from the execution's start (started), a
// reading every window, windows extended until they count
// minWindowRequests pages.
func (w *cacheWatch) run(ctx context.Context, started <-chan struct{}) {
	defer close(w.done)
	select {
	case <-started:
	case <-ctx.Done():
		return
	}
	rctx := context.WithoutCancel(ctx)
	prev, err := w.read(rctx)
	if err != nil {
		w.err = err
		w.stop()
		return
	}
	tick := time.NewTicker(w.j.c.Window)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now, err := w.read(rctx)
		if err != nil {
			w.err = err
			w.stop()
			return
		}
		if now.requests-prev.requests < minWindowRequests {
			continue
		}
		win := cacheWindowed{from: prev.at, to: now.at, requests: now.requests - prev.requests, misses: now.misses - prev.misses, device: -1}
		if now.haveDisk && prev.haveDisk {
			win.device = int64(now.disk.Sub(prev.disk).ReadBytes)
		}
		w.windows = append(w.windows, win)
		prev = now
		if first, ok := settledRun(w.windows); ok {
			w.settled, w.first = true, first
			w.stop()
			return
		}
	}
}

// used are the windows the point's figures are over: the settled run,
// or the last settleWindows after the first when it did not settle.
func (w *cacheWatch) used() []cacheWindowed {
	if w.settled {
		return w.windows[w.first:]
	}
	if len(w.windows) <= 1 {
		return w.windows
	}
	from := max(1, len(w.windows)-settleWindows)
	return w.windows[from:]
}

// watchReading is the counters at one instant.
type watchReading struct {
	at               time.Time
	requests, misses int64
	disk             monitor.DiskCounters
	haveDisk         bool
}

func (w *cacheWatch) read(ctx context.Context) (watchReading, error) {
	c, err := w.cs.counter.CacheCounts(ctx, w.cs.t)
	if err != nil {
		return watchReading{}, err
	}
	r := watchReading{at: time.Now(), requests: c.Requests, misses: c.Misses}
	if dev := w.j.ev.device; dev != "" {
		if d, err := monitor.ReadDisk(dev); err == nil {
			r.disk, r.haveDisk = d, true
		}
	}
	return r, nil
}

// settledRun reports whether the last settleWindows windows, none of
// them the first, agree: each within settleBand of their mean, or three
// standard errors of a binomial share of the smallest window's pages when
// that is wider, and the last within half that of the first (no trend).
// It returns the index of the first of them.
func settledRun(ws []cacheWindowed) (int, bool) {
	if len(ws) < settleWindows+1 {
		return 0, false
	}
	run := ws[len(ws)-settleWindows:]
	var sum float64
	least := run[0].requests
	for _, w := range run {
		sum += w.share()
		least = min(least, w.requests)
	}
	mean := sum / float64(len(run))
	band := settleBand
	if least > 0 {
		band = max(band, 3*math.Sqrt(mean*(1-mean)/float64(least)))
	}
	for _, w := range run {
		if math.Abs(w.share()-mean) > band {
			return 0, false
		}
	}
	if math.Abs(run[len(run)-1].share()-run[0].share()) > band/2 {
		return 0, false
	}
	return len(ws) - settleWindows, true
}

// estimate finds the first crossing below cacheThreshold among the
// points, in order of size.
func estimate(points []result.CachePoint) result.CacheEstimate {
	ps := slices.Clone(points)
	slices.SortStableFunc(ps, func(a, b result.CachePoint) int { return int(a.Bytes - b.Bytes) })
	var known []result.CachePoint
	for _, p := range ps {
		if p.HitShare >= 0 {
			known = append(known, p)
		}
	}
	if len(known) == 0 {
		return result.CacheEstimate{Text: "no estimate: no working set's hit share was counted"}
	}
	for i, p := range known {
		if p.HitShare >= cacheThreshold {
			continue
		}
		if i == 0 {
			return result.CacheEstimate{High: p.Bytes, HighShare: p.HitShare,
				Text: fmt.Sprintf("cache < %s: %s hits already at %s, the smallest working set read", result.BytesText(p.Bytes), pctText(p.HitShare), result.BytesText(p.Bytes))}
		}
		lo := known[i-1]
		return result.CacheEstimate{Low: lo.Bytes, High: p.Bytes, LowShare: lo.HitShare, HighShare: p.HitShare,
			Text: fmt.Sprintf("cache ≈ %s–%s: %s hits at %s, %s at %s", bracketLow(lo.Bytes, p.Bytes), result.BytesText(p.Bytes), pctText(lo.HitShare), result.BytesText(lo.Bytes), pctText(p.HitShare), result.BytesText(p.Bytes))}
	}
	last := known[len(known)-1]
	return result.CacheEstimate{Low: last.Bytes, LowShare: last.HitShare,
		Text: fmt.Sprintf("cache ≥ %s: %s hits still at %s, the largest working set read (give a larger --max-size to find its end)", result.BytesText(last.Bytes), pctText(last.HitShare), result.BytesText(last.Bytes))}
}

// bracketLow says the low end of a bracket without its unit when it is
// the high end's ("384–512 MB").
func bracketLow(lo, hi int64) string {
	l, h := result.BytesText(lo), result.BytesText(hi)
	lu, hu := l[strings.LastIndexByte(l, ' ')+1:], h[strings.LastIndexByte(h, ' ')+1:]
	if lu == hu {
		return strings.TrimSuffix(l, " "+lu)
	}
	return l
}

// layers says where the reads past the database's own cache came from:
// the OS page cache under it, or the device, from the points past the
// knee.
func layers(f *result.CacheFigures, local bool, device string) string {
	var miss, dev int64
	var seen bool
	var past []result.CachePoint
	for _, p := range f.Points {
		if p.HitShare < 0 || p.HitShare >= cacheThreshold {
			continue
		}
		past = append(past, p)
		if p.DeviceReadBytes >= 0 && p.MissBytes > 0 {
			miss += p.MissBytes
			dev += p.DeviceReadBytes
			seen = true
		}
	}
	if len(past) == 0 {
		return "no working set read overflowed the database's cache, so no read went past it"
	}
	last := past[len(past)-1]
	lat := fmt.Sprintf("p50 %d µs, p99 %d µs at %s", last.P50Micros, last.P99Micros, result.BytesText(last.Bytes))
	if !local {
		return "the database is not on this machine: whether its misses were served by its host's page cache or by its storage cannot be told from here; the latency may tell (" + lat + ")"
	}
	if !seen {
		return "no block device of this machine was seen to hold the data (" + device + "), so the OS page cache and the device cannot be told apart; " + lat
	}
	share := max(0, 1-float64(dev)/float64(miss))
	words := fmt.Sprintf("past the database's cache (%s under %.0f%% hits), its misses were %s, of which the device %s read %s (every process's reads, so at most the database's)",
		result.Plural(len(past), "working set"), 100*cacheThreshold, result.BytesText(miss), device, result.BytesText(dev))
	switch {
	case share >= 0.5 && f.OSCache == driver.OSCacheBypassed.String():
		return words + ": fewer than the misses although the database reads past the OS page cache; other caches (the device's own, a virtual disk's host) served them: " + lat
	case share >= 0.5:
		return words + fmt.Sprintf(": %.0f%% came from the OS page cache, not the device; the working sets past the database's cache are read from the host's memory, not from storage (%s)", 100*share, lat)
	default:
		return words + fmt.Sprintf(": %.0f%% came from the device: past the database's cache the reads are the storage's (%s)", 100*(1-share), lat)
	}
}

// cacheVerdict says the estimate beside the configured cache and the
// host's memory, and the layers.
func cacheVerdict(f *result.CacheFigures, database, refined string) string {
	v := f.Estimate.Text
	if refined != "" {
		v += " (" + refined + ")"
	}
	v += fmt.Sprintf(" — %s's own hit share (%s)", database, map[bool]string{true: "the table's counters", false: "the server's counters, other sessions' reads included"}[f.PerTable])
	if f.Configured >= 0 {
		v += "; configured " + f.ConfiguredHow + " = " + result.BytesText(f.Configured) + againstBracket(f.Estimate, f.Configured)
	} else {
		v += "; the configured size is not known"
	}
	if f.HostMemory >= 0 {
		v += "; host memory " + result.BytesText(f.HostMemory)
	}
	return v + "; " + f.Layers
}

// againstBracket places the configured size against the bracket.
func againstBracket(e result.CacheEstimate, configured int64) string {
	switch {
	case e.Low == 0 && e.High == 0:
		return ""
	case e.High == 0 && configured <= e.Low:
		return ", which the measured cache reaches"
	case e.High == 0:
		return ""
	case configured > e.High:
		return fmt.Sprintf(", %.1f× the bracket's top: the database keeps less of the table in memory than it is given", float64(configured)/float64(e.High))
	case configured < e.Low:
		// The share counts every page a lookup asks for, the index's
		// upper pages among them, which stay cached: it falls under 95%
		// only once the row pages' hits are well under it.
		return fmt.Sprintf(", below the bracket, whose bottom is %.2f× the setting: the hit share counts every page a lookup asks for, the index's always-cached upper pages among them, so it falls under 95%% only past the setting's size, and the bracket sits above it", float64(e.Low)/float64(configured))
	}
	return ", within the bracket"
}

// cacheExpect holds --expect cache=SIZE against the bracket: held when
// the promised size is at most the bracket's top (a working set of the
// promise is read at 95% hits or more, or the bracket cannot tell).
func cacheExpect(e Expectation, est result.CacheEstimate) result.ExpectCheck {
	c := result.ExpectCheck{Key: e.Key, Promised: e.Rate, PromisedText: e.Text}
	switch {
	case est.Low == 0 && est.High == 0:
		return e.notMeasured("no working set's hit share was counted")
	case est.High == 0:
		c.Measured = float64(est.Low)
		c.Held = e.Rate <= float64(est.Low)
		c.Ratio = c.Measured / e.Rate
		if c.Held {
			c.Verdict = fmt.Sprintf("held: %s hits still at %s, the largest working set read", pctText(est.LowShare), result.BytesText(est.Low))
		} else {
			// The largest size read is below the promise: a lower bound,
			// not a measure of the cache, so no ratio is printed for it.
			c.NotMeasured = fmt.Sprintf("the hit share did not fall up to %s, less than the promise; give --max-size above %s", result.BytesText(est.Low), e.Text)
			c.Verdict = "not judged: " + c.NotMeasured
		}
		return c
	}
	c.Measured = float64(est.Low+est.High) / 2
	c.Ratio = c.Measured / e.Rate
	switch {
	case e.Rate <= float64(est.Low):
		c.Held, c.Verdict = true, fmt.Sprintf("held: %s hits at %s, above the promise", pctText(est.LowShare), result.BytesText(est.Low))
	case e.Rate <= float64(est.High):
		c.Held, c.Verdict = true, fmt.Sprintf("held within the bracket: the promise lies between %s (%s hits) and %s (%s hits)", result.BytesText(est.Low), pctText(est.LowShare), result.BytesText(est.High), pctText(est.HighShare))
	default:
		c.Verdict = fmt.Sprintf("below the promise: only %s hits at %s, less than the %s promised (the cache is %.0f%% of it at most)", pctText(est.HighShare), result.BytesText(est.High), e.Text, 100*float64(est.High)/e.Rate)
	}
	return c
}

// cacheRefusals settles --max-size (its default from the database's
// cache) and refuses one the file system of a database on this machine
// has no room for.
func (j *job) cacheRefusals(ctx context.Context) error {
	cs, err := j.cacheSize(ctx)
	m, note := cacheMax(j.c.MaxSize, cs.Bytes, err == nil)
	// The table filled is --max-size of rows.
	j.c.MaxSize, j.c.Size = m, m
	if note != "" {
		j.notes = append(j.notes, "cache: "+note)
		for i := range j.c.Flags {
			if j.c.Flags[i].Key == "max-size" {
				j.c.Flags[i].Value, j.c.Flags[i].Source = SizeText(m), "default: the smaller of 4GB and twice the database's cache, 256MB at least"
			}
		}
	}
	if !j.local || j.dataDir == "" {
		return nil
	}
	fs, err := experiment.FileSystemOf(j.dataDir)
	if err != nil {
		return nil
	}
	need := float64(m) * cacheSpaceFactor
	if float64(fs.Free) < need {
		return badinput.New("--max-size %s: dbprobe storage cache fills a table of about %s on the file system of %s's data (%s on %s), which has %s free; give a smaller --max-size or free space there",
			SizeText(m), SizeText(int64(need)), j.where, j.dataDir, fs.Mount, SizeText(int64(fs.Free)))
	}
	return nil
}

// lookupShared is what a working set's readers share.
type lookupShared struct {
	sql  driver.SQLRunner
	text string
	rows int64
	op   runner.Op
}

// lookupWorker reads one key at random per step on a connection of its
// own.
type lookupWorker struct {
	sh  *lookupShared
	rng *rand.Rand
	prepared
	args [1]any
}

func (w *lookupWorker) Open(ctx context.Context) error { return w.open(ctx, w.sh.sql, w.sh.text) }

// Step reads one key, uniform at random over the working set.
func (w *lookupWorker) Step(ctx context.Context, s *runner.Step) {
	for range s.N() {
		w.args[0] = 1 + w.rng.Int64N(w.sh.rows)
		t0 := measure.Now()
		err := s.Call(ctx, &w.sh.op, func(ctx context.Context) error {
			_, err := w.conn.Run(ctx, w.st, w.args[:], nil)
			return err
		})
		s.Finish(&w.sh.op, err, t0, measure.Now(), 0)
		if err != nil {
			return
		}
	}
}
