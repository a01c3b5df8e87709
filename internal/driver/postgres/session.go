package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// maxBatchStatements bounds how many multi-row INSERT statements, one per
// batch size, a session keeps prepared; other sizes are parsed each time.
const maxBatchStatements = 8

// Session returns a worker's handle: a connection of its own, held until
// Close, and statements prepared on it as they are first used.
//
// The connection is opened and authenticated by pgconn, with the pool's
// configuration, and then driven through wire: parameters go out as the
// caller's bytes in the text format and results are copied from the read
// buffer, so a read or an update costs no reflection, no type encoding, no
// allocation and no per-statement timer.
func (db *DB) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	return db.session(ctx, t, db.opts.OpPath == driver.PathProcedure)
}

// session opens a session on the procedure path when proc is set, on
// the statement path otherwise.
func (db *DB) session(ctx context.Context, t driver.Table, proc bool) (*session, error) {
	if err := driver.CheckTable(t); err != nil {
		return nil, err
	}
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("postgres: table %s has no fields", t.Name)
	}
	if proc {
		if err := db.ensureProcedures(ctx, t); err != nil {
			return nil, err
		}
	}
	pc, err := pgconn.ConnectConfig(ctx, db.connConfig)
	if err != nil {
		return nil, db.sessionOpenError(err)
	}
	c, err := hijack(ctx, pc)
	if err != nil {
		return nil, classify(err)
	}
	n := len(t.Fields)
	s := &session{
		db:        db,
		d:         newDialect(db.schema, t),
		c:         c,
		proc:      proc,
		nfields:   n,
		readOne:   make([]string, n),
		updateOne: make([]string, n),
		subsets:   map[string]string{},
		batch:     map[int]string{},
		params:    make([][]byte, 0, n+2),
	}
	db.mu.Lock()
	db.open[s] = struct{}{}
	db.mu.Unlock()
	return s, nil
}

// session is one worker's connection and prepared statements. It is not safe
// for concurrent use.
type session struct {
	db *DB
	d  *dialect
	c  *wire
	// proc is the procedure path: the statements prepared call the table's
	// functions (dialect.call…) instead of naming the table. Only what is
	// prepared and how an update or a delete counts its row differ; the
	// exchange on the wire is the same.
	proc    bool
	nfields int
	nstmt   int // statements prepared so far, to name the next one

	// Names of prepared statements; "" until prepared.
	readAll, scanAll, updateAll, insertOne, deleteOne string
	readOne, updateOne                                []string
	// subsets holds statements on several fields, by kind and field list.
	subsets map[string]string
	// batch holds multi-row INSERTs by row count.
	batch map[int]string

	params     [][]byte   // parameter slots, reused by every call
	subKey     []byte     // scratch for the subsets key
	limit      []byte     // scratch for the scan's LIMIT parameter
	copyFrames copyFrames // scratch for COPY data

	closeOnce sync.Once // DB.Close may close a session its owner closes later
}

// prepare prepares sql under a fresh name on the session's connection.
func (s *session) prepare(ctx context.Context, sql string) (string, error) {
	s.nstmt++
	name := "dbprobe_" + strconv.Itoa(s.nstmt)
	if err := s.c.prepare(ctx, name, sql); err != nil {
		return "", s.classify(err)
	}
	return name, nil
}

// checkFields validates field indexes: a bad index is a bug in the caller,
// reported rather than turned into a panic or wrong SQL.
func (s *session) checkFields(fields []int) error {
	for _, f := range fields {
		if f < 0 || f >= s.nfields {
			return fmt.Errorf("postgres: field index %d out of range [0,%d)", f, s.nfields)
		}
	}
	return nil
}

// subset returns the statement of a kind on several fields, preparing it
// the first time that list of fields is seen.
func (s *session) subset(ctx context.Context, kind byte, fields []int) (string, error) {
	if err := s.checkFields(fields); err != nil {
		return "", err
	}
	k := append(s.subKey[:0], kind)
	for _, f := range fields {
		k = append(k, byte(f>>8), byte(f))
	}
	s.subKey = k
	if name, ok := s.subsets[string(k)]; ok { // no allocation: the compiler sees a lookup
		return name, nil
	}
	var sql string
	switch kind {
	case 'r':
		sql = s.readSQL(fields)
	case 's':
		sql = s.scanSQL(fields)
	default:
		sql = s.updateSQL(fields)
	}
	name, err := s.prepare(ctx, sql)
	if err != nil {
		return "", err
	}
	s.subsets[string(k)] = name
	return name, nil
}

// The statements of each operation, on the session's path. They are built
// only when a statement is first prepared.

func (s *session) readSQL(fields []int) string {
	if s.proc {
		return s.d.callRead(fields)
	}
	return s.d.read(fields)
}

func (s *session) scanSQL(fields []int) string {
	if s.proc {
		return s.d.callScan(fields)
	}
	return s.d.scan(fields)
}

func (s *session) updateSQL(fields []int) string {
	if s.proc {
		return s.d.callUpdate(fields)
	}
	return s.d.update(fields)
}

func (s *session) insertSQL() string {
	if s.proc {
		return s.d.callInsert()
	}
	return s.d.insert(1)
}

func (s *session) deleteSQL() string {
	if s.proc {
		return s.d.callDelete()
	}
	return s.d.delete()
}

func (s *session) readStmt(ctx context.Context, fields []int) (string, error) {
	var err error
	switch {
	case fields == nil:
		if s.readAll == "" {
			s.readAll, err = s.prepare(ctx, s.readSQL(nil))
		}
		return s.readAll, err
	case len(fields) == 1:
		f := fields[0]
		if err := s.checkFields(fields); err != nil {
			return "", err
		}
		if s.readOne[f] == "" {
			s.readOne[f], err = s.prepare(ctx, s.readSQL(fields))
		}
		return s.readOne[f], err
	}
	return s.subset(ctx, 'r', fields)
}

func (s *session) updateStmt(ctx context.Context, fields []int) (string, error) {
	var err error
	switch {
	case fields == nil:
		if s.updateAll == "" {
			s.updateAll, err = s.prepare(ctx, s.updateSQL(nil))
		}
		return s.updateAll, err
	case len(fields) == 1:
		f := fields[0]
		if err := s.checkFields(fields); err != nil {
			return "", err
		}
		if s.updateOne[f] == "" {
			s.updateOne[f], err = s.prepare(ctx, s.updateSQL(fields))
		}
		return s.updateOne[f], err
	}
	return s.subset(ctx, 'u', fields)
}

// Read fetches the listed fields (nil: all) of one record into values.
func (s *session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := len(fields)
	if fields == nil {
		n = s.nfields
	}
	if len(values) < n {
		return fmt.Errorf("postgres: read of %d fields into %d values", n, len(values))
	}
	stmt, err := s.readStmt(ctx, fields)
	if err != nil {
		return err
	}
	c := s.c
	s.params = append(s.params[:0], key)
	c.bindExecute(stmt, s.params)
	c.sync()
	s.params[0] = nil // keep nothing of the caller's
	if err := c.send(ctx); err != nil {
		return s.classify(err)
	}
	found := false
	for c.next() {
		for i := 0; i < n && i < len(c.row); i++ {
			values[i] = append(values[i][:0], c.row[i]...)
		}
		found = true
	}
	if _, err := c.result(); err != nil {
		return s.classify(err)
	}
	if !found {
		return driver.ErrNotFound
	}
	return nil
}

// Scan reads up to count records from startKey on, in key order.
func (s *session) Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error) {
	if count <= 0 {
		return 0, nil
	}
	var stmt string
	var err error
	if fields == nil {
		if s.scanAll == "" {
			s.scanAll, err = s.prepare(ctx, s.scanSQL(nil))
		}
		stmt = s.scanAll
	} else {
		stmt, err = s.subset(ctx, 's', fields)
	}
	if err != nil {
		return 0, err
	}
	s.limit = strconv.AppendInt(s.limit[:0], int64(count), 10)
	s.params = append(s.params[:0], startKey, s.limit)
	c := s.c
	c.bindExecute(stmt, s.params)
	c.sync()
	clear(s.params)
	if err := c.send(ctx); err != nil {
		return 0, s.classify(err)
	}
	read := 0
	for c.next() {
		if visit != nil && len(c.row) > 0 {
			visit(c.row[0], c.row[1:])
		}
		read++
	}
	if _, err := c.result(); err != nil {
		return read, s.classify(err)
	}
	return read, nil
}

// Update sets the listed fields (nil: all) of one record.
func (s *session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	n := len(fields)
	if fields == nil {
		n = s.nfields
	}
	if len(values) < n {
		return fmt.Errorf("postgres: update of %d fields with %d values", n, len(values))
	}
	stmt, err := s.updateStmt(ctx, fields)
	if err != nil {
		return err
	}
	s.params = append(append(s.params[:0], values[:n]...), key)
	if s.proc {
		return s.callCounted(ctx, stmt)
	}
	return s.execOne(ctx, stmt)
}

// Insert adds one record with every field.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if len(values) != s.nfields {
		return fmt.Errorf("postgres: insert of %d values into %d fields", len(values), s.nfields)
	}
	if s.insertOne == "" {
		name, err := s.prepare(ctx, s.insertSQL())
		if err != nil {
			return err
		}
		s.insertOne = name
	}
	s.params = append(append(s.params[:0], key), values...)
	return s.execOne(ctx, s.insertOne)
}

// Delete removes one record.
func (s *session) Delete(ctx context.Context, key []byte) error {
	if s.deleteOne == "" {
		name, err := s.prepare(ctx, s.deleteSQL())
		if err != nil {
			return err
		}
		s.deleteOne = name
	}
	s.params = append(s.params[:0], key)
	if s.proc {
		return s.callCounted(ctx, s.deleteOne)
	}
	return s.execOne(ctx, s.deleteOne)
}

// execOne runs a statement that changes one row with s.params; no row
// changed is ErrNotFound.
func (s *session) execOne(ctx context.Context, stmt string) error {
	rows, err := s.c.exec(ctx, stmt, s.params)
	clear(s.params)
	if err != nil {
		return s.classify(err)
	}
	if rows == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// callCounted calls a function of the procedure path that returns how many
// rows it changed, with s.params; none changed is ErrNotFound. (The
// command tag of a SELECT counts the rows the call returned, always one.)
func (s *session) callCounted(ctx context.Context, stmt string) error {
	c := s.c
	c.bindExecute(stmt, s.params)
	c.sync()
	clear(s.params)
	if err := c.send(ctx); err != nil {
		return s.classify(err)
	}
	changed, ok := int64(0), false
	for c.next() {
		if len(c.row) == 1 {
			changed, ok = parseCount(c.row[0])
		}
	}
	if _, err := c.result(); err != nil {
		return s.classify(err)
	}
	if !ok {
		return fmt.Errorf("postgres: %s returned no row count", stmt)
	}
	if changed == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// InsertBatch adds records in one transaction: one COPY when bulk loading is
// allowed, else multi-row INSERTs. The procedure path loads the same way:
// a batch is the bulk API's job, with no function to call per record.
func (s *session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := driver.CheckBatch("postgres", keys, values, s.nfields); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	if s.db.opts.BulkLoad {
		return s.copyBatch(ctx, keys, values)
	}
	return s.insertBatch(ctx, keys, values)
}

// copyBatch loads the records with one COPY FROM STDIN in the text format.
// One COPY statement is one transaction: it loads every row or none.
func (s *session) copyBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	// The rows are written straight into the protocol's messages.
	f := &s.copyFrames
	f.reset(f.buf)
	for i, k := range keys {
		f.buf = appendCopyText(f.buf, k)
		for _, v := range values[i] {
			f.buf = append(f.buf, '\t')
			f.buf = appendCopyText(f.buf, v)
		}
		f.buf = append(f.buf, '\n')
		f.endRow()
	}
	got, err := s.c.copyInFramed(ctx, s.d.copyFrom(), f.done())
	if err != nil {
		return s.classify(err)
	}
	if got != int64(len(keys)) {
		return fmt.Errorf("postgres: COPY loaded %d of %d records", got, len(keys))
	}
	return nil
}

// insertBatch loads the records with multi-row INSERTs, as few as the
// protocol's 65535 parameters allow, inside one transaction when it takes
// more than one.
func (s *session) insertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	per := rowsPerInsert(s.nfields)
	if len(keys) <= per {
		return s.insertChunk(ctx, keys, values)
	}
	if err := s.simple(ctx, "BEGIN"); err != nil {
		return err
	}
	for start := 0; start < len(keys); start += per {
		end := min(start+per, len(keys))
		if err := s.insertChunk(ctx, keys[start:end], values[start:end]); err != nil {
			_ = s.simple(context.WithoutCancel(ctx), "ROLLBACK")
			return err
		}
	}
	return s.simple(ctx, "COMMIT")
}

func (s *session) insertChunk(ctx context.Context, keys [][]byte, values [][][]byte) error {
	s.params = s.params[:0]
	for i, k := range keys {
		s.params = append(append(s.params, k), values[i]...)
	}
	defer clear(s.params)
	rows := len(keys)
	stmt := s.batch[rows]
	if stmt == "" && len(s.batch) < maxBatchStatements {
		var err error
		if stmt, err = s.prepare(ctx, s.d.insert(rows)); err != nil {
			return err
		}
		s.batch[rows] = stmt
	}
	if stmt == "" { // the unnamed statement, parsed with its execution
		s.c.parse("", s.d.insert(rows))
	}
	_, err := s.c.exec(ctx, stmt, s.params)
	return s.classify(err)
}

// simple runs a statement through the simple query protocol.
func (s *session) simple(ctx context.Context, sql string) error {
	return s.classify(s.c.simple(ctx, sql))
}

// classify classifies err, and calls it a lost connection when the
// connection did not survive it whatever it was.
func (s *session) classify(err error) error {
	err = classify(err)
	if err != nil && driver.ClassOf(err) == driver.ClassOther && s.c.broken != nil && driver.Code(err) != codeCanceled {
		if e, ok := err.(*driver.Error); ok {
			e.Class = driver.ClassConnLost
			if e.Code == "" {
				e.Code = codeConnLost
			}
		}
	}
	return err
}

// Close closes the session's connection. Its prepared statements go with
// it: the connection never returns to the pool.
func (s *session) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *session) close() {
	s.db.mu.Lock()
	delete(s.db.open, s)
	s.db.mu.Unlock()
	s.c.close()
}

// sessionOpenError classifies a failure to open a session's connection
// (a reconnection during an outage) as classify does, said in one line
// when the network is why — "cannot reach PostgreSQL at ADDR: connection
// refused" — rather than in pgconn's line per address and TLS attempt.
func (db *DB) sessionOpenError(err error) error {
	reason := db.connecting.NetReason(err)
	if reason == "" || ctxDone(err) {
		return classify(err)
	}
	msg := "cannot reach " + db.connecting.Database + " at " + db.connecting.Addr + ": " + reason
	return driver.Classify(&driver.Scrubbed{Msg: msg, Err: err}, codeConnLost, driver.ClassConnLost)
}

// ctxDone reports a failure that is the caller's context ending, which
// classify keeps as it is.
func ctxDone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
