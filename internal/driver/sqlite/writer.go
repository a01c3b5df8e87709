package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// writer is the one connection every write of every session goes through,
// driven by one goroutine that commits the writes it finds waiting as one
// transaction (group commit).
//
// SQLite lets one connection write at a time. When each session writes on
// its own connection, the losers of the write lock wait in SQLite's busy
// handler, which sleeps and polls (1 ms, 2 ms, 5 ms, …): 8 sessions of YCSB
// workload A ran at about 8,500 ops/s that way. A Go mutex around the
// writes still leaves the lock idle at each hand-over, while the goroutine
// it woke waits to be scheduled. One goroutine that owns the connection
// runs write after write without hand-overs, and one commit for the writes
// that queued meanwhile saves per-commit work (the WAL write lock, the WAL
// index header) besides.
//
// A write returns only after the transaction holding it committed, so a
// caller sees the same durability as with a commit of its own.
type writer struct {
	conn   *sql.Conn
	begin  *sql.Stmt
	commit *sql.Stmt
	abort  *sql.Stmt
	// queue holds requests for the goroutine; it is buffered so that a
	// session waits only once, for its answer.
	queue   chan *writeReq
	quit    chan struct{}
	stopped chan struct{}
	stop    sync.Once

	// Owned by the writer goroutine once it runs.

	// tables holds each table's prepared write statements, by lower-case
	// name (SQLite compares identifiers without case).
	tables map[string]*tableWriter
	// retired holds statements replaced while a session may still hold
	// them; they are closed with the writer.
	retired []*tableWriter
	group   []*writeReq
	// ckpt, when set, runs the checkpoints in the background; written
	// counts records written since it was last asked to.
	ckpt    *checkpointer
	written int

	// busy is the time the goroutine spent running requests, in
	// nanoseconds: the monitor's measure of how close the one writer is to
	// its limit. It is counted up to each answer before the answer goes
	// (see answer), so a caller that has its answer finds its write's time
	// in busy; busyFrom is where the time not yet counted starts, set when
	// a request is taken.
	busy     atomic.Int64
	busyFrom time.Time
	// commits counts the transactions the writer committed, each holding
	// one or more writes (group commit), or one write alone in autocommit:
	// the monitor's commits.
	commits atomic.Int64
}

// maxGroup bounds how many writes one transaction carries. Sessions wait
// for their write, so a group never holds more than one write per session;
// the bound only matters with hundreds of sessions.
const maxGroup = 64

// writeOp is what a request asks of the writer.
type writeOp uint8

const (
	opInsert writeOp = iota
	opUpdate
	opDelete
	// opAlone runs fn by itself, inside a transaction of its own when tx
	// is set: batches, DDL, preparing statements.
	opAlone
)

// writeReq is one request to the writer. A session reuses its own, so a
// write allocates nothing for the request itself.
type writeReq struct {
	op     writeOp
	tw     *tableWriter
	fields []int
	args   []any
	fn     func(c *sql.Conn) error
	tx     bool
	// rows is how many records fn writes, for checkpointing.
	rows int

	// n and err are the answer: rows affected, and what failed.
	n    int64
	err  error
	done chan struct{}
}

func newWriteReq() *writeReq { return &writeReq{done: make(chan struct{}, 1)} }

// tableWriter is one table's prepared write statements on the writer
// connection, used only by the writer goroutine.
type tableWriter struct {
	t      driver.Table
	insert *sql.Stmt
	delete *sql.Stmt
	// update has one statement per field: YCSB updates one field at a time
	// (writeallfields=false), so that case never looks anything up.
	update []*sql.Stmt
	// updates holds statements for several fields at once, by field list.
	updates stmtCache[*sql.Stmt]
	// multi inserts multiRows records at once, for InsertBatch without
	// BulkLoad; prepared on first use.
	multi     *sql.Stmt
	multiRows int
}

func (d *db) openWriter(ctx context.Context) error {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return err
	}
	w := &d.w
	w.conn = c
	w.tables = map[string]*tableWriter{}
	// The writer is the only connection that changes the database, so
	// nothing else's commit ever empties its page cache: given room for
	// the table, an update finds its pages in memory instead of reading
	// them back from the file.
	if _, err := c.ExecContext(ctx, writerCacheSQL); err != nil {
		c.Close()
		return err
	}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&w.begin, beginImmediateSQL}, {&w.commit, commitSQL}, {&w.abort, rollbackSQL}} {
		if *p.stmt, err = c.PrepareContext(ctx, p.sql); err != nil {
			w.closeStatements()
			c.Close()
			return err
		}
	}
	w.queue = make(chan *writeReq, 1024)
	w.quit = make(chan struct{})
	w.stopped = make(chan struct{})
	go w.run()
	return nil
}

var errClosed = errors.New("sqlite: the database is closed")

// do hands a request to the writer goroutine and waits for its answer.
func (w *writer) do(r *writeReq) error {
	select {
	case w.queue <- r:
	case <-w.stopped:
		return errClosed
	}
	select {
	case <-r.done:
		return nil
	case <-w.stopped:
		// The goroutine answers every request it took before it stops;
		// one left in the queue gets no answer.
		select {
		case <-r.done:
			return nil
		default:
			return errClosed
		}
	}
}

// writerCacheKiB is the writer's page cache: 256 MiB, taken only as pages
// are read, against SQLite's default of 2 MiB.
const writerCacheKiB = 256 << 10

var writerCacheSQL = "PRAGMA cache_size = " + strconv.Itoa(-writerCacheKiB)

// call runs fn on the writer goroutine, in a transaction when tx is set.
func (w *writer) call(ctx context.Context, tx bool, fn func(c *sql.Conn) error) error {
	return w.callRows(ctx, tx, 0, fn)
}

// callRows is call for fn that writes rows records.
func (w *writer) callRows(ctx context.Context, tx bool, rows int, fn func(c *sql.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := newWriteReq()
	r.op, r.tx, r.fn, r.rows = opAlone, tx, fn, rows
	if err := w.do(r); err != nil {
		return err
	}
	return r.err
}

// transaction runs fn on the writer connection inside BEGIN IMMEDIATE …
// COMMIT, and rolls back when fn fails.
func (w *writer) transaction(ctx context.Context, fn func(c *sql.Conn) error) error {
	return w.call(ctx, true, fn)
}

func (w *writer) run() {
	defer close(w.stopped)
	var next *writeReq
	for {
		r := next
		next = nil
		if r == nil {
			select {
			case r = <-w.queue:
			case <-w.quit:
				return
			}
		}
		w.busyFrom = time.Now()
		if r.op == opAlone {
			w.runAlone(r)
			continue
		}
		group := append(w.group[:0], r)
	collect:
		for len(group) < maxGroup {
			select {
			case r := <-w.queue:
				if r.op == opAlone {
					next = r
					break collect
				}
				group = append(group, r)
			default:
				break collect
			}
		}
		w.runGroup(group)
		clear(group)
		w.group = group[:0]
	}
}

func (w *writer) runAlone(r *writeReq) {
	rows := r.rows
	if r.tx {
		r.err = w.transactionLocked(func() error { return r.fn(w.conn) })
	} else if r.err = r.fn(w.conn); r.err == nil {
		w.commits.Add(1) // its statements commit as it goes: one at least
	}
	// r belongs to its caller again once answered: read nothing after.
	w.answer(r)
	w.wrote(rows)
}

// answer counts the writer's busy time so far, then gives r its answer.
// Counted after the answer, the time would reach busy only once the
// goroutine ran again, which under load can be long after the caller went
// on: a monitor sample taken meanwhile would miss it, and the next would
// count it in an interval it did not belong to (0.42 s of a CREATE TABLE
// in 45 ms of inserts, under -race). What the goroutine does after its
// last answer, counting records for the checkpointer, is left out.
func (w *writer) answer(r *writeReq) {
	w.countBusy()
	r.done <- struct{}{}
}

// countBusy adds the time since busyFrom to busy.
func (w *writer) countBusy() {
	now := time.Now()
	w.busy.Add(int64(now.Sub(w.busyFrom)))
	w.busyFrom = now
}

// wrote counts written records and asks for a background checkpoint
// every checkpointEvery of them. A request the checkpointer cannot take
// yet, busy with the last one, is simply dropped: the next one will do.
func (w *writer) wrote(n int) {
	if w.ckpt == nil || n == 0 {
		return
	}
	w.written += n
	if w.written >= checkpointEvery {
		w.ckpt.request()
		w.written = 0
	}
}

// runGroup runs single-record writes in one transaction. If any of them
// fails, or the commit does, the transaction is rolled back and each write
// runs again on its own, so that every caller gets the outcome its write
// would have had alone: a duplicate key fails only its own insert.
func (w *writer) runGroup(group []*writeReq) {
	if len(group) > 1 {
		ok := true
		if _, err := w.begin.ExecContext(bg); err != nil {
			for _, r := range group {
				r.n, r.err = 0, err
				w.answer(r)
			}
			return
		}
		for _, r := range group {
			if w.exec(r); r.err != nil {
				ok = false
				break
			}
		}
		if ok {
			_, err := w.commit.ExecContext(bg)
			ok = err == nil
			if ok {
				w.commits.Add(1)
			}
		}
		if ok {
			for _, r := range group {
				w.answer(r)
			}
			w.wrote(len(group))
			return
		}
		// A failed ROLLBACK means there was nothing left to roll back.
		_, _ = w.abort.ExecContext(bg)
	}
	// Alone, each write commits on its own (autocommit).
	for _, r := range group {
		if w.exec(r); r.err == nil {
			w.commits.Add(1)
		}
		w.answer(r)
	}
	w.wrote(len(group))
}

// exec runs one single-record write and records its answer in r.
func (w *writer) exec(r *writeReq) {
	var stmt *sql.Stmt
	var err error
	switch r.op {
	case opInsert:
		stmt = r.tw.insert
	case opDelete:
		stmt = r.tw.delete
	case opUpdate:
		stmt, err = r.tw.updateStmt(w.conn, r.fields)
	}
	if err != nil {
		r.n, r.err = 0, err
		return
	}
	res, err := stmt.ExecContext(bg, r.args...)
	if err != nil {
		r.n, r.err = 0, err
		return
	}
	r.n, r.err = res.RowsAffected()
}

// transactionLocked runs fn inside BEGIN IMMEDIATE … COMMIT on the writer
// goroutine. IMMEDIATE takes the write lock at once, so another process's
// writer cannot make the commit fail halfway.
func (w *writer) transactionLocked(fn func() error) error {
	if _, err := w.begin.ExecContext(bg); err != nil {
		return err
	}
	if err := fn(); err != nil {
		// A failed ROLLBACK leaves nothing better to report than err.
		_, _ = w.abort.ExecContext(bg)
		return err
	}
	if _, err := w.commit.ExecContext(bg); err != nil {
		_, _ = w.abort.ExecContext(bg)
		return err
	}
	w.commits.Add(1)
	return nil
}

// table returns the table's write statements, preparing them on first use.
func (w *writer) table(ctx context.Context, t driver.Table) (*tableWriter, error) {
	var tw *tableWriter
	err := w.call(ctx, false, func(c *sql.Conn) error {
		key := lowerName(t.Name)
		if old := w.tables[key]; old != nil {
			if sameShape(old.t, t) {
				tw = old
				return nil
			}
			w.retired = append(w.retired, old)
			delete(w.tables, key)
		}
		nt := &tableWriter{t: cloneTable(t), multiRows: multiRowCount(len(t.Fields))}
		var err error
		prep := func(q string) *sql.Stmt {
			if err != nil {
				return nil
			}
			var s *sql.Stmt
			s, err = c.PrepareContext(ctx, q)
			return s
		}
		nt.insert = prep(insertSQL(t, 1))
		nt.delete = prep(deleteSQL(t))
		nt.update = make([]*sql.Stmt, len(t.Fields))
		for i := range t.Fields {
			nt.update[i] = prep(updateSQL(t, []int{i}))
		}
		if err != nil {
			nt.close()
			return err
		}
		w.tables[key] = nt
		tw = nt
		return nil
	})
	return tw, err
}

// updateStmt returns the statement that sets the listed fields.
func (tw *tableWriter) updateStmt(conn *sql.Conn, fields []int) (*sql.Stmt, error) {
	if len(fields) == 1 {
		return tw.update[fields[0]], nil
	}
	return tw.updates.get(fields, func() (*sql.Stmt, error) {
		return conn.PrepareContext(bg, updateSQL(tw.t, fields))
	})
}

// multiStmt returns the multi-row INSERT.
func (tw *tableWriter) multiStmt(conn *sql.Conn) (*sql.Stmt, error) {
	if tw.multi == nil {
		s, err := conn.PrepareContext(bg, insertSQL(tw.t, tw.multiRows))
		if err != nil {
			return nil, err
		}
		tw.multi = s
	}
	return tw.multi, nil
}

// forget closes a table's statements before the table is dropped; it runs
// on the writer goroutine.
func (w *writer) forget(name string) {
	key := lowerName(name)
	if tw := w.tables[key]; tw != nil {
		tw.close()
		delete(w.tables, key)
	}
}

func (tw *tableWriter) close() {
	closeStmt(tw.insert)
	closeStmt(tw.delete)
	closeStmt(tw.multi)
	for _, s := range tw.update {
		closeStmt(s)
	}
	tw.updates.close()
}

// close stops the goroutine, then closes the statements and the connection
// it owned.
func (w *writer) close() error {
	var err error
	w.stop.Do(func() {
		if w.quit != nil {
			close(w.quit)
			<-w.stopped
		}
		w.closeStatements()
		if w.conn != nil {
			err = w.conn.Close()
		}
	})
	return err
}

func (w *writer) closeStatements() {
	for _, tw := range w.tables {
		tw.close()
	}
	for _, tw := range w.retired {
		tw.close()
	}
	w.tables, w.retired = nil, nil
	closeStmt(w.begin)
	closeStmt(w.commit)
	closeStmt(w.abort)
}

func closeStmt(s *sql.Stmt) {
	if s != nil {
		// Closing a statement only finalizes it; nothing to report.
		_ = s.Close()
	}
}

func sameShape(a, b driver.Table) bool {
	return a.Name == b.Name && a.KeyColumn == b.KeyColumn && slices.Equal(a.Fields, b.Fields)
}

// cloneTable copies the field list: the caller keeps its Table.
func cloneTable(t driver.Table) driver.Table {
	t.Fields = slices.Clone(t.Fields)
	return t
}
