package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// noSimple says why SQLite has no simple protocol.
const noSimple = "SQLite runs inside dbprobe and binds every parameter to a statement it prepared (both of its libraries have that one path); run with the prepared protocol"

// noCosts says why SQLite has no CostReader, and what stands in.
const noCosts = "SQLite counts its page cache's hits and misses per connection (sqlite3_db_status), which neither mattn/go-sqlite3 nor modernc.org/sqlite lets Go read; " +
	"the monitor's device reads and writes (the dbprobe process's own I/O) stand in for them"

// explain is SQL text's Hooks.Explain: EXPLAIN QUERY PLAN, laid out as
// the sqlite3 shell prints it. SQLite has no ANALYZE of a statement: with
// analyze the plan is the same, and How says so.
func explain(ctx context.Context, c *sql.Conn, text string, args []any, analyze bool) (driver.Plan, error) {
	rows, err := c.QueryContext(ctx, "EXPLAIN QUERY PLAN "+text, args...)
	if err != nil {
		return driver.Plan{}, err
	}
	defer rows.Close()
	var steps []planStep
	for rows.Next() {
		var s planStep
		var unused int64
		if err := rows.Scan(&s.id, &s.parent, &unused, &s.detail); err != nil {
			return driver.Plan{}, err
		}
		steps = append(steps, s)
	}
	if err := rows.Err(); err != nil {
		return driver.Plan{}, err
	}
	if len(steps) == 0 {
		// An INSERT … VALUES has no step to show: a plan of "QUERY PLAN"
		// alone would say nothing.
		return driver.Plan{}, fmt.Errorf("sqlite: EXPLAIN QUERY PLAN shows no step: %w", driver.ErrNoPlan)
	}
	how := "EXPLAIN QUERY PLAN"
	if analyze {
		how += " (SQLite has no ANALYZE of a statement: it was not run)"
	}
	return driver.Plan{Text: planTree(steps), How: how}, nil
}

// planStep is one row of EXPLAIN QUERY PLAN.
type planStep struct {
	id, parent int64
	detail     string
}

// planTree lays steps out as the sqlite3 shell does: "QUERY PLAN", then
// each step under its parent, "|--" before it and "`--" before the last
// of its siblings.
func planTree(steps []planStep) string {
	var b strings.Builder
	b.WriteString("QUERY PLAN")
	var walk func(parent int64, indent string)
	walk = func(parent int64, indent string) {
		var kids []planStep
		for _, s := range steps {
			if s.parent == parent && s.id != parent {
				kids = append(kids, s)
			}
		}
		for i, k := range kids {
			branch, next := "|--", "|  "
			if i == len(kids)-1 {
				branch, next = "`--", "   "
			}
			b.WriteString("\n" + indent + branch + k.detail)
			walk(k.id, indent+next)
		}
	}
	walk(0, "")
	return b.String()
}

// tempPragma is the start of TempSetup's statement, which setTempDir
// recognises.
const tempPragma = "PRAGMA temp_store_directory = "

// TempSetup returns the pragma that sends SQLite's temporary files
// (spilled sorts, temporary tables, statement journals) to l.Dir.
// temp_store_directory is one setting of the whole process, not of a
// connection: setTempDir sets it once, and every connection of dbprobe's
// uses it from then on.
func (d *db) TempSetup(l driver.Location) ([]string, error) {
	if !filepath.IsAbs(l.Dir) {
		return nil, badinput.New("sqlite: the temporary files' directory %s is not an absolute path", l.Dir)
	}
	st, err := os.Stat(l.Dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, badinput.New("sqlite: the temporary files' directory %s does not exist; create it first", l.Dir)
	case err != nil:
		return nil, badinput.New("sqlite: cannot reach the temporary files' directory %s (%v); check its permissions", l.Dir, err)
	case !st.IsDir():
		return nil, badinput.New("sqlite: %s is not a directory", l.Dir)
	}
	return []string{tempPragma + "'" + strings.ReplaceAll(l.Dir, "'", "''") + "'"}, nil
}

// tempDirMu serialises changes of temp_store_directory: SQLite's
// documentation says changing it while another thread runs SQLite is
// undefined (the old string is freed under a reader).
var tempDirMu sync.Mutex

// setTempDir is SQL text's Hooks.Setup: it runs TempSetup's pragma only
// when the process's directory differs, so that once set it is never
// changed under a running statement, and reads it back, since SQLite
// ignores a pragma it was built without.
func setTempDir(ctx context.Context, c *sql.Conn, q string) (bool, error) {
	if !strings.HasPrefix(q, tempPragma) {
		return false, nil
	}
	want := strings.ReplaceAll(strings.Trim(strings.TrimPrefix(q, tempPragma), "'"), "''", "'")
	tempDirMu.Lock()
	defer tempDirMu.Unlock()
	now, err := tempDir(ctx, c)
	if err != nil || now == want {
		return true, err
	}
	if _, err := c.ExecContext(ctx, q); err != nil {
		return true, err
	}
	if now, err = tempDir(ctx, c); err != nil || now != want {
		return true, badinput.New("sqlite: this SQLite ignored PRAGMA temp_store_directory (built without it: SQLITE_OMIT_DEPRECATED); put the temporary files elsewhere with the environment variable SQLITE_TMPDIR before dbprobe starts")
	}
	return true, nil
}

// tempDir reads temp_store_directory: "" when it is not set (no row).
func tempDir(ctx context.Context, c *sql.Conn) (string, error) {
	var dir string
	err := c.QueryRowContext(ctx, "PRAGMA temp_store_directory").Scan(&dir)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return dir, err
}

// TablePath returns the database file that holds t (PRAGMA
// database_list's main), absolute; an in-memory database has none.
func (d *db) TablePath(ctx context.Context, t driver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	ok, err := d.tableExists(ctx, t.Name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", badinput.New("sqlite: there is no table %s", t.Name)
	}
	rows, err := d.pool.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", classify(err)
		}
		if name != "main" {
			continue
		}
		if file == "" {
			return "", badinput.New("sqlite: table %s is in an in-memory database, which has no file", t.Name)
		}
		return filepath.Abs(file)
	}
	if err := rows.Err(); err != nil {
		return "", classify(err)
	}
	return "", errors.New("sqlite: PRAGMA database_list names no main database")
}

// CacheSize reads PRAGMA cache_size of a reading connection, the kind
// that scans: negative is KiB, positive pages of page_size. Each
// connection has a cache of its own; the OS page cache beside them is
// the host's.
func (d *db) CacheSize(ctx context.Context) (driver.CacheSize, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return driver.CacheSize{}, classify(err)
	}
	defer c.Close()
	var cache, page int64
	if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
		return driver.CacheSize{}, classify(err)
	}
	if err := c.QueryRowContext(ctx, "PRAGMA page_size").Scan(&page); err != nil {
		return driver.CacheSize{}, classify(err)
	}
	return cacheSizeOf(cache, page), nil
}

// cacheSizeOf turns a cache_size and a page_size into bytes.
func cacheSizeOf(cache, page int64) driver.CacheSize {
	if cache < 0 {
		return driver.CacheSize{Bytes: -cache * 1024, How: fmt.Sprintf("cache_size = %d (KiB) of the scanning connection", cache)}
	}
	return driver.CacheSize{Bytes: cache * page, How: fmt.Sprintf("cache_size = %d pages × page_size %d of the scanning connection", cache, page)}
}
