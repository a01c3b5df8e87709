package mysql

import (
	"context"
	sqldriver "database/sql/driver"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"
)

// loadChunk is how many bytes of rows loadReader encodes at a time: the
// batch is streamed to the server, never held whole in a second copy.
const loadChunk = 64 << 10

// readerSeq numbers the readers sessions register with go-sql-driver,
// whose registry is global.
var readerSeq atomic.Uint64

// loadReader streams a batch to LOAD DATA LOCAL in the format of
// dialect.loadData: each record a line, its values separated by tabs and
// escaped by appendLoadText. go-sql-driver reads it on the goroutine that
// runs the statement, so it needs no lock.
type loadReader struct {
	keys   [][]byte
	values [][][]byte
	row    int    // the next record to encode
	buf    []byte // encoded records not yet read
	off    int
}

// reset points the reader at a batch; nil keys let go of the caller's.
func (r *loadReader) reset(keys [][]byte, values [][][]byte) {
	r.keys, r.values, r.row = keys, values, 0
	r.buf, r.off = r.buf[:0], 0
}

// Read implements io.Reader.
func (r *loadReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.row >= len(r.keys) {
			return 0, io.EOF
		}
		r.buf, r.off = r.buf[:0], 0
		for r.row < len(r.keys) && len(r.buf) < loadChunk {
			r.buf = appendLoadRow(r.buf, r.keys[r.row], r.values[r.row])
			r.row++
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// appendLoadRow appends one record as a line of LOAD DATA text.
func appendLoadRow(dst, key []byte, values [][]byte) []byte {
	dst = appendLoadText(dst, key)
	for _, v := range values {
		dst = append(dst, '\t')
		dst = appendLoadText(dst, v)
	}
	return append(dst, '\n')
}

// deregisterReader removes a session's reader from go-sql-driver's registry.
func deregisterReader(name string) { gomysql.DeregisterReaderHandler(name) }

// loadBatch loads the records with one LOAD DATA LOCAL INFILE in a
// transaction. LOAD DATA LOCAL cannot stop the client's stream, so MySQL
// turns what would be errors into warnings, as with IGNORE: a duplicate key
// is skipped, a value too long is cut. The batch is therefore committed
// only when every record was loaded without a warning; otherwise it is
// rolled back and the first warning is the error (1062 for a duplicate).
// An ENGINE=MEMORY table is not transactional: its rows stay.
func (s *session) loadBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if s.loader == nil {
		s.loader = &loadReader{}
		s.readerName = "dbprobe_" + strconv.FormatUint(readerSeq.Add(1), 10)
		loader := s.loader
		gomysql.RegisterReaderHandler(s.readerName, func() io.Reader { return loader })
	}
	s.loader.reset(keys, values)
	defer s.loader.reset(nil, nil)

	if err := s.simple(ctx, "START TRANSACTION"); err != nil {
		return err
	}
	res, err := s.conn.exec(s.d.loadData(s.readerName), nil)
	if err != nil {
		err = s.fail(ctx, err)
		s.rollback(ctx)
		return err
	}
	loaded, err := res.RowsAffected()
	if err != nil {
		s.rollback(ctx)
		return s.fail(ctx, err)
	}
	if err := s.firstWarning(ctx); err != nil {
		s.rollback(ctx)
		return fmt.Errorf("mysql: LOAD DATA of %d records: %w", len(keys), err)
	}
	if loaded != int64(len(keys)) {
		s.rollback(ctx)
		return fmt.Errorf("mysql: LOAD DATA loaded %d of %d records", loaded, len(keys))
	}
	if err := s.simple(ctx, "COMMIT"); err != nil {
		s.rollback(ctx)
		return err
	}
	return nil
}

// firstWarning returns the first warning (not a note) the last statement
// left, as a classified server error, or nil.
func (s *session) firstWarning(ctx context.Context) error {
	rows, err := s.conn.query("SHOW WARNINGS")
	if err != nil {
		return s.fail(ctx, err)
	}
	var found *gomysql.MySQLError
	row := make([]sqldriver.Value, 3) // Level, Code, Message
	for {
		var more bool
		if more, err = nextRow(rows, row); !more {
			break
		}
		if found != nil {
			continue
		}
		if found, err = warning(row); err != nil {
			break
		}
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.fail(ctx, err)
	}
	if found != nil {
		return classify(found)
	}
	return nil
}

// warning returns a row of SHOW WARNINGS as a server error, or nil for a
// note.
func warning(row []sqldriver.Value) (*gomysql.MySQLError, error) {
	level, err := text(row[0])
	if err != nil || string(level) == "Note" {
		return nil, err
	}
	code, err := intValue(row[1])
	if err != nil {
		return nil, err
	}
	message, err := text(row[2])
	if err != nil {
		return nil, err
	}
	return &gomysql.MySQLError{Number: uint16(code), Message: string(message)}, nil
}
