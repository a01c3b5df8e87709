package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// statusCounters are the cumulative SHOW GLOBAL STATUS variables a sample
// reads, by the server's own names: the statements, the redo log, the data
// files' I/O, the buffer pool's misses and the row locks.
var statusCounters = []string{
	"Questions", "Com_select", "Com_update", "Com_insert", "Com_delete", "Com_commit", "Handler_commit",
	"Innodb_os_log_written", "Innodb_log_waits", "Innodb_log_writes", "Innodb_os_log_fsyncs", "Innodb_data_fsyncs",
	"Innodb_data_reads", "Innodb_data_writes", "Innodb_data_read", "Innodb_data_written",
	"Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
	"Innodb_row_lock_waits", "Innodb_row_lock_time",
	"Bytes_received", "Bytes_sent",
}

// statusGauges are the SHOW GLOBAL STATUS variables that are values at an
// instant rather than running totals.
var statusGauges = []string{"Threads_running", "Threads_connected", "Innodb_row_lock_current_waits"}

// checkpointStatus are the SHOW GLOBAL STATUS variables the redo log's
// checkpoint age comes from, of which a server has one set or none:
// MariaDB 10.5 and later (and Percona's XtraDB) give the age and its
// maximum; MySQL 8.0.30 and later the current and the checkpoint LSNs
// and the redo log's capacity. They are gauges, values at an instant,
// and never reported missing one by one: probe says once when the server
// gives no checkpoint age at all.
var checkpointStatus = []string{
	"Innodb_checkpoint_age", "Innodb_checkpoint_max_age",
	"Innodb_redo_log_current_lsn", "Innodb_redo_log_checkpoint_lsn", "Innodb_redo_log_capacity_resized",
}

// statusAlternatives are counters of which one is enough: MariaDB 10.8
// and later has no Innodb_os_log_fsyncs, and Innodb_data_fsyncs then
// counts the log's fsyncs with the data files'.
var statusAlternatives = map[string]string{
	"Innodb_os_log_fsyncs": "Innodb_data_fsyncs",
	"Innodb_data_fsyncs":   "Innodb_os_log_fsyncs",
}

// waitClasses are the performance_schema wait classes a sample sums: the
// first three parts of an instrument's name. Every class is read in every
// sample, so that the caller's deltas compare the same names.
var waitClasses = []string{
	"wait/io/file", "wait/io/table", "wait/io/socket", "wait/lock/table", "wait/lock/metadata",
	"wait/synch/mutex", "wait/synch/rwlock", "wait/synch/sxlock", "wait/synch/cond",
}

// waitEvents are single instruments read beside their classes: the redo
// log, the data files and the binary log are where a write workload's
// commits wait.
var waitEvents = []string{
	"wait/io/file/innodb/innodb_log_file", "wait/io/file/innodb/innodb_data_file",
	"wait/io/file/sql/binlog", "wait/lock/table/sql/handler",
}

// eventRowLock is the Event of a session whose InnoDB transaction waits
// for a row lock (information_schema.INNODB_TRX trx_state = 'LOCK WAIT'),
// named as PostgreSQL's wait events are: type, colon, event.
const eventRowLock = "Lock:row"

// Monitor opens a monitor on a connection of the DB's pool that it holds
// until Close, never a session's. It finds out at once what it can read:
// the status variables the server has, whether performance_schema is on
// and whether information_schema.INNODB_TRX may be read.
func (db *DB) Monitor(ctx context.Context) (driver.Monitor, error) {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	m := &monitor{db: db, conn: c, statusQuery: statusQuery()}
	if err := m.probe(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	return m, nil
}

// monitor samples a MySQL or MariaDB server from one connection.
type monitor struct {
	db   *DB
	conn *sql.Conn
	id   int64 // the monitor's own connection id, left out of Waits

	statusQuery string
	pageSize    float64 // innodb_page_size; 0 when it could not be read
	psWaits     bool    // performance_schema's wait summaries are read
	noWaits     bool    // PROCESSLIST may not be read
	noLockWaits bool    // INNODB_TRX may not be read
	checkpoints bool    // INNODB_METRICS' log_checkpoints is enabled and read
	// logSetting is the setting that sizes the redo log, which bounds
	// the checkpoint age; "" when the server gives no checkpoint age.
	logSetting string

	// lockWaits are the threads whose transaction waited for a row lock
	// when INNODB_TRX was last read, at lockWaitsRead.
	lockWaits     map[int64]bool
	lockWaitsRead time.Time

	unavailable []string
}

// probe reads the monitor's connection id and tries each query once, so
// that Unavailable is complete before the first sample.
func (m *monitor) probe(ctx context.Context) error {
	if err := m.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), @@innodb_page_size").Scan(&m.id, &m.pageSize); err != nil {
		return err
	}
	status, err := m.readStatus(ctx)
	if err != nil {
		return err
	}
	counters, gauges, missing := statusSample(status)
	if len(missing) > 0 {
		m.unavailable = append(m.unavailable, "SHOW GLOBAL STATUS: this server has no "+strings.Join(missing, ", "))
	}
	standardize(counters, gauges, m.pageSize)
	switch _, ok := gauges[driver.GaugeCheckpointAge]; {
	case !ok:
		m.unavailable = append(m.unavailable, noCheckpointAge)
	case hasGauge(gauges, "Innodb_checkpoint_age"):
		// MariaDB: one redo log file of this size (10.5 and later).
		m.logSetting = "innodb_log_file_size"
	default:
		// MySQL 8.0.30 and later sizes the redo log by its capacity.
		m.logSetting = "innodb_redo_log_capacity"
	}

	m.probeCheckpoints(ctx)

	var ps sql.NullString
	if err := m.conn.QueryRowContext(ctx, "SELECT @@GLOBAL.performance_schema").Scan(&ps); err != nil {
		if !refused(err) {
			return err
		}
		ps.String = "0" // a server built without it
	}
	if on, _ := strconv.ParseBool(ps.String); !on && !strings.EqualFold(ps.String, "ON") {
		m.unavailable = append(m.unavailable, "performance_schema is off (MariaDB's default): no wait summaries; "+
			"set performance_schema=ON in the server's configuration and restart it to have them")
	} else if err := m.probeWaitSummaries(ctx); err != nil {
		return err
	}

	if err := m.tryQuery(ctx, waitsQuery); err != nil {
		if !refused(err) {
			return err
		}
		m.unavailable = append(m.unavailable, "information_schema.PROCESSLIST: "+serverMessage(err)+"; no waits")
		m.noWaits = true
		return nil
	}
	if err := m.tryQuery(ctx, lockWaitsQuery); err != nil {
		if !refused(err) {
			return err
		}
		m.unavailable = append(m.unavailable, "information_schema.INNODB_TRX: "+serverMessage(err)+
			"; row lock waits are reported by their PROCESSLIST state (grant PROCESS to see them as "+eventRowLock+")")
		m.noLockWaits = true
	}
	var hasProcess int
	if err := m.conn.QueryRowContext(ctx, processPrivilegeQuery).Scan(&hasProcess); err == nil && hasProcess == 0 {
		m.unavailable = append(m.unavailable, "information_schema.PROCESSLIST: without the PROCESS privilege only this user's sessions are seen")
	}
	return nil
}

// noCheckpointAge is the Unavailable line of a server that gives no
// checkpoint age (MySQL before 8.0.30, MariaDB before 10.5).
const noCheckpointAge = "checkpoint age: this server gives neither Innodb_checkpoint_age (MariaDB 10.5+) nor " +
	"Innodb_redo_log_current_lsn and Innodb_redo_log_checkpoint_lsn (MySQL 8.0.30+) in SHOW GLOBAL STATUS, " +
	"so whether writes waited on InnoDB's checkpoints (a redo log too small) cannot be seen"

// checkpointsQuery reads InnoDB's count of its checkpoints, which it
// keeps only while the metric is enabled (off by default; MySQL and
// MariaDB alike).
const checkpointsQuery = "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'log_checkpoints' AND ENABLED = 1"

// probeCheckpoints finds out whether InnoDB counts its checkpoints, and
// says how to have them counted when it does not.
func (m *monitor) probeCheckpoints(ctx context.Context) {
	var n float64
	if err := m.conn.QueryRowContext(ctx, checkpointsQuery).Scan(&n); err == nil {
		m.checkpoints = true
		return
	}
	m.unavailable = append(m.unavailable, "checkpoints: InnoDB counts them only with the metric log_checkpoints enabled (off by default): "+
		"SET GLOBAL innodb_monitor_enable = 'log_checkpoints' (or innodb_monitor_enable = log_checkpoints in my.cnf) to have them counted")
}

// probeWaitSummaries checks that performance_schema's wait summary may be
// read and names the wait classes none of whose instruments is enabled
// and timed: their sums stay 0.
func (m *monitor) probeWaitSummaries(ctx context.Context) error {
	if err := m.tryQuery(ctx, waitSummaryQuery); err != nil {
		if !refused(err) {
			return err
		}
		m.unavailable = append(m.unavailable, "performance_schema.events_waits_summary_global_by_event_name: "+serverMessage(err))
		return nil
	}
	m.psWaits = true
	rows, err := m.conn.QueryContext(ctx, instrumentsQuery)
	if err != nil {
		if refused(err) {
			return nil // the sums are read; only the check of the instruments is missing
		}
		return err
	}
	timed := map[string]bool{}
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			rows.Close()
			return err
		}
		timed[class] = n > 0
	}
	if err := rows.Close(); err != nil {
		return err
	}
	var off []string
	for _, c := range waitClasses {
		if !timed[c] {
			off = append(off, c)
		}
	}
	if len(off) > 0 {
		m.unavailable = append(m.unavailable, "performance_schema: no instrument of "+strings.Join(off, ", ")+
			" is enabled and timed (setup_instruments), so their waits read 0")
	}
	return nil
}

// tryQuery runs a query and reads its rows, to see whether it may run.
func (m *monitor) tryQuery(ctx context.Context, query string) error {
	rows, err := m.conn.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}

// Sample reads the status variables and, when performance_schema is on,
// the wait summaries.
func (m *monitor) Sample(ctx context.Context) (driver.Sample, error) {
	now := time.Now()
	status, err := m.readStatus(ctx)
	if err != nil {
		return driver.Sample{}, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	counters, gauges, _ := statusSample(status)
	if m.checkpoints {
		var n float64
		if err := m.conn.QueryRowContext(ctx, checkpointsQuery).Scan(&n); err == nil {
			counters[driver.CounterCheckpoints] = n
		} else if !errors.Is(err, sql.ErrNoRows) && !refused(err) {
			return driver.Sample{}, fmt.Errorf("mysql monitor: %w", classify(err))
		} else {
			// Disabled while the run goes: a count that stopped is no
			// count.
			m.checkpoints = false
		}
	}
	if m.psWaits {
		if err := m.readWaitSummaries(ctx, counters); err != nil {
			if !refused(err) {
				return driver.Sample{}, fmt.Errorf("mysql monitor: %w", classify(err))
			}
			// Taken away while the run goes (a revoked grant): left out
			// from now on, and said once.
			m.psWaits = false
			m.unavailable = append(m.unavailable, "performance_schema.events_waits_summary_global_by_event_name: "+serverMessage(err))
		}
	}
	standardize(counters, gauges, m.pageSize)
	return driver.Sample{Time: now, Counters: counters, Gauges: gauges}, nil
}

// standardize adds the standard counters (driver.CounterLogBytes, …) from
// InnoDB's status variables: the redo log's bytes written, the buffer
// pool's read requests and the reads it had to make from disk (pages), the
// bytes InnoDB read from and wrote to its files, and the commits. Commits
// are Handler_commit, which counts every transaction the storage engines
// committed, a statement in autocommit included; Com_commit counts COMMIT
// statements only, so it stays 0 under a workload of autocommit updates.
func standardize(counters, gauges map[string]float64, pageSize float64) {
	driver.CopyCounter(counters, driver.CounterCommits, "Handler_commit")
	driver.CopyCounter(counters, driver.CounterLogBytes, "Innodb_os_log_written")
	driver.CopyCounter(counters, driver.CounterLogicalReads, "Innodb_buffer_pool_read_requests")
	driver.CopyCounter(counters, driver.CounterPhysicalReads, "Innodb_buffer_pool_reads")
	if requests, ok := counters["Innodb_buffer_pool_read_requests"]; ok {
		if reads, ok := counters["Innodb_buffer_pool_reads"]; ok {
			counters[driver.CounterCacheHits] = requests - reads
		}
	}
	driver.CopyCounter(counters, driver.CounterDeviceReadBytes, "Innodb_data_read")
	driver.CopyCounter(counters, driver.CounterDeviceWriteBytes, "Innodb_data_written")
	if pageSize > 0 {
		gauges[driver.GaugePageBytes] = pageSize
	}
	checkpointAge(gauges)
}

// checkpointAge adds the standard checkpoint age and its maximum from
// MariaDB's own pair or, on MySQL 8.0.30 and later, from the LSNs (the
// log written past the last checkpoint) and the redo log's capacity.
// The LSNs are up to 2^64 as float64s: exact to 2^53 bytes (9 PB of
// log), beyond which their difference may be off by a few kilobytes.
func checkpointAge(gauges map[string]float64) {
	if age, ok := gauges["Innodb_checkpoint_age"]; ok {
		gauges[driver.GaugeCheckpointAge] = age
		if most, ok := gauges["Innodb_checkpoint_max_age"]; ok && most > 0 {
			gauges[driver.GaugeCheckpointAgeMax] = most
		}
		return
	}
	current, ok1 := gauges["Innodb_redo_log_current_lsn"]
	checkpoint, ok2 := gauges["Innodb_redo_log_checkpoint_lsn"]
	if !ok1 || !ok2 || current < checkpoint {
		return
	}
	gauges[driver.GaugeCheckpointAge] = current - checkpoint
	if capacity, ok := gauges["Innodb_redo_log_capacity_resized"]; ok && capacity > 0 {
		gauges[driver.GaugeCheckpointAgeMax] = capacity
	}
}

// readStatus reads the status variables of statusQuery by name.
func (m *monitor) readStatus(ctx context.Context) (map[string]string, error) {
	rows, err := m.conn.QueryContext(ctx, m.statusQuery)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			rows.Close()
			return nil, err
		}
		out[name] = value
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// readWaitSummaries adds each wait class's and waitEvents' total wait
// (SUM_TIMER_WAIT, picoseconds) and count (COUNT_STAR) to counters.
func (m *monitor) readWaitSummaries(ctx context.Context, counters map[string]float64) error {
	rows, err := m.conn.QueryContext(ctx, waitSummaryQuery)
	if err != nil {
		return err
	}
	for _, name := range slices.Concat(waitClasses, waitEvents) {
		counters[sumTimerName(name)] = 0
		counters[countStarName(name)] = 0
	}
	for rows.Next() {
		var name string
		var sum, count float64
		if err := rows.Scan(&name, &sum, &count); err != nil {
			rows.Close()
			return err
		}
		counters[sumTimerName(name)] = sum
		counters[countStarName(name)] = count
	}
	return errors.Join(rows.Err(), rows.Close())
}

// sumTimerName and countStarName name a wait summary's counters by the
// table's columns and the instrument or class.
func sumTimerName(event string) string  { return "SUM_TIMER_WAIT:" + event }
func countStarName(event string) string { return "COUNT_STAR:" + event }

// Waits lists the sessions running a command, the monitor's own left out:
// the Event is the thread's state, Lock:row for a transaction waiting for
// a row lock, "" when the thread has no state.
func (m *monitor) Waits(ctx context.Context) ([]driver.Wait, error) {
	if m.noWaits {
		return nil, nil
	}
	if err := m.readLockWaits(ctx); err != nil {
		return nil, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	rows, err := m.conn.QueryContext(ctx, waitsQuery)
	if err != nil {
		return nil, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	var out []driver.Wait
	for rows.Next() {
		var id int64
		var state string
		if err := rows.Scan(&id, &state); err != nil {
			rows.Close()
			return nil, fmt.Errorf("mysql monitor: %w", classify(err))
		}
		if id == m.id {
			continue
		}
		out = append(out, driver.Wait{Event: waitEvent(state, m.lockWaits[id]), Own: m.db.conns.has(id)})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("mysql monitor: %w", classify(err))
	}
	return out, nil
}

// lockWaitsRefresh is how often Waits reads INNODB_TRX. InnoDB fills the
// table from a cache that it refreshes only when the cache has not been
// read for 100 ms: read more often, it would show the same transactions
// for ever. Between two reads Waits uses the threads the last read found
// waiting, so that a row lock wait is seen up to this late.
const lockWaitsRefresh = 150 * time.Millisecond

// readLockWaits reads the threads waiting for a row lock when the last
// read is older than lockWaitsRefresh.
func (m *monitor) readLockWaits(ctx context.Context) error {
	if m.noLockWaits || time.Since(m.lockWaitsRead) < lockWaitsRefresh {
		return nil
	}
	rows, err := m.conn.QueryContext(ctx, lockWaitsQuery)
	if err != nil {
		return err
	}
	waiting := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		waiting[id] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	m.lockWaits, m.lockWaitsRead = waiting, time.Now()
	return nil
}

// waitEvent names a thread's wait: a row lock wait above all, since the
// state then says only what the statement was doing ("updating").
func waitEvent(state string, lockWait bool) string {
	if lockWait {
		return eventRowLock
	}
	return strings.TrimSpace(state)
}

// LogSizeSetting names the setting that sizes the redo log, which bounds
// the checkpoint age: innodb_log_file_size on MariaDB,
// innodb_redo_log_capacity on MySQL 8.0.30 and later; "" on a server
// that gives no checkpoint age.
func (m *monitor) LogSizeSetting() string { return m.logSetting }

func hasGauge(gauges map[string]float64, name string) bool {
	_, ok := gauges[name]
	return ok
}

// Unavailable lists what the monitor cannot read, one line each.
func (m *monitor) Unavailable() []string {
	return append([]string(nil), m.unavailable...)
}

// Close gives the monitor's connection back to the pool.
func (m *monitor) Close() error {
	return m.conn.Close()
}

// statusQuery reads the status variables of statusCounters and
// statusGauges in one statement.
func statusQuery() string {
	var b strings.Builder
	b.WriteString("SHOW GLOBAL STATUS WHERE Variable_name IN (")
	for i, n := range slices.Concat(statusCounters, statusGauges, checkpointStatus) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + n + "'")
	}
	b.WriteString(")")
	return b.String()
}

// statusSample turns status variables into a sample's counters and gauges
// under their canonical names, and lists the variables the server did not
// have (an alternative present counts for its pair; checkpointStatus is
// never listed). A value that is not a
// number is left out and listed as missing.
func statusSample(status map[string]string) (counters, gauges map[string]float64, missing []string) {
	byLower := make(map[string]string, len(status))
	for name, v := range status {
		byLower[strings.ToLower(name)] = v
	}
	read := func(names []string, into map[string]float64) {
		for _, n := range names {
			v, ok := byLower[strings.ToLower(n)]
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				continue
			}
			into[n] = f
		}
	}
	counters = map[string]float64{}
	gauges = map[string]float64{}
	read(statusCounters, counters)
	read(statusGauges, gauges)
	read(checkpointStatus, gauges)
	for _, n := range statusCounters {
		if _, ok := counters[n]; ok {
			continue
		}
		if alt, ok := statusAlternatives[n]; ok {
			if _, has := counters[alt]; has {
				continue
			}
		}
		missing = append(missing, n)
	}
	for _, n := range statusGauges {
		if _, ok := gauges[n]; !ok {
			missing = append(missing, n)
		}
	}
	return counters, gauges, missing
}

// waitSummaryQuery sums the global wait summary by class (the first three
// parts of the instrument's name) and reads waitEvents on their own.
var waitSummaryQuery = func() string {
	list := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "'" + n + "'"
		}
		return strings.Join(q, ", ")
	}
	return "SELECT SUBSTRING_INDEX(EVENT_NAME, '/', 3) AS name, SUM(SUM_TIMER_WAIT), SUM(COUNT_STAR)" +
		" FROM performance_schema.events_waits_summary_global_by_event_name" +
		" WHERE SUBSTRING_INDEX(EVENT_NAME, '/', 3) IN (" + list(waitClasses) + ")" +
		" GROUP BY name" +
		" UNION ALL SELECT EVENT_NAME, SUM_TIMER_WAIT, COUNT_STAR" +
		" FROM performance_schema.events_waits_summary_global_by_event_name" +
		" WHERE EVENT_NAME IN (" + list(waitEvents) + ")"
}()

// instrumentsQuery counts each wait class's instruments that are enabled
// and timed.
const instrumentsQuery = "SELECT SUBSTRING_INDEX(NAME, '/', 3) AS class, SUM(ENABLED = 'YES' AND TIMED = 'YES')" +
	" FROM performance_schema.setup_instruments WHERE NAME LIKE 'wait/%' GROUP BY class"

// waitsQuery lists the threads running a command with their state.
// 'Daemon' threads are the server's own (the event scheduler).
const waitsQuery = "SELECT ID, COALESCE(STATE, '') FROM information_schema.PROCESSLIST WHERE COMMAND NOT IN ('Sleep', 'Daemon')"

// lockWaitsQuery lists the threads whose InnoDB transaction waits for a
// row lock. It needs the PROCESS privilege.
const lockWaitsQuery = "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"

// processPrivilegeQuery reports whether the user holds PROCESS, without
// which PROCESSLIST shows only the user's own threads.
const processPrivilegeQuery = "SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'PROCESS'"

// refused reports an error the server answered a query with (no
// privilege, no such table or variable), as opposed to a connection that
// failed: the monitor then goes without what the query reads.
func refused(err error) bool {
	var myErr *gomysql.MySQLError
	return errors.As(err, &myErr) && classOfNumber(myErr.Number) != driver.ClassConnLost
}

// serverMessage is the server's own words for a refused query.
func serverMessage(err error) string {
	var myErr *gomysql.MySQLError
	if errors.As(err, &myErr) {
		return fmt.Sprintf("error %d: %s", myErr.Number, myErr.Message)
	}
	return err.Error()
}

// connIDs is the set of server thread ids of the connections a DB's pool
// opened, so that the monitor can tell this run's sessions (and the
// driver's own connections) from other clients'. An id is never taken
// out: a server does not give a thread id twice while it runs, so the id
// of a connection that closed matches nothing, and the set grows only by
// the connections the pool opens.
type connIDs struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

func (c *connIDs) add(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[int64]struct{}{}
	}
	c.ids[id] = struct{}{}
}

// has reports whether a connection of the pool had the thread id.
func (c *connIDs) has(id int64) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ids[id]
	return ok
}

// connector wraps a pool's connector so that each connection's thread id
// is recorded as it opens. It hands back go-sql-driver's own connection,
// unwrapped, so that nothing the sessions do through Raw changes.
func (c *connIDs) connector(inner sqldriver.Connector) sqldriver.Connector {
	return idConnector{Connector: inner, ids: c}
}

// idConnector is connIDs.connector's connector.
type idConnector struct {
	sqldriver.Connector
	ids *connIDs
}

// Connect opens a connection and records its CONNECTION_ID().
func (c idConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	id, err := connectionID(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.ids.add(id)
	return conn, nil
}

// connectionID asks a connection that database/sql does not hold yet for
// its thread id.
func connectionID(ctx context.Context, conn sqldriver.Conn) (int64, error) {
	q, ok := conn.(sqldriver.QueryerContext)
	if !ok {
		return 0, fmt.Errorf("mysql: %T cannot run a query", conn)
	}
	rows, err := q.QueryContext(ctx, "SELECT CONNECTION_ID()", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]sqldriver.Value, 1)
	if err := rows.Next(dest); err != nil {
		if err == io.EOF {
			return 0, errors.New("mysql: SELECT CONNECTION_ID() returned no row")
		}
		return 0, err
	}
	return intValue(dest[0])
}

// intValue reads an integer column (a thread id, a row count) as the text
// or binary protocol hands it.
func intValue(v sqldriver.Value) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case uint64:
		return int64(v), nil
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("mysql: an integer column came back as %T", v)
}

var (
	_ driver.Monitorable = (*DB)(nil)
	_ driver.LogSizer    = (*monitor)(nil)
)
