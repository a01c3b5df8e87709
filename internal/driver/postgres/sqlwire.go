package postgres

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The prepared-protocol SQLConn runs on wire, as sessions do: pgx.Conn's
// Query costs a timer reset that wakes the network poller, two locks and
// a context watch on every statement, which put `dbprobe stress` 9–33%
// over pgbench's client CPU per statement. Here a statement's Bind,
// Execute and Sync go out in one write and the context is watched once
// for many statements (driver.ContextWatch).
//
// Parameters are sent in the text format, each encoded by its Go type
// (pgtype's text encoding for the types without a short path), and the
// server converts the text to the parameter's type, which it inferred
// when preparing; a []byte for a bytea parameter goes in the binary
// format, its bytes as they are. Results come in the text format and are
// decoded, only when a caller visits rows, by pgtype as pgx.Rows.Values
// would: an int4 is an int32, an int8 an int64, text a string, bytea a
// []byte, numeric a pgtype.Numeric, NULL nil.

// field is a column of a statement's rows: its name and type.
type field struct {
	name string
	oid  uint32
}

// parseDescribe parses sql as the named statement, its parameters' types
// given by oids (0 or missing: the server infers them), and describes it:
// the types of its parameters and the fields of its rows (none for a
// statement that returns no rows).
func (c *wire) parseDescribe(ctx context.Context, name, sql string, oids []uint32) ([]uint32, []field, error) {
	c.parseMsg.Name, c.parseMsg.Query, c.parseMsg.ParameterOIDs = name, sql, oids
	c.put(c.parseMsg.Encode(c.wbuf))
	c.parseMsg.ParameterOIDs = nil
	c.describeMsg.ObjectType, c.describeMsg.Name = 'S', name
	c.put(c.describeMsg.Encode(c.wbuf))
	c.sync()
	if err := c.send(ctx); err != nil {
		return nil, nil, err
	}
	var params []uint32
	var fields []field
	for !c.ready && c.broken == nil {
		msg, err := c.receive()
		if err != nil {
			break
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterDescription:
			params = slices.Clone(m.ParameterOIDs)
		case *pgproto3.RowDescription:
			fields = make([]field, len(m.Fields))
			for i, f := range m.Fields {
				fields[i] = field{name: string(f.Name), oid: f.DataTypeOID}
			}
		case *pgproto3.ErrorResponse:
			c.serverError(m)
		case *pgproto3.ReadyForQuery:
			c.ready = true
			c.txStatus = m.TxStatus
		default:
			_ = c.other(msg) // an unexpected message breaks the connection
		}
	}
	if err := c.end(c.outcome()); err != nil {
		return nil, nil, err
	}
	return params, fields, nil
}

// bindFormats queues a Bind of the named statement to the unnamed portal
// with params, NULL where nil, in formats (nil: all text), every result
// in the text format, then an Execute of every row and a Sync.
func (c *wire) bindFormats(stmt string, formats []int16, params [][]byte) {
	c.bindMsg.PreparedStatement = stmt
	c.bindMsg.ParameterFormatCodes = formats
	c.bindMsg.Parameters = params
	c.put(c.bindMsg.Encode(c.wbuf))
	c.bindMsg.ParameterFormatCodes, c.bindMsg.Parameters = nil, nil // keep nothing of the caller's
	c.put(c.executeMsg.Encode(c.wbuf))
	c.sync()
}

// closeStatement deallocates the named statement.
func (c *wire) closeStatement(ctx context.Context, name string) error {
	c.closeMsg.ObjectType, c.closeMsg.Name = 'S', name
	c.put(c.closeMsg.Encode(c.wbuf))
	c.sync()
	if err := c.send(ctx); err != nil {
		return err
	}
	_, err := c.result()
	return err
}

// prepareWire prepares b's text as name on the wire connection.
func (c *sqlConn) prepareWire(ctx context.Context, name string, st *sqlStmt) error {
	oids, fields, err := c.w.parseDescribe(ctx, name, st.bound.Text, nil)
	if err != nil {
		return classify(err)
	}
	if len(oids) != len(st.bound.Args) {
		// Bind numbers each :name's places $1…$n; a server that counts
		// otherwise would bind values to the wrong places.
		_ = c.w.closeStatement(ctx, name) // the mismatch is the error to report
		return fmt.Errorf("postgres: the server counts %d parameters in %q, dbprobe %d", len(oids), st.bound.Text, len(st.bound.Args))
	}
	st.oids = oids
	st.fields = fields
	if len(fields) > 0 {
		st.cols = make([]string, len(fields))
		for i, f := range fields {
			st.cols[i] = f.name
		}
	}
	return nil
}

// encode puts args, in the order of st's $n, into c.params as the wire
// sends them, with c.formats when one is binary.
func (c *sqlConn) encode(st *sqlStmt, args []any) error {
	if len(args) != len(st.bound.Names) {
		return fmt.Errorf("postgres: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.pbuf = c.pbuf[:0]
	c.ends = c.ends[:0]
	c.formats = c.formats[:0]
	binary := false
	for k, i := range st.bound.Args {
		v, oid := args[i], st.oids[k]
		var format int16 = pgtype.TextFormatCode
		null := false
		switch x := v.(type) {
		case nil:
			null = true
		case int64:
			c.pbuf = strconv.AppendInt(c.pbuf, x, 10)
		case int:
			c.pbuf = strconv.AppendInt(c.pbuf, int64(x), 10)
		case string:
			c.pbuf = append(c.pbuf, x...)
		case []byte:
			if x == nil {
				null = true
				break
			}
			if oid == pgtype.ByteaOID {
				// Its text would be read as bytea's escape format.
				format, binary = pgtype.BinaryFormatCode, true
			}
			c.pbuf = append(c.pbuf, x...)
		case float64:
			c.pbuf = appendFloat(c.pbuf, x)
		case bool:
			c.pbuf = strconv.AppendBool(c.pbuf, x)
		default:
			// time.Time and the rest: pgtype writes them as pgx would
			// for the parameter's type (a timestamp without its zone, a
			// date as its day).
			b, err := c.typeMap().Encode(oid, pgtype.TextFormatCode, v, c.pbuf)
			if err != nil {
				// Classified as pgx's encoding errors were.
				return classify(fmt.Errorf("postgres: parameter :%s: %w", st.bound.Names[i], err))
			}
			if b == nil {
				null = true
			} else {
				c.pbuf = b
			}
		}
		if null {
			c.ends = append(c.ends, -1)
		} else {
			c.ends = append(c.ends, len(c.pbuf))
		}
		c.formats = append(c.formats, format)
	}
	c.params = c.params[:0]
	start := 0
	for _, end := range c.ends {
		if end < 0 {
			c.params = append(c.params, nil)
			continue
		}
		c.params = append(c.params, c.pbuf[start:end:end])
		start = end
	}
	if !binary {
		c.formats = c.formats[:0]
	}
	return nil
}

// appendFloat writes f as PostgreSQL's float8 input reads it.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// typeMap is the connection's pgtype map, made when first needed.
func (c *sqlConn) typeMap() *pgtype.Map {
	if c.types == nil {
		c.types = pgtype.NewMap()
	}
	return c.types
}

// decode turns a row in the text format into values, as pgx.Rows.Values
// does; the values are the caller's.
func (c *sqlConn) decode(fields []field, raw [][]byte) ([]any, error) {
	if len(raw) != len(fields) {
		return nil, fmt.Errorf("postgres: a row of %d values for %d columns", len(raw), len(fields))
	}
	row := make([]any, len(raw))
	m := c.typeMap()
	for i, v := range raw {
		if v == nil {
			continue
		}
		f := fields[i]
		t, ok := m.TypeForOID(f.oid)
		if !ok {
			row[i] = string(v)
			continue
		}
		x, err := t.Codec.DecodeValue(m, f.oid, pgtype.TextFormatCode, v)
		if err != nil {
			return nil, fmt.Errorf("postgres: column %s: %w", f.name, err)
		}
		row[i] = x
	}
	return row, nil
}

// runWire binds args to st, executes it and reads its rows, decoded for
// visit or as they came for raw.
func (c *sqlConn) runWire(ctx context.Context, st *sqlStmt, args []any, visit func(row []any) error, raw func(row [][]byte) error) (driver.Outcome, error) {
	err := c.encode(st, args)
	if err != nil {
		return driver.Outcome{}, err
	}
	w := c.w
	w.bindFormats(st.name, c.formats, c.params)
	clear(c.params)
	if err := w.send(ctx); err != nil {
		return driver.Outcome{}, classify(err)
	}
	out := driver.Outcome{Columns: st.cols, Affected: -1}
	var verr error // visit's, or a row that could not be decoded
	c.tag = c.tag[:0]
	for !w.ready && w.broken == nil {
		if w.next() {
			out.Rows++
			switch {
			case verr != nil:
			case raw != nil:
				verr = raw(w.row)
			case visit != nil:
				row, err := c.decode(st.fields, w.row)
				if err == nil {
					err = visit(row)
				}
				verr = err
			}
			continue
		}
		if w.tag != nil {
			c.tag = append(c.tag[:0], w.tag...)
			w.tag = nil
		}
	}
	// The exchange is read to its end even after visit failed, so that
	// the connection is ready for the next statement.
	err = w.end(w.outcome())
	if verr != nil {
		return out, verr
	}
	if err != nil {
		return out, classify(err)
	}
	if !bytes.HasPrefix(c.tag, []byte("SELECT")) {
		out.Affected = rowsAffected(c.tag)
	}
	return out, nil
}

// execWire runs text by the simple query protocol and counts the rows it
// returned and changed. Text of several statements counts the rows of
// all, the columns of the first that returns rows and the change of the
// last.
func (c *sqlConn) execWire(ctx context.Context, text string) (driver.Outcome, error) {
	w := c.w
	w.query(text)
	if err := w.send(ctx); err != nil {
		return driver.Outcome{}, classify(err)
	}
	out := driver.Outcome{Affected: -1}
	c.tag = c.tag[:0]
	for !w.ready && w.broken == nil {
		msg, err := w.receive()
		if err != nil {
			break
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			if out.Columns == nil && len(m.Fields) > 0 {
				out.Columns = make([]string, len(m.Fields))
				for i, f := range m.Fields {
					out.Columns[i] = string(f.Name)
				}
			}
		case *pgproto3.DataRow:
			out.Rows++
		case *pgproto3.CommandComplete:
			c.tag = append(c.tag[:0], m.CommandTag...)
		case *pgproto3.ErrorResponse:
			w.serverError(m)
		case *pgproto3.ReadyForQuery:
			w.ready = true
			w.txStatus = m.TxStatus
		default:
			_ = w.other(msg) // an unexpected message breaks the connection
		}
	}
	if err := w.end(w.outcome()); err != nil {
		return out, classify(err)
	}
	if !bytes.HasPrefix(c.tag, []byte("SELECT")) {
		out.Affected = rowsAffected(c.tag)
	}
	return out, nil
}

// explainWire runs sql, an EXPLAIN of st's text, with args bound as st's
// parameters are: the unnamed statement is parsed with st's parameter
// types, so that the server reads the values as it does for st.
func (c *sqlConn) explainWire(ctx context.Context, st *sqlStmt, args []any, sql string) (string, error) {
	if err := c.encode(st, args); err != nil {
		return "", err
	}
	w := c.w
	if _, _, err := w.parseDescribe(ctx, "", sql, st.oids); err != nil {
		clear(c.params)
		return "", classify(err)
	}
	w.bindFormats("", c.formats, c.params)
	clear(c.params)
	if err := w.send(ctx); err != nil {
		return "", classify(err)
	}
	var lines []string
	for !w.ready && w.broken == nil {
		if w.next() && len(w.row) > 0 {
			lines = append(lines, string(w.row[0]))
		}
	}
	if err := w.end(w.outcome()); err != nil {
		return "", classify(err)
	}
	return strings.Join(lines, "\n"), nil
}

// simpleWire runs sql, a transaction's statement, by the simple query
// protocol.
func (c *sqlConn) simpleWire(ctx context.Context, sql string) error {
	return classify(c.w.simple(ctx, sql))
}

// closeWire deallocates a statement, on a connection not already broken.
func (c *sqlConn) closeWire(name string) error {
	if c.w.broken != nil {
		return nil // nothing is prepared on a closed connection
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return classify(c.w.closeStatement(ctx, name))
}
