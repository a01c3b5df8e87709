package storage

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// runKind runs the experiment c.Kind names.
func (j *job) runKind(ctx context.Context) error {
	switch j.c.Kind {
	case Scan:
		return j.scan(ctx)
	case Read:
		return j.read(ctx)
	case Write:
		return j.write(ctx)
	case Bulk:
		return j.bulk(ctx)
	case Cache:
		return j.cache(ctx)
	}
	return j.logcopy(ctx)
}

// scanChunkBytes is about how much of the table one chunk of a scan
// reads: small enough that a second holds several on any storage, so
// that the per-second rate is not a staircase of whole chunks; large
// enough that a chunk's round trip is lost in its reading.
const scanChunkBytes = 16_000_000

// maxParts bounds the chunks of one pass.
const maxParts = 4096

// physicalShare is the share of the bytes a scan counts that must come
// from storage for its rate to be storage's: below it most came from a
// cache, and the rate is the cache's.
const physicalShare = 0.5

// wholeShare is the share the device must read for the rate to be the
// storage's: between physicalShare and it, a large part of the scan came
// from a cache and the rate mixes the two. Not 100%: the table's size on
// disk counts pages a scan does not read (its index, free space maps),
// and a pass after the first may find a little in a cache smaller than
// the table (a cold PostgreSQL scan of twice shared_buffers: 86%).
const wholeShare = 0.75

// overShare is the share above which the device read clearly more than
// the scan: other processes' I/O on it (or an earlier pass's read-ahead)
// is in its count, which then proves nothing about the scan.
const overShare = 1.2

// hostCPUs is the CPUs of this machine, which a local database shares.
func hostCPUs() int { return runtime.NumCPU() }

// scan fills the table, makes it cold and reads it on the server pass
// after pass until --duration is up.
func (j *job) scan(ctx context.Context) error {
	t := j.dataTable(j.tableNames()[0])
	size, err := j.filledTable(ctx, t)
	if err != nil {
		return err
	}
	j.sum.BytesAre = "the table's size on disk as the database reports it (" + size.How + "), counted once per pass"
	cool := &cooler{local: j.local, root: os.Geteuid() == 0, filesWhy: j.caps.Support(driver.CapLocate).Note}
	path := j.dataDir
	if loc, ok := j.db.(driver.Locator); ok && j.local && j.caps.OK(driver.CapLocate) {
		if p, err := loc.TablePath(ctx, t); err == nil {
			path, cool.files, j.sum.Table.File = p, tableFiles(p), p
		} else {
			cool.filesWhy = j.target.ScrubError(err)
		}
	}
	restarted, err := j.coldBeforeFirstPass(ctx, t, cool)
	if err != nil {
		return err
	}
	parts := int(min(maxParts, max(1, size.Bytes/scanChunkBytes)))
	unit := float64(size.Bytes) / float64(parts)
	j.notes = append(j.notes, fmt.Sprintf("scan: %s on the server in %s of about %s per pass (%s), one after another; a pass is repeated, made cold again first, until --duration %s is up",
		t.Name, result.Plural(parts, "chunk"), result.BytesText(int64(unit)), j.caps.Support(driver.CapScan).Note, j.c.Duration))
	if err := j.startPhase(ctx, path); err != nil {
		return err
	}
	before := j.ev.read(ctx)
	deadline := time.Now().Add(j.c.Duration)
	w := &scanWorker{db: j.db.(driver.TableScanner), t: t, parts: parts, unit: unit, op: opOf("SCAN-CHUNK")}
	for pass := 1; ; pass++ {
		var cold []string
		if pass == 1 && restarted != "" {
			cold = append(cold, restarted)
		}
		if !j.c.NoCold && cool.canEvict() {
			done, err := cool.evict()
			if err != nil {
				return fmt.Errorf("making the table cold: %w", err)
			}
			cold = append(cold, done)
		}
		pb := j.ev.read(ctx)
		w.rows.Store(0)
		plan := j.plan(w.op.Name, int64(parts), runner.Sequence, func(int) runner.Worker { return w })
		start := time.Now()
		out, err := j.execute(ctx, plan, 1, 1, time.Until(deadline), func() float64 { return unit })
		if err != nil {
			return err
		}
		d := j.ev.read(ctx).since(pb)
		j.stepWindow(len(j.sum.Steps), start, time.Now())
		bytes := int64(float64(out.Ops-out.Failed) * unit)
		step := result.StorageStep{Label: fmt.Sprintf("pass %d", pass), Seconds: out.RunTime.Seconds(), Bytes: bytes, Rows: w.rows.Load(),
			LogBytes: -1, PhysicalBytes: -1, DeviceReadBytes: d.deviceRead(), DeviceWriteBytes: d.deviceWrite(), Checkpoints: d.checkpoints, Cold: cold}
		if step.Seconds > 0 {
			step.Rate = float64(bytes) / step.Seconds
		}
		j.sum.Steps = append(j.sum.Steps, step)
		j.sum.Bytes += bytes
		j.sum.Seconds += step.Seconds
		j.sum.Rows += step.Rows
		if time.Now().After(deadline) || j.halted(ctx) || out.Ops < int64(parts) {
			break
		}
	}
	settle(ctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, t) })
	d := j.ev.read(context.WithoutCancel(ctx)).since(before)
	// The passes are short executions of their own: the per-second
	// series is made from the chunks' own times, over the experiment's
	// seconds.
	j.spans = spread(w.spans, j.origin)
	j.sum.Proof = &result.StorageProof{Bytes: j.sum.Bytes, DatabaseBytes: d.read, Counter: d.readHow, DeviceBytes: d.deviceRead(), Device: j.ev.device}
	j.sum.Device = d.figures()
	j.sum.Verdict, j.sum.Proof.Physical = scanVerdict(j.sum.Proof, j.local)
	return j.finish(ctx)
}

// coldBeforeFirstPass runs --restart-cmd, which empties the database's
// own cache, and says in the summary what will and will not make the
// table cold; it returns what the restart did, for the first pass.
func (j *job) coldBeforeFirstPass(ctx context.Context, t driver.DataTable, cool *cooler) (string, error) {
	if j.c.NoCold {
		j.sum.Cold = append(j.sum.Cold, "none (--warm): the table is read as the fill left it, from whatever caches hold it")
		return "", nil
	}
	restarted := ""
	if j.c.RestartCmd != "" || j.c.Restart != nil {
		what := "--restart-cmd " + j.c.RestartCmd
		if j.c.RestartCmd == "" {
			what = "the restart the caller gave"
		}
		fmt.Fprintf(j.c.Stderr, "dbprobe: restarting the database (%s) to empty its cache\n", what)
		var err error
		if j.c.Restart != nil {
			err = j.c.Restart(ctx)
		} else {
			err = runRestart(ctx, j.c.RestartCmd)
		}
		if err != nil {
			return "", err
		}
		if err := j.waitAnswer(ctx, t); err != nil {
			return "", err
		}
		restarted = "the database restarted (" + what + "), its own cache emptied"
		j.sum.Cold = append(j.sum.Cold, "the database's own cache: emptied once, by "+what+", between the fill and the first pass; later passes find in it what the earlier ones left, which for a table larger than it is little")
	} else {
		j.sum.Cold = append(j.sum.Cold, "the database's own cache: not emptied (no --restart-cmd); a table larger than it cannot stay in it, and the proof below shows what it held")
	}
	if cool.canEvict() {
		how := "fdatasync, then posix_fadvise DONTNEED, on the table's files"
		if len(cool.files) == 0 {
			how = "sync; echo 1 > /proc/sys/vm/drop_caches, as root, since the database does not say which files hold the table: every process's cached files go"
		}
		line := "the OS page cache: emptied of the table before each pass (" + how + ")"
		if cc, ok := j.db.(driver.CacheCounter); ok {
			// InnoDB with O_DIRECT reads past it: the eviction is then
			// only a precaution, which the line must not pass off as
			// what made the table cold.
			if counts, err := cc.CacheCounts(ctx, t); err == nil && counts.OSCache == driver.OSCacheBypassed {
				line = "the OS page cache: emptied of the table before each pass (" + how + "), a precaution only: the database reads past it (" + counts.OSCacheHow + ")"
			}
		}
		j.sum.Cold = append(j.sum.Cold, line)
	} else {
		j.sum.Cold = append(j.sum.Cold, "the OS page cache: not emptied: "+cool.cannotEvict())
	}
	return restarted, nil
}

// waitAnswer waits until the database answers again after a restart.
func (j *job) waitAnswer(ctx context.Context, t driver.DataTable) error {
	ctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	for {
		_, err := j.db.(driver.TableSizer).TableSize(ctx, t)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %s of --restart-cmd: %s", j.where, restartTimeout, j.target.ScrubError(err))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// scanVerdict says whether the scan's bytes came from storage, from the
// device's count when the database is on this machine, else from the
// database's own.
func scanVerdict(p *result.StorageProof, local bool) (string, bool) {
	if p.Bytes <= 0 {
		return "nothing was scanned", false
	}
	pct := func(n int64) float64 { return 100 * float64(n) / float64(p.Bytes) }
	db := ""
	if p.DatabaseBytes >= 0 {
		db = fmt.Sprintf("; the database read %s from outside its cache (%.0f%%)", result.BytesText(p.DatabaseBytes), pct(p.DatabaseBytes))
	}
	dbPart := float64(p.DatabaseBytes) / float64(p.Bytes)
	devPart := float64(p.DeviceBytes) / float64(p.Bytes)
	// The database's own count may have been served by its host's page
	// cache (PostgreSQL's blks_read is a read() call, not a disk read): it
	// can say a scan was not physical, never that it was.
	maybeCached := "which its host's page cache may have served: only that host's device can tell"
	if local {
		maybeCached = "which this machine's page cache may have served, and no block device of this machine was seen to confirm it"
	}
	switch {
	case p.DeviceBytes >= 0 && p.DatabaseBytes >= 0 && dbPart < physicalShare:
		// The device counts every process's reads: on a busy machine it
		// may read as much for others while the database reads nothing.
		return fmt.Sprintf("not physical: the database read only %s of the %s scanned from outside its cache (%.0f%%): the rate is its cache's, not the storage's; the %s the device %s read (%.0f%%) were other processes' reads", result.BytesText(p.DatabaseBytes), result.BytesText(p.Bytes), pct(p.DatabaseBytes), result.BytesText(p.DeviceBytes), p.Device, pct(p.DeviceBytes)), false
	case p.DeviceBytes >= 0 && devPart > overShare:
		return fmt.Sprintf("not proven physical: the device %s read %s for the %s the scan counts (%.0f%%), well over the scan: other I/O on the device is in its count, which so proves nothing about the scan%s; run on a quiet machine to prove it", p.Device, result.BytesText(p.DeviceBytes), result.BytesText(p.Bytes), pct(p.DeviceBytes), db), false
	case p.DeviceBytes >= 0 && devPart >= wholeShare:
		return fmt.Sprintf("physical: the device %s read %s for the %s the scan counts (%.0f%%)%s", p.Device, result.BytesText(p.DeviceBytes), result.BytesText(p.Bytes), pct(p.DeviceBytes), db), true
	case p.DeviceBytes >= 0 && devPart >= physicalShare:
		return fmt.Sprintf("partly physical (%.0f%%): the device %s read %s of the %s scanned%s; the rest came from a cache, so the rate mixes the device's and the cache's and is not the storage's rate: give a --size well over the database's cache and the machine's free memory", pct(p.DeviceBytes), p.Device, result.BytesText(p.DeviceBytes), result.BytesText(p.Bytes), db), false
	case p.DeviceBytes >= 0:
		return fmt.Sprintf("not physical: the device %s read %s of the %s scanned (%.0f%%)%s: the rest came from a cache, so the rate is the cache's, not the storage's", p.Device, result.BytesText(p.DeviceBytes), result.BytesText(p.Bytes), pct(p.DeviceBytes), db), false
	case p.DatabaseBytes >= 0 && dbPart < physicalShare:
		return fmt.Sprintf("not physical: the database read only %s of the %s scanned from outside its cache (%.0f%%): the rate is its cache's, not the storage's", result.BytesText(p.DatabaseBytes), result.BytesText(p.Bytes), pct(p.DatabaseBytes)), false
	case p.DatabaseBytes >= 0:
		return fmt.Sprintf("not proven physical: the database read %s of the %s scanned from outside its cache (%.0f%%), %s", result.BytesText(p.DatabaseBytes), result.BytesText(p.Bytes), pct(p.DatabaseBytes), maybeCached), false
	}
	return "unproven: neither the database nor a device of this machine counts the scan's reads here, so the rate may be a cache's", false
}

// scanWorker scans the chunks of a pass, one per step.
type scanWorker struct {
	db    driver.TableScanner
	t     driver.DataTable
	parts int
	unit  float64
	op    runner.Op
	rows  atomic.Int64
	// spans are the chunks read, each with its bytes; one worker only.
	spans []span
}

func (w *scanWorker) Open(context.Context) error { return nil }
func (w *scanWorker) Close() error               { return nil }

func (w *scanWorker) Step(ctx context.Context, s *runner.Step) {
	for i := range s.N() {
		part := int((s.First() + i) % int64(w.parts))
		var res driver.ScanResult
		t0 := measure.Now()
		err := s.Call(ctx, &w.op, func(ctx context.Context) error {
			var err error
			res, err = w.db.ScanTable(ctx, w.t, part, w.parts)
			return err
		})
		t1 := measure.Now()
		s.Finish(&w.op, err, t0, t1, 0)
		if err != nil {
			return
		}
		w.rows.Add(res.Rows)
		w.spans = append(w.spans, span{start: measure.Wall(t0), end: measure.Wall(t1), bytes: w.unit})
	}
}
