package stress

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// layout names every series of a stress run and where each one is: one
// per statement (and its -FAILED), ITERATION, COMMIT with --transaction,
// CONNECT with --connect-per-iteration, and the open loop's Intended-
// ITERATION.
type layout struct {
	series []runner.Series
	// stmt[s][k] is statement k of script s.
	stmt      [][]runner.Op
	iteration runner.Op
	commit    runner.Op
	connect   runner.Op
}

func newLayout(scripts []*Script, transaction, connect bool) *layout {
	l := &layout{}
	add := func(name string, ok, retryable bool) int {
		l.series = append(l.series, runner.Series{Name: name, CountsOK: ok, Retryable: retryable})
		return len(l.series) - 1
	}
	l.stmt = make([][]runner.Op, len(scripts))
	for s, sc := range scripts {
		l.stmt[s] = make([]runner.Op, len(sc.Statements))
		for k, st := range sc.Statements {
			// Inside a transaction the iteration is what is retried.
			l.stmt[s][k] = runner.Op{Name: st.Label, OK: add(st.Label, true, !transaction), IntendedOK: runner.NoSeries, IntendedFailed: runner.NoSeries}
		}
	}
	l.iteration = runner.Op{Name: result.IterationSeries, OK: add(result.IterationSeries, true, transaction)}
	l.commit = runner.Op{Name: "COMMIT", OK: runner.NoSeries, Failed: runner.NoSeries, IntendedOK: runner.NoSeries, IntendedFailed: runner.NoSeries}
	if transaction {
		l.commit.OK = add("COMMIT", true, false)
	}
	l.connect = runner.Op{Name: "CONNECT", OK: runner.NoSeries, Failed: runner.NoSeries, IntendedOK: runner.NoSeries, IntendedFailed: runner.NoSeries}
	if connect {
		l.connect.OK = add("CONNECT", true, true)
	}
	for s, sc := range scripts {
		for k, st := range sc.Statements {
			l.stmt[s][k].Failed = add(st.Label+"-FAILED", false, false)
		}
	}
	l.iteration.Failed = add(result.IterationSeries+"-FAILED", false, false)
	if transaction {
		l.commit.Failed = add("COMMIT-FAILED", false, false)
	}
	if connect {
		l.connect.Failed = add("CONNECT-FAILED", false, false)
	}
	l.iteration.IntendedOK = add("Intended-"+result.IterationSeries, false, false)
	l.iteration.IntendedFailed = add("Intended-"+result.IterationSeries+"-FAILED", false, false)
	return l
}

// shared is what every worker of a run reads: the database, the work, the
// layout and how iterations go.
type shared struct {
	db   driver.SQLRunner
	opts driver.SQLOptions
	work Work
	lay  *layout
	// transaction, fresh and delay are --transaction,
	// --connect-per-iteration and --delay.
	transaction, fresh bool
	delay              time.Duration
	// perThread is --iterations (0 for none); threads the workers.
	perThread int64
	threads   int
	seed      uint64
	// warmEnd is when the warm-up ends (measure.Now's clock), set when the
	// run starts: rows are counted from then on, as the series are.
	warmEnd atomic.Int64
	// index maps a parameter's name to its place in work.Params().
	index map[string]int
}

// iteration is the number of worker w's k-th iteration (Chooser.Choose).
func (p *shared) iteration(w int, k int64) int64 {
	if p.perThread > 0 {
		return int64(w)*p.perThread + k
	}
	return k*int64(p.threads) + int64(w)
}

// tally is what a statement's measured successful executions returned and
// changed.
type tally struct {
	rows, affected int64
	// affectedKnown counts executions whose count of rows changed the
	// database gave.
	affectedKnown int64
	// ran counts the measured executions that succeeded, committed or
	// not: what the server's count of calls is held against.
	ran int64
}

func (t *tally) add(o driver.Outcome) {
	t.rows += o.Rows
	if o.Affected >= 0 {
		t.affected += o.Affected
		t.affectedKnown++
	}
}

// worker is one thread of a stress run: its own connection, statements,
// chooser and tallies, so that the hot path shares nothing.
type worker struct {
	p       *shared
	id      int
	conn    driver.SQLConn
	stmts   [][]driver.Stmt
	args    [][][]int
	chooser Chooser
	values  []any
	buf     []any
	tallies [][]tally
	pending []driver.Outcome
	// recorded says the failure of the iteration in progress is already
	// counted by code, on the statement, COMMIT or CONNECT that met it.
	recorded bool
	timer    *time.Timer
}

func newWorker(p *shared, id int) *worker {
	w := &worker{p: p, id: id, chooser: p.work.Chooser(id, p.seed), values: make([]any, len(p.work.Params()))}
	longest := 0
	for _, sc := range p.work.Scripts() {
		w.tallies = append(w.tallies, make([]tally, len(sc.Statements)))
		longest = max(longest, len(sc.Statements))
	}
	w.pending = make([]driver.Outcome, longest)
	return w
}

// Open opens the worker's connection and prepares every statement on it;
// with --connect-per-iteration each iteration does that instead.
func (w *worker) Open(ctx context.Context) error {
	if w.p.fresh {
		return nil
	}
	return w.connect(ctx)
}

// connect opens a connection as the run asks (protocol, fresh, session
// setup) and prepares the scripts' statements on it.
func (w *worker) connect(ctx context.Context) error {
	conn, err := w.p.db.SQLConn(ctx, w.p.opts)
	if err != nil {
		return err
	}
	scripts := w.p.work.Scripts()
	stmts := make([][]driver.Stmt, len(scripts))
	args := make([][][]int, len(scripts))
	for s, sc := range scripts {
		for _, st := range sc.Statements {
			prepared, err := conn.Prepare(ctx, st.Text)
			if err != nil {
				conn.Close()
				return fmt.Errorf("%s: %w", st.Label, err)
			}
			stmts[s] = append(stmts[s], prepared)
			var idx []int
			for _, name := range prepared.Params() {
				i, ok := w.p.index[name]
				if !ok {
					conn.Close()
					return fmt.Errorf("%s: parameter :%s has no value", st.Label, name)
				}
				idx = append(idx, i)
			}
			args[s] = append(args[s], idx)
		}
	}
	w.conn, w.stmts, w.args = conn, stmts, args
	return nil
}

// Close closes the connection and its statements.
func (w *worker) Close() error {
	if w.conn == nil {
		return nil
	}
	conn := w.conn
	w.conn, w.stmts = nil, nil
	return conn.Close()
}

// Step runs one iteration: it chooses a script and its values, runs the
// script's statements in order (in one transaction with --transaction),
// and records each statement and the iteration as a whole.
func (w *worker) Step(ctx context.Context, s *runner.Step) {
	p := w.p
	sc := w.chooser.Choose(p.iteration(w.id, s.First()), w.values)
	intended := s.Intended()
	w.recorded = false
	start := measure.Now()
	var err error
	if p.fresh {
		err = s.Call(ctx, &p.lay.connect, w.connect)
		s.Finish(&p.lay.connect, err, start, measure.Now(), 0)
		w.recorded = err != nil
	}
	if err == nil {
		if p.transaction {
			err = s.Call(ctx, &p.lay.iteration, func(ctx context.Context) error { return w.transaction(ctx, s, sc) })
		} else {
			err = w.each(ctx, s, sc)
		}
	}
	end := measure.Now()
	w.finishIteration(s, err, start, end, intended)
	if p.fresh {
		// Closing is not timed: the connection's work is done.
		_ = w.Close()
	}
	if p.delay > 0 {
		w.sleep(ctx, p.delay)
	}
}

// finishIteration records the iteration. A failure already counted by
// code where it happened is recorded in ITERATION-FAILED and as
// Return=ERROR without counting its code again, so that "# errors:"
// counts each failure once.
func (w *worker) finishIteration(s *runner.Step, err error, start, end, intended int64) {
	it := &w.p.lay.iteration
	if err == nil || !w.recorded {
		s.Finish(it, err, start, end, intended)
		return
	}
	rec := s.Recorder()
	rec.Record(it.Failed, (end-start)/1000)
	rec.Status(it.OK, "ERROR")
	if intended != 0 {
		s.RecordIntended(it, err, intended, end)
	}
}

// each runs the script's statements one by one, each on its own
// (autocommit) and retried on its own; the first failure ends the
// iteration, since later statements may depend on it.
func (w *worker) each(ctx context.Context, s *runner.Step, sc int) error {
	ops := w.p.lay.stmt[sc]
	for k := range ops {
		op := &ops[k]
		var out driver.Outcome
		t0 := measure.Now()
		err := s.Call(ctx, op, func(ctx context.Context) error {
			var err error
			out, err = w.run(ctx, sc, k)
			return err
		})
		t1 := measure.Now()
		s.Finish(op, err, t0, t1, 0)
		if err != nil {
			w.recorded = true
			return err
		}
		if t1 >= w.p.warmEnd.Load() {
			w.tallies[sc][k].ran++
			w.tallies[sc][k].add(out)
		}
	}
	return nil
}

// transaction runs one attempt of the script as one transaction: a
// failure rolls it back, and the retry policy repeats the whole of it.
// Rows are tallied only once it commits.
func (w *worker) transaction(ctx context.Context, s *runner.Step, sc int) error {
	w.recorded = false
	if err := w.conn.Begin(ctx); err != nil {
		return err
	}
	ops := w.p.lay.stmt[sc]
	for k := range ops {
		t0 := measure.Now()
		out, err := w.run(ctx, sc, k)
		t1 := measure.Now()
		s.Finish(&ops[k], err, t0, t1, 0)
		if err != nil {
			w.recorded = true
			w.rollback(ctx)
			return err
		}
		if t1 >= w.p.warmEnd.Load() {
			w.tallies[sc][k].ran++
		}
		w.pending[k] = out
	}
	t0 := measure.Now()
	err := w.conn.Commit(ctx)
	t1 := measure.Now()
	s.Finish(&w.p.lay.commit, err, t0, t1, 0)
	if err != nil {
		w.recorded = true
		w.rollback(ctx)
		return err
	}
	if t1 >= w.p.warmEnd.Load() {
		for k := range ops {
			w.tallies[sc][k].add(w.pending[k])
		}
	}
	return nil
}

// rollbackTimeout bounds the rollback of a failed transaction, which runs
// even when the run's context has ended (Ctrl-C): a connection left in a
// transaction would hold its locks.
const rollbackTimeout = 10 * time.Second

func (w *worker) rollback(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	// A connection that broke is closed and replaced by the runner.
	_ = w.conn.Rollback(rctx)
}

// run executes statement k of script sc with its values.
func (w *worker) run(ctx context.Context, sc, k int) (driver.Outcome, error) {
	args := w.buf[:0]
	for _, a := range w.args[sc][k] {
		args = append(args, w.values[a])
	}
	w.buf = args
	out, err := w.conn.Run(ctx, w.stmts[sc][k], args, nil)
	clear(args)
	return out, err
}

// sleep waits d (--delay), or until ctx ends.
func (w *worker) sleep(ctx context.Context, d time.Duration) {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
	case <-ctx.Done():
		w.timer.Stop()
	}
}
