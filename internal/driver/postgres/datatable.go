package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// The statements of the storage and stress experiments' tables
// (driver.DataTable). Like dialect, plain text in, text out.

// fillChunkBytes is about how much payload one transaction of FillTable
// writes: large enough that a commit's cost is lost in it, small enough
// that a fill of many gigabytes never holds one huge transaction.
var fillChunkBytes int64 = 64 << 20

// chunkRows is how many rows of t make one fill chunk.
func chunkRows(t driver.DataTable) int64 {
	return max(1, fillChunkBytes/int64(t.PayloadBytes+8))
}

// dataTable returns t's schema-qualified, quoted name.
func (db *DB) dataTable(t driver.DataTable) string { return qualify(db.schema, foldName(t.Name)) }

// createDataSQL is the CREATE TABLE of a DataTable: a bigint key and a
// fixed-width payload, in tablespace ts when it is not "". The payload is
// char(n), as the study's SQL Server table was: a row has one width.
func createDataSQL(table string, payload int, ts string) string {
	s := "CREATE TABLE " + table + " (id bigint PRIMARY KEY, payload char(" + strconv.Itoa(payload) + ") NOT NULL)"
	if ts != "" {
		s += " TABLESPACE " + quote(ts)
	}
	return s
}

// plainStorageSQL keeps the payload inline and uncompressed: a char(2000)
// value of repeated text would otherwise be compressed to a few bytes, and
// a wider one moved out of line, and the table's size would not be its
// rows' (PostgreSQL 16 takes STORAGE in CREATE TABLE; 15 does not).
func plainStorageSQL(table string) string {
	return "ALTER TABLE " + table + " ALTER COLUMN payload SET STORAGE PLAIN"
}

// fillSQL inserts the rows with ids $1 to $2, their payload made on the
// server.
func fillSQL(table string, payload int) string {
	return "INSERT INTO " + table + " (id, payload) SELECT g, repeat('x', " + strconv.Itoa(payload) +
		") FROM generate_series($1::bigint, $2::bigint) AS g"
}

// copySQL copies src's rows into a new table dst, in tablespace ts when it
// is not "".
func copySQL(src, dst, ts string) string {
	s := "CREATE TABLE " + dst
	if ts != "" {
		s += " TABLESPACE " + quote(ts)
	}
	return s + " AS SELECT id, payload FROM " + src
}

// insertSelectSQL copies src's rows with ids $1 to $2 into dst, their ids
// shifted by $3.
func insertSelectSQL(src, dst string) string {
	return "INSERT INTO " + dst + " (id, payload) SELECT id + $3::bigint, payload FROM " + src + " WHERE id BETWEEN $1::bigint AND $2::bigint"
}

// scanSQL reads every row of table between two ctids ($1 inclusive, $2
// exclusive; no upper bound when open), each row's payload included,
// which a TID range scan reads page by page in the heap's order.
func scanSQL(table string, bounded, open bool) string {
	s := "SELECT count(*), coalesce(sum(octet_length(payload)), 0) FROM " + table
	switch {
	case bounded && open:
		s += " WHERE ctid >= $1::tid"
	case bounded:
		s += " WHERE ctid >= $1::tid AND ctid < $2::tid"
	}
	return s
}

// scanByIDSQL reads the rows with ids $1 to $2: the slices of a server
// without TID range scans (before 14), in id order, which is the order a
// fill wrote them in.
func scanByIDSQL(table string) string {
	return "SELECT count(*), coalesce(sum(octet_length(payload)), 0) FROM " + table + " WHERE id BETWEEN $1::bigint AND $2::bigint"
}

// sizeSQL reads a table's size on disk: heap, indexes, TOAST, free space
// and visibility maps.
const sizeSQL = "SELECT coalesce(pg_total_relation_size(to_regclass($1)), -1)"

// literal writes s as an escape string literal, E'…', which reads the same
// whatever standard_conforming_strings says.
func literal(s string) string {
	return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// tablespaceSQL creates tablespace name in dir.
func tablespaceSQL(name, dir string) string {
	return "CREATE TABLESPACE " + quote(name) + " LOCATION " + literal(dir)
}

// tablespaceMarker is a tablespace's row in the marker table: its name
// after a word no table name has (a space), so it never stands for a table.
func tablespaceMarker(name string) string { return "tablespace " + name }

// workersPlanned finds the Workers Planned of an EXPLAIN (FORMAT JSON).
var workersPlanned = regexp.MustCompile(`"Workers Planned":\s*(\d+)`)

// ownedData refuses a DataTable dbprobe did not create, for a method that
// writes into it.
func (db *DB) ownedData(ctx context.Context, t driver.DataTable, doing string) error {
	own, err := db.ownership(ctx, db.pool, foldName(t.Name))
	if err != nil {
		return err
	}
	if own.Owned() {
		return nil
	}
	if own.CurrentIdentity == "" {
		return badinput.New("PostgreSQL: there is no table %s to %s; create it first", db.dataTable(t), doing)
	}
	return badinput.New("PostgreSQL: refusing to %s table %s: dbprobe did not create it (%s lists no such table of dbprobe's)",
		doing, db.dataTable(t), markerTable)
}

// CreateDataTable creates t and records it as dbprobe's.
func (db *DB) CreateDataTable(ctx context.Context, t driver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	table := db.dataTable(t)
	return db.createRecorded(ctx, t.Name, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, createDataSQL(table, t.PayloadBytes, tablespaceOf(t))); err != nil {
			return db.createError(err, table)
		}
		_, err := tx.Exec(ctx, plainStorageSQL(table))
		return classify(err)
	})
}

// tablespaceOf is the tablespace t goes in, "" for the database's default.
func tablespaceOf(t driver.DataTable) string {
	if t.Where == nil {
		return ""
	}
	return t.Where.Name
}

// FillTable inserts the rows first…last, generate_series making them on
// the server, one transaction per chunk.
func (db *DB) FillTable(ctx context.Context, t driver.DataTable, first, last int64) (int64, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, t, "fill"); err != nil {
		return 0, err
	}
	sql, per := fillSQL(db.dataTable(t), t.PayloadBytes), chunkRows(t)
	var done int64
	for from := first; from <= last; from += per {
		to := min(last, from+per-1)
		tag, err := db.pool.Exec(ctx, sql, from, to)
		if err != nil {
			return done, fmt.Errorf("postgres: fill %s: %w", db.dataTable(t), classify(err))
		}
		done += tag.RowsAffected()
	}
	return done, nil
}

// DropDataTable drops t when dbprobe created it.
func (db *DB) DropDataTable(ctx context.Context, t driver.DataTable) error {
	if err := t.Check(); err != nil {
		return err
	}
	return db.DropTable(ctx, t.Table())
}

// TableSize reads pg_total_relation_size.
func (db *DB) TableSize(ctx context.Context, t driver.DataTable) (driver.TableSize, error) {
	if err := t.Check(); err != nil {
		return driver.TableSize{}, err
	}
	var n int64
	if err := db.pool.QueryRow(ctx, sizeSQL, db.dataTable(t)).Scan(&n); err != nil {
		return driver.TableSize{}, classify(err)
	}
	if n < 0 {
		return driver.TableSize{}, badinput.New("PostgreSQL: there is no table %s", db.dataTable(t))
	}
	return driver.TableSize{Bytes: n, How: "pg_total_relation_size: heap, indexes, TOAST, free space and visibility maps"}, nil
}

// CopyTable runs CREATE TABLE … AS SELECT in one transaction with its
// marker row. For a degree above one, the source's parallel_workers and
// max_parallel_workers_per_gather are set to degree − 1 and the costs
// that would make the planner prefer a serial scan to 0 for the
// transaction only (the storage parameter is reset before the commit),
// so that the planner asks for that many workers whatever the table's
// size; the copy then runs under EXPLAIN (ANALYZE), which reads back
// the workers planned and those the server could launch. PostgreSQL
// parallelizes the SELECT only: the leader writes every row.
func (db *DB) CopyTable(ctx context.Context, src, dst driver.DataTable, degree int) (driver.CopyResult, error) {
	if err := src.Check(); err != nil {
		return driver.CopyResult{}, err
	}
	if err := dst.Check(); err != nil {
		return driver.CopyResult{}, err
	}
	degree = max(degree, 1)
	if degree > 1 {
		// Changing the source's storage parameter takes its owner, and is
		// dbprobe's to do only on its own table.
		if err := db.ownedData(ctx, src, "set parallel_workers on"); err != nil {
			return driver.CopyResult{}, err
		}
	}
	from, to := db.dataTable(src), db.dataTable(dst)
	res := driver.CopyResult{Degree: 1, How: "CREATE TABLE … AS SELECT, serial (max_parallel_workers_per_gather = 0)"}
	err := db.createRecorded(ctx, dst.Name, func(tx pgx.Tx) error {
		for _, q := range parallelCopySteps(from, degree) {
			if _, err := tx.Exec(ctx, q); err != nil {
				return classify(err)
			}
		}
		if degree == 1 {
			tag, err := tx.Exec(ctx, copySQL(from, to, tablespaceOf(dst)))
			if err != nil {
				return db.createError(err, to)
			}
			res.Rows = tag.RowsAffected()
			return nil
		}
		var plan string
		if err := tx.QueryRow(ctx, explainCopySQL(copySQL(from, to, tablespaceOf(dst)))).Scan(&plan); err != nil {
			return db.createError(err, to)
		}
		p, err := parseCopyPlan(plan)
		if err != nil {
			return err
		}
		var limits string
		if err := tx.QueryRow(ctx, "SELECT 'max_parallel_workers = ' || current_setting('max_parallel_workers') || ', max_worker_processes = ' || current_setting('max_worker_processes')").Scan(&limits); err != nil {
			return classify(err)
		}
		res.Rows, res.Degree, res.How = p.rows, p.launched+1, p.describe(degree, limits)
		_, err = tx.Exec(ctx, "ALTER TABLE "+from+" RESET (parallel_workers)")
		return classify(err)
	})
	if err != nil {
		return driver.CopyResult{}, fmt.Errorf("postgres: copy %s to %s: %w", from, to, err)
	}
	return res, nil
}

// parallelCopySteps are the settings of a copy at degree, for its
// transaction only. At a degree above one the planner is told to take
// degree − 1 workers: the table's parallel_workers overrides the count
// min_parallel_table_scan_size would give, and with parallel_setup_cost
// and parallel_tuple_cost at 0 and seq_page_cost at 0 the parallel plan
// always costs less. seq_page_cost matters: PostgreSQL does not divide a
// parallel scan's page reads among its workers, only its CPU, which for
// rows of a kilobyte is about 3% of the scan's cost — under the 1% fuzz
// of its path comparison once the estimate is off by a few times, as it
// is for a table never analyzed, so that DOP 2 (one worker) planned none.
func parallelCopySteps(from string, degree int) []string {
	workers := strconv.Itoa(max(degree, 1) - 1)
	steps := []string{"SET LOCAL max_parallel_workers_per_gather = " + workers}
	if degree > 1 {
		steps = append(steps, "ALTER TABLE "+from+" SET (parallel_workers = "+workers+")",
			"SET LOCAL parallel_setup_cost = 0", "SET LOCAL parallel_tuple_cost = 0", "SET LOCAL seq_page_cost = 0")
	}
	return steps
}

// explainCopySQL runs a CREATE TABLE AS under EXPLAIN ANALYZE, which
// executes it and shows the workers launched; without per-row timing,
// which would cost the copy a clock read per row.
func explainCopySQL(ctas string) string {
	return "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, FORMAT JSON) " + ctas
}

// copyPlan is what EXPLAIN ANALYZE said of a copy.
type copyPlan struct {
	rows              int64
	planned, launched int
}

// workersLaunched and actualRows find the figures of EXPLAIN (ANALYZE,
// FORMAT JSON); the first Actual Rows is the top node's: the rows
// copied.
var (
	workersLaunched = regexp.MustCompile(`"Workers Launched":\s*(\d+)`)
	actualRows      = regexp.MustCompile(`"Actual Rows":\s*(\d+)`)
)

// parseCopyPlan reads the rows copied and the workers planned and
// launched from a copy's EXPLAIN (ANALYZE, FORMAT JSON); a plan without
// a Gather planned none.
func parseCopyPlan(plan string) (copyPlan, error) {
	var p copyPlan
	m := actualRows.FindStringSubmatch(plan)
	if m == nil {
		return p, fmt.Errorf("postgres: no Actual Rows in the copy's EXPLAIN ANALYZE: %.200s", plan)
	}
	p.rows, _ = strconv.ParseInt(m[1], 10, 64)
	if m := workersPlanned.FindStringSubmatch(plan); m != nil {
		p.planned, _ = strconv.Atoi(m[1])
	}
	if m := workersLaunched.FindStringSubmatch(plan); m != nil {
		p.launched, _ = strconv.Atoi(m[1])
	}
	return p, nil
}

// describe says what ran: the workers asked for, planned and launched,
// and, when the server gave fewer, its limits (limits) that explain it.
func (p copyPlan) describe(degree int, limits string) string {
	asked := degree - 1
	workers := "workers"
	if p.launched == 1 {
		workers = "worker"
	}
	s := fmt.Sprintf("CREATE TABLE … AS SELECT with %d parallel %s for the SELECT (%d asked, %d planned, %d launched)", p.launched, workers, asked, p.planned, p.launched)
	switch {
	case p.planned < asked:
		s += fmt.Sprintf("; the planner took fewer than asked (%s)", limits)
	case p.launched < p.planned:
		s += fmt.Sprintf("; the server had no more worker slots free (%s, other parallel queries and background workers share them)", limits)
	}
	return s + "; the leader writes every row"
}

// InsertSelect copies src's rows first…last into dst, which must be
// dbprobe's.
func (db *DB) InsertSelect(ctx context.Context, src, dst driver.DataTable, first, last, shift int64) (int64, error) {
	if err := src.Check(); err != nil {
		return 0, err
	}
	if err := dst.Check(); err != nil {
		return 0, err
	}
	if err := db.ownedData(ctx, dst, "insert into"); err != nil {
		return 0, err
	}
	tag, err := db.pool.Exec(ctx, insertSelectSQL(db.dataTable(src), db.dataTable(dst)), first, last, shift)
	if err != nil {
		return 0, fmt.Errorf("postgres: insert into %s: %w", db.dataTable(dst), classify(err))
	}
	return tag.RowsAffected(), nil
}

// tidRangeScan is the first server_version_num with TID range scans.
const tidRangeScan = 140000

// ScanTable counts a slice of t's rows and their payload bytes on the
// server: the part-th of parts equal ranges of its pages (by ctid), or of
// its ids before PostgreSQL 14. The last slice has no upper bound, so
// pages added since the size was read are read too.
func (db *DB) ScanTable(ctx context.Context, t driver.DataTable, part, parts int) (driver.ScanResult, error) {
	if err := t.Check(); err != nil {
		return driver.ScanResult{}, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return driver.ScanResult{}, fmt.Errorf("postgres: scan part %d of %d", part, parts)
	}
	table := db.dataTable(t)
	var res driver.ScanResult
	var err error
	if parts == 1 {
		err = db.pool.QueryRow(ctx, scanSQL(table, false, false)).Scan(&res.Rows, &res.PayloadBytes)
		return res, classify(err)
	}
	var pages, version int64
	err = db.pool.QueryRow(ctx,
		"SELECT coalesce(pg_relation_size(to_regclass($1)), 0) / current_setting('block_size')::int, current_setting('server_version_num')::int",
		table).Scan(&pages, &version)
	if err != nil {
		return res, classify(err)
	}
	if version < tidRangeScan {
		var lo, hi int64
		if err := db.pool.QueryRow(ctx, "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM "+table).Scan(&lo, &hi); err != nil {
			return res, classify(err)
		}
		from, to := driver.ScanSlice(lo, hi, part, parts)
		err = db.pool.QueryRow(ctx, scanByIDSQL(table), from, to).Scan(&res.Rows, &res.PayloadBytes)
		return res, classify(err)
	}
	from, to := driver.ScanSlice(0, pages-1, part, parts)
	tid := func(page int64) string { return "(" + strconv.FormatInt(page, 10) + ",0)" }
	if part == parts-1 {
		err = db.pool.QueryRow(ctx, scanSQL(table, true, true), tid(from)).Scan(&res.Rows, &res.PayloadBytes)
	} else {
		err = db.pool.QueryRow(ctx, scanSQL(table, true, false), tid(from), tid(to+1)).Scan(&res.Rows, &res.PayloadBytes)
	}
	return res, classify(err)
}

// BulkWriter opens a session of its own on t, on the statement path
// whatever the DB's: each batch is one COPY FROM STDIN, or multi-row
// INSERTs without Options.BulkLoad, as InsertBatch loads.
func (db *DB) BulkWriter(ctx context.Context, t driver.DataTable) (driver.BulkWriter, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	if err := db.ownedData(ctx, t, "load"); err != nil {
		return nil, err
	}
	s, err := db.session(ctx, t.Table(), false)
	if err != nil {
		return nil, err
	}
	how := "COPY FROM STDIN (text format), one COPY per batch"
	if !db.opts.BulkLoad {
		how = "multi-row INSERT statements, in one transaction per batch (bulk load not asked for)"
	}
	return driver.NewSessionBulkWriter(s, func() string { return how }), nil
}

// CreateLocation creates a tablespace in dir and records it as dbprobe's.
// CREATE TABLESPACE cannot run in a transaction, so it runs alone under
// the marker table's session lock, and is dropped again if it cannot be
// recorded.
func (db *DB) CreateLocation(ctx context.Context, dir string) (driver.Location, error) {
	if dir == "" || strings.ContainsRune(dir, 0) || !strings.HasPrefix(dir, "/") {
		return driver.Location{}, badinput.New("PostgreSQL: tablespace directory %q must be an absolute path on the server's host", dir)
	}
	id, err := driver.NewTableID()
	if err != nil {
		return driver.Location{}, err
	}
	name := "dbprobe_ts_" + id
	err = db.withMarkerLock(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+db.marker()+
			" (table_name text PRIMARY KEY, created_at timestamptz, dbprobe_version text, "+identityColumn+" text)"); err != nil {
			return classify(err)
		}
		if err := db.addIdentityColumn(ctx, c); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, tablespaceSQL(name, dir)); err != nil {
			if inUse(err) {
				return db.inUseError(ctx, c, err, dir)
			}
			return tablespaceError(err, dir)
		}
		_, err := c.Exec(ctx, "INSERT INTO "+db.marker()+" (table_name, created_at, dbprobe_version, "+identityColumn+")"+
			" SELECT $1, now(), $2, oid::text FROM pg_tablespace WHERE spcname = $3",
			tablespaceMarker(name), version(), name)
		if err != nil {
			_, _ = c.Exec(context.WithoutCancel(ctx), "DROP TABLESPACE "+quote(name))
			return classify(err)
		}
		return nil
	})
	if err != nil {
		return driver.Location{}, err
	}
	return driver.Location{Dir: dir, Name: name, Description: "tablespace " + name + " at " + dir}, nil
}

// tablespaceError turns what CREATE TABLESPACE refused into bad input
// that says what the directory needs.
func tablespaceError(err error, dir string) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return classify(err)
	}
	switch {
	// The server refuses a directory it may not take over (not its OS
	// user's) with the privilege code too: that is the directory's fault,
	// not the role's.
	case pgErr.Code == codeInsufficientPrivilege && !strings.Contains(pgErr.Message, "directory"):
		return badinput.New("PostgreSQL refused to create a tablespace: %w; CREATE TABLESPACE needs a superuser", &driver.Scrubbed{Msg: pgErr.Message, Err: classify(err)})
	case strings.HasPrefix(pgErr.Code, "58") || pgErr.Code == "42P17" || pgErr.Code == "55000" || pgErr.Code == "22023" || pgErr.Code == codeInsufficientPrivilege:
		// 58P01 no such directory, 42P17 not absolute, 55000 not empty.
		return badinput.New("PostgreSQL cannot put a tablespace in %s: %w; the directory must exist on the database server's host, be empty and belong to the server's OS user",
			dir, &driver.Scrubbed{Msg: pgErr.Message, Err: classify(err)})
	}
	return classify(err)
}

// codeObjectInUse is PostgreSQL's object_in_use, which CREATE TABLESPACE
// gives for a directory that already holds a tablespace's subdirectory.
const codeObjectInUse = "55006"

// inUse reports whether CREATE TABLESPACE refused a directory that holds
// a tablespace already.
func inUse(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeObjectInUse && strings.Contains(pgErr.Message, "in use as a tablespace")
}

// tablespaceAtSQL finds the tablespace at directory $1.
const tablespaceAtSQL = "SELECT spcname, oid::text FROM pg_tablespace WHERE pg_tablespace_location(oid) = $1"

// inUseError says which tablespace holds dir and what the user would run
// to free it: a tablespace that is not dbprobe's is the user's to drop,
// and one of dbprobe's that Leftovers found is still there only because
// something is in it.
func (db *DB) inUseError(ctx context.Context, c *pgx.Conn, err error, dir string) error {
	var pgErr *pgconn.PgError
	errors.As(err, &pgErr)
	said := &driver.Scrubbed{Msg: pgErr.Message, Err: classify(err)}
	var name, oid string
	qerr := c.QueryRow(ctx, tablespaceAtSQL, strings.TrimRight(dir, "/")).Scan(&name, &oid)
	switch {
	case errors.Is(qerr, pgx.ErrNoRows):
		return badinput.New("PostgreSQL cannot put a tablespace in %s: %w; no tablespace of this server is there: it holds the subdirectory of another server's tablespace or of one dropped while the server could not remove it; check that no server uses it, then empty the directory, or give another", dir, said)
	case qerr != nil:
		return classify(err)
	}
	ours := false
	var recorded string
	if rerr := c.QueryRow(ctx, "SELECT coalesce((SELECT "+identityColumn+" FROM "+db.marker()+" WHERE table_name = $1), '')", tablespaceMarker(name)).Scan(&recorded); rerr == nil {
		ours = recorded == oid
	}
	if ours {
		return badinput.New("PostgreSQL cannot put a tablespace in %s: tablespace %s is there, which dbprobe made and left, and it still holds objects (SELECT relname FROM pg_class WHERE reltablespace = %s, in each database); drop them, then DROP TABLESPACE %s", dir, name, oid, quote(name))
	}
	return badinput.New("PostgreSQL cannot put a tablespace in %s: tablespace %s is there, which dbprobe did not create (%s does not record it); give another directory, or free it yourself: move what it holds elsewhere, then DROP TABLESPACE %s", dir, name, markerTable, quote(name))
}

// leftoversSQL lists the tablespaces the marker table records as
// dbprobe's under the OID they still have, and where each one is.
func leftoversSQL(marker string) string {
	return "SELECT t.spcname, pg_tablespace_location(t.oid) FROM " + marker + " AS m JOIN pg_tablespace AS t " +
		"ON m.table_name = 'tablespace ' || t.spcname AND m." + identityColumn + " = t.oid::text ORDER BY m.created_at"
}

// Leftovers returns the tablespaces dbprobe made and did not drop (a run
// killed before its end, or --keep), that are still there under the OID
// the marker table recorded. A marker table that is not there, that this
// user may not read, or of a dbprobe that recorded no identities, records
// none.
func (db *DB) Leftovers(ctx context.Context) ([]driver.Location, error) {
	var readable, withIdentity bool
	err := db.pool.QueryRow(ctx,
		"SELECT coalesce(has_table_privilege(to_regclass($1), 'SELECT'), false), "+
			"EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)",
		db.marker(), identityColumn).Scan(&readable, &withIdentity)
	if err != nil || !readable || !withIdentity {
		return nil, classify(err)
	}
	rows, err := db.pool.Query(ctx, leftoversSQL(db.marker()))
	if err != nil {
		return nil, classify(err)
	}
	var out []driver.Location
	for rows.Next() {
		var name, dir string
		if err := rows.Scan(&name, &dir); err != nil {
			rows.Close()
			return nil, classify(err)
		}
		out = append(out, driver.Location{Dir: dir, Name: name, Description: "tablespace " + name + " at " + dir})
	}
	return out, classify(rows.Err())
}

// withMarkerLock runs fn on a connection of the pool holding the marker
// table's lock as a session lock, for statements that cannot run in a
// transaction.
func (db *DB) withMarkerLock(ctx context.Context, fn func(c *pgx.Conn) error) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer pc.Release()
	c := pc.Conn()
	if _, err := c.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(markerLock)); err != nil {
		return classify(err)
	}
	defer func() {
		if _, err := c.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(markerLock)); err != nil {
			// A lock that could not be let go goes with the connection.
			pc.Hijack().Close(context.WithoutCancel(ctx))
		}
	}()
	return fn(c)
}

// DropLocation drops a tablespace dbprobe recorded creating, and forgets
// it. Its tables must be gone: DROP TABLESPACE refuses one that is not
// empty, and nothing is dropped with it.
func (db *DB) DropLocation(ctx context.Context, l driver.Location) error {
	if err := driver.CheckIdentifier("tablespace", l.Name); err != nil {
		return err
	}
	return db.withMarkerLock(ctx, func(c *pgx.Conn) error {
		var marker bool
		var recorded, current string
		if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", db.marker()).Scan(&marker); err != nil {
			return classify(err)
		}
		if marker {
			err := c.QueryRow(ctx, "SELECT coalesce((SELECT "+identityColumn+" FROM "+db.marker()+" WHERE table_name = $1), ''), "+
				"coalesce((SELECT oid::text FROM pg_tablespace WHERE spcname = $2), '')",
				tablespaceMarker(l.Name), l.Name).Scan(&recorded, &current)
			if err != nil {
				return classify(err)
			}
		}
		if recorded == "" || (current != "" && recorded != current) {
			return badinput.New("PostgreSQL: refusing to drop tablespace %s: dbprobe did not create it (%s does not record it)", l.Name, markerTable)
		}
		if current != "" {
			if _, err := c.Exec(ctx, "DROP TABLESPACE "+quote(l.Name)); err != nil {
				return fmt.Errorf("postgres: drop tablespace %s: %w", l.Name, classify(err))
			}
		}
		_, err := c.Exec(ctx, "DELETE FROM "+db.marker()+" WHERE table_name = $1", tablespaceMarker(l.Name))
		return classify(err)
	})
}

// Settle vacuums and analyzes a table just filled — hint bits set, the
// visibility map made, statistics taken, so that neither the first reads
// of its rows nor autovacuum write during the measured part — and runs a
// CHECKPOINT so that the fill's dirty pages are written before it, where
// the role may (a superuser, or pg_checkpoint from PostgreSQL 15).
func (db *DB) Settle(ctx context.Context, t driver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	if _, err := db.pool.Exec(ctx, "VACUUM (ANALYZE) "+db.dataTable(t)); err != nil {
		return "", fmt.Errorf("postgres: vacuum %s: %w", t.Name, classify(err))
	}
	done := "VACUUM (ANALYZE) " + t.Name + " (hint bits, visibility map and statistics made: autovacuum has nothing of the fill's to do)"
	_, err := db.pool.Exec(ctx, "CHECKPOINT")
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return done + "; CHECKPOINT (the fill's dirty pages written)", nil
	case errors.As(err, &pgErr) && pgErr.Code == codeInsufficientPrivilege:
		return done + "; no CHECKPOINT: " + pgErr.Message + " (it needs a superuser or pg_checkpoint): the fill's dirty pages may be written during the measured part", nil
	}
	return "", fmt.Errorf("postgres: checkpoint: %w", classify(err))
}
