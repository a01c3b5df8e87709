package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// monitorApplicationName is what the monitor's connection calls itself in
// pg_stat_activity, so that a DBA watching the server can tell it from the
// sessions (applicationName) and from anything else.
const monitorApplicationName = "dbprobe-monitor"

var _ driver.Monitorable = (*DB)(nil)

// statQuery reads one row of counters from a statistics view. Every column
// is cast to float8 and named as the view names it, so a column's name is
// the counter's; the columns named in gauges are gauges instead.
type statQuery struct {
	view   string // for Unavailable
	sql    string
	gauges map[string]bool
}

// pgMonitor samples the server's statistics views on a connection of its
// own. It is used from one goroutine.
type pgMonitor struct {
	db      *DB
	conn    *pgx.Conn
	facts   serverFacts
	queries []statQuery
	// waitsOff is set when pg_stat_activity could not be read: Waits then
	// answers nil, as for a database without such a view.
	waitsOff    bool
	unavailable []string
}

// Monitor opens a connection of the DB's configuration, named
// dbprobe-monitor, and decides from the server's version and settings
// which statistics it reads.
func (db *DB) Monitor(ctx context.Context) (driver.Monitor, error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = monitorApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open the monitor's connection: %w", classify(err))
	}
	m := &pgMonitor{db: db, conn: conn}
	if err := m.plan(ctx); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("postgres: monitor: %w", classify(err))
	}
	return m, nil
}

// serverFacts are what the monitor's plan depends on.
type serverFacts struct {
	versionNum int    // server_version_num, e.g. 150004
	walTiming  string // track_wal_io_timing, "" where it does not exist
	allStats   bool   // may read every role's sessions in pg_stat_activity
	blockSize  int    // block_size, the bytes of a page
}

// plan reads the server's facts and chooses the queries.
func (m *pgMonitor) plan(ctx context.Context) error {
	var f serverFacts
	// pg_read_all_stats exists from PostgreSQL 10; a superuser is a member
	// of every role.
	err := m.conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
		coalesce(current_setting('track_wal_io_timing', true), ''),
		coalesce((SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = 'pg_read_all_stats'), false),
		current_setting('block_size')::int`).
		Scan(&f.versionNum, &f.walTiming, &f.allStats, &f.blockSize)
	if err != nil {
		return err
	}
	m.facts = f
	m.queries, m.unavailable = planQueries(f)
	return nil
}

// Column lists of the statistics views, by the server versions that have
// them.
var (
	databaseCounters = []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit",
		"tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted",
		"deadlocks", "conflicts", "temp_bytes"}
	walCounters     = []string{"wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full"}
	walIOCounters   = []string{"wal_write", "wal_sync"}
	walTimeCounters = []string{"wal_write_time", "wal_sync_time"}
	// Up to PostgreSQL 16 pg_stat_bgwriter holds the checkpointer's
	// counters too; 17 moved them to pg_stat_checkpointer, under other
	// names, and the backends' writes to pg_stat_io.
	bgwriterCounters16  = []string{"checkpoints_timed", "checkpoints_req", "checkpoint_write_time", "checkpoint_sync_time", "buffers_checkpoint", "buffers_clean", "maxwritten_clean", "buffers_backend", "buffers_backend_fsync", "buffers_alloc"}
	bgwriterCounters17  = []string{"buffers_clean", "maxwritten_clean", "buffers_alloc"}
	checkpointerColumns = []string{"num_timed", "num_requested", "write_time", "sync_time", "buffers_written"}
)

// planQueries chooses the statistics a server of these facts offers, and
// names what it does not.
func planQueries(f serverFacts) ([]statQuery, []string) {
	var unavailable []string
	queries := []statQuery{
		{
			view:   "pg_stat_database",
			sql:    selectFloats(append([]string{"numbackends"}, databaseCounters...), "pg_stat_database WHERE datname = current_database()"),
			gauges: map[string]bool{"numbackends": true},
		},
		{
			// Server-wide, like Waits, excluding the monitor itself.
			view: "pg_stat_activity",
			sql: `SELECT count(*) FILTER (WHERE state = 'active')::float8 AS active_sessions,
				count(*) FILTER (WHERE state = 'active' AND wait_event_type = 'Lock')::float8 AS sessions_waiting_on_lock
				FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
			gauges: map[string]bool{"active_sessions": true, "sessions_waiting_on_lock": true},
		},
	}
	version := fmt.Sprintf("%d.%d", f.versionNum/10000, f.versionNum/100%100)
	if f.versionNum >= 100000 {
		version = fmt.Sprint(f.versionNum / 10000)
	}
	switch {
	case f.versionNum < 140000:
		unavailable = append(unavailable, "pg_stat_wal: needs PostgreSQL 14 (the server is "+version+")")
	case f.versionNum >= 180000:
		// PostgreSQL 18 moved the WAL's writes and syncs to pg_stat_io,
		// and dropped track_wal_io_timing with them.
		queries = append(queries, statQuery{view: "pg_stat_wal", sql: selectFloats(walCounters, "pg_stat_wal")})
		unavailable = append(unavailable, "pg_stat_wal: wal_write, wal_sync and their times moved to pg_stat_io in PostgreSQL 18, which this monitor does not read")
	default:
		cols := append(append([]string{}, walCounters...), walIOCounters...)
		if strings.EqualFold(f.walTiming, "on") {
			cols = append(cols, walTimeCounters...)
		} else {
			// Left out rather than reported as zeros that look measured.
			unavailable = append(unavailable, "pg_stat_wal: wal_write_time and wal_sync_time are not measured because track_wal_io_timing is off")
		}
		queries = append(queries, statQuery{view: "pg_stat_wal", sql: selectFloats(cols, "pg_stat_wal")})
	}
	if f.versionNum >= 170000 {
		queries = append(queries,
			statQuery{view: "pg_stat_bgwriter", sql: selectFloats(bgwriterCounters17, "pg_stat_bgwriter")},
			statQuery{view: "pg_stat_checkpointer", sql: selectFloats(checkpointerColumns, "pg_stat_checkpointer")})
		unavailable = append(unavailable, "pg_stat_bgwriter: buffers_backend and buffers_backend_fsync moved to pg_stat_io in PostgreSQL 17, which this monitor does not read")
	} else {
		queries = append(queries, statQuery{view: "pg_stat_bgwriter", sql: selectFloats(bgwriterCounters16, "pg_stat_bgwriter")})
	}
	if !f.allStats {
		unavailable = append(unavailable, "pg_stat_activity: the sessions of other roles are hidden from this user (grant it pg_read_all_stats to see them)")
	}
	if f.versionNum >= 170000 {
		unavailable = append(unavailable, driver.CounterDeviceWriteBytes+": the backends' own writes are in pg_stat_io from PostgreSQL 17, which this monitor does not read")
	}
	return queries, unavailable
}

// standardize adds the standard counters (driver.CounterLogBytes, …) to
// a sample, from the counters PostgreSQL keeps under its own names: the
// WAL's bytes, the current database's block hits and reads (a read is a
// block asked of the operating system, whose page cache may answer it),
// and the blocks written to the data files by the checkpointer, the
// background writer and the backends (up to PostgreSQL 16, where
// pg_stat_bgwriter holds all three).
func standardize(s driver.Sample, f serverFacts) {
	c, block := s.Counters, float64(f.blockSize)
	driver.CopyCounter(c, driver.CounterLogBytes, "wal_bytes")
	driver.CopyCounter(c, driver.CounterCommits, "xact_commit")
	driver.CopyCounter(c, driver.CounterCacheHits, "blks_hit")
	driver.CopyCounter(c, driver.CounterPhysicalReads, "blks_read")
	if v, ok := driver.SumCounters(c, "blks_hit", "blks_read"); ok {
		c[driver.CounterLogicalReads] = v
	}
	if v, ok := c["blks_read"]; ok && block > 0 {
		c[driver.CounterDeviceReadBytes] = v * block
	}
	if v, ok := driver.SumCounters(c, "buffers_checkpoint", "buffers_clean", "buffers_backend"); ok && block > 0 && f.versionNum < 170000 {
		c[driver.CounterDeviceWriteBytes] = v * block
	}
	if v, ok := driver.SumCounters(c, "checkpoints_timed", "checkpoints_req"); ok {
		c[driver.CounterCheckpoints] = v
	} else if v, ok := driver.SumCounters(c, "num_timed", "num_requested"); ok {
		c[driver.CounterCheckpoints] = v
	}
	if block > 0 {
		s.Gauges[driver.GaugePageBytes] = block
	}
}

// selectFloats selects columns as float8 under their own names.
func selectFloats(columns []string, from string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
		b.WriteString("::float8 AS ")
		b.WriteString(c)
	}
	b.WriteString(" FROM ")
	b.WriteString(from)
	return b.String()
}

// Sample runs every query still in the plan. A query the server refuses
// (a privilege, a view it lacks) leaves the plan with a line in
// Unavailable; any other failure is the connection's and is returned.
func (m *pgMonitor) Sample(ctx context.Context) (driver.Sample, error) {
	s := driver.Sample{Time: time.Now(), Counters: map[string]float64{}, Gauges: map[string]float64{}}
	kept := make([]statQuery, 0, len(m.queries))
	var refused []string
	for _, q := range m.queries {
		if err := m.readRow(ctx, q, s); err != nil {
			if !m.refused(ctx, err) {
				return driver.Sample{}, fmt.Errorf("postgres: monitor: read %s: %w", q.view, classify(err))
			}
			refused = append(refused, q.view+": "+refusal(err))
			continue
		}
		kept = append(kept, q)
	}
	m.queries = kept
	m.unavailable = append(m.unavailable, refused...)
	standardize(s, m.facts)
	return s, nil
}

// readRow runs one statistics query and files its columns into s. A view
// with no row (a database dropped meanwhile) adds nothing.
func (m *pgMonitor) readRow(ctx context.Context, q statQuery, s driver.Sample) error {
	rows, err := m.conn.Query(ctx, q.sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	values := make([]*float64, len(fields))
	dest := make([]any, len(fields))
	for i := range values {
		dest[i] = &values[i]
	}
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, f := range fields {
			if values[i] == nil {
				continue
			}
			if q.gauges[f.Name] {
				s.Gauges[f.Name] = *values[i]
			} else {
				s.Counters[f.Name] = *values[i]
			}
		}
	}
	rows.Close()
	return rows.Err()
}

// refused reports whether err is the server refusing a statement on a
// connection that still works, as opposed to the connection failing.
func (m *pgMonitor) refused(ctx context.Context, err error) bool {
	var pgErr *pgconn.PgError
	// 57014 is a statement cancelled (the caller's context, a
	// statement_timeout): not a refusal to remember.
	return errors.As(err, &pgErr) && pgErr.Code != "57014" &&
		ctx.Err() == nil && !m.conn.IsClosed()
}

// refusal says in one line why the server refused a statement.
func refusal(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message + " (SQLSTATE " + pgErr.Code + ")"
	}
	return err.Error()
}

// waitsSQL lists the active sessions but the monitor's own, with their
// wait ("" on CPU) and their backend's pid.
const waitsSQL = `SELECT pid, coalesce(wait_event_type || ':' || wait_event, '')
	FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid()`

// Waits reads pg_stat_activity. A session is this run's when its backend
// is one of this DB's open sessions: their pids are known exactly, where
// the application name "dbprobe" would also claim another dbprobe's
// sessions on the same server.
func (m *pgMonitor) Waits(ctx context.Context) ([]driver.Wait, error) {
	if m.waitsOff {
		return nil, nil
	}
	ours := m.db.sessionPIDs()
	rows, err := m.conn.Query(ctx, waitsSQL)
	if err == nil {
		var waits []driver.Wait
		var pid int32
		var event string
		_, err = pgx.ForEachRow(rows, []any{&pid, &event}, func() error {
			waits = append(waits, driver.Wait{Event: event, Own: ours[uint32(pid)]})
			return nil
		})
		if err == nil {
			return waits, nil
		}
	}
	if m.refused(ctx, err) {
		m.waitsOff = true
		m.unavailable = append(m.unavailable, "pg_stat_activity (waits): "+refusal(err))
		return nil, nil
	}
	return nil, fmt.Errorf("postgres: monitor: read the waits: %w", classify(err))
}

// sessionPIDs returns the backend pids of the DB's open sessions.
func (db *DB) sessionPIDs() map[uint32]bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	pids := make(map[uint32]bool, len(db.open))
	for s := range db.open {
		pids[s.c.pid] = true
	}
	return pids
}

// Unavailable lists what the server does not let the monitor see.
func (m *pgMonitor) Unavailable() []string {
	return append([]string(nil), m.unavailable...)
}

// Close closes the monitor's connection.
func (m *pgMonitor) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return m.conn.Close(ctx)
}
