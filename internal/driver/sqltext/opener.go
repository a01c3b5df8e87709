package sqltext

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// Opener hands out the connections driver.SQLOptions ask for.
//
// A connection with Setup or Fresh comes from a pool of its own that
// keeps no idle connection (database/sql's SetMaxIdleConns(0)): Conn
// always dials a new one, and its Close closes it, so that neither a
// session's settings nor a measured connect can leak into a connection
// someone else is handed later. That holds by construction, where taking
// one from the DB's pool and discarding it on Close (Raw returning
// ErrBadConn) would also take a warm connection from the pool and rest
// on a subtlety of database/sql; and a connection's setup, which a user's
// application runs once per connection, is meant to be run on one.
type Opener struct {
	// Product names the database in messages: "MySQL".
	Product string
	// Pool is the DB's pool: a connection without options is one of its.
	Pool *sql.DB
	// Connector returns what opens new connections; with simple, one
	// whose library puts parameters into the text. nil, or a nil
	// Connector with a nil error for simple, means there is no such path:
	// a Simple connection is Unsupported with SimpleMissing as the reason.
	Connector func(simple bool) (sqldriver.Connector, error)
	// SimpleMissing says why the database has no simple protocol and what
	// to do instead.
	SimpleMissing string
	// Idle is how many idle connections the simple pool keeps.
	Idle int

	mu     sync.Mutex
	pools  map[poolKind]*sql.DB
	closed bool
}

// poolKind is one of an Opener's own pools: simple or prepared, shared
// (idle connections kept) or private (none kept).
type poolKind struct{ simple, private bool }

// Conn returns a connection as o asks (see Opener); Start must then be
// given the same o.
func (op *Opener) Conn(ctx context.Context, o driver.SQLOptions) (*sql.Conn, error) {
	k := poolKind{simple: o.Simple, private: o.Fresh || len(o.Setup) > 0}
	if k == (poolKind{}) {
		return op.Pool.Conn(ctx)
	}
	pool, err := op.pool(k)
	if err != nil {
		return nil, err
	}
	return pool.Conn(ctx)
}

func (op *Opener) pool(k poolKind) (*sql.DB, error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.closed {
		return nil, fmt.Errorf("%s: the DB is closed", strings.ToLower(op.Product))
	}
	if p := op.pools[k]; p != nil {
		return p, nil
	}
	var conn sqldriver.Connector
	var err error
	if op.Connector != nil {
		conn, err = op.Connector(k.simple)
	}
	if err != nil {
		return nil, err
	}
	if conn == nil {
		if k.simple {
			return nil, driver.Unsupported(op.Product, "simple query protocol", op.SimpleMissing)
		}
		return nil, fmt.Errorf("%s: no connector for new connections", strings.ToLower(op.Product))
	}
	p := sql.OpenDB(conn)
	if k.private {
		p.SetMaxIdleConns(0)
	} else {
		p.SetMaxIdleConns(max(op.Idle, 1))
	}
	if op.pools == nil {
		op.pools = map[poolKind]*sql.DB{}
	}
	op.pools[k] = p
	return p, nil
}

// Close closes the Opener's own pools (not Pool, the DB's).
func (op *Opener) Close() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.closed = true
	var first error
	for k, p := range op.pools {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
		delete(op.pools, k)
	}
	return first
}

// Tabular writes rows as the database's command-line client does a
// plan that comes back as a table: the column names, then one line per
// row, its values separated by " | ", NULL as NULL. A value with line
// breaks of its own (MySQL's EXPLAIN ANALYZE tree) is written as it is.
func Tabular(rows *sql.Rows) (string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	values := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range values {
		dest[i] = &values[i]
	}
	var b strings.Builder
	if len(cols) > 1 {
		b.WriteString(strings.Join(cols, " | "))
		b.WriteByte('\n')
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return "", err
		}
		for i, v := range values {
			if i > 0 {
				b.WriteString(" | ")
			}
			if v.Valid {
				b.WriteString(v.String)
			} else {
				b.WriteString("NULL")
			}
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// Open returns how many connections the Opener's own pools hold open.
func (op *Opener) Open() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	n := 0
	for _, p := range op.pools {
		n += p.Stats().OpenConnections
	}
	return n
}
