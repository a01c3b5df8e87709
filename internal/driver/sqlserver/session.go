package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// rollbackTimeout bounds the rollback after a failed batch, which runs even
// when the operation's context has ended.
const rollbackTimeout = 10 * time.Second

// emptyValue stands in for a nil value: go-mssqldb sends a nil []byte as
// NULL, which a NOT NULL column refuses, where the caller means "empty".
var emptyValue = []byte{}

// nonNil returns v, or an empty non-nil slice for nil.
func nonNil(v []byte) []byte {
	if v == nil {
		return emptyValue
	}
	return v
}

// Statement kinds, the first byte of a statement's cache key.
const (
	kindRead byte = iota + 1
	kindScan
	kindUpdate
	kindInsert
	kindDelete
	kindBatch // a whole batch in one multi-row INSERT, its own transaction
	kindChunk // one full-size multi-row INSERT inside a batch's transaction
)

// Session returns a worker's handle: a connection of its own from the pool,
// held until Close, and statements prepared on it as they are first used.
// On the procedure path it first creates the table's procedures when they
// are missing (a table loaded on the statement path).
func (db *DB) Session(ctx context.Context, t dbdriver.Table) (dbdriver.Session, error) {
	if err := dbdriver.CheckTable(t); err != nil {
		return nil, err
	}
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("sqlserver: table %s has no fields", t.Name)
	}
	d := newDialect(db.schema, t)
	if db.opts.OpPath == dbdriver.PathProcedure {
		if err := db.ensureProcedures(ctx, d); err != nil {
			return nil, err
		}
	}
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, classify(err)
	}
	n := len(t.Fields)
	s := &session{
		db:      db,
		d:       d,
		conn:    conn,
		nfields: n,
		procs:   db.opts.OpPath == dbdriver.PathProcedure,
		delayed: db.opts.Durability == dbdriver.DurabilityDelayed && db.opts.DurabilityScope == dbdriver.ScopeTransaction,
		stmts:   map[string]*sql.Stmt{},
		reqs:    map[string]*request{},
		args:    make([]any, 0, n+2),
		raw:     make([]sql.RawBytes, n+1),
		dest:    make([]any, n+1),
		picked:  make([][]byte, 0, n),
	}
	for i := range s.raw {
		s.dest[i] = &s.raw[i]
	}
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		conn.Close()
		return nil, errors.New("sqlserver: Session on a closed DB")
	}
	db.open[s] = struct{}{}
	db.mu.Unlock()
	return s, nil
}

// ensureProcedures creates the table's procedures when any is missing,
// under the lifecycle lock so that sessions opening together create them
// once.
func (db *DB) ensureProcedures(ctx context.Context, d *dialect) error {
	count := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int, error) {
		var n int
		err := q.QueryRowContext(ctx, d.existingProcedures()).Scan(&n)
		return n, classify(err)
	}
	n, err := count(db.pool)
	if err != nil || n == len(d.procs.All()) {
		return err
	}
	return db.lifecycle(ctx, func(c *sql.Conn) error {
		if n, err := count(c); err != nil || n == len(d.procs.All()) {
			return err
		}
		var memory bool
		var durability, baseIndex string
		var buckets int64
		err := c.QueryRowContext(ctx, d.tableState()).Scan(&memory, &durability, &baseIndex, &buckets)
		if errors.Is(err, sql.ErrNoRows) {
			return badinput.New("table %s does not exist; load it first", d.table)
		}
		if err != nil {
			return classify(err)
		}
		return createProcedures(ctx, c, d, memory)
	})
}

// session is one worker's connection and prepared statements. It is not
// safe for concurrent use.
type session struct {
	db      *DB
	d       *dialect
	conn    *sql.Conn
	nfields int
	procs   bool // call the table's procedures instead of statements
	delayed bool // commit every write WITH (DELAYED_DURABILITY = ON)
	broken  bool // the connection broke: replace it before the next operation
	wrote   bool // rows were inserted: the procedures are recompiled at Close
	stale   bool // the pool must not hand the connection out again

	// stmts holds the procedure calls, prepared by kind (go-mssqldb
	// prepares on the client, and calls a procedure by name); reqs holds
	// the statements, by kind and field list, each with its parameters
	// declared at the columns' lengths (params): SQL Server caches a plan
	// per statement text and declaration list, so one list per text is
	// one plan. They are sent through execSQL, sp_executesql called by
	// name with that text and list, since go-mssqldb would declare each
	// []byte at its own length.
	stmts   map[string]*sql.Stmt
	reqs    map[string]*request
	execSQL *sql.Stmt
	keyBuf  []byte
	rpc     []any // sp_executesql's arguments: text, declarations, s.args

	args   []any          // arguments, reused by every call and cleared after it
	raw    []sql.RawBytes // a row's columns, valid until the next row
	dest   []any          // pointers to raw, for Scan
	picked [][]byte       // a scanned row's fields, in the order asked for
	ret    mssql.ReturnStatus

	closed bool
}

// checkFields validates field indexes: a bad index is a bug in the caller,
// reported rather than turned into a panic or wrong SQL.
func (s *session) checkFields(fields []int) error {
	for _, f := range fields {
		if f < 0 || f >= s.nfields {
			return fmt.Errorf("sqlserver: field index %d out of range [0,%d)", f, s.nfields)
		}
	}
	return nil
}

// cacheKey returns the cache key of a statement kind on fields, in
// s.keyBuf. fields nil and fields listing every field are different keys:
// they are different statements.
func (s *session) cacheKey(kind byte, fields []int) []byte {
	k := append(s.keyBuf[:0], kind)
	if fields == nil {
		k = append(k, 0xff)
	}
	for _, f := range fields {
		k = append(k, byte(f>>8), byte(f))
	}
	s.keyBuf = k
	return k
}

// stmt returns the prepared procedure call of a kind, preparing the text
// build returns the first time.
func (s *session) stmt(ctx context.Context, kind byte, fields []int, build func() string) (*sql.Stmt, error) {
	k := s.cacheKey(kind, fields)
	if st, ok := s.stmts[string(k)]; ok { // no allocation: the compiler sees a lookup
		return st, nil
	}
	st, err := s.conn.PrepareContext(ctx, build())
	if err != nil {
		return nil, s.classify(err)
	}
	s.stmts[string(k)] = st
	return st, nil
}

// request is a statement as the session sends it through sp_executesql:
// its text and its parameters' declarations, boxed once so that sending
// allocates neither, and each parameter's byte limit.
type request struct {
	text, decls any
	limits      []int
}

// newRequest returns the request of a statement text and its parameters.
func newRequest(text string, p params) *request {
	return &request{text: text, decls: p.decls, limits: p.limits}
}

// request returns the statement of a kind on fields, building it the
// first time.
func (s *session) request(kind byte, fields []int, build func() (string, params)) *request {
	k := s.cacheKey(kind, fields)
	if r, ok := s.reqs[string(k)]; ok {
		return r
	}
	r := newRequest(build())
	s.reqs[string(k)] = r
	return r
}

// bind returns sp_executesql, prepared on the session's connection, and
// its arguments for r with the values in s.args. A value longer than its
// declared column is refused here: sp_executesql would cut it to the
// declared length without a word, and a cut key reads or writes another
// row (the server refuses such a value when it is declared at its own
// length).
func (s *session) bind(ctx context.Context, r *request) (*sql.Stmt, []any, error) {
	for i, a := range s.args {
		if i >= len(r.limits) || r.limits[i] == 0 {
			continue
		}
		if b, ok := a.([]byte); ok && len(b) > r.limits[i] {
			return nil, nil, fmt.Errorf("sqlserver: a value of %d bytes for @p%d is longer than its column's %d; it would be cut short", len(b), i+1, r.limits[i])
		}
	}
	if s.execSQL == nil {
		// Called by name, go-mssqldb sends the arguments as they are,
		// positionally: the text, the declarations, then the values.
		st, err := s.conn.PrepareContext(ctx, "sp_executesql")
		if err != nil {
			return nil, nil, s.classify(err)
		}
		s.execSQL = st
	}
	s.rpc = append(append(s.rpc[:0], r.text, r.decls), s.args...)
	return s.execSQL, s.rpc, nil
}

// ready replaces a connection that broke under an earlier operation, so
// that one lost connection costs one failed operation, not the session.
func (s *session) ready(ctx context.Context) error {
	if s.closed {
		return errors.New("sqlserver: session is closed")
	}
	if !s.broken {
		return nil
	}
	s.dropConn()
	conn, err := s.db.pool.Conn(ctx)
	if err != nil {
		return s.classify(err)
	}
	s.conn, s.broken = conn, false
	return nil
}

// dropConn closes the prepared statements and the connection.
func (s *session) dropConn() {
	for k, st := range s.stmts {
		st.Close()
		delete(s.stmts, k)
	}
	if s.execSQL != nil {
		s.execSQL.Close()
		s.execSQL = nil
	}
	if s.conn != nil {
		// A broken connection is discarded by the pool, not reused; one
		// the server may have closed under a transient failure is
		// discarded whatever go-mssqldb thinks of it.
		if s.stale {
			_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		s.conn.Close()
		s.conn = nil
	}
	s.stale = false
}

// classify classifies err, and remembers when the connection did not
// survive it. After a transient failure the connection is let go as well:
// the server has often closed it (40613, 40197 come with a failover) and
// go-mssqldb notices only at the next write, and Microsoft's advice for
// these errors is to retry on a new connection; the runner's retry then
// gets one from ready.
func (s *session) classify(err error) error {
	err = classify(err)
	switch dbdriver.ClassOf(err) {
	case dbdriver.ClassConnLost:
		s.broken = true
	case dbdriver.ClassTransient:
		// Let go of it once the operation is over (rows may still be
		// open on it): ready replaces it.
		s.broken, s.stale = true, true
	}
	return err
}

// queryRead runs the read of key: the read procedure, or a SELECT of the
// fields asked for.
func (s *session) queryRead(ctx context.Context, key []byte, fields []int) (*sql.Rows, error) {
	s.args = append(s.args[:0], nonNil(key))
	defer clear(s.args)
	if s.procs {
		st, err := s.stmt(ctx, kindRead, nil, func() string { return s.d.proc(s.d.procs.Read) })
		if err != nil {
			return nil, err
		}
		return st.QueryContext(ctx, s.args...)
	}
	r := s.request(kindRead, fields, func() (string, params) { return s.d.read(fields), s.d.readParams() })
	st, args, err := s.bind(ctx, r)
	if err != nil {
		return nil, err
	}
	defer clear(s.rpc)
	return st.QueryContext(ctx, args...)
}

// Read fetches the listed fields (nil: all) of one record into values.
func (s *session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := len(fields)
	if fields == nil {
		n = s.nfields
	}
	if len(values) < n {
		return fmt.Errorf("sqlserver: read of %d fields into %d values", n, len(values))
	}
	if err := s.checkFields(fields); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	rows, err := s.queryRead(ctx, key, fields)
	if err != nil {
		return s.classify(err)
	}
	defer rows.Close()
	// The procedure returns every field; a statement returns those asked for.
	cols := n
	if s.procs {
		cols = s.nfields
	}
	found := false
	for rows.Next() {
		if err := rows.Scan(s.dest[:cols]...); err != nil {
			return s.classify(err)
		}
		for i := 0; i < n; i++ {
			c := i
			if s.procs && fields != nil {
				c = fields[i]
			}
			values[i] = append(values[i][:0], s.raw[c]...)
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return s.classify(err)
	}
	if !found {
		return dbdriver.ErrNotFound
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
	rows, err := s.queryScan(ctx, startKey, count, fields)
	if err != nil {
		return 0, s.classify(err)
	}
	defer rows.Close()
	n := len(fields)
	if fields == nil {
		n = s.nfields
	}
	cols := 1 + n
	if s.procs {
		cols = 1 + s.nfields
	}
	read := 0
	for rows.Next() {
		if err := rows.Scan(s.dest[:cols]...); err != nil {
			return read, s.classify(err)
		}
		if visit != nil {
			s.picked = s.picked[:0]
			for i := 0; i < n; i++ {
				c := 1 + i
				if s.procs && fields != nil {
					c = 1 + fields[i]
				}
				s.picked = append(s.picked, s.raw[c])
			}
			visit(s.raw[0], s.picked)
		}
		read++
	}
	if err := rows.Err(); err != nil {
		return read, s.classify(err)
	}
	return read, nil
}

// queryScan runs the scan: the scan procedure, or a SELECT of the fields
// asked for.
func (s *session) queryScan(ctx context.Context, startKey []byte, count int, fields []int) (*sql.Rows, error) {
	s.args = append(s.args[:0], nonNil(startKey), int64(count))
	defer clear(s.args)
	if s.procs {
		st, err := s.stmt(ctx, kindScan, nil, func() string { return s.d.proc(s.d.procs.Scan) })
		if err != nil {
			return nil, err
		}
		return st.QueryContext(ctx, s.args...)
	}
	r := s.request(kindScan, fields, func() (string, params) { return s.d.scan(fields), s.d.scanParams() })
	st, args, err := s.bind(ctx, r)
	if err != nil {
		return nil, err
	}
	defer clear(s.rpc)
	return st.QueryContext(ctx, args...)
}

// Update sets the listed fields (nil: all) of one record.
func (s *session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := len(fields)
	if fields == nil {
		n = s.nfields
	}
	if len(values) < n {
		return fmt.Errorf("sqlserver: update of %d fields with %d values", n, len(values))
	}
	if err := s.checkFields(fields); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	if s.procs {
		// The procedure takes every field; NULL keeps the stored value.
		s.args = append(s.args[:0], nonNil(key))
		for i := 0; i < s.nfields; i++ {
			s.args = append(s.args, []byte(nil))
		}
		for i := 0; i < n; i++ {
			f := i
			if fields != nil {
				f = fields[i]
			}
			s.args[1+f] = nonNil(values[i])
		}
		return s.callOne(ctx, kindUpdate, s.d.procs.Update)
	}
	s.args = s.args[:0]
	for _, v := range values[:n] {
		s.args = append(s.args, nonNil(v))
	}
	s.args = append(s.args, nonNil(key))
	return s.execOne(ctx, kindUpdate, fields, func() (string, params) { return s.d.update(fields), s.d.updateParams(n) })
}

// Insert adds one record with every field.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if len(values) != s.nfields {
		return fmt.Errorf("sqlserver: insert of %d values into %d fields", len(values), s.nfields)
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.args = append(s.args[:0], nonNil(key))
	for _, v := range values {
		s.args = append(s.args, nonNil(v))
	}
	var err error
	if s.procs {
		err = s.call(ctx, kindInsert, s.d.procs.Insert)
	} else {
		_, err = s.exec(ctx, kindInsert, nil, func() (string, params) { return s.d.insert(1), s.d.insertParams(1) })
	}
	s.wrote = s.wrote || err == nil
	return err
}

// Delete removes one record.
func (s *session) Delete(ctx context.Context, key []byte) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.args = append(s.args[:0], nonNil(key))
	if s.procs {
		return s.callOne(ctx, kindDelete, s.d.procs.Delete)
	}
	return s.execOne(ctx, kindDelete, nil, func() (string, params) { return s.d.delete(), s.d.deleteParams() })
}

// exec runs a write statement with s.args and returns the rows it
// affected; in the transaction scope of delayed durability it runs inside a
// transaction committed with delayed durability.
func (s *session) exec(ctx context.Context, kind byte, fields []int, build func() (string, params)) (int64, error) {
	defer clear(s.args) // keep nothing of the caller's
	if s.delayed {
		r := s.request(kind, fields, func() (string, params) {
			text, p := build()
			return delayedWrite(text), p
		})
		return s.queryRows(ctx, r)
	}
	return s.execRequest(ctx, s.request(kind, fields, build))
}

// execRequest runs r with s.args and returns the rows it affected.
func (s *session) execRequest(ctx context.Context, r *request) (int64, error) {
	st, args, err := s.bind(ctx, r)
	if err != nil {
		return 0, err
	}
	defer clear(s.rpc)
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, s.classify(err)
	}
	rows, err := res.RowsAffected()
	return rows, s.classify(err)
}

// queryRows runs r, a delayed durable transaction, with s.args and
// returns the rows it reports.
func (s *session) queryRows(ctx context.Context, r *request) (int64, error) {
	st, args, err := s.bind(ctx, r)
	if err != nil {
		return 0, err
	}
	defer clear(s.rpc)
	var rows int64
	if err := st.QueryRowContext(ctx, args...).Scan(&rows); err != nil {
		return 0, s.classify(err)
	}
	return rows, nil
}

// execOne runs a statement that changes one row: none changed is ErrNotFound.
func (s *session) execOne(ctx context.Context, kind byte, fields []int, build func() (string, params)) error {
	rows, err := s.exec(ctx, kind, fields, build)
	if err != nil {
		return err
	}
	if rows == 0 {
		return dbdriver.ErrNotFound
	}
	return nil
}

// callRows runs a procedure with s.args, returning its return value: the rows
// an update or delete procedure affected. go-mssqldb calls a procedure by
// name as an RPC, without a batch around it; in the transaction scope of
// delayed durability the call is wrapped in a transaction committed with
// delayed durability.
func (s *session) callRows(ctx context.Context, kind byte, proc string) (int64, error) {
	defer clear(s.args)
	if s.delayed {
		nparams := len(s.args)
		r := s.request(kind, nil, func() (string, params) { return s.d.delayedProc(proc, nparams), s.d.delayedProcParams(nparams) })
		return s.queryRows(ctx, r)
	}
	st, err := s.stmt(ctx, kind, nil, func() string { return s.d.proc(proc) })
	if err != nil {
		return 0, err
	}
	s.ret = 0
	if _, err := st.ExecContext(ctx, append(s.args, &s.ret)...); err != nil {
		return 0, s.classify(err)
	}
	return int64(s.ret), nil
}

// call runs a procedure whose return value does not matter.
func (s *session) call(ctx context.Context, kind byte, proc string) error {
	_, err := s.callRows(ctx, kind, proc)
	return err
}

// callOne runs a procedure that changes one row: none changed is ErrNotFound.
func (s *session) callOne(ctx context.Context, kind byte, proc string) error {
	rows, err := s.callRows(ctx, kind, proc)
	if err != nil {
		return err
	}
	if rows == 0 {
		return dbdriver.ErrNotFound
	}
	return nil
}

// InsertBatch adds records in one transaction: through bulk copy when bulk
// loading is allowed, else with multi-row INSERTs of as many rows as SQL
// Server's parameter limit allows.
func (s *session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := dbdriver.CheckBatch("sqlserver", keys, values, s.nfields); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	per := rowsPerInsert(s.nfields)
	if !s.db.opts.BulkLoad && len(keys) <= per {
		// One statement is one transaction already.
		s.fillBatch(keys, values)
		_, err := s.exec(ctx, kindBatch, []int{len(keys)}, func() (string, params) { return s.d.insert(len(keys)), s.d.insertParams(len(keys)) })
		s.wrote = s.wrote || err == nil
		return err
	}
	if _, err := s.conn.ExecContext(ctx, beginTransaction); err != nil {
		return s.classify(err)
	}
	var err error
	if s.db.opts.BulkLoad {
		err = s.bulkCopy(ctx, keys, values)
	} else {
		for start := 0; start < len(keys) && err == nil; start += per {
			end := min(start+per, len(keys))
			err = s.insertChunk(ctx, keys[start:end], values[start:end])
		}
	}
	if err == nil {
		commit := commitTransaction
		if s.delayed {
			commit = commitDelayed
		}
		if _, cerr := s.conn.ExecContext(ctx, commit); cerr != nil {
			err = s.classify(cerr)
		}
	}
	if err != nil {
		s.rollback(ctx)
	}
	s.wrote = s.wrote || err == nil
	return err
}

// fillBatch puts the records' keys and fields into s.args, row by row.
func (s *session) fillBatch(keys [][]byte, values [][][]byte) {
	s.args = s.args[:0]
	for i, k := range keys {
		s.args = append(s.args, nonNil(k))
		for _, v := range values[i] {
			s.args = append(s.args, nonNil(v))
		}
	}
}

// insertChunk runs one multi-row INSERT inside the batch's transaction.
// Only the full-size chunk's statement is kept; the last, shorter one of a
// batch is built each time.
func (s *session) insertChunk(ctx context.Context, keys [][]byte, values [][][]byte) error {
	s.fillBatch(keys, values)
	defer clear(s.args)
	rows := len(keys)
	var r *request
	if rows == rowsPerInsert(s.nfields) {
		r = s.request(kindChunk, []int{rows}, func() (string, params) { return s.d.insert(rows), s.d.insertParams(rows) })
	} else {
		r = newRequest(s.d.insert(rows), s.d.insertParams(rows))
	}
	_, err := s.execRequest(ctx, r)
	return err
}

// bulkCopy sends the records through go-mssqldb's bulk copy (INSERT BULK,
// the protocol bcp uses) inside the batch's transaction.
func (s *session) bulkCopy(ctx context.Context, keys [][]byte, values [][][]byte) error {
	st, err := s.conn.PrepareContext(ctx, s.d.copyIn())
	if err != nil {
		return s.classify(err)
	}
	defer st.Close()
	defer clear(s.args)
	for i, k := range keys {
		s.args = append(s.args[:0], nonNil(k))
		for _, v := range values[i] {
			s.args = append(s.args, nonNil(v))
		}
		if _, err := st.ExecContext(ctx, s.args...); err != nil {
			// The bulk copy's data stream is cut off mid-way (a cancelled
			// context, a failed write): the connection cannot carry
			// another request, and closing it rolls the transaction back.
			err = s.classify(err)
			s.discardConn()
			return err
		}
	}
	// An Exec without arguments ends the bulk copy and reports the rows.
	res, err := st.ExecContext(ctx)
	if err != nil {
		return s.classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(keys)) {
		return fmt.Errorf("sqlserver: bulk copy loaded %d of %d records (%v)", n, len(keys), err)
	}
	return nil
}

// rollback ends the transaction a failed batch left open. When that fails
// too the connection is in an unknown state and is replaced.
func (s *session) rollback(ctx context.Context) {
	if s.broken {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, err := s.conn.ExecContext(rctx, rollbackIfOpen); err != nil {
		s.discardConn()
	}
}

// discardConn marks the session's connection broken and tells the pool not
// to reuse it; the next operation gets a new one.
func (s *session) discardConn() {
	s.broken = true
	if s.conn != nil {
		_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// recompileTimeout bounds the recompilation of the procedures at Close,
// which has no context of its own.
const recompileTimeout = 30 * time.Second

// Close returns the session's connection to the pool. It is safe to call
// more than once, and DB.Close closes sessions left open.
//
// The last session of a table closing after rows were inserted (the end
// of a load) marks the natively compiled procedures for recompilation, so
// that the run after the load is not served by plans made for an empty
// table; its error, if any, is Close's.
func (s *session) Close() error {
	db := s.db
	db.mu.Lock()
	if s.closed {
		db.mu.Unlock()
		return nil
	}
	s.closed = true
	delete(db.open, s)
	if s.wrote {
		db.wrote[s.d.table] = true
	}
	recompile := s.procs && db.opts.TableType != dbdriver.TableDisk && db.wrote[s.d.table] && !db.openOn(s.d.table)
	if recompile {
		delete(db.wrote, s.d.table)
	}
	db.mu.Unlock()
	var err error
	if recompile {
		err = s.recompile()
	}
	s.dropConn()
	return err
}

// openOn reports whether a session on table is still open; db.mu is held.
func (db *DB) openOn(table string) bool {
	for o := range db.open {
		if o.d.table == table {
			return true
		}
	}
	return false
}

// recompile runs sp_recompile on the table's procedures, on the session's
// connection unless it broke.
func (s *session) recompile() error {
	ctx, cancel := context.WithTimeout(context.Background(), recompileTimeout)
	defer cancel()
	var err error
	if s.conn != nil && !s.broken {
		_, err = s.conn.ExecContext(ctx, s.d.recompileProcedures())
	} else {
		_, err = s.db.pool.ExecContext(ctx, s.d.recompileProcedures())
	}
	if err != nil {
		return fmt.Errorf("sqlserver: sp_recompile the procedures of %s after the load: %w", s.d.table, classify(err))
	}
	return nil
}
