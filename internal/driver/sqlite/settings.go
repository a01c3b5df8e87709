package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// sessionPragmas are what a session's connection reads back about how its
// statements run, beyond the pragmas dbprobe sets (setupPragmas).
type sessionPragmas struct {
	readUncommitted int
	// lockingMode EXCLUSIVE keeps the file's locks from one transaction to
	// the next, which a process holding the file alone saves lock calls
	// with, and blocks every other connection.
	lockingMode string
	// mmapSize is how much of the file reads map rather than copy with
	// read calls; -1 when SQLite answers nothing (an in-memory database,
	// which has no file).
	mmapSize int64
}

// Left out: temp_store (the operations sort nothing: a scan walks the
// primary key), foreign_keys (the table has none) and query_only (nothing
// sets it: every connection is set up by setupPragmas alone).

// readSessionPragmas reads them on a connection of the pool, which the
// connector opens as it opens the sessions'.
func readSessionPragmas(ctx context.Context, pool *sql.DB) (sessionPragmas, error) {
	var p sessionPragmas
	c, err := pool.Conn(ctx)
	if err != nil {
		return p, err
	}
	defer c.Close()
	p.mmapSize = -1
	for _, q := range []struct {
		sql  string
		dest any
	}{
		{"PRAGMA read_uncommitted", &p.readUncommitted},
		{"PRAGMA locking_mode", &p.lockingMode},
		{"PRAGMA mmap_size", &p.mmapSize},
	} {
		err := c.QueryRowContext(ctx, q.sql).Scan(q.dest)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return p, fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	return p, nil
}

// settings returns Info's lines for the pragmas read back, in a fixed
// order: the locking mode and mmap_size, then the isolation and how each
// operation commits.
func (p sessionPragmas) settings(memory bool) []driver.Setting {
	return []driver.Setting{
		{Name: "locking_mode", Value: strings.ToLower(p.lockingMode)},
		{Name: "mmap_size", Value: mmapText(p.mmapSize)},
		{Name: "transaction_isolation", Value: isolationText(p.readUncommitted, memory)},
		{Name: "autocommit", Value: "reads: each statement is a transaction of its own (SQLite's autocommit, DEFERRED); writes: in BEGIN IMMEDIATE transactions on the writer, several to a commit (see writes); a load batch is one transaction", KeyValue: true},
	}
}

// isolationText says what isolation a session's reads have. SQLite's
// transactions are serializable; only connections that share a cache (an
// in-memory database here) honour read_uncommitted, which lets a read
// skip the table locks and see the writer's uncommitted rows.
func isolationText(readUncommitted int, sharedCache bool) string {
	if readUncommitted != 0 && sharedCache {
		return "READ UNCOMMITTED (read_uncommitted = 1 on the shared cache of the in-memory database): a read may see writes whose transaction has not committed yet"
	}
	return "SERIALIZABLE (read_uncommitted = " + strconv.Itoa(readUncommitted) + "): a read sees the database as of its statement's start, and writes run one transaction at a time"
}

// mmapText shows mmap_size in bytes and what it means for reads.
func mmapText(n int64) string {
	if n < 0 {
		return "none: SQLite reports no mmap_size (an in-memory database has no file to map)"
	}
	if n == 0 {
		return "0 (reads copy pages with read calls)"
	}
	return fmt.Sprintf("%d (%d MiB of the file is read through memory mapping)", n, n>>20)
}
