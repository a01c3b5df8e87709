package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

var (
	_ driver.SQLRunner    = (*DB)(nil)
	_ driver.TableFiller  = (*DB)(nil)
	_ driver.TableSizer   = (*DB)(nil)
	_ driver.TableCopier  = (*DB)(nil)
	_ driver.ChunkWriter  = (*DB)(nil)
	_ driver.TableScanner = (*DB)(nil)
	_ driver.BulkLoader   = (*DB)(nil)
	_ driver.Placer       = (*DB)(nil)
	_ driver.Describer    = (*DB)(nil)
	_ driver.CostReader   = (*DB)(nil)
	_ driver.TempPlacer   = (*DB)(nil)
	_ driver.Locator      = (*DB)(nil)
	_ driver.Explainer    = (*sqlConn)(nil)
	_ driver.Execer       = (*sqlConn)(nil)
)

// Capabilities says what PostgreSQL does beyond key-value, and how.
func (db *DB) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("PostgreSQL")
	c.Has(driver.CapSQL, "statements prepared on the server, :name parameters bound as $n")
	c.Has(driver.CapCancel, "a cancel request on a second connection; the statement's own connection stays open")
	c.Has(driver.CapFill, "INSERT … SELECT from generate_series, committed every 64 MB")
	c.Has(driver.CapSize, "pg_total_relation_size")
	c.Has(driver.CapCopy, "CREATE TABLE … AS SELECT")
	c.Has(driver.CapParallelCopy, "parallel workers for the SELECT (max_parallel_workers_per_gather and the source's parallel_workers at degree − 1, parallel and page costs at 0), the workers launched read back by EXPLAIN ANALYZE; the leader writes every row")
	c.Has(driver.CapInsertSelect, "INSERT … SELECT")
	c.Has(driver.CapScan, "count(*) over ctid ranges (TID range scans, PostgreSQL 14 and later; id ranges before)")
	c.Has(driver.CapBulkLoad, "COPY FROM STDIN, one connection per writer")
	c.Has(driver.CapPlace, "CREATE TABLESPACE … LOCATION: a superuser, and a directory on the server's host that is empty and the server's own")
	c.Has(driver.CapCounters, "pg_stat_wal, pg_stat_database, pg_stat_bgwriter")
	c.Has(driver.CapSimpleProtocol, "the simple query protocol, pgx writing the values into the text as literals (pgbench -M simple); the text is still prepared once on the server to check it")
	c.Has(driver.CapExplain, "EXPLAIN with the values bound (a custom plan); EXPLAIN (ANALYZE, BUFFERS) in a transaction, or a savepoint, rolled back")
	c.Has(driver.CapCosts, "pg_stat_statements when it is in shared_preload_libraries and created in the database; pg_stat_database block and tuple counts always")
	c.Has(driver.CapTempPlace, "SET temp_tablespaces on each connection")
	c.Has(driver.CapLocate, "pg_relation_filepath under data_directory (a superuser or pg_read_all_settings), or under pg_tablespace_location for a table in a tablespace")
	c.Has(driver.CapCacheSize, "shared_buffers (pg_size_bytes of current_setting)")
	c.Has(driver.CapCacheCounts, "pg_statio_all_tables: the table's own blocks hit and read in shared_buffers, its indexes included")
	return c
}

// SQLConn opens a connection of the DB's configuration for SQL text. Its
// statements are cancelled by a cancel request when their context ends,
// and the connection stays usable.
//
// A prepared-protocol connection is opened by pgconn and then driven
// through wire (sqlwire.go), as sessions are; a simple-protocol one stays
// a pgx.Conn, whose literals pgx writes into the text.
//
// Every SQLConn is a new connection, never one of the pool's, and Close
// closes it: o.Fresh asks for nothing more, and Setup never reaches the
// pool. o.Setup runs in order, each statement alone by the simple
// protocol; the first the server refuses closes the connection and is
// returned with the server's error.
func (db *DB) SQLConn(ctx context.Context, o driver.SQLOptions) (driver.SQLConn, error) {
	if !o.Simple {
		return db.wireSQLConn(ctx, o)
	}
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: open a connection: %w", classify(err))
	}
	for _, s := range o.Setup {
		if _, err := conn.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
			conn.Close(closeCtx)
			cancel()
			return nil, fmt.Errorf("postgres: session setup %q: %w", s, classify(err))
		}
	}
	return &sqlConn{db: db, conn: conn, simple: o.Simple}, nil
}

// wireSQLConn opens a prepared-protocol SQLConn on wire.
func (db *DB) wireSQLConn(ctx context.Context, o driver.SQLOptions) (driver.SQLConn, error) {
	pc, err := pgconn.ConnectConfig(ctx, db.connConfig)
	if err != nil {
		return nil, fmt.Errorf("postgres: open a connection: %w", classify(err))
	}
	w, err := hijack(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open a connection: %w", classify(err))
	}
	for _, s := range o.Setup {
		if err := w.simple(ctx, s); err != nil {
			w.close()
			return nil, fmt.Errorf("postgres: session setup %q: %w", s, classify(err))
		}
	}
	return &sqlConn{db: db, w: w, pbuf: make([]byte, 0, 256)}, nil
}

// SplitScript cuts a script into its statements by PostgreSQL's rules, with
// its dollar quotes and BEGIN ATOMIC bodies (sqlgen.Script).
func (db *DB) SplitScript(text string) ([]driver.ScriptStatement, error) {
	return sqltext.Script(sqlgen.Postgres, text)
}

// sqlConn is one connection running SQL text: a pgx.Conn by the simple
// protocol, else a wire.
type sqlConn struct {
	db   *DB
	conn *pgx.Conn // the simple protocol's; nil on wire
	w    *wire     // the prepared protocol's; nil on conn
	// simple sends statements by the simple query protocol, their values
	// written into the text by pgx (SQLOptions.Simple).
	simple bool
	n      int   // statements prepared, to name the next
	args   []any // pgx's arguments, cleared after use

	// wire's scratch, reused by every statement: the parameters' bytes,
	// where each ends (-1 for NULL), their formats (empty when all are
	// text), the slices of pbuf sent, and the last command tag.
	pbuf    []byte
	ends    []int
	formats []int16
	params  [][]byte
	tag     []byte
	types   *pgtype.Map // decodes rows for visit; made when first needed
}

// sqlStmt is a statement prepared on a sqlConn under name; name is "" on
// a simple-protocol connection, where nothing stays prepared.
type sqlStmt struct {
	c     *sqlConn
	name  string
	bound sqlgen.Bound
	// cols are the columns of its rows, from its description (nil when
	// it returns none): Outcome.Columns.
	cols []string
	// On wire: the parameters' types in the order of $n, and the
	// fields of its rows, from its description.
	oids   []uint32
	fields []field
}

// Params names the parameters in the order Run takes them.
func (st *sqlStmt) Params() []string { return st.bound.Names }

// Close deallocates the statement.
func (st *sqlStmt) Close() error {
	if st.name == "" {
		return nil
	}
	if st.c.w != nil {
		return st.c.closeWire(st.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return classify(st.c.conn.Deallocate(ctx, st.name))
}

// Prepare binds text's :name parameters to $n and prepares it, which has
// the server parse and analyse it. On a simple-protocol connection the
// statement is deallocated at once: the check is made, and Run sends the
// text each time.
func (c *sqlConn) Prepare(ctx context.Context, text string) (driver.Stmt, error) {
	b, err := sqlgen.Bind(sqlgen.Postgres, text)
	if err != nil {
		return nil, badinput.New("PostgreSQL statement: %v", err)
	}
	if copiesFromClient(text) {
		return nil, badinput.New("PostgreSQL statement: %s", copyInAdvice)
	}
	c.n++
	name := "dbprobe_sql_" + strconv.Itoa(c.n)
	if c.w != nil {
		st := &sqlStmt{c: c, name: name, bound: b}
		if err := c.prepareWire(ctx, name, st); err != nil {
			return nil, err
		}
		return st, nil
	}
	sd, err := c.conn.Prepare(ctx, name, b.Text)
	if err != nil {
		return nil, classify(err)
	}
	st := &sqlStmt{c: c, name: name, bound: b, cols: columns(sd.Fields)}
	if c.simple {
		if err := c.conn.Deallocate(ctx, name); err != nil {
			return nil, classify(err)
		}
		st.name = ""
	}
	return st, nil
}

// bind checks that s is c's and puts lead, then args in the order of its
// $n, into c.args, which the caller clears after use.
func (c *sqlConn) bind(s driver.Stmt, args []any, lead ...any) (*sqlStmt, error) {
	st, ok := s.(*sqlStmt)
	if !ok || st.c != c {
		return nil, fmt.Errorf("postgres: a statement of another connection")
	}
	if len(args) != len(st.bound.Names) {
		return nil, fmt.Errorf("postgres: %d values for the parameters %v", len(args), st.bound.Names)
	}
	c.args = append(c.args[:0], lead...)
	for _, i := range st.bound.Args {
		c.args = append(c.args, args[i])
	}
	return st, nil
}

// Run executes a prepared statement and reads its rows.
func (c *sqlConn) Run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error) (driver.Outcome, error) {
	return c.run(ctx, s, args, visit, nil)
}

// RunRaw implements driver.RawRunner: the values as the server sent
// them, in text form.
func (c *sqlConn) RunRaw(ctx context.Context, s driver.Stmt, args []any, visit func(row [][]byte) error) (driver.Outcome, error) {
	return c.run(ctx, s, args, nil, visit)
}

// run is Run with the rows decoded for visit, or raw for raw.
func (c *sqlConn) run(ctx context.Context, s driver.Stmt, args []any, visit func(row []any) error, raw func(row [][]byte) error) (driver.Outcome, error) {
	var st *sqlStmt
	var err error
	if c.w != nil {
		st, ok := s.(*sqlStmt)
		if !ok || st.c != c {
			return driver.Outcome{}, fmt.Errorf("postgres: a statement of another connection")
		}
		return c.runWire(ctx, st, args, visit, raw)
	}
	if c.simple {
		st, err = c.bind(s, args, pgx.QueryExecModeSimpleProtocol)
	} else {
		st, err = c.bind(s, args)
	}
	if err != nil {
		return driver.Outcome{}, err
	}
	query := st.name
	if c.simple {
		query = st.bound.Text
	}
	rows, err := c.conn.Query(ctx, query, c.args...)
	clear(c.args)
	if err != nil {
		return driver.Outcome{}, classify(err)
	}
	out := driver.Outcome{Columns: st.cols}
	for rows.Next() {
		out.Rows++
		var err error
		switch {
		case raw != nil:
			err = raw(rows.RawValues())
		case visit != nil:
			var values []any
			if values, err = rows.Values(); err == nil {
				err = visit(values)
			}
		}
		if err != nil {
			rows.Close()
			return out, err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, classify(err)
	}
	tag := rows.CommandTag()
	out.Affected = -1
	if !tag.Select() {
		out.Affected = tag.RowsAffected()
	}
	return out, nil
}

// Begin opens a transaction.
func (c *sqlConn) Begin(ctx context.Context) error { return c.exec(ctx, "BEGIN") }

// Commit commits the transaction.
func (c *sqlConn) Commit(ctx context.Context) error { return c.exec(ctx, "COMMIT") }

// Rollback rolls the transaction back; without one the server only warns.
func (c *sqlConn) Rollback(ctx context.Context) error { return c.exec(ctx, "ROLLBACK") }

func (c *sqlConn) exec(ctx context.Context, sql string) error {
	if c.w != nil {
		return c.simpleWire(ctx, sql)
	}
	_, err := c.conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return classify(err)
}

// Exec runs text once by the simple protocol, unprepared, and counts the
// rows it returned and changed; text with :name parameters is refused.
func (c *sqlConn) Exec(ctx context.Context, text string) (driver.Outcome, error) {
	b, err := sqlgen.Bind(sqlgen.Postgres, text)
	if err != nil {
		return driver.Outcome{}, badinput.New("PostgreSQL statement: %v", err)
	}
	if len(b.Names) > 0 {
		return driver.Outcome{}, badinput.New("the statement has parameters (:%s), which nothing gives a value to here", strings.Join(b.Names, ", :"))
	}
	if c.w != nil {
		return c.execWire(ctx, text)
	}
	rows, err := c.conn.Query(ctx, text, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return driver.Outcome{}, classify(err)
	}
	out := driver.Outcome{Columns: columns(rows.FieldDescriptions())}
	for rows.Next() {
		out.Rows++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, classify(err)
	}
	out.Affected = -1
	if tag := rows.CommandTag(); !tag.Select() {
		out.Affected = tag.RowsAffected()
	}
	return out, nil
}

// columns names the fields of a row description; nil for none.
func columns(fields []pgconn.FieldDescription) []string {
	if len(fields) == 0 {
		return nil
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// Close closes the connection. Its backend's pid is kept until Costs
// has seen the backend end, which is when the server has counted all of
// its work in pg_stat_database.
func (c *sqlConn) Close() error {
	if c.w != nil {
		c.w.close()
		c.db.closedConn(c.w.pid)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	pid := c.conn.PgConn().PID()
	err := c.conn.Close(ctx)
	c.db.closedConn(pid)
	return err
}

// Explain runs EXPLAIN of st's text with args bound by the extended
// protocol, described first so that the server infers the parameters'
// types as it did when preparing st. PostgreSQL 15 has no GENERIC_PLAN,
// so the plan is the custom plan for these values; a prepared statement
// run more than five times may switch to a generic plan
// (plan_cache_mode), which this does not show. With analyze it runs
// EXPLAIN (ANALYZE, BUFFERS) in a transaction it rolls back, or, when the
// connection is already in one, under a savepoint it rolls back to.
func (c *sqlConn) Explain(ctx context.Context, s driver.Stmt, args []any, analyze bool) (driver.Plan, error) {
	var st *sqlStmt
	var err error
	var txStatus byte
	explain := c.explain
	if c.w != nil {
		var ok bool
		if st, ok = s.(*sqlStmt); !ok || st.c != c {
			return driver.Plan{}, fmt.Errorf("postgres: a statement of another connection")
		}
		if err := c.encode(st, args); err != nil { // checked before anything runs
			return driver.Plan{}, err
		}
		txStatus = c.w.txStatus
		explain = func(ctx context.Context, sql string) (string, error) { return c.explainWire(ctx, st, args, sql) }
	} else {
		st, err = c.bind(s, args, pgx.QueryExecModeDescribeExec)
		if err != nil {
			return driver.Plan{}, err
		}
		defer clear(c.args)
		txStatus = c.conn.PgConn().TxStatus()
	}
	if !analyze {
		text, err := explain(ctx, "EXPLAIN "+st.bound.Text)
		return driver.Plan{Text: text, How: "EXPLAIN (a custom plan for the values given)"}, noPlan(err)
	}
	open, undo, how := "BEGIN", "ROLLBACK", "EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back"
	switch txStatus {
	case 'T':
		open, undo, how = "SAVEPOINT dbprobe_explain", "ROLLBACK TO SAVEPOINT dbprobe_explain; RELEASE SAVEPOINT dbprobe_explain",
			"EXPLAIN (ANALYZE, BUFFERS) under a savepoint rolled back"
	case 'E':
		return driver.Plan{}, fmt.Errorf("postgres: explain: the connection's transaction has failed; roll it back first")
	}
	if err := c.exec(ctx, open); err != nil {
		return driver.Plan{}, fmt.Errorf("postgres: explain: %s: %w", open, err)
	}
	text, err := explain(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+st.bound.Text)
	// The statement's work is undone even when ctx ended while it ran.
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	defer cancel()
	if uerr := c.exec(undoCtx, undo); uerr != nil && err == nil {
		err = fmt.Errorf("postgres: explain: %s: %w", undo, uerr)
	}
	return driver.Plan{Text: text, How: how}, noPlan(err)
}

// noPlan marks as driver.ErrNoPlan the syntax error EXPLAIN gives a
// statement that prepared, which is one EXPLAIN does not take (CREATE
// INDEX, SET, CALL, VACUUM): Explain's statements were all prepared.
func noPlan(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42601" {
		return fmt.Errorf("postgres: EXPLAIN takes queries and INSERT, UPDATE, DELETE, MERGE: %w (%v)", driver.ErrNoPlan, err)
	}
	return err
}

// explain runs an EXPLAIN with c.args and returns its lines.
func (c *sqlConn) explain(ctx context.Context, sql string) (string, error) {
	rows, err := c.conn.Query(ctx, sql, c.args...)
	if err != nil {
		return "", classify(err)
	}
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return "", classify(err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return "", classify(err)
	}
	return strings.Join(lines, "\n"), nil
}

// copiesFromClient reports whether text is a COPY … FROM STDIN, which
// waits for rows the client sends: refused before the measurement rather
// than failing every iteration (or, on pgx's simple protocol, waiting for
// ever).
func copiesFromClient(text string) bool {
	words, err := sqlgen.Words(sqlgen.Postgres, text)
	if err != nil || len(words) == 0 || words[0] != "COPY" {
		return false // an open construct: the server will say what is wrong
	}
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "FROM" && words[i+1] == "STDIN" {
			return true
		}
	}
	return false
}
