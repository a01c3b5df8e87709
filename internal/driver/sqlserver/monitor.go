package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// monitoredWaits are the wait types a sample reads one by one: the log
// flush at commit (WRITELOG, HADR_SYNC_COMMIT with a synchronous
// replica), data page reads, row and page locks, page latch contention on
// the last page of an index, CPU pressure, and the log rate governance of
// Azure SQL, the usual write wall there: the database's, the elastic
// pool's and the instance's log rate limits, and the throttles the
// replicas put on the primary (logRateWaits).
var monitoredWaits = append([]string{
	"WRITELOG", "HADR_SYNC_COMMIT", "PAGEIOLATCH_SH", "PAGEIOLATCH_EX",
	"LCK_M_X", "LCK_M_U", "LCK_M_S", "PAGELATCH_EX", "SOS_SCHEDULER_YIELD",
}, logRateWaits...)

// logRateWaits are Azure SQL's log rate governance waits: a session waits
// on one when its log writes go past the rate the service tier allows.
var logRateWaits = []string{
	"LOG_RATE_GOVERNOR", "POOL_LOG_RATE_GOVERNOR", "INSTANCE_LOG_RATE_GOVERNOR",
	"HADR_THROTTLE_LOG_RATE_GOVERNOR", "HADR_THROTTLE_LOG_RATE_SEND_RECV_QUEUE_SIZE",
	"HADR_THROTTLE_LOG_RATE_LOG_SIZE", "HADR_THROTTLE_LOG_RATE_MISMATCHED_SLO",
}

// idleWaits are wait types that background tasks spend idle, left out of
// the total so that it grows with the work's waits rather than with time.
// Types whose name starts with SLEEP_ are left out as well.
var idleWaits = []string{
	"BROKER_EVENTHANDLER", "BROKER_RECEIVE_WAITFOR", "BROKER_TASK_STOP", "BROKER_TO_FLUSH", "BROKER_TRANSMITTER",
	"CHECKPOINT_QUEUE", "CLR_AUTO_EVENT", "CLR_MANUAL_EVENT", "CLR_SEMAPHORE",
	"DIRTY_PAGE_POLL", "DISPATCHER_QUEUE_SEMAPHORE", "FT_IFTS_SCHEDULER_IDLE_WAIT", "FT_IFTSHC_MUTEX",
	"HADR_CLUSAPI_CALL", "HADR_FILESTREAM_IOMGR_IOCOMPLETION", "HADR_LOGCAPTURE_WAIT", "HADR_NOTIFICATION_DEQUEUE",
	"HADR_TIMER_TASK", "HADR_WORK_QUEUE", "KSOURCE_WAKEUP", "LAZYWRITER_SLEEP", "LOGMGR_QUEUE",
	"MEMORY_ALLOCATION_EXT", "ONDEMAND_TASK_QUEUE", "PARALLEL_REDO_DRAIN_WORKER", "PARALLEL_REDO_WORKER_WAIT_WORK",
	"PREEMPTIVE_XE_GETTARGETSTATE", "PWAIT_ALL_COMPONENTS_INITIALIZED", "PWAIT_DIRECTLOGCONSUMER_GETNEXT",
	"QDS_ASYNC_QUEUE", "QDS_CLEANUP_STALE_QUERIES_TASK_MAIN_LOOP_SLEEP", "QDS_PERSIST_TASK_MAIN_LOOP_SLEEP",
	"QDS_SHUTDOWN_QUEUE", "REDO_THREAD_PENDING_WORK", "REQUEST_FOR_DEADLOCK_SEARCH", "RESOURCE_QUEUE",
	"SERVER_IDLE_CHECK", "SNI_HTTP_ACCEPT", "SP_SERVER_DIAGNOSTICS_SLEEP", "SQLTRACE_BUFFER_FLUSH",
	"SQLTRACE_INCREMENTAL_FLUSH_SLEEP", "SQLTRACE_WAIT_ENTRIES", "WAIT_FOR_RESULTS", "WAITFOR",
	"WAITFOR_TASKSHUTDOWN", "WAIT_XTP_RECOVERY", "WAIT_XTP_HOST_WAIT", "WAIT_XTP_OFFLINE_CKPT_NEW_LOG",
	"WAIT_XTP_CKPT_CLOSE", "XE_DISPATCHER_JOIN", "XE_DISPATCHER_WAIT", "XE_TIMER_EVENT",
	// Background tasks of Azure SQL (and of recent SQL Server releases)
	// that sit idle: the work dispatcher's pool, the live Extended Events
	// targets Azure's own telemetry reads, buffer managers, the
	// persistent version store's preallocator.
	"SOS_WORK_DISPATCHER", "XE_LIVE_TARGET_TVF", "XE_BUFFERMGR_ALLPROCESSED_EVENT",
	"RESERVED_MEMORY_ALLOCATION_EXT", "PVS_PREALLOCATE", "PWAIT_EXTENSIBILITY_CLEANUP_TASK",
}

// azureIdleWaitPrefix names the preemptive waits, left out of the total on
// Azure SQL Database only: there they are the service's own calls out of
// SQL Server's scheduler (HTTP, the OS, telemetry), which dwarf the
// database's work; on a box product a user session's preemptive wait (a
// file growth being zeroed, a flush) is real and stays counted.
const azureIdleWaitPrefix = "PREEMPTIVE[_]%"

// totalWait is the name under which the wait statistics' total is kept.
const totalWait = "total"

// fileStatColumns are the columns of sys.dm_io_virtual_file_stats a
// sample sums over the database's data files and over its log files.
var fileStatColumns = []string{
	"num_of_reads", "num_of_bytes_read", "io_stall_read_ms",
	"num_of_writes", "num_of_bytes_written", "io_stall_write_ms",
}

// perfCounters are the counters of sys.dm_os_performance_counters a
// sample reads. Their names end in /sec, but the view keeps them as
// running totals (cntr_type 272696576): the caller's deltas are the rates.
var perfCounters = []string{"Batch Requests/sec", "Transactions/sec", "Transactions/sec:_Total"}

// bufferCounters are the Buffer Manager's counters of the pages asked of
// the buffer pool and of those it had to read from disk: the instance's,
// as SQL Server keeps no such count per database. They give the standard
// logical and physical reads (standardize).
var bufferCounters = []string{"Page lookups/sec", "Page reads/sec"}

// azureGauges are the columns of sys.dm_db_resource_stats' latest row:
// the share of the service tier's limits the database used in its last
// 15 seconds, memory included (buffer pool and In-Memory OLTP), and the
// share of its In-Memory OLTP storage quota in use, whose end fails a
// memory-optimized load with 41823.
var azureGauges = []string{"avg_cpu_percent", "avg_data_io_percent", "avg_log_write_percent", "avg_memory_usage_percent", "xtp_storage_percent"}

// engineEditionAzureSQLDatabase and engineEditionManagedInstance are
// SERVERPROPERTY('EngineEdition') of an Azure SQL Database and of an Azure
// SQL Managed Instance.
const (
	engineEditionAzureSQLDatabase = 5
	engineEditionManagedInstance  = 8
)

// waitStatsView is where the wait statistics are: the server's, or on
// Azure SQL Database the database's (which needs VIEW DATABASE STATE
// rather than VIEW SERVER STATE).
func waitStatsView(azure bool) string {
	if azure {
		return "sys.dm_db_wait_stats"
	}
	return "sys.dm_os_wait_stats"
}

// sqlList writes names as a list of N'…' literals.
func sqlList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "N'" + strings.ReplaceAll(n, "'", "''") + "'"
	}
	return strings.Join(q, ", ")
}

// monitorProbeQuery reads the engine edition, the monitor's own session id
// and whether the login may see the server's (or on Azure SQL Database,
// the database's) state. SQL Server 2022 split VIEW SERVER STATE: VIEW
// SERVER PERFORMANCE STATE is enough for the views the monitor reads, and
// HAS_PERMS_BY_NAME is NULL for a permission an older server does not know.
func monitorProbeQuery() string {
	return "SELECT CAST(SERVERPROPERTY('EngineEdition') AS int), @@SPID,\n" +
		"  CASE WHEN ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE'), 0) = 1\n" +
		"    OR ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER PERFORMANCE STATE'), 0) = 1 THEN 1 ELSE 0 END,\n" +
		"  ISNULL(HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'VIEW DATABASE STATE'), 0)"
}

// perfIdentityQuery reads what names the database in
// sys.dm_os_performance_counters: its name, and on Azure SQL Database and
// Managed Instance its physical name, a GUID, which is what the
// per-database counters carry there (sys.databases has the column on
// those services only).
func perfIdentityQuery(cloud bool) string {
	if !cloud {
		return "SELECT DB_NAME(), N''"
	}
	return "SELECT DB_NAME(), ISNULL((SELECT CAST(physical_database_name AS nvarchar(128)) FROM sys.databases WHERE name = DB_NAME()), N'')"
}

// waitStatsQuery reads wait_time_ms and waiting_tasks_count of each of
// monitoredWaits, and their sums over every wait type but the idle ones
// as the total.
func waitStatsQuery(azure bool) string {
	view := waitStatsView(azure)
	preemptive := ""
	if azure {
		preemptive = "  AND wait_type NOT LIKE N'" + azureIdleWaitPrefix + "'\n"
	}
	return "SELECT wait_type, CAST(wait_time_ms AS float), CAST(waiting_tasks_count AS float)\n" +
		"FROM " + view + "\n" +
		"WHERE wait_type IN (" + sqlList(monitoredWaits) + ")\n" +
		"UNION ALL\n" +
		"SELECT N'" + totalWait + "', CAST(ISNULL(SUM(wait_time_ms), 0) AS float), CAST(ISNULL(SUM(waiting_tasks_count), 0) AS float)\n" +
		"FROM " + view + "\n" +
		"WHERE wait_type NOT LIKE N'SLEEP[_]%'\n" + preemptive +
		"  AND wait_type NOT IN (" + sqlList(idleWaits) + ")"
}

// perfCountersQuery reads every row of Batch Requests/sec,
// Transactions/sec and the Buffer Manager's page lookups and reads;
// matchPerfCounters picks the server's, the database's and the _Total
// ones. The match is made here rather than in SQL: the
// database's instance name is DB_NAME() on a box product but its physical
// name on Azure (perfIdentityQuery), and kept in Go it is tested on
// recorded answers of both.
func perfCountersQuery() string {
	return "SELECT RTRIM(object_name), RTRIM(counter_name), RTRIM(instance_name), CAST(cntr_value AS float)\n" +
		"FROM sys.dm_os_performance_counters\n" +
		"WHERE counter_name IN (N'Batch Requests/sec', N'Transactions/sec', N'Page lookups/sec', N'Page reads/sec')"
}

// perfIdentity is what names the database in the per-database counters.
type perfIdentity struct {
	name     string // DB_NAME()
	physical string // sys.databases.physical_database_name on Azure, else ""
}

// matches reports whether a counter's instance name is the database: its
// name or its physical name (exact), or its physical name followed by an
// identifier of the object's own (prefix), which some objects append on
// Azure. Names compare without regard to case, as SQL Server's do.
func (id perfIdentity) matches(instance string) (exact, prefix bool) {
	if strings.EqualFold(instance, id.name) || (id.physical != "" && strings.EqualFold(instance, id.physical)) {
		return true, false
	}
	p := id.physical
	return false, p != "" && len(instance) > len(p) && strings.EqualFold(instance[:len(p)], p)
}

// perfRow is one row of perfCountersQuery.
type perfRow struct {
	object, counter, instance string
	value                     float64
}

// matchPerfCounters names the rows a sample keeps: Batch Requests/sec of
// SQL Statistics, Page lookups/sec and Page reads/sec of the Buffer
// Manager, Transactions/sec of the database, and of _Total. The
// database's row is the one its name matches exactly, or failing that the
// one its physical name begins.
func matchPerfCounters(rows []perfRow, id perfIdentity) map[string]float64 {
	out := map[string]float64{}
	exactFound := false
	for _, r := range rows {
		object, counter, instance := strings.TrimSpace(r.object), strings.TrimSpace(r.counter), strings.TrimSpace(r.instance)
		switch {
		case counter == "Batch Requests/sec" && strings.HasSuffix(object, ":SQL Statistics"):
			out[counter] = r.value
		case (counter == "Page lookups/sec" || counter == "Page reads/sec") && strings.HasSuffix(object, ":Buffer Manager"):
			out[counter] = r.value
		case counter != "Transactions/sec" || !strings.HasSuffix(object, ":Databases"):
		case instance == "_Total":
			out[perfCounterName(counter, instance)] = r.value
		default:
			exact, prefix := id.matches(instance)
			if exact || (prefix && !exactFound) {
				out[counter] = r.value
				exactFound = exactFound || exact
			}
		}
	}
	return out
}

// fileStatsQuery sums fileStatColumns over the database's log files and
// over its other files (data, and the memory-optimized filegroup's).
func fileStatsQuery() string {
	kind := "CASE WHEN f.type = 1 THEN N'log' ELSE N'data' END"
	var b strings.Builder
	b.WriteString("SELECT " + kind)
	for _, c := range fileStatColumns {
		b.WriteString(",\n  CAST(SUM(s." + c + ") AS float)")
	}
	b.WriteString("\nFROM sys.dm_io_virtual_file_stats(DB_ID(), NULL) AS s\n")
	b.WriteString("JOIN sys.database_files AS f ON f.file_id = s.file_id\n")
	b.WriteString("GROUP BY " + kind)
	return b.String()
}

// resourceStatsQuery reads the latest row of sys.dm_db_resource_stats
// (Azure SQL Database only).
func resourceStatsQuery() string {
	cols := make([]string, len(azureGauges))
	for i, c := range azureGauges {
		cols[i] = "CAST(" + c + " AS float)"
	}
	return "SELECT TOP (1) " + strings.Join(cols, ", ") + "\n" +
		"FROM sys.dm_db_resource_stats\n" +
		"ORDER BY end_time DESC"
}

// requestsQuery lists the user sessions' requests but the monitor's own,
// with their wait type and whether they are this process's: the same
// client process id (@pid), workstation and application name as the
// monitor's own connection, which the DB's connector opened as it opens
// every session's.
func requestsQuery() string {
	return "SELECT ISNULL(r.wait_type, N''),\n" +
		"  CASE WHEN s.host_process_id = @pid AND s.host_name = HOST_NAME() AND s.program_name = APP_NAME()\n" +
		"    THEN CAST(1 AS bit) ELSE CAST(0 AS bit) END\n" +
		"FROM sys.dm_exec_requests AS r\n" +
		"JOIN sys.dm_exec_sessions AS s ON s.session_id = r.session_id\n" +
		"WHERE s.is_user_process = 1 AND r.session_id <> @@SPID"
}

// waitStatName and waitCountName name a wait type's counters.
func waitStatName(waitType string) string  { return "wait_ms:" + waitType }
func waitCountName(waitType string) string { return "waiting_tasks:" + waitType }

// fileStatName names a file statistic of the data or log files, as
// "log.bytes_written" or "data.io_stall_read_ms".
func fileStatName(kind, column string) string {
	return kind + "." + strings.TrimPrefix(column, "num_of_")
}

// perfCounterName names a performance counter: _Total's gets a suffix,
// the database's and the server-wide ones keep their own name.
func perfCounterName(counter, instance string) string {
	if instance == "_Total" {
		return counter + ":_Total"
	}
	return counter
}

// zeroWaitStats puts every wait counter a sample carries at 0, so that a
// wait type the server has not listed yet (HADR_SYNC_COMMIT without an
// availability group) has the same names in every sample.
func zeroWaitStats(counters map[string]float64) {
	for _, w := range append(append([]string(nil), monitoredWaits...), totalWait) {
		counters[waitStatName(w)] = 0
		counters[waitCountName(w)] = 0
	}
}

// zeroFileStats puts every file statistic at 0, for a database without
// files of a kind.
func zeroFileStats(counters map[string]float64) {
	for _, kind := range []string{"data", "log"} {
		for _, c := range fileStatColumns {
			counters[fileStatName(kind, c)] = 0
		}
	}
}

// Monitor opens a monitor on a connection of its own, in a pool of one
// beside the DB's. It finds out at once what it can read: the engine
// edition, and which views the login may query.
func (db *DB) Monitor(ctx context.Context) (dbdriver.Monitor, error) {
	pool := sql.OpenDB(db.connector)
	pool.SetMaxOpenConns(1)
	c, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqlserver monitor: %w", classify(err))
	}
	m := &monitor{pool: pool, conn: c, pid: os.Getpid()}
	if err := m.probe(ctx); err != nil {
		m.Close()
		return nil, fmt.Errorf("sqlserver monitor: %w", classify(err))
	}
	return m, nil
}

// monitor samples a SQL Server database from one connection.
type monitor struct {
	pool *sql.DB
	conn *sql.Conn
	pid  int // this process's id, which go-mssqldb sends at login

	azure bool
	id    perfIdentity // how the performance counters name the database
	// parts are the queries of a sample the login may run, each with how
	// its rows go into a sample.
	parts       []samplePart
	noRequests  bool // sys.dm_exec_requests may not be read
	unavailable []string
}

// samplePart is one query of a sample: what it is called in Unavailable,
// its text and what takes its rows.
type samplePart struct {
	what  string
	query string
	read  func(rows *sql.Rows, s *dbdriver.Sample) error
}

// probe reads the edition and the monitor's session, and runs each
// query once, so that Unavailable is complete before the first sample.
func (m *monitor) probe(ctx context.Context) error {
	var edition, spid, serverState, databaseState int
	if err := m.conn.QueryRowContext(ctx, monitorProbeQuery()).Scan(&edition, &spid, &serverState, &databaseState); err != nil {
		return err
	}
	m.azure = edition == engineEditionAzureSQLDatabase
	cloud := m.azure || edition == engineEditionManagedInstance
	err := m.conn.QueryRowContext(ctx, perfIdentityQuery(cloud)).Scan(&m.id.name, &m.id.physical)
	if err != nil && cloud && refused(err) {
		// A service without the column: the name is all there is.
		err = m.conn.QueryRowContext(ctx, perfIdentityQuery(false)).Scan(&m.id.name, &m.id.physical)
	}
	if err != nil {
		return err
	}
	candidates := []samplePart{
		{waitStatsView(m.azure), waitStatsQuery(m.azure), readWaitStats},
		{"sys.dm_os_performance_counters", perfCountersQuery(), m.readPerfCounters},
		{"sys.dm_io_virtual_file_stats", fileStatsQuery(), readFileStats},
	}
	if m.azure {
		candidates = append(candidates, samplePart{"sys.dm_db_resource_stats", resourceStatsQuery(), readResourceStats})
	} else {
		m.unavailable = append(m.unavailable, "sys.dm_db_resource_stats: Azure SQL Database only (no CPU, data I/O and log write percentages)")
	}
	first := newSample()
	for _, p := range candidates {
		err := m.run(ctx, p, &first)
		switch {
		case err == nil:
			m.parts = append(m.parts, p)
		case refused(err):
			m.unavailable = append(m.unavailable, p.what+": "+serverMessage(err))
		default:
			return err
		}
	}
	if m.has("sys.dm_os_performance_counters") {
		for _, c := range append(append([]string(nil), perfCounters...), bufferCounters...) {
			if _, ok := first.Counters[c]; !ok {
				m.unavailable = append(m.unavailable, "sys.dm_os_performance_counters: no "+c+" here")
			}
		}
	}

	if _, err := m.waits(ctx); err != nil {
		if !refused(err) {
			return err
		}
		m.unavailable = append(m.unavailable, "sys.dm_exec_requests: "+serverMessage(err)+"; no waits")
		m.noRequests = true
	} else if (m.azure && databaseState == 0) || (!m.azure && serverState == 0) {
		perm := "VIEW SERVER STATE (or VIEW SERVER PERFORMANCE STATE, SQL Server 2022)"
		if m.azure {
			perm = "VIEW DATABASE STATE"
		}
		m.unavailable = append(m.unavailable, "sys.dm_exec_requests: without "+perm+" only the monitor's own session is seen, so no waits are seen")
	}
	return nil
}

// has reports whether a sample reads the part called what.
func (m *monitor) has(what string) bool {
	for _, p := range m.parts {
		if p.what == what {
			return true
		}
	}
	return false
}

func newSample() dbdriver.Sample {
	return dbdriver.Sample{Counters: map[string]float64{}, Gauges: map[string]float64{}}
}

// run runs one part of a sample into s.
func (m *monitor) run(ctx context.Context, p samplePart, s *dbdriver.Sample) error {
	rows, err := m.conn.QueryContext(ctx, p.query)
	if err != nil {
		return err
	}
	err = p.read(rows, s)
	return errors.Join(err, rows.Err(), rows.Close())
}

// Sample reads the wait statistics, the performance counters, the
// database's file statistics and, on Azure SQL Database, its resource
// use.
func (m *monitor) Sample(ctx context.Context) (dbdriver.Sample, error) {
	s := newSample()
	s.Time = time.Now()
	kept := m.parts[:0:0]
	for _, p := range m.parts {
		err := m.run(ctx, p, &s)
		switch {
		case err == nil:
			kept = append(kept, p)
		case refused(err):
			// Taken away while the run goes (a revoked permission): left
			// out from now on, and said once.
			m.unavailable = append(m.unavailable, p.what+": "+serverMessage(err))
		default:
			return dbdriver.Sample{}, fmt.Errorf("sqlserver monitor: %w", classify(err))
		}
	}
	m.parts = kept
	standardize(s)
	return s, nil
}

// pageBytes is SQL Server's page size, fixed at 8 KB.
const pageBytes = 8192

// standardize adds the standard counters (driver.CounterLogBytes, …) from
// the database's file statistics (the log files' bytes written; the bytes
// read from all its files, written to its data files) and the Buffer
// Manager's page lookups and reads, which are the instance's.
func standardize(s dbdriver.Sample) {
	c := s.Counters
	dbdriver.CopyCounter(c, dbdriver.CounterLogBytes, fileStatName("log", "num_of_bytes_written"))
	if v, ok := dbdriver.SumCounters(c, fileStatName("data", "num_of_bytes_read"), fileStatName("log", "num_of_bytes_read")); ok {
		c[dbdriver.CounterDeviceReadBytes] = v
	}
	dbdriver.CopyCounter(c, dbdriver.CounterDeviceWriteBytes, fileStatName("data", "num_of_bytes_written"))
	dbdriver.CopyCounter(c, dbdriver.CounterLogicalReads, "Page lookups/sec")
	dbdriver.CopyCounter(c, dbdriver.CounterCommits, "Transactions/sec")
	dbdriver.CopyCounter(c, dbdriver.CounterPhysicalReads, "Page reads/sec")
	if lookups, ok := c["Page lookups/sec"]; ok {
		if reads, ok := c["Page reads/sec"]; ok {
			c[dbdriver.CounterCacheHits] = lookups - reads
		}
	}
	s.Gauges[dbdriver.GaugePageBytes] = pageBytes
}

// readWaitStats takes waitStatsQuery's rows.
func readWaitStats(rows *sql.Rows, s *dbdriver.Sample) error {
	zeroWaitStats(s.Counters)
	for rows.Next() {
		var waitType string
		var ms, tasks float64
		if err := rows.Scan(&waitType, &ms, &tasks); err != nil {
			return err
		}
		addWaitStat(s.Counters, waitType, ms, tasks)
	}
	return nil
}

// addWaitStat adds one wait type's row. dm_os_wait_stats lists each type
// once; dm_db_wait_stats too, but summing keeps a second row from
// hiding the first.
func addWaitStat(counters map[string]float64, waitType string, ms, tasks float64) {
	waitType = strings.TrimSpace(waitType)
	counters[waitStatName(waitType)] += ms
	counters[waitCountName(waitType)] += tasks
}

// readPerfCounters takes perfCountersQuery's rows, the database's matched
// by the monitor's identity.
func (m *monitor) readPerfCounters(rows *sql.Rows, s *dbdriver.Sample) error {
	var all []perfRow
	for rows.Next() {
		var r perfRow
		if err := rows.Scan(&r.object, &r.counter, &r.instance, &r.value); err != nil {
			return err
		}
		all = append(all, r)
	}
	for name, v := range matchPerfCounters(all, m.id) {
		s.Counters[name] = v
	}
	return nil
}

// readFileStats takes fileStatsQuery's rows.
func readFileStats(rows *sql.Rows, s *dbdriver.Sample) error {
	zeroFileStats(s.Counters)
	values := make([]float64, len(fileStatColumns))
	dest := make([]any, 1+len(values))
	var kind string
	dest[0] = &kind
	for i := range values {
		dest[1+i] = &values[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		addFileStats(s.Counters, kind, values)
	}
	return nil
}

// addFileStats adds one kind of file's sums, in fileStatColumns' order.
func addFileStats(counters map[string]float64, kind string, values []float64) {
	for i, c := range fileStatColumns {
		if i < len(values) {
			counters[fileStatName(kind, c)] += values[i]
		}
	}
}

// readResourceStats takes resourceStatsQuery's row, when there is one
// (a database that has just started has none yet).
func readResourceStats(rows *sql.Rows, s *dbdriver.Sample) error {
	values := make([]float64, len(azureGauges))
	dest := make([]any, len(values))
	for i := range values {
		dest[i] = &values[i]
	}
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, g := range azureGauges {
			s.Gauges[g] = values[i]
		}
	}
	return nil
}

// Waits lists the user sessions' requests, the monitor's own left out:
// their wait type, "" when running.
func (m *monitor) Waits(ctx context.Context) ([]dbdriver.Wait, error) {
	if m.noRequests {
		return nil, nil
	}
	w, err := m.waits(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlserver monitor: %w", classify(err))
	}
	return w, nil
}

// waits runs requestsQuery.
func (m *monitor) waits(ctx context.Context) ([]dbdriver.Wait, error) {
	rows, err := m.conn.QueryContext(ctx, requestsQuery(), sql.Named("pid", m.pid))
	if err != nil {
		return nil, err
	}
	var out []dbdriver.Wait
	for rows.Next() {
		var waitType string
		var own bool
		if err := rows.Scan(&waitType, &own); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, dbdriver.Wait{Event: strings.TrimSpace(waitType), Own: own})
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// Unavailable lists what the monitor cannot read, one line each.
func (m *monitor) Unavailable() []string {
	return append([]string(nil), m.unavailable...)
}

// Close releases the monitor's connection and its pool.
func (m *monitor) Close() error {
	return errors.Join(m.conn.Close(), m.pool.Close())
}

// refused reports an error the server answered a query with (no
// permission, no such view) rather than a connection that failed or a
// busy server: the monitor then goes without what the query reads. A
// refused permission (229) is fatal to a run's operations, and a refusal
// here alike.
func refused(err error) bool {
	var fatal mssql.ServerError
	if errors.As(err, &fatal) {
		return false
	}
	var e mssql.Error
	if !errors.As(err, &e) {
		return false
	}
	c := classOfNumber(significantNumber(e))
	return c == dbdriver.ClassOther || c == dbdriver.ClassFatal
}

// serverMessage is the server's own words for a refused query.
func serverMessage(err error) string {
	var e mssql.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("error %d: %s", e.Number, firstLine(e.Message))
	}
	return firstLine(err.Error())
}

var _ dbdriver.Monitorable = (*DB)(nil)
