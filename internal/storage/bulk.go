package storage

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// bulk loads rows of --size through the database's bulk API (or
// multi-row INSERT with --no-copy) with each --threads value in turn,
// into a new table each time, until the rows are loaded or --duration is
// up, and counts the rows in the table afterwards.
func (j *job) bulk(ctx context.Context) error {
	t := j.dataTable(j.tableNames()[0])
	rowBytes := int64(8 + t.PayloadBytes)
	rows := max(1, j.c.Size/rowBytes)
	path := "the bulk API"
	if j.c.NoCopy {
		path = "multi-row INSERT statements (--no-copy)"
	}
	j.sum.BytesAre = "rows and payload loaded: each row's 8-byte id and its payload"
	j.sum.Table = result.StorageTable{Name: t.Name, PayloadBytes: t.PayloadBytes}
	j.notes = append(j.notes, fmt.Sprintf("bulk: %s rows (--size %s) loaded into %s through %s in batches of %d rows, each one transaction; the table is made anew for each --threads value, and its rows are counted afterwards",
		result.Grouped(rows), SizeText(j.c.Size), t.Name, path, j.c.Batch))
	if err := j.startPhase(ctx, j.dataDir); err != nil {
		return err
	}
	payload := bytes.Repeat([]byte{'x'}, t.PayloadBytes)
	loader := j.db.(driver.BulkLoader)
	for i, n := range j.c.Threads {
		if j.halted(ctx) {
			break
		}
		if i > 0 {
			if err := j.dropOne(ctx, t); err != nil {
				return err
			}
		}
		if err := j.create(ctx, t); err != nil {
			return err
		}
		sh := &bulkShared{loader: loader, t: t, payload: payload, op: opOf("BULK-BATCH")}
		plan := j.plan(sh.op.Name, rows, runner.Sequence, func(int) runner.Worker { return &bulkWorker{sh: sh} })
		settle(ctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, t) })
		before := j.ev.read(ctx)
		start := time.Now()
		out, err := j.execute(ctx, plan, n, j.c.Batch, j.c.Duration, func() float64 { return float64(rowBytes) })
		if err != nil {
			return j.statementError(fmt.Sprintf("loading with %d writers", n), err)
		}
		end := time.Now()
		dctx := context.WithoutCancel(ctx)
		settle(dctx, func(ctx context.Context) { j.db.(driver.TableSizer).TableSize(ctx, t) })
		d := j.ev.read(dctx).since(before)
		j.stepWindow(len(j.sum.Steps), start, end)
		loaded := sh.loaded.Load()
		counted, err := j.db.(driver.TableScanner).ScanTable(dctx, t, 0, 1)
		if err != nil {
			return j.statementError("counting the rows loaded", err)
		}
		step := result.StorageStep{Label: "threads " + strconv.Itoa(n), Seconds: out.RunTime.Seconds(), Bytes: loaded * rowBytes, Rows: loaded,
			LogBytes: d.log, PhysicalBytes: -1, DeviceReadBytes: d.deviceRead(), DeviceWriteBytes: d.deviceWrite(), Checkpoints: d.checkpoints, How: sh.how()}
		if step.Seconds > 0 {
			step.Rate = float64(step.Bytes) / step.Seconds
			if d.log >= 0 {
				step.LogRate = float64(d.log) / step.Seconds
			}
		}
		if counted.Rows != loaded {
			step.Verdict = fmt.Sprintf("the table holds %s rows, not the %s the writers had acknowledged", result.Grouped(counted.Rows), result.Grouped(loaded))
		} else {
			step.Verdict = fmt.Sprintf("all %s rows acknowledged are in the table (counted afterwards)", result.Grouped(counted.Rows))
		}
		j.sum.Steps = append(j.sum.Steps, step)
		j.sum.Bytes += step.Bytes
		j.sum.Seconds += step.Seconds
		j.sum.Rows += step.Rows
		if size, err := j.db.(driver.TableSizer).TableSize(dctx, t); err == nil {
			j.sum.Table.Bytes, j.sum.Table.How, j.sum.Table.Rows = size.Bytes, size.How, counted.Rows
		}
	}
	j.verdict = func([]monitor.Interval) { j.sum.Verdict = j.bulkVerdict() }
	return j.finish(ctx)
}

// bulkVerdict says each writer count's load rate, rows and the check of
// the rows counted afterwards.
func (j *job) bulkVerdict() string {
	if len(j.sum.Steps) == 0 {
		return "nothing was loaded"
	}
	v := "bulk:"
	for i, s := range j.sum.Steps {
		if i > 0 {
			v += ";"
		}
		v += fmt.Sprintf(" %s at %s (%s rows/s), %s", result.RateText("bulk", s.Rate), s.Label, strconv.FormatFloat(float64(s.Rows)/max(s.Seconds, 1e-9), 'f', 0, 64), s.Verdict)
	}
	return v + "; path: " + j.sum.Steps[len(j.sum.Steps)-1].How
}

// bulkShared is what a bulk step's writers share.
type bulkShared struct {
	loader  driver.BulkLoader
	t       driver.DataTable
	payload []byte
	op      runner.Op
	loaded  atomic.Int64
	mu      sync.Mutex
	path    string
}

// how is the path the rows took, as the last writer to close said.
func (sh *bulkShared) how() string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.path
}

// bulkWorker is one writer with its own connection.
type bulkWorker struct {
	sh       *bulkShared
	w        driver.BulkWriter
	ids      []int64
	payloads [][]byte
}

func (b *bulkWorker) Open(ctx context.Context) error {
	w, err := b.sh.loader.BulkWriter(ctx, b.sh.t)
	if err != nil {
		return err
	}
	b.w = w
	return nil
}

func (b *bulkWorker) Close() error {
	if b.w == nil {
		return nil
	}
	b.sh.mu.Lock()
	b.sh.path = b.w.How()
	b.sh.mu.Unlock()
	err := b.w.Close()
	b.w = nil
	return err
}

// Step loads the step's rows, ids First()+1 … First()+N(), as one batch.
func (b *bulkWorker) Step(ctx context.Context, s *runner.Step) {
	n := int(s.N())
	b.ids, b.payloads = b.ids[:0], b.payloads[:0]
	for i := range n {
		b.ids = append(b.ids, s.First()+int64(i)+1)
		b.payloads = append(b.payloads, b.sh.payload)
	}
	t0 := measure.Now()
	err := s.Call(ctx, &b.sh.op, func(ctx context.Context) error { return b.w.Write(ctx, b.ids, b.payloads) })
	s.FinishN(&b.sh.op, err, t0, measure.Now(), 1)
	if err == nil {
		b.sh.loaded.Add(int64(n))
	}
}
