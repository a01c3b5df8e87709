package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// write fills a source table of one --chunk, reads it once so that it is
// in memory, and copies it into the target table chunk after chunk by
// INSERT … SELECT until --size is written or --duration is up.
func (j *job) write(ctx context.Context) error {
	names := j.tableNames()
	src, dst := j.dataTable(names[0]), j.dataTable(names[1])
	srcRows, err := j.fill(ctx, src, j.c.Chunk)
	if err != nil {
		return err
	}
	if sc, ok := j.db.(driver.TableScanner); ok && j.caps.OK(driver.CapScan) {
		// Read once, the source is in the database's cache (or the OS's)
		// for every chunk: what is measured is the writing.
		if _, err := sc.ScanTable(ctx, src, 0, 1); err != nil {
			return j.statementError("reading the source table "+src.Name, err)
		}
	}
	if err := j.create(ctx, dst); err != nil {
		return err
	}
	// What the target's size was empty is taken off at the end: a
	// database that sizes only all its tables together counts the
	// source in it.
	empty, err := j.sized(ctx, dst)
	if err != nil {
		return err
	}
	chunks := max(1, (j.c.Size+j.c.Chunk-1)/j.c.Chunk)
	j.sum.BytesAre = "the target table's size on disk as the database reports it at the end, over the chunks written"
	// The driver's note says how it runs the statement; one that only
	// names it again ("INSERT … SELECT") adds nothing in parentheses.
	how := ""
	if n := j.caps.Support(driver.CapInsertSelect).Note; n != "" && n != "INSERT … SELECT" {
		how = " (" + n + ")"
	}
	j.notes = append(j.notes, fmt.Sprintf("write: %s of %s rows (--chunk %s) copied from %s into %s by INSERT … SELECT%s, one statement and one transaction each, until --size %s is written or --duration %s is up",
		result.Plural(chunks, "chunk"), result.Grouped(srcRows), SizeText(j.c.Chunk), src.Name, dst.Name, how, SizeText(j.c.Size), j.c.Duration))
	if err := j.startPhase(ctx, j.dataDir); err != nil {
		return err
	}
	// The fill's counters are published first, not to count as the
	// writes'.
	settle(ctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, dst) })
	before := j.ev.read(ctx)
	w := &writeWorker{db: j.db.(driver.ChunkWriter), src: src, dst: dst, rows: srcRows, op: opOf("WRITE-CHUNK")}
	var perChunk float64
	plan := j.plan(w.op.Name, chunks, runner.Sequence, func(int) runner.Worker { return w })
	start := time.Now()
	out, err := j.execute(ctx, plan, 1, 1, j.c.Duration, func() float64 { return perChunk })
	if err != nil {
		return j.statementError("writing", err)
	}
	end := time.Now()
	dctx := context.WithoutCancel(ctx)
	settle(dctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, dst) })
	d := j.ev.read(dctx).since(before)
	size, err := j.sized(dctx, dst)
	if err != nil {
		return err
	}
	size.Bytes = max(0, size.Bytes-empty.Bytes)
	size.How += ", less its size empty"
	done := out.Ops - out.Failed
	if done > 0 {
		// The spans were made before the size was known: make them
		// again with each chunk's share of it.
		perChunk = float64(size.Bytes) / float64(done)
		for i := range w.spans {
			w.spans[i].bytes = perChunk
		}
		j.spans = spread(w.spans, j.origin)
	}
	j.sum.Table = result.StorageTable{Name: dst.Name, Bytes: size.Bytes, How: size.How, Rows: w.written, PayloadBytes: dst.PayloadBytes}
	j.stepWindow(0, start, end)
	step := result.StorageStep{Label: "chunks of " + SizeText(j.c.Chunk), Seconds: out.RunTime.Seconds(), Bytes: size.Bytes, Rows: w.written,
		LogBytes: d.log, PhysicalBytes: -1, DeviceReadBytes: d.deviceRead(), DeviceWriteBytes: d.deviceWrite(), Checkpoints: d.checkpoints, How: j.caps.Support(driver.CapInsertSelect).Note}
	if step.Seconds > 0 {
		step.Rate = float64(step.Bytes) / step.Seconds
		if d.log >= 0 {
			step.LogRate = float64(d.log) / step.Seconds
		}
	}
	j.sum.Steps = []result.StorageStep{step}
	j.sum.Bytes, j.sum.Seconds, j.sum.Rows = step.Bytes, step.Seconds, step.Rows
	j.sum.Proof = &result.StorageProof{Bytes: step.Bytes, DatabaseBytes: d.log, Counter: "the database's log bytes (" + driver.CounterLogBytes + ")", DeviceBytes: d.deviceWrite(), Device: j.ev.device}
	j.sum.Device = d.figures()
	j.verdict = func([]monitor.Interval) { j.sum.Verdict = writeVerdict("write", j.sum.Steps[0], j.sum.Proof) }
	return j.finish(ctx)
}

// writeVerdict says the write rate with its log and device figures per
// byte of table written: the write amplification.
func writeVerdict(kind string, s result.StorageStep, p *result.StorageProof) string {
	if s.Bytes <= 0 {
		return "nothing was written"
	}
	v := fmt.Sprintf("%s: %s of table data (%s)", kind, result.RateText(kind, s.Rate), result.RateText("log", s.Rate))
	if p.DatabaseBytes >= 0 {
		v += fmt.Sprintf("; log %s, %.2f bytes of log per byte of table", result.RateText("log", s.LogRate), float64(p.DatabaseBytes)/float64(s.Bytes))
	} else {
		v += "; the database does not count its log bytes here"
	}
	if p.DeviceBytes >= 0 {
		v += fmt.Sprintf("; the device %s wrote %.2f bytes per byte of table (every process's writes, the log's, the data's and checkpoints' in it)", p.Device, float64(p.DeviceBytes)/float64(s.Bytes))
	}
	return v
}

// writeWorker copies one chunk per unit.
type writeWorker struct {
	db       driver.ChunkWriter
	src, dst driver.DataTable
	rows     int64
	op       runner.Op
	written  int64
	spans    []span
}

func (w *writeWorker) Open(context.Context) error { return nil }
func (w *writeWorker) Close() error               { return nil }

func (w *writeWorker) Step(ctx context.Context, s *runner.Step) {
	for i := range s.N() {
		k := s.First() + i
		var n int64
		t0 := measure.Now()
		err := s.Call(ctx, &w.op, func(ctx context.Context) error {
			var err error
			n, err = w.db.InsertSelect(ctx, w.src, w.dst, 1, w.rows, k*w.rows)
			return err
		})
		t1 := measure.Now()
		s.Finish(&w.op, err, t0, t1, 0)
		if err != nil {
			return
		}
		w.written += n
		w.spans = append(w.spans, span{start: measure.Wall(t0), end: measure.Wall(t1)})
	}
}
