package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// What statements cost the server (driver.CostReader), from its own
// cumulative counters.
//
// The whole database's figures come from pg_stat_database: Calls is
// xact_commit; LogicalReads blks_hit + blks_read and PhysicalReads
// blks_read (shared buffers only: temporary tables' and temp files'
// blocks are not in them); RowsExamined tup_returned, the rows sequential
// scans read and the entries index scans read, which counts a row reached
// by either once (tup_fetched, the table rows an index led to, would count
// an index scan's rows twice); Elapsed active_time (PostgreSQL 14 and
// later). It counts no rows returned to clients, so Rows is unknown, and
// no CPU time. A backend adds its work to these counters when it reports
// its statistics, at most once a second while busy and within ten seconds
// of going idle (PostgreSQL 15), and when its connection closes: a reading
// taken the moment a run ends misses up to that much of it.
//
// A statement's figures come from pg_stat_statements, summed over the
// entries of the current user and database that are the statement's:
//   - the entry whose queryid is the statement's as prepared (Prepare's
//     bound text, $n for its :name parameters), which EXPLAIN (VERBOSE)
//     of that text shows as its Query Identifier; a simple-protocol run
//     is another entry, as its values are constants, not parameters;
//   - the entries whose text is the bound text, and the text a
//     simple-protocol run is recorded under: pgx writes each value
//     between spaces and pg_stat_statements replaces each by $1, $2, … in
//     order, so that form is found when the statement has no constants of
//     its own (a LIMIT 10 would be numbered among them) and its values
//     are what pgx writes as one literal.
//
// Calls, shared_blks_hit + shared_blks_read (logical), shared_blks_read
// (physical), rows and total_exec_time are summed; planning time
// (track_planning) is not in total_exec_time. EXPLAIN finding the
// queryid is itself recorded by pg_stat_statements, as a utility
// statement of its own, when track_utility is on.

// costsDatabaseSQL reads pg_stat_database's counters of the current
// database, and the block size; activeTime is active_time or NULL.
func costsDatabaseSQL(activeTime string) string {
	return `SELECT current_setting('block_size')::bigint, xact_commit, blks_hit + blks_read, blks_read, tup_returned, ` +
		activeTime + ` FROM pg_stat_database WHERE datname = current_database()`
}

// statementsStateSQL says where pg_stat_statements stands: the schema of
// the extension in this database ("" when not created), whether its
// library is loaded (its settings exist only when it is in
// shared_preload_libraries: it defines them in _PG_init, which returns at
// once otherwise), whether the server has it to create, and what it
// tracks.
const statementsStateSQL = `SELECT
	coalesce((SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'), ''),
	EXISTS (SELECT 1 FROM pg_settings WHERE name = 'pg_stat_statements.max'),
	EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'),
	coalesce(current_setting('pg_stat_statements.track', true), ''),
	current_database(),
	current_setting('server_version_num')::int`

// statementCostSQL sums the entries of a statement in pg_stat_statements
// in schema nsp: $1 its queryid (NULL when unknown), $2 and $3 the texts
// it may be recorded under.
func statementCostSQL(nsp string) string {
	return `SELECT count(*), coalesce(sum(calls), 0)::bigint, coalesce(sum(shared_blks_hit + shared_blks_read), 0)::bigint,
	coalesce(sum(shared_blks_read), 0)::bigint, coalesce(sum(rows), 0)::bigint, coalesce(sum(total_exec_time), 0)::float8
	FROM ` + qualify(nsp, "pg_stat_statements") + `
	WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
	AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND (queryid = $1 OR query = $2 OR query = $3)`
}

// queryIdentifier finds the Query Identifier line of EXPLAIN (VERBOSE).
var queryIdentifier = regexp.MustCompile(`(?m)^\s*Query Identifier: (-?\d+)\s*$`)

// Costs reads pg_stat_database, and pg_stat_statements where it can; see
// above for what each figure is and how a statement's entries are found.
// A statement with no entry has not run since the counters were reset (or
// its entry was evicted): its counted figures are zero.
func (db *DB) Costs(ctx context.Context, texts []string) (driver.Costs, error) {
	bound := make([]sqlgen.Bound, len(texts))
	simple := make([]string, len(texts))
	for i, text := range texts {
		b, err := sqlgen.Bind(sqlgen.Postgres, text)
		if err == nil {
			simple[i], err = simpleText(text)
		}
		if err != nil {
			return driver.Costs{}, badinput.New("PostgreSQL statement: %v", err)
		}
		bound[i] = b
	}
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return driver.Costs{}, classify(err)
	}
	defer pc.Release()
	c := pc.Conn()

	var nsp, track, database string
	var loaded, available bool
	var versionNum int
	if err := c.QueryRow(ctx, statementsStateSQL).Scan(&nsp, &loaded, &available, &track, &database, &versionNum); err != nil {
		return driver.Costs{}, fmt.Errorf("postgres: costs: %w", classify(err))
	}
	out := driver.Costs{Source: "pg_stat_database"}
	if note, err := db.awaitClosed(ctx, c); err != nil {
		return driver.Costs{}, fmt.Errorf("postgres: costs: %w", classify(err))
	} else if note != "" {
		out.Notes = append(out.Notes, note)
	}
	activeTime := "NULL::float8"
	if versionNum >= 140000 {
		activeTime = "active_time"
	}
	var elapsed *float64
	d := driver.Cost{Rows: driver.Unknown, CPU: driver.Unknown}
	err = c.QueryRow(ctx, costsDatabaseSQL(activeTime)).Scan(&out.PageBytes, &d.Calls, &d.LogicalReads, &d.PhysicalReads, &d.RowsExamined, &elapsed)
	if err != nil {
		return driver.Costs{}, fmt.Errorf("postgres: costs: pg_stat_database: %w", classify(err))
	}
	d.Elapsed = driver.Unknown
	if elapsed != nil {
		d.Elapsed = msToNanos(*elapsed)
	}
	out.Database = d

	out.Statements = make([]driver.Cost, len(texts))
	for i := range out.Statements {
		out.Statements[i] = driver.UnknownCost
	}
	note := statementsNote(nsp, loaded, available, track, database)
	if note == "" && len(texts) > 0 {
		out.Source = "pg_stat_statements; pg_stat_database"
		for i, b := range bound {
			cost, err := statementCost(ctx, c, nsp, b, simple[i])
			if err != nil {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "55000" {
					// Created, but its library is not loaded: the view
					// refuses to be read.
					note = statementsNote(nsp, false, available, track, database)
					out.Source = "pg_stat_database"
					for i := range out.Statements {
						out.Statements[i] = driver.UnknownCost
					}
					break
				}
				return driver.Costs{}, fmt.Errorf("postgres: costs: pg_stat_statements: %w", classify(err))
			}
			out.Statements[i] = cost
		}
	}
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	out.Notes = append(out.Notes, "PostgreSQL counts no CPU time per statement or database (the pg_stat_kcache extension does; dbprobe does not read it)")
	return out, nil
}

// closedConn records the backends of SQLConns just closed, for Costs to
// wait for.
func (db *DB) closedConn(pids ...uint32) {
	db.closedMu.Lock()
	for _, pid := range pids {
		if pid != 0 {
			db.closedPIDs = append(db.closedPIDs, pid)
		}
	}
	db.closedMu.Unlock()
}

// closedWait bounds how long Costs waits for the backends of closed
// SQLConns to end; closedPoll is how often it looks.
const (
	closedWait = 5 * time.Second
	closedPoll = 5 * time.Millisecond
)

// stillRunningSQL returns those of the pids $1 whose backends are still
// there.
const stillRunningSQL = `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE pid = ANY($1::int8[])`

// awaitClosed waits until the server has ended the backends of the
// SQLConns closed since the last reading. A backend adds the work it has
// not reported yet (up to a second's, PostgreSQL 15) to pg_stat_database
// as it exits, before it leaves pg_stat_activity (its statistics are
// flushed by a before_shmem_exit callback, its pg_stat_activity entry
// cleared by a later on_shmem_exit one), so once it has left, the
// reading holds all of its work. Backends still there after closedWait
// are kept for the next reading, and the note says so.
func (db *DB) awaitClosed(ctx context.Context, c *pgx.Conn) (string, error) {
	db.closedMu.Lock()
	pids := db.closedPIDs
	db.closedPIDs = nil
	db.closedMu.Unlock()
	if len(pids) == 0 {
		return "", nil
	}
	deadline := time.Now().Add(closedWait)
	for {
		asked := make([]int64, len(pids))
		for i, p := range pids {
			asked[i] = int64(p)
		}
		var left []int64
		if err := c.QueryRow(ctx, stillRunningSQL, asked).Scan(&left); err != nil {
			db.closedConn(pids...)
			return "", err
		}
		if len(left) == 0 {
			return "", nil
		}
		pids = pids[:0]
		for _, p := range left {
			pids = append(pids, uint32(p))
		}
		if time.Now().After(deadline) {
			db.closedConn(pids...)
			return fmt.Sprintf("pg_stat_database: %d closed connections of dbprobe's were still ending after %s; the work they had not reported yet (up to a second's) is missing from this reading", len(pids), closedWait), nil
		}
		select {
		case <-ctx.Done():
			db.closedConn(pids...)
			return "", ctx.Err()
		case <-time.After(closedPoll):
		}
	}
}

// statementsNote says what keeps pg_stat_statements from counting this
// database's statements, and what to do; "" when nothing does.
func statementsNote(nsp string, loaded, available bool, track, database string) string {
	const unknown = "per-statement costs are unknown"
	create := "CREATE EXTENSION pg_stat_statements in database " + database
	preload := "add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart the server"
	switch {
	case !available && nsp == "":
		return "pg_stat_statements is not installed on the server (" + unknown + "): install PostgreSQL's contrib modules, " + preload + ", then " + create
	case !loaded && nsp == "":
		return "pg_stat_statements is neither loaded nor created (" + unknown + "): " + preload + ", then " + create
	case !loaded:
		return "pg_stat_statements is created in database " + database + " but its library is not loaded (" + unknown + "): " + preload
	case nsp == "":
		return "pg_stat_statements is loaded but not created in database " + database + " (" + unknown + "): " + create
	case track == "none":
		return "pg_stat_statements.track is none, so nothing is counted (" + unknown + "): set it to top"
	}
	return ""
}

// statementCost sums the entries in pg_stat_statements of b and of its
// simple-protocol text.
func statementCost(ctx context.Context, c *pgx.Conn, nsp string, b sqlgen.Bound, simple string) (driver.Cost, error) {
	id, err := queryID(ctx, c, b)
	if err != nil {
		return driver.Cost{}, err
	}
	var entries int64
	var ms float64
	cost := driver.Cost{RowsExamined: driver.Unknown, CPU: driver.Unknown}
	err = c.QueryRow(ctx, statementCostSQL(nsp), id, recordedText(b.Text), simple).
		Scan(&entries, &cost.Calls, &cost.LogicalReads, &cost.PhysicalReads, &cost.Rows, &ms)
	if err != nil {
		return driver.Cost{}, err
	}
	cost.Elapsed = msToNanos(ms)
	return cost, nil
}

// queryID returns the queryid the server gives b's text as prepared, from
// EXPLAIN (VERBOSE) with every parameter NULL (the values do not change
// it; their types, inferred as when preparing, do), or nil when the
// server shows none: a statement EXPLAIN does not take (a utility
// statement, recorded by its text) or compute_query_id off.
func queryID(ctx context.Context, c *pgx.Conn, b sqlgen.Bound) (*int64, error) {
	args := make([]any, 1, 1+len(b.Names))
	args[0] = pgx.QueryExecModeDescribeExec
	for range b.Names {
		args = append(args, nil)
	}
	rows, err := c.Query(ctx, "EXPLAIN (VERBOSE) "+b.Text, args...)
	if err != nil {
		return nil, refusedOrErr(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, err
		}
		plan.WriteString(line)
		plan.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return nil, refusedOrErr(err)
	}
	m := queryIdentifier.FindStringSubmatch(plan.String())
	if m == nil {
		return nil, nil
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return nil, nil
	}
	return &id, nil
}

// refusedOrErr is nil for the server's refusal of a statement, which
// leaves it to be found by its text, and err for anything else (a lost
// connection, an ended context).
func refusedOrErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code != "57014" {
		return nil
	}
	return err
}

// simpleText is the text pg_stat_statements records for text run by the
// simple protocol when its only constants are its values: pgx writes each
// value between spaces where its placeholder was, and the server replaces
// each constant by $1, $2, … in the order they come, a parameter used
// twice being two constants. A NUL, which no PostgreSQL text holds, marks
// each placeholder until it is numbered.
func simpleText(text string) (string, error) {
	d := sqlgen.Postgres
	d.Numbered, d.Prefix = false, "\x00"
	b, err := sqlgen.Bind(d, text)
	if err != nil {
		return "", err
	}
	parts := strings.Split(b.Text, "\x00")
	var out strings.Builder
	out.WriteString(parts[0])
	for i, p := range parts[1:] {
		out.WriteString(" $" + strconv.Itoa(i+1) + " ")
		out.WriteString(p)
	}
	return recordedText(out.String()), nil
}

// recordedText is text as pg_stat_statements records it: without the
// white space around it or a semicolon that ends it.
func recordedText(text string) string {
	const space = " \t\n\r\f\v"
	return strings.Trim(strings.TrimSuffix(strings.TrimRight(text, space), ";"), space)
}

// msToNanos turns pg_stat's milliseconds into nanoseconds.
func msToNanos(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
