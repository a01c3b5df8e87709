package sqlite

import (
	"encoding/binary"
)

// stmtCache keeps prepared statements for field lists other than "all" or
// "one", by the list itself: the writer's (database/sql statements) and a
// session's (the library's own, see readStmt). Its user serializes access
// to it.
type stmtCache[S interface{ Close() error }] struct {
	m map[string]S
	// buf builds the lookup key; indexing a map with string(buf) does not
	// allocate, so a hit costs no allocation.
	buf []byte
}

// maxCachedStmts bounds the cache: YCSB only ever uses a handful of field
// lists, and a caller that invents new ones forever must not leak.
const maxCachedStmts = 256

func (c *stmtCache[S]) get(fields []int, prepare func() (S, error)) (S, error) {
	c.buf = c.buf[:0]
	for _, f := range fields {
		c.buf = binary.AppendUvarint(c.buf, uint64(f))
	}
	if s, ok := c.m[string(c.buf)]; ok {
		return s, nil
	}
	s, err := prepare()
	if err != nil {
		return s, err
	}
	if c.m == nil || len(c.m) >= maxCachedStmts {
		c.close()
		c.m = make(map[string]S)
	}
	c.m[string(c.buf)] = s
	return s, nil
}

func (c *stmtCache[S]) close() {
	for _, s := range c.m {
		// Closing a statement only finalizes it; nothing to report.
		_ = s.Close()
	}
	c.m = nil
}
