package mysql

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// maxBatchStatements bounds how many multi-row INSERT statements, one per
// batch size, a session keeps prepared; other sizes are prepared for one
// execution.
const maxBatchStatements = 8

// killTimeout bounds the KILL of a statement whose context ended.
const killTimeout = 2 * time.Second

// errSessionClosed is the error of an operation on a closed session.
var errSessionClosed = errors.New("mysql: the session is closed")

// emptyValue stands in for a nil value: go-sql-driver sends a nil []byte
// as NULL, and an empty value is an empty string.
var emptyValue = []byte{}

// The procedure path's statements, indexes into stmtSet.calls in the order
// of driver.ProcedureNames.All.
const (
	callRead = iota
	callScan
	callUpdate
	callInsert
	callDelete
)

// Session returns a worker's handle: a connection of its own (not the
// pool's, see conn) held until Close, and statements prepared on it as
// they are first used. On the
// procedure path it first creates the table's procedures if some are
// missing.
func (db *DB) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	return db.session(ctx, t, db.opts.OpPath == driver.PathProcedure)
}

// session opens a session on the procedure path when proc is set, on the
// statement path otherwise.
func (db *DB) session(ctx context.Context, t driver.Table, proc bool) (*session, error) {
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("mysql: table %s has no fields", t.Name)
	}
	d, err := newDialect(t, db.opts.TableType)
	if err != nil {
		return nil, err
	}
	if proc {
		if err := db.ensureProcedures(ctx, t, d); err != nil {
			return nil, err
		}
	}
	n := len(t.Fields)
	s := &session{
		db:      db,
		d:       d,
		nfields: n,
		proc:    proc,
		dest:    make([]sqldriver.Value, n+1),
		picked:  make([][]byte, n),
		args:    make([]sqldriver.NamedValue, 0, n+2),
	}
	s.resetStatements()
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	// ctx may be only the opening's (the runner's reconnection has a
	// timeout of its own): the session is not using the connection now.
	s.conn.watcher.Idle()
	s.conn.watcher.Unwatch()
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		s.dropConn()
		return nil, errors.New("mysql: the DB is closed")
	}
	db.open[s] = struct{}{}
	db.mu.Unlock()
	return s, nil
}

// session is one worker's connection and prepared statements. It is not safe
// for concurrent use. When its connection breaks, the operation fails and
// the next one takes a new connection.
type session struct {
	db      *DB
	d       *dialect
	nfields int
	proc    bool // call the procedures rather than send statements

	conn   *conn // nil until connected, and after the connection broke
	connID int64 // the server's id of the last connection's thread
	closed bool
	stmts  stmtSet

	args   []sqldriver.NamedValue // arguments, reused by every call
	dest   []sqldriver.Value      // a row's columns, valid until the next row
	picked [][]byte               // the listed fields of a row, for visit
	subKey []byte                 // scratch for the subsets key

	loader     *loadReader // the LOAD DATA stream, registered on first use
	readerName string

	closeOnce sync.Once // DB.Close may close a session its owner closes later
}

// stmtSet is the statements prepared on the session's connection.
type stmtSet struct {
	readAll, scanAll, updateAll, insertOne, deleteOne *stmt
	readOne, updateOne                                []*stmt
	// subsets holds statements on several fields, by kind and field list.
	subsets map[string]*stmt
	// batch holds multi-row INSERTs by row count.
	batch map[int]*stmt
	calls [5]*stmt
	all   []*stmt // every statement above, to close
}

func (s *session) resetStatements() {
	s.stmts = stmtSet{
		readOne:   make([]*stmt, s.nfields),
		updateOne: make([]*stmt, s.nfields),
		subsets:   map[string]*stmt{},
		batch:     map[int]*stmt{},
	}
}

// ready readies the session for an operation under ctx: ctx is live and
// watched, and the session has a connection, a new one if the last broke
// or a context's end closed it, marked busy. Every operation that readied
// the session ends with idle.
func (s *session) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if s.conn != nil && !s.conn.watch(ctx) {
		s.dropConn()
	}
	if s.conn == nil {
		if s.closed {
			return driver.Classify(errSessionClosed, codeConnLost, driver.ClassConnLost)
		}
		c, err := openConn(ctx, s.db.connector, s.db.settings.cfg.Timeout)
		if err != nil {
			return classify(err)
		}
		s.db.conns.add(c.id)
		s.conn, s.connID = c, c.id
		c.watch(ctx)
	}
	if !s.conn.watcher.Busy(ctx) {
		s.conn.watcher.Idle()
		return classify(ctx.Err())
	}
	return nil
}

// idle ends an operation that ready began.
func (s *session) idle() {
	if s.conn != nil {
		s.conn.watcher.Idle()
	}
}

// fail classifies the error of an operation. When the connection did not
// survive it, the session lets it go (the next operation opens another)
// and calls the error a lost connection whatever it was, unless the
// caller's context ended: then the server may still be running the
// statement, and is told to stop it.
func (s *session) fail(ctx context.Context, err error) error {
	if s.conn != nil && s.conn.expired.Load() && ctx.Err() != nil {
		// Closing the socket stopped the statement: the caller gave up.
		err = ctx.Err()
	}
	cerr := classify(err)
	if s.conn == nil || s.conn.valid() {
		return cerr
	}
	if ctx.Err() != nil {
		s.kill()
	}
	s.dropConn()
	var e *driver.Error
	if errors.As(cerr, &e) && e.Class == driver.ClassOther && e.Code != codeCanceled {
		e.Class = driver.ClassConnLost
		if e.Code == "" {
			e.Code = codeConnLost
		}
	}
	return cerr
}

// kill ends the server thread of the session's connection. The client's
// socket fails at once when a context ends, but the server notices only
// when it next reads from it: a statement waiting for a lock would go on
// waiting, and then run.
func (s *session) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	_, _ = s.db.pool.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(s.conn.id, 10))
}

// dropConn closes the session's statements and its connection.
func (s *session) dropConn() {
	if s.conn == nil {
		return
	}
	for _, st := range s.stmts.all {
		st.close()
	}
	s.resetStatements()
	s.conn.close()
	s.conn = nil
}

// prepare prepares query on the session's connection, which ready opened.
func (s *session) prepare(ctx context.Context, query string) (*stmt, error) {
	st, err := s.conn.prepare(query)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.stmts.all = append(s.stmts.all, st)
	return st, nil
}

// checkFields validates field indexes: a bad index is a bug in the caller,
// reported rather than turned into a panic or wrong SQL.
func (s *session) checkFields(fields []int) error {
	for _, f := range fields {
		if f < 0 || f >= s.nfields {
			return fmt.Errorf("mysql: field index %d out of range [0,%d)", f, s.nfields)
		}
	}
	return nil
}

// subset returns the statement of a kind on several fields, preparing it
// the first time that list of fields is seen.
func (s *session) subset(ctx context.Context, kind byte, fields []int) (*stmt, error) {
	k := append(s.subKey[:0], kind)
	for _, f := range fields {
		k = append(k, byte(f>>8), byte(f))
	}
	s.subKey = k
	if st, ok := s.stmts.subsets[string(k)]; ok {
		return st, nil
	}
	var query string
	switch kind {
	case 'r':
		query = s.d.read(fields)
	case 's':
		query = s.d.scan(fields)
	default:
		query = s.d.update(fields)
	}
	st, err := s.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	s.stmts.subsets[string(k)] = st
	return st, nil
}

// lazy returns *slot, preparing query into it the first time.
func (s *session) lazy(ctx context.Context, slot **stmt, query func() string) (*stmt, error) {
	if *slot == nil {
		st, err := s.prepare(ctx, query())
		if err != nil {
			return nil, err
		}
		*slot = st
	}
	return *slot, nil
}

func (s *session) readStmt(ctx context.Context, fields []int) (*stmt, error) {
	switch {
	case fields == nil:
		return s.lazy(ctx, &s.stmts.readAll, func() string { return s.d.read(nil) })
	case len(fields) == 1:
		return s.lazy(ctx, &s.stmts.readOne[fields[0]], func() string { return s.d.read(fields) })
	}
	return s.subset(ctx, 'r', fields)
}

func (s *session) scanStmt(ctx context.Context, fields []int) (*stmt, error) {
	if fields == nil {
		return s.lazy(ctx, &s.stmts.scanAll, func() string { return s.d.scan(nil) })
	}
	return s.subset(ctx, 's', fields)
}

func (s *session) updateStmt(ctx context.Context, fields []int) (*stmt, error) {
	switch {
	case fields == nil:
		return s.lazy(ctx, &s.stmts.updateAll, func() string { return s.d.update(nil) })
	case len(fields) == 1:
		return s.lazy(ctx, &s.stmts.updateOne[fields[0]], func() string { return s.d.update(fields) })
	}
	return s.subset(ctx, 'u', fields)
}

// call returns the prepared CALL of one of the table's procedures.
func (s *session) call(ctx context.Context, which int) (*stmt, error) {
	return s.lazy(ctx, &s.stmts.calls[which], func() string { return s.d.calls()[which] })
}

// arg appends v to the session's arguments.
func (s *session) arg(v any) {
	s.args = append(s.args, sqldriver.NamedValue{Ordinal: len(s.args) + 1, Value: v})
}

// value returns b as an argument: never nil, which would be NULL.
func value(b []byte) any {
	if b == nil {
		return emptyValue
	}
	return b
}

// count returns how many values an operation on fields (nil: all) carries.
func (s *session) count(fields []int) int {
	if fields == nil {
		return s.nfields
	}
	return len(fields)
}

// column returns where the i-th listed field is in a row: at i when the
// statement selected the listed fields, at the field's index when it
// selected all of them (a procedure).
func (s *session) column(fields []int, i int) int {
	if s.proc && fields != nil {
		return fields[i]
	}
	return i
}

// Read fetches the listed fields (nil: all) of one record into values.
func (s *session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := s.count(fields)
	if len(values) < n {
		return fmt.Errorf("mysql: read of %d fields into %d values", n, len(values))
	}
	if err := s.checkFields(fields); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	defer s.idle()
	var st *stmt
	var err error
	cols := n
	if s.proc {
		st, err = s.call(ctx, callRead)
		cols = s.nfields
	} else {
		st, err = s.readStmt(ctx, fields)
	}
	if err != nil {
		return err
	}
	s.args = s.args[:0]
	s.arg(value(key))
	rows, err := s.queryArgs(ctx, st)
	if err != nil {
		return err
	}
	found, err := nextRow(rows, s.dest[:cols])
	if err == nil && found {
		for i := 0; i < n; i++ {
			var b []byte
			if b, err = text(s.dest[s.column(fields, i)]); err != nil {
				break
			}
			values[i] = append(values[i][:0], b...)
		}
	}
	if err := s.finish(ctx, rows, err); err != nil {
		return err
	}
	if !found {
		return driver.ErrNotFound
	}
	return nil
}

// queryArgs runs a statement that returns rows with s.args.
func (s *session) queryArgs(ctx context.Context, st *stmt) (sqldriver.Rows, error) {
	rows, err := st.query.QueryContext(unwatched, s.args)
	clear(s.args)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return rows, nil
}

// finish closes rows, and reports what went wrong while reading them
// (err) or closing them.
func (s *session) finish(ctx context.Context, rows sqldriver.Rows, err error) error {
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	clear(s.dest)
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// Scan reads up to count records from startKey on, in key order.
func (s *session) Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error) {
	if count <= 0 {
		return 0, nil
	}
	if err := s.checkFields(fields); err != nil {
		return 0, err
	}
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	defer s.idle()
	n := s.count(fields)
	var st *stmt
	var err error
	cols := 1 + n
	if s.proc {
		st, err = s.call(ctx, callScan)
		cols = 1 + s.nfields
	} else {
		st, err = s.scanStmt(ctx, fields)
	}
	if err != nil {
		return 0, err
	}
	s.args = s.args[:0]
	s.arg(value(startKey))
	s.arg(int64(count))
	rows, err := s.queryArgs(ctx, st)
	if err != nil {
		return 0, err
	}
	read := 0
	for {
		var more bool
		if more, err = nextRow(rows, s.dest[:cols]); !more {
			break
		}
		if visit != nil {
			if err = s.visitRow(fields, n, visit); err != nil {
				break
			}
		}
		read++
	}
	clear(s.picked)
	if err := s.finish(ctx, rows, err); err != nil {
		return read, err
	}
	return read, nil
}

// visitRow hands the scanned row in s.dest to visit.
func (s *session) visitRow(fields []int, n int, visit func(key []byte, values [][]byte)) error {
	key, err := text(s.dest[0])
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if s.picked[i], err = text(s.dest[1+s.column(fields, i)]); err != nil {
			return err
		}
	}
	visit(key, s.picked[:n])
	return nil
}

// Update sets the listed fields (nil: all) of one record.
func (s *session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := s.count(fields)
	if len(values) < n {
		return fmt.Errorf("mysql: update of %d fields with %d values", n, len(values))
	}
	if err := s.checkFields(fields); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	defer s.idle()
	if s.proc {
		st, err := s.call(ctx, callUpdate)
		if err != nil {
			return err
		}
		// Every field is an argument; NULL keeps the column's value.
		s.args = s.args[:0]
		s.arg(value(key))
		for range s.nfields {
			s.arg(nil)
		}
		for i := 0; i < n; i++ {
			s.args[1+s.column(fields, i)].Value = value(values[i])
		}
		return s.callOne(ctx, st)
	}
	st, err := s.updateStmt(ctx, fields)
	if err != nil {
		return err
	}
	s.args = s.args[:0]
	for _, v := range values[:n] {
		s.arg(value(v))
	}
	s.arg(value(key))
	return s.execOne(ctx, st)
}

// Insert adds one record with every field.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if len(values) != s.nfields {
		return fmt.Errorf("mysql: insert of %d values into %d fields", len(values), s.nfields)
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	defer s.idle()
	var st *stmt
	var err error
	if s.proc {
		st, err = s.call(ctx, callInsert)
	} else {
		st, err = s.lazy(ctx, &s.stmts.insertOne, func() string { return s.d.insert(1) })
	}
	if err != nil {
		return err
	}
	s.args = s.args[:0]
	s.arg(value(key))
	for _, v := range values {
		s.arg(value(v))
	}
	_, err = s.execArgs(ctx, st)
	return err
}

// Delete removes one record.
func (s *session) Delete(ctx context.Context, key []byte) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	defer s.idle()
	if s.proc {
		st, err := s.call(ctx, callDelete)
		if err != nil {
			return err
		}
		s.args = s.args[:0]
		s.arg(value(key))
		return s.callOne(ctx, st)
	}
	st, err := s.lazy(ctx, &s.stmts.deleteOne, s.d.delete)
	if err != nil {
		return err
	}
	s.args = s.args[:0]
	s.arg(value(key))
	return s.execOne(ctx, st)
}

// execArgs runs a statement without a result set with s.args.
func (s *session) execArgs(ctx context.Context, st *stmt) (sqldriver.Result, error) {
	res, err := st.exec.ExecContext(unwatched, s.args)
	clear(s.args)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return res, nil
}

// execOne runs a statement that changes one row with s.args; no row found
// is ErrNotFound. The connection reports the rows an UPDATE found, not only
// those it changed.
func (s *session) execOne(ctx context.Context, st *stmt) error {
	res, err := s.execArgs(ctx, st)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail(ctx, err)
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// callOne calls a procedure that changes one row with s.args and returns
// ROW_COUNT() as its result set; 0 is ErrNotFound.
func (s *session) callOne(ctx context.Context, st *stmt) error {
	rows, err := s.queryArgs(ctx, st)
	if err != nil {
		return err
	}
	var n int64 = -1
	found, err := nextRow(rows, s.dest[:1])
	if err == nil && found {
		n, err = intValue(s.dest[0])
	}
	if err := s.finish(ctx, rows, err); err != nil {
		return err
	}
	switch {
	case n == 0:
		return driver.ErrNotFound
	case n < 0:
		return fmt.Errorf("mysql: procedure %s returned no row count", s.d.procs.Update)
	}
	return nil
}

// InsertBatch adds records in one transaction: one LOAD DATA LOCAL when bulk
// loading is allowed and the server takes it, else multi-row INSERTs.
func (s *session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := driver.CheckBatch("mysql", keys, values, s.nfields); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	defer s.idle()
	if s.db.bulkLoad() {
		err := s.loadBatch(ctx, keys, values)
		if err == nil || !isLoadRefused(err) {
			return err
		}
		s.db.refuseBulkLoad(err)
	}
	return s.insertBatch(ctx, keys, values)
}

// simple runs a statement without arguments on the session's connection.
// It runs inside an operation (InsertBatch), whose idle ends it.
func (s *session) simple(ctx context.Context, query string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if _, err := s.conn.exec(query, nil); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// rollback ends the session's transaction after a failure, on the
// connection it failed on if that still works; never on a new one. A lock
// wait timeout (1205) rolls back only its statement, so the ROLLBACK is
// always sent; a deadlock has rolled back the whole transaction already,
// and a ROLLBACK then does nothing.
func (s *session) rollback(ctx context.Context) {
	if s.conn != nil && !s.conn.expired.Load() {
		if _, err := s.conn.exec("ROLLBACK", nil); err != nil {
			_ = s.fail(context.WithoutCancel(ctx), err)
		}
	}
}

// insertBatch loads the records with multi-row INSERTs, each within the
// limits on placeholders and packet size, inside one transaction when it
// takes more than one.
func (s *session) insertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	bounds := s.chunks(keys, values)
	if len(bounds) == 1 {
		return s.insertChunk(ctx, keys, values)
	}
	if err := s.simple(ctx, "START TRANSACTION"); err != nil {
		return err
	}
	start := 0
	for _, end := range bounds {
		if err := s.insertChunk(ctx, keys[start:end], values[start:end]); err != nil {
			s.rollback(ctx)
			return err
		}
		start = end
	}
	if err := s.simple(ctx, "COMMIT"); err != nil {
		s.rollback(ctx)
		return err
	}
	return nil
}

// chunks splits a batch into multi-row INSERTs and returns where each
// ends. A statement holds at most 65535 placeholders, and its packet must
// stay under the server's max_allowed_packet; half of it is used, for the
// protocol's own bytes.
func (s *session) chunks(keys [][]byte, values [][][]byte) []int {
	perRows := rowsPerInsert(s.nfields)
	budget := max(s.db.maxPacket/2, 1<<16)
	var bounds []int
	rows, size := 0, 0
	for i := range keys {
		row := len(keys[i]) + 11
		for _, v := range values[i] {
			row += len(v) + 11 // type, length and null-bitmap bytes, generously
		}
		if rows > 0 && (rows == perRows || size+row > budget) {
			bounds = append(bounds, i)
			rows, size = 0, 0
		}
		rows++
		size += row
	}
	return append(bounds, len(keys))
}

func (s *session) insertChunk(ctx context.Context, keys [][]byte, values [][][]byte) error {
	s.args = s.args[:0]
	for i, k := range keys {
		s.arg(value(k))
		for _, v := range values[i] {
			s.arg(value(v))
		}
	}
	rows := len(keys)
	st := s.stmts.batch[rows]
	if st == nil && len(s.stmts.batch) < maxBatchStatements {
		var err error
		if st, err = s.prepare(ctx, s.d.insert(rows)); err != nil {
			clear(s.args)
			return err
		}
		s.stmts.batch[rows] = st
	}
	if st != nil {
		_, err := s.execArgs(ctx, st)
		return err
	}
	_, err := s.conn.exec(s.d.insert(rows), s.args) // prepared for this execution
	clear(s.args)
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// Close closes the session's statements and connection.
func (s *session) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *session) close() {
	s.db.mu.Lock()
	delete(s.db.open, s)
	s.db.mu.Unlock()
	s.dropConn()
	s.closed = true
	if s.readerName != "" {
		deregisterReader(s.readerName)
	}
}
