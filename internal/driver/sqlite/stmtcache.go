package sqlite

import (
	"database/sql"
	"encoding/binary"
)

// stmtCache keeps prepared statements for field lists other than "all" or
// "one", by the list itself. Its user serializes access to it.
type stmtCache struct {
	m map[string]*sql.Stmt
	// buf builds the lookup key; indexing a map with string(buf) does not
	// allocate, so a hit costs no allocation.
	buf []byte
}

// maxCachedStmts bounds the cache: YCSB only ever uses a handful of field
// lists, and a caller that invents new ones forever must not leak.
const maxCachedStmts = 256

func (c *stmtCache) get(fields []int, prepare func() (*sql.Stmt, error)) (*sql.Stmt, error) {
	c.buf = c.buf[:0]
	for _, f := range fields {
		c.buf = binary.AppendUvarint(c.buf, uint64(f))
	}
	if s, ok := c.m[string(c.buf)]; ok {
		return s, nil
	}
	s, err := prepare()
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) >= maxCachedStmts {
		c.close()
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[string(c.buf)] = s
	return s, nil
}

func (c *stmtCache) close() {
	for _, s := range c.m {
		closeStmt(s)
	}
	c.m = nil
}
