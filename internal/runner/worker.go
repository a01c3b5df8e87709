package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
	"dbprobe/internal/measure"
	"dbprobe/internal/workload"
)

// worker is one goroutine's state: its own session, generator, recorder
// and buffers, so the hot path shares nothing.
type worker struct {
	id      int
	phase   *phase
	sess    driver.Session
	gen     *workload.Generator
	rec     *measure.Recorder
	values  [][]byte
	opQuota int64
	op      workload.Op
	rng     *rand.Rand // retry and reconnection jitter
	// broken is set when an operation lost the connection or timed out:
	// the session is replaced before the next operation.
	broken bool

	// open loop: the intended start of the next operation (measure.Now)
	period int64
	next   int64
	// open-loop load: when the phase started (measure.Now), from which
	// each row's due time is counted (see loadDue)
	loadStart int64
}

func (w *worker) run(ctx context.Context, start time.Time) {
	p := w.phase
	switch {
	case p.opts.Target > 0 && p.opts.Phase == Load:
		w.loadStart = measure.FromTime(start)
	case p.opts.Target > 0:
		w.period = int64(float64(time.Second) * float64(p.opts.Threads) / p.opts.Target)
		// Stagger the workers over one period so they do not all fire at once.
		w.next = measure.FromTime(start) + w.period*int64(w.id)/int64(p.opts.Threads)
	}
	if p.opts.Phase == Load {
		w.load(ctx)
	} else {
		w.transactions(ctx)
	}
	if w.sess == nil {
		return // the phase stopped while the worker was reconnecting
	}
	t0 := measure.Now()
	err := w.sess.Close()
	w.record(p.layout.cleanup, p.layout.cleanup, "CLEANUP", err, t0, measure.Now(), 1)
}

// pace waits for the intended start of the next operation in open loop
// and returns it; in closed loop it returns 0.
func (w *worker) pace(ctx context.Context) int64 {
	if w.period == 0 {
		return 0
	}
	intended := w.next
	w.next += w.period
	waitUntil(ctx, intended)
	return intended
}

// timerSlack is how late a Go timer may fire: when every processor is
// idle, the runtime waits in the network poller with a timeout in whole
// milliseconds, so a timer wakes up to 1 ms after its time.
const timerSlack = 2 * time.Millisecond

// waitUntil waits until the instant at (measure.Now's clock), or until ctx
// is done. An open-loop operation's Intended- latency runs from that
// instant, so a late wake-up would be counted against the database: Go's
// timer alone put about half a millisecond on the mean Intended-READ of a
// --db null run. So a timer covers all but the last timerSlack and the
// kernel's sleep the rest (kernelSleep says how close it wakes).
func waitUntil(ctx context.Context, at int64) {
	if d := time.Duration(at-measure.Now()) - timerSlack; d > 0 && !sleep(ctx, d) {
		return
	}
	for {
		left := time.Duration(at - measure.Now())
		if left <= 0 {
			return
		}
		kernelSleep(left)
	}
}

// sleep waits for d, or until ctx is done; it reports whether ctx is
// still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *worker) transactions(ctx context.Context) {
	p := w.phase
	for done := int64(0); w.opQuota < 0 || done < w.opQuota; done++ {
		if p.stop.Load() || (w.broken && !w.reconnect(ctx)) {
			return
		}
		intended := w.pace(ctx)
		if p.stop.Load() {
			return
		}
		w.gen.Next(&w.op)
		w.do(ctx, intended)
		w.rec.Done(1)
	}
}

func (w *worker) do(ctx context.Context, intended int64) {
	op := &w.op
	start := measure.Now()
	switch op.Kind {
	case workload.Read:
		vals := w.readValues(op.ReadFields)
		err := w.attempt(ctx, workload.Read, vals)
		w.finish(workload.Read, err, start, measure.Now(), intended)
		if err == nil && w.phase.spec.DataIntegrity {
			w.verify(op.Key, op.ReadFields, vals)
		}
	case workload.Update, workload.Scan:
		err := w.attempt(ctx, op.Kind, nil)
		w.finish(op.Kind, err, start, measure.Now(), intended)
	case workload.Insert:
		err := w.attempt(ctx, workload.Insert, nil)
		w.finish(workload.Insert, err, start, measure.Now(), intended)
		w.gen.Acknowledge(op.KeyNum)
	case workload.ReadModifyWrite:
		// The read and the write are two transactions, each retried on its own.
		vals := w.readValues(op.ReadFields)
		readErr := w.attempt(ctx, workload.Read, vals)
		mid := measure.Now()
		w.finish(workload.Read, readErr, start, mid, 0)
		err := w.attempt(ctx, workload.Update, nil)
		end := measure.Now()
		w.finish(workload.Update, err, mid, end, 0)
		if err == nil {
			err = readErr
		}
		w.finish(workload.ReadModifyWrite, err, start, end, intended)
		if readErr == nil && w.phase.spec.DataIntegrity {
			w.verify(op.Key, op.ReadFields, vals)
		}
	}
}

// attempt runs one operation of w.op under the retry policy.
func (w *worker) attempt(ctx context.Context, kind workload.Operation, vals [][]byte) error {
	return w.retrying(ctx, kind, func() error { return w.once(ctx, kind, vals) })
}

// retrying calls call, repeating it while it fails with a retryable error
// and the policy allows; each repeat is counted on kind's series. call
// does not escape, so the closures passed here stay on the stack.
func (w *worker) retrying(ctx context.Context, kind workload.Operation, call func() error) error {
	policy := w.phase.opts.Retry
	for n := 0; ; n++ {
		err := call()
		if err == nil || n >= policy.Max || !driver.IsRetryable(err) || !w.backoff(ctx, n) {
			return err
		}
		w.rec.Retry(w.phase.layout.ops[kind].ok, retryCode(err))
	}
}

// retryCode names what caused a retry: the database's error code, as
// Return=ERROR(CODE) names a failure, or the error's class ("busy") when
// the driver gave no code.
func retryCode(err error) string {
	if c := driver.Code(err); c != "" {
		return c
	}
	return driver.ClassOf(err).String()
}

// backoff waits before retry n; it reports false when the phase is
// stopping, so the failure stands.
func (w *worker) backoff(ctx context.Context, n int) bool {
	if w.phase.stop.Load() {
		return false
	}
	return sleep(ctx, w.phase.opts.Retry.wait(n, w.rng))
}

// once sends one attempt of an operation to the session, under the
// operation timeout. A failure that leaves the connection in doubt marks
// the session broken.
func (w *worker) once(ctx context.Context, kind workload.Operation, vals [][]byte) error {
	if w.broken {
		return errSessionLost
	}
	return w.guarded(ctx, func(ctx context.Context) error { return w.send(ctx, kind, vals) })
}

// send sends one attempt of an operation to the session.
func (w *worker) send(ctx context.Context, kind workload.Operation, vals [][]byte) error {
	op := &w.op
	switch kind {
	case workload.Read:
		return w.sess.Read(ctx, op.Key, op.ReadFields, vals)
	case workload.Update:
		return w.sess.Update(ctx, op.Key, op.WriteFields, op.Values)
	case workload.Insert:
		return w.sess.Insert(ctx, op.Key, op.Values)
	case workload.Scan:
		_, err := w.sess.Scan(ctx, op.Key, op.ScanLength, op.ReadFields, nil)
		return err
	}
	return fmt.Errorf("runner: operation %v has no single attempt", kind)
}

func (w *worker) readValues(fields []int) [][]byte {
	if fields == nil {
		return w.values
	}
	return w.values[:len(fields)]
}

// finish records one operation's outcome: its service time, and in open
// loop (intended > 0) its latency from the intended start as well. Times
// are measure.Now nanoseconds.
func (w *worker) finish(o workload.Operation, err error, start, end, intended int64) {
	s := w.phase.layout.ops[o]
	w.record(s.ok, s.failed, o.String(), err, start, end, 1)
	w.available(err, start, end, 1)
	if intended != 0 {
		id := s.intendedOK
		if err != nil {
			id = s.intendedFailed
		}
		w.rec.Record(id, (end-intended)/1000)
	}
}

// available tells the phase's availability what an operation of n rows
// found between start and end.
func (w *worker) available(err error, start, end, n int64) {
	if err == nil {
		w.phase.avail.succeed(start, end)
	} else if unavailable(err) {
		w.phase.avail.fail(start, end, n)
	}
}

// record adds n values of one latency to the op's series (or its -FAILED
// series) and counts a failure by status and code.
func (w *worker) record(ok, failed int, name string, err error, start, end int64, n int64) {
	micros := (end - start) / 1000
	if err == nil {
		w.rec.RecordN(ok, micros, n)
		return
	}
	w.rec.RecordN(failed, micros, n)
	status, code := classify(err)
	for range n {
		w.rec.Status(ok, status)
		// YCSB's Return=ERROR line stays the total; a line per code,
		// Return=ERROR(41302), says which failures made it up.
		if code != status {
			w.rec.Status(ok, code)
		}
		w.rec.Error(code)
	}
	w.phase.noteError(name, code, err)
	if badinput.Is(err) {
		w.phase.abort(name, err)
	}
}

// classify names a failure's status (YCSB's) and its code for counting.
func classify(err error) (status, code string) {
	if errors.Is(err, driver.ErrNotFound) {
		return statusNotFound, statusNotFound
	}
	if c := driver.Code(err); c != "" {
		return statusError, statusError + "(" + c + ")"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return statusError, statusError + "(canceled)"
	}
	return statusError, statusError + "(" + driver.ClassOf(err).String() + ")"
}

// verify checks values read against what dataintegrity wrote, timed as
// YCSB's VERIFY measurement.
func (w *worker) verify(key []byte, fields []int, values [][]byte) {
	t0 := measure.Now()
	good := w.gen.Verify(key, fields, values)
	micros := (measure.Now() - t0) / 1000
	v := w.phase.layout.verify
	w.rec.Record(v, micros)
	if good {
		w.rec.Status(v, statusOK)
	} else {
		w.rec.Status(v, statusUnexpectedState)
		w.rec.Error(statusUnexpectedState)
	}
}

// loadDue is when the load's row number k (counted from insertstart) is
// due in open loop: the target's rate holds for the phase as a whole,
// whatever the threads and the batch size.
func (w *worker) loadDue(k int64) int64 {
	return w.loadStart + int64(float64(k)*float64(time.Second)/w.phase.opts.Target)
}

// load inserts this worker's share of the records in batches: it takes the
// next batch of key numbers from the shared sequence until none are left.
//
// In open loop a batch goes out when its last row is due, as YCSB's load
// sends a batch once its last record has passed the throttle, so rows
// reach the database at the target rate rather than a batch per thread
// at once; each row's intended-start latency runs from its own due time,
// so a row that waited in its batch for the later ones shows that wait.
func (w *worker) load(ctx context.Context) {
	p := w.phase
	batch := int64(p.opts.BatchSize)
	end := p.spec.InsertStart + p.spec.InsertCount
	keys := make([][]byte, batch)
	rows := make([][][]byte, batch)
	for i := range rows {
		rows[i] = make([][]byte, p.spec.FieldCount)
	}
	ins := p.layout.ops[workload.Insert]
	open := p.opts.Target > 0
	for !p.stop.Load() {
		if w.broken && !w.reconnect(ctx) {
			return
		}
		first := p.loadNext.Add(batch) - batch
		if first >= end {
			return
		}
		n := min(batch, end-first)
		if open {
			waitUntil(ctx, w.loadDue(first+n-1-p.spec.InsertStart))
		}
		for i := range n {
			key, vals := w.gen.Record(first + i)
			keys[i] = append(keys[i][:0], key...)
			for f, v := range vals {
				rows[i][f] = append(rows[i][f][:0], v...)
			}
		}
		start := measure.Now()
		err := w.insertBatch(ctx, keys[:n], rows[:n])
		end := measure.Now()
		// Every row of a batch is acknowledged when the batch commits, so
		// each row's latency is the batch's.
		w.record(ins.ok, ins.failed, workload.Insert.String(), err, start, end, n)
		w.available(err, start, end, n)
		if open {
			id := ins.intendedOK
			if err != nil {
				id = ins.intendedFailed
			}
			for i := range n {
				w.rec.Record(id, (end-w.loadDue(first+i-p.spec.InsertStart))/1000)
			}
		}
		w.rec.Done(n)
	}
}

// insertBatch inserts one load batch, repeating the whole batch under the
// retry policy while it fails with a retryable error.
func (w *worker) insertBatch(ctx context.Context, keys [][]byte, rows [][][]byte) error {
	return w.retrying(ctx, workload.Insert, func() error {
		return w.guarded(ctx, func(ctx context.Context) error {
			if len(keys) == 1 {
				return w.sess.Insert(ctx, keys[0], rows[0])
			}
			return w.sess.InsertBatch(ctx, keys, rows)
		})
	})
}
