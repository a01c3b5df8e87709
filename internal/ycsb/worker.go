package ycsb

import (
	"context"
	"fmt"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/shard"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// YCSB's statuses of a VERIFY check.
const (
	statusOK              = "OK"
	statusUnexpectedState = "UNEXPECTED_STATE"
)

// session is what both phases' workers hold: the driver session the
// runner has them open and close, and the worker's generator, which
// Execute's Prepare sets once every session is open.
type session struct {
	db    driver.DB
	table driver.Table
	sess  driver.Session
	// router is sess as a shard.Router when the table is sharded: the
	// record number of each keyed call must reach the shard layer, and
	// the session's methods carry only the hashed key. Keys come from the
	// generator here with their numbers (workload.Op.KeyNum, the load's
	// batch start), so telling the session just before the call is the
	// one path that needs no change to the driver interface.
	router shard.Router
	spec   *workload.Spec
	layout *layout
	gen    *workload.Generator
	// reads holds the replica session reads and scans go to (--read-db);
	// nil without one.
	reads *readSession
}

// Open opens the worker's driver session, and its replica session when
// reads go to a replica.
func (s *session) Open(ctx context.Context) error {
	sess, err := s.db.Session(ctx, s.table)
	if err != nil {
		return err
	}
	if err := s.reads.open(ctx, s.table); err != nil {
		sess.Close()
		return err
	}
	s.sess = sess
	s.router, _ = sess.(shard.Router)
	return nil
}

// Close closes the worker's driver sessions.
func (s *session) Close() error {
	sess := s.sess
	s.sess = nil
	err := sess.Close()
	if rerr := s.reads.close(); err == nil {
		err = rerr
	}
	return err
}

// transactor is a run-phase worker: each step is one operation of the
// workload's mix.
type transactor struct {
	session
	op     workload.Op
	values [][]byte // what reads read into
}

func newTransactor(db driver.DB, table driver.Table, spec *workload.Spec, l *layout) *transactor {
	return &transactor{
		session: session{db: db, table: table, spec: spec, layout: l},
		values:  make([][]byte, spec.FieldCount),
	}
}

// Step does the next operation of the mix.
func (w *transactor) Step(ctx context.Context, s *runner.Step) {
	w.gen.Next(&w.op)
	op := &w.op
	ops := &w.layout.ops
	intended := s.Intended()
	start := measure.Now()
	switch op.Kind {
	case workload.Read:
		vals := w.readValues(op.ReadFields)
		w.reads.beginRead(op)
		err := w.attempt(ctx, s, workload.Read, vals)
		s.Finish(&ops[workload.Read], err, start, measure.Now(), intended)
		w.reads.endRead(op, vals, err)
		if err == nil && w.spec.DataIntegrity {
			w.verify(s, op.Key, op.ReadFields, vals)
		}
	case workload.Update, workload.Scan:
		w.reads.beginWrite(op)
		err := w.attempt(ctx, s, op.Kind, nil)
		s.Finish(&ops[op.Kind], err, start, measure.Now(), intended)
		w.reads.endWrite(op, err)
	case workload.Insert:
		w.reads.beginWrite(op)
		err := w.attempt(ctx, s, workload.Insert, nil)
		s.Finish(&ops[workload.Insert], err, start, measure.Now(), intended)
		w.reads.endWrite(op, err)
		w.gen.Acknowledge(op.KeyNum)
	case workload.ReadModifyWrite:
		// The read and the write are two transactions, each retried on
		// its own; with a replica both go to the primary (send).
		vals := w.readValues(op.ReadFields)
		readErr := w.attempt(ctx, s, workload.Read, vals)
		mid := measure.Now()
		s.Finish(&ops[workload.Read], readErr, start, mid, 0)
		w.reads.beginWrite(op)
		err := w.attempt(ctx, s, workload.Update, nil)
		end := measure.Now()
		w.reads.endWrite(op, err)
		s.Finish(&ops[workload.Update], err, mid, end, 0)
		if err == nil {
			err = readErr
		}
		s.Finish(&ops[workload.ReadModifyWrite], err, start, end, intended)
		if readErr == nil && w.spec.DataIntegrity {
			w.verify(s, op.Key, op.ReadFields, vals)
		}
	}
}

// attempt sends one operation of w.op through the runner: guarded,
// retried and counted on kind's series.
func (w *transactor) attempt(ctx context.Context, s *runner.Step, kind workload.Operation, vals [][]byte) error {
	return s.Call(ctx, &w.layout.ops[kind], func(ctx context.Context) error { return w.send(ctx, kind, vals) })
}

// send sends one attempt of an operation to the session.
func (w *transactor) send(ctx context.Context, kind workload.Operation, vals [][]byte) error {
	op := &w.op
	if w.router != nil && kind != workload.Scan {
		w.router.Route(op.KeyNum)
		if w.reads != nil && w.reads.router != nil && kind == workload.Read {
			w.reads.router.Route(op.KeyNum)
		}
	}
	switch kind {
	case workload.Read:
		return w.reader().Read(ctx, op.Key, op.ReadFields, vals)
	case workload.Update:
		return w.sess.Update(ctx, op.Key, op.WriteFields, op.Values)
	case workload.Insert:
		return w.sess.Insert(ctx, op.Key, op.Values)
	case workload.Scan:
		_, err := w.reader().Scan(ctx, op.Key, op.ScanLength, op.ReadFields, nil)
		return err
	}
	return fmt.Errorf("ycsb: operation %v has no single attempt", kind)
}

func (w *transactor) readValues(fields []int) [][]byte {
	if fields == nil {
		return w.values
	}
	return w.values[:len(fields)]
}

// verify checks values read against what dataintegrity wrote, timed as
// YCSB's VERIFY measurement.
func (w *transactor) verify(s *runner.Step, key []byte, fields []int, values [][]byte) {
	t0 := measure.Now()
	good := w.gen.Verify(key, fields, values)
	micros := (measure.Now() - t0) / 1000
	rec, v := s.Recorder(), w.layout.verify
	rec.Record(v, micros)
	if good {
		rec.Status(v, statusOK)
	} else {
		rec.Status(v, statusUnexpectedState)
		rec.Error(statusUnexpectedState)
	}
}

// loader is a load-phase worker: each step inserts the records of the
// next batch of key numbers the runner's sequence gives it.
type loader struct {
	session
	keys [][]byte
	rows [][][]byte
}

func newLoader(db driver.DB, table driver.Table, spec *workload.Spec, l *layout, batch int) *loader {
	w := &loader{
		session: session{db: db, table: table, spec: spec, layout: l},
		keys:    make([][]byte, batch),
		rows:    make([][][]byte, batch),
	}
	for i := range w.rows {
		w.rows[i] = make([][]byte, spec.FieldCount)
	}
	return w
}

// Step inserts one batch: records insertstart + First() onwards.
//
// In open loop the runner sends a batch when its last row is due, as
// YCSB's load sends a batch once its last record has passed the throttle,
// so rows reach the database at the target rate rather than a batch per
// thread at once; each row's intended-start latency runs from its own due
// time, so a row that waited in its batch for the later ones shows that
// wait.
func (w *loader) Step(ctx context.Context, s *runner.Step) {
	first, n := w.spec.InsertStart+s.First(), s.N()
	for i := range n {
		key, vals := w.gen.Record(first + i)
		w.keys[i] = append(w.keys[i][:0], key...)
		for f, v := range vals {
			w.rows[i][f] = append(w.rows[i][f][:0], v...)
		}
	}
	keys, rows := w.keys[:n], w.rows[:n]
	ins := &w.layout.ops[workload.Insert]
	start := measure.Now()
	// A batch is repeated as a whole under the retry policy.
	err := s.Call(ctx, ins, func(ctx context.Context) error {
		if w.router != nil {
			w.router.Route(first)
		}
		if len(keys) == 1 {
			return w.sess.Insert(ctx, keys[0], rows[0])
		}
		return w.sess.InsertBatch(ctx, keys, rows)
	})
	end := measure.Now()
	// Every row of a batch is acknowledged when the batch commits, so
	// each row's latency is the batch's.
	s.FinishN(ins, err, start, end, n)
	if s.Intended() != 0 {
		for i := range n {
			s.RecordIntended(ins, err, s.Due(i), end)
		}
	}
}
