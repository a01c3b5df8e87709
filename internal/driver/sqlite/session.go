package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// session reads on a connection of its own and writes through the DB's
// writer. It is used by one goroutine at a time, so its scratch buffers need
// no lock.
//
// The reads go to the library's connection through database/sql's driver
// interfaces, not through database/sql: its per-query bookkeeping (the
// connection's lock, the statement's dependency map, a Rows value, the
// conversion of every column) was about a quarter of a read's CPU in a
// profile of read-only runs, and a session needs none of it: one
// goroutine, one connection, statements prepared once.
type session struct {
	d    *db
	t    driver.Table
	conn sqldriver.Conn
	tw   *tableWriter

	readAll *readStmt
	scanAll *readStmt
	reads   stmtCache[*readStmt]
	scans   stmtCache[*readStmt]

	// args holds a query's arguments, reused.
	args []sqldriver.NamedValue
	// row receives a row from the library: row[0] the key of a scan,
	// row[1:] the fields.
	row []sqldriver.Value
	// raw holds a scanned row's columns as bytes, reusing its memory, and
	// vals is what a Scan's visit sees: raw[1:].
	raw  [][]byte
	vals [][]byte
	// req is the session's request to the writer, reused for each write.
	req *writeReq
}

// readStmt is a statement prepared on a session's connection.
type readStmt struct {
	stmt  sqldriver.Stmt
	query sqldriver.StmtQueryContext
}

// prepareRead prepares query on the session's connection.
func (s *session) prepareRead(ctx context.Context, query string) (*readStmt, error) {
	prep, ok := s.conn.(sqldriver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("sqlite: the library's connection cannot prepare statements with a context")
	}
	st, err := prep.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	q, ok := st.(sqldriver.StmtQueryContext)
	if !ok {
		st.Close()
		return nil, errors.New("sqlite: the library's statements cannot query with a context")
	}
	return &readStmt{stmt: st, query: q}, nil
}

// Close finalizes the statement.
func (r *readStmt) Close() error { return r.stmt.Close() }

func (r *readStmt) close() {
	if r != nil {
		// Closing a statement only finalizes it; nothing to report.
		_ = r.Close()
	}
}

// Session opens a connection for one worker and prepares its statements.
func (d *db) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	if err := driver.CheckTable(t); err != nil {
		return nil, err
	}
	tw, err := d.w.table(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare writes on %s: %w", t.Name, classify(err))
	}
	conn, err := d.connector.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open a session: %w", classify(err))
	}
	s := &session{d: d, t: tw.t, conn: conn, tw: tw}
	if s.readAll, err = s.prepareRead(ctx, selectSQL(s.t, nil)); err == nil {
		s.scanAll, err = s.prepareRead(ctx, scanSQL(s.t, nil))
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: prepare reads on %s: %w", t.Name, classify(err))
	}
	n := len(t.Fields)
	s.args = make([]sqldriver.NamedValue, 2)
	for i := range s.args {
		s.args[i].Ordinal = i + 1
	}
	s.row = make([]sqldriver.Value, n+1)
	s.raw = make([][]byte, n+1)
	s.vals = make([][]byte, n)
	s.req = newWriteReq()
	s.req.tw = tw
	s.req.args = make([]any, 0, n+1)
	return s, nil
}

// query runs a prepared read with the session's first n arguments.
func (s *session) query(r *readStmt, n int) (sqldriver.Rows, error) {
	rows, err := r.query.QueryContext(bg, s.args[:n])
	s.args[0].Value, s.args[1].Value = nil, nil
	return rows, err
}

// next reads the next row, of cols columns, into s.raw[at:at+cols];
// io.EOF after the last row.
func (s *session) next(rows sqldriver.Rows, at, cols int) error {
	row := s.row[:cols]
	if err := rows.Next(row); err != nil {
		return err
	}
	defer clear(row)
	for i, v := range row {
		raw := &s.raw[at+i]
		switch v := v.(type) {
		case string:
			*raw = append((*raw)[:0], v...)
		case []byte:
			*raw = append((*raw)[:0], v...)
		case nil:
			*raw = (*raw)[:0]
		default:
			return fmt.Errorf("sqlite: column %d of %s holds a %T, not text", i+1, s.t.Name, v)
		}
	}
	return nil
}

// str views b as a string without copying it. Both libraries copy bound
// text into SQLite before the call returns and keep nothing, so the view
// never outlives the caller's buffer; copying instead would cost an
// allocation per value on every write.
func str(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// checkFields rejects a field index the table does not have, which would
// otherwise panic while building SQL.
func (s *session) checkFields(fields []int, values [][]byte) error {
	n := len(s.t.Fields)
	if fields == nil {
		if len(values) < n {
			return fmt.Errorf("sqlite: %d values for %d fields", len(values), n)
		}
		return nil
	}
	if len(fields) == 0 {
		return fmt.Errorf("sqlite: an empty field list on %s; pass nil for all fields", s.t.Name)
	}
	if len(values) < len(fields) {
		return fmt.Errorf("sqlite: %d values for %d fields", len(values), len(fields))
	}
	for _, f := range fields {
		if f < 0 || f >= n {
			return fmt.Errorf("sqlite: field index %d out of range: table %s has %d fields", f, s.t.Name, n)
		}
	}
	return nil
}

// Read fetches one record's fields into values.
func (s *session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if err := s.checkFields(fields, values); err != nil {
		return err
	}
	stmt, n := s.readAll, len(s.t.Fields)
	if fields != nil {
		var err error
		n = len(fields)
		stmt, err = s.reads.get(fields, func() (*readStmt, error) {
			return s.prepareRead(ctx, selectSQL(s.t, fields))
		})
		if err != nil {
			return classify(err)
		}
	}
	s.args[0].Value = str(key)
	rows, err := s.query(stmt, 1)
	if err != nil {
		return classify(err)
	}
	err = s.next(rows, 1, n)
	if cerr := rows.Close(); err == nil || err == io.EOF && cerr != nil {
		err = cerr
	}
	switch {
	case err == io.EOF:
		return driver.ErrNotFound
	case err != nil:
		return classify(err)
	}
	for i := range n {
		values[i] = append(values[i][:0], s.raw[i+1]...)
	}
	return nil
}

// Scan reads up to count records in key order from startKey on.
func (s *session) Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, classify(err)
	}
	if count <= 0 {
		return 0, nil
	}
	if err := s.checkFields(fields, s.vals); err != nil {
		return 0, err
	}
	stmt, n := s.scanAll, len(s.t.Fields)
	if fields != nil {
		var err error
		n = len(fields)
		stmt, err = s.scans.get(fields, func() (*readStmt, error) {
			return s.prepareRead(ctx, scanSQL(s.t, fields))
		})
		if err != nil {
			return 0, classify(err)
		}
	}
	s.args[0].Value, s.args[1].Value = str(startKey), int64(count)
	rows, err := s.query(stmt, 2)
	if err != nil {
		return 0, classify(err)
	}
	read := 0
	for {
		// The library runs with a context that is never cancelled (see bg),
		// so a long scan looks at the caller's now and then.
		if read%64 == 63 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
		if err = s.next(rows, 0, n+1); err != nil {
			break
		}
		read++
		if visit != nil {
			copy(s.vals, s.raw[1:n+1])
			visit(s.raw[0], s.vals[:n])
		}
	}
	if err == io.EOF {
		err = nil
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return read, classify(err)
}

// Update sets the listed fields of one record, through the writer.
func (s *session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if fields == nil {
		return fmt.Errorf("sqlite: update of %s lists no fields", s.t.Name)
	}
	if err := s.checkFields(fields, values); err != nil {
		return err
	}
	r := s.req
	r.op, r.fields = opUpdate, fields
	for i := range fields {
		r.args = append(r.args, str(values[i]))
	}
	r.args = append(r.args, str(key))
	return s.write(r)
}

// write hands the session's request to the writer and turns its answer
// into the session's result. The request is cleared afterwards so that it
// holds nothing of the caller's.
func (s *session) write(r *writeReq) error {
	err := s.d.w.do(r)
	n := r.n
	if err == nil {
		err = r.err
	}
	clear(r.args)
	r.args, r.fields, r.n, r.err = r.args[:0], nil, 0, nil
	if err != nil {
		return classify(err)
	}
	if n == 0 && r.op != opInsert {
		return driver.ErrNotFound
	}
	return nil
}

// Insert adds one record, through the writer.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if err := s.checkFields(nil, values); err != nil {
		return err
	}
	r := s.req
	r.op = opInsert
	r.args = s.recordArgs(r.args, key, values)
	return s.write(r)
}

// recordArgs appends one record's key and fields as statement arguments.
func (s *session) recordArgs(args []any, key []byte, values [][]byte) []any {
	args = append(args, str(key))
	for i := range s.t.Fields {
		args = append(args, str(values[i]))
	}
	return args
}

// InsertBatch adds the records in one transaction: SQLite's bulk path is
// the transaction itself, which pays for one commit instead of one per row.
// With BulkLoad a prepared single-row INSERT runs per record; without it,
// multi-row INSERT statements carry multiRowCount records each.
func (s *session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	if len(keys) != len(values) {
		return fmt.Errorf("sqlite: batch of %d keys and %d value lists", len(keys), len(values))
	}
	if len(keys) == 0 {
		return nil
	}
	for _, v := range values {
		if err := s.checkFields(nil, v); err != nil {
			return err
		}
	}
	bulk := s.d.opts.BulkLoad
	err := s.d.w.callRows(ctx, true, len(keys), func(c *sql.Conn) error {
		i := 0
		if !bulk && len(keys) >= s.tw.multiRows {
			multi, err := s.tw.multiStmt(c)
			if err != nil {
				return err
			}
			rows := s.tw.multiRows
			args := make([]any, 0, rows*(len(s.t.Fields)+1))
			for ; i+rows <= len(keys); i += rows {
				if err := ctx.Err(); err != nil {
					return err
				}
				args = args[:0]
				for r := i; r < i+rows; r++ {
					args = s.recordArgs(args, keys[r], values[r])
				}
				if _, err := multi.ExecContext(bg, args...); err != nil {
					return err
				}
			}
			clear(args)
		}
		args := make([]any, 0, len(s.t.Fields)+1)
		for ; i < len(keys); i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			args = s.recordArgs(args[:0], keys[i], values[i])
			if _, err := s.tw.insert.ExecContext(bg, args...); err != nil {
				return err
			}
		}
		clear(args)
		return nil
	})
	return classify(err)
}

// Delete removes one record, through the writer.
func (s *session) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return classify(err)
	}
	r := s.req
	r.op = opDelete
	r.args = append(r.args, str(key))
	return s.write(r)
}

// Close releases the session's statements and returns its connection to
// the pool. The writer's statements stay: other sessions share them.
func (s *session) Close() error {
	s.readAll.close()
	s.scanAll.close()
	s.reads.close()
	s.scans.close()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}
