package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// monitorGoldenDir holds the golden files of the monitor's statements,
// apart from TestGolden's, which owns every .sql file in testdata itself.
var monitorGoldenDir = filepath.Join("testdata", "monitor")

// TestMonitorGolden pins the text of every statement the monitor sends.
func TestMonitorGolden(t *testing.T) {
	files := map[string][]statement{
		"monitor_sample.sql": {
			{"probe", monitorProbeQuery()},
			{"performance counter identity", perfIdentityQuery(false)},
			{"performance counter identity, Azure SQL Database and Managed Instance", perfIdentityQuery(true)},
			{"wait statistics", waitStatsQuery(false)},
			{"wait statistics, Azure SQL Database", waitStatsQuery(true)},
			{"performance counters", perfCountersQuery()},
			{"file statistics", fileStatsQuery()},
			{"resource statistics, Azure SQL Database", resourceStatsQuery()},
		},
		"monitor_waits.sql": {
			{"requests", requestsQuery()},
		},
	}
	if *update {
		if err := os.MkdirAll(monitorGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, stmts := range files {
		t.Run(name, func(t *testing.T) { checkGolden(t, filepath.Join("monitor", name), render(stmts)) })
	}
	if *update {
		return
	}
	entries, err := os.ReadDir(monitorGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok {
			t.Errorf("%s is not written by TestMonitorGolden: remove it", filepath.Join(monitorGoldenDir, e.Name()))
		}
	}
}

// recordedPerfCounters reads an answer of perfCountersQuery kept in
// testdata/answers.
func recordedPerfCounters(t *testing.T, name string) []perfRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	var rows []perfRow
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s: %q has %d fields, want 4", name, line, len(f))
		}
		var v float64
		if _, err := fmt.Sscan(f[3], &v); err != nil {
			t.Fatalf("%s: %q: %v", name, line, err)
		}
		rows = append(rows, perfRow{object: f[0], counter: f[1], instance: f[2], value: v})
	}
	return rows
}

// TestMatchPerfCounters picks the database's counters out of answers of a
// box product (instance names are database names) and of Azure SQL
// Database (they are physical names, GUIDs): the match the previous SQL
// made, instance_name IN (DB_NAME(), N'_Total'), found the database's row
// on the box product only.
func TestMatchPerfCounters(t *testing.T) {
	for _, tc := range []struct {
		file string
		id   perfIdentity
		want map[string]float64
	}{
		{"perf_counters_box.tsv", perfIdentity{name: "bench"},
			map[string]float64{"Batch Requests/sec": 1022341, "Transactions/sec": 5010331, "Transactions/sec:_Total": 5561230}},
		{"perf_counters_azure.tsv", perfIdentity{name: "bench", physical: "3F2504E0-4F89-41D3-9A0C-0305E82C3301"},
			map[string]float64{"Batch Requests/sec": 48213377, "Transactions/sec": 7716234, "Transactions/sec:_Total": 903311452}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rows := recordedPerfCounters(t, tc.file)
			got := matchPerfCounters(rows, tc.id)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("matchPerfCounters = %v, want %v", got, tc.want)
			}
			for _, c := range perfCounters {
				if _, ok := got[c]; !ok {
					t.Errorf("no %s: the monitor would report it unavailable", c)
				}
			}
			// The previous rule, by name only.
			byName := matchPerfCounters(rows, perfIdentity{name: tc.id.name})
			_, found := byName["Transactions/sec"]
			if want := tc.id.physical == ""; found != want {
				t.Errorf("matching by DB_NAME() alone finds the database: %v, want %v", found, want)
			}
		})
	}
	// A physical name followed by an object's own identifier counts when no
	// row carries the name exactly, and never over one that does.
	id := perfIdentity{name: "bench", physical: "3F2504E0-4F89-41D3-9A0C-0305E82C3301"}
	db := func(instance string, v float64) perfRow {
		return perfRow{object: "MSSQL$X:Databases", counter: "Transactions/sec", instance: instance, value: v}
	}
	if got := matchPerfCounters([]perfRow{db("3f2504e0-4f89-41d3-9a0c-0305e82c3301.1", 5)}, id); got["Transactions/sec"] != 5 {
		t.Errorf("suffixed physical name: %v", got)
	}
	rows := []perfRow{db("3f2504e0-4f89-41d3-9a0c-0305e82c3301", 7), db("3f2504e0-4f89-41d3-9a0c-0305e82c3301.1", 5)}
	if got := matchPerfCounters(rows, id); got["Transactions/sec"] != 7 {
		t.Errorf("exact then suffixed: %v, want the exact row's 7", got)
	}
	if got := matchPerfCounters([]perfRow{db("bench2", 1), {object: "MSSQL$X:Database Replica", counter: "Transactions/sec", instance: "bench", value: 9}}, perfIdentity{name: "bench"}); len(got) != 0 {
		t.Errorf("another database or another object matched: %v", got)
	}
}

// The Buffer Manager's page counters are picked out whatever the
// instance's object prefix (these rows are made up for the test: the
// recorded answers above were taken before the monitor asked for them),
// and become the standard counters with the file statistics.
func TestStandardize(t *testing.T) {
	rows := []perfRow{
		{object: "SQLServer:Buffer Manager", counter: "Page lookups/sec", value: 1000},
		{object: "MSSQL$X:Buffer Manager", counter: "Page reads/sec", value: 40},
		{object: "SQLServer:Buffer Node", counter: "Page lookups/sec", instance: "000", value: 7},
		{object: "SQLServer:Databases", counter: "Transactions/sec", instance: "bench", value: 321},
		{object: "SQLServer:Databases", counter: "Transactions/sec", instance: "_Total", value: 9999},
	}
	s := newSample()
	for name, v := range matchPerfCounters(rows, perfIdentity{name: "bench"}) {
		s.Counters[name] = v
	}
	addFileStats(s.Counters, "data", []float64{5, 500, 1, 6, 600, 1})
	addFileStats(s.Counters, "log", []float64{2, 200, 1, 9, 900, 1})
	standardize(s)
	for name, want := range map[string]float64{
		driver.CounterLogBytes:         900,
		driver.CounterDeviceReadBytes:  700,
		driver.CounterDeviceWriteBytes: 600,
		driver.CounterLogicalReads:     1000,
		driver.CounterPhysicalReads:    40,
		driver.CounterCacheHits:        960,
		driver.CounterCommits:          321,
	} {
		if got, ok := s.Counters[name]; !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if s.Gauges[driver.GaugePageBytes] != 8192 {
		t.Errorf("page_bytes = %v", s.Gauges[driver.GaugePageBytes])
	}
	// Without the views, nothing is made up.
	s = newSample()
	standardize(s)
	for _, name := range driver.StandardCounters {
		if v, ok := s.Counters[name]; ok {
			t.Errorf("%s = %v from nothing", name, v)
		}
	}
}

func TestWaitStatsQueryFilters(t *testing.T) {
	box, azure := waitStatsQuery(false), waitStatsQuery(true)
	for _, w := range []string{"SOS_WORK_DISPATCHER", "XE_LIVE_TARGET_TVF"} {
		if !strings.Contains(box, "N'"+w+"'") || !strings.Contains(azure, "N'"+w+"'") {
			t.Errorf("%s is not left out of the total", w)
		}
	}
	if !strings.Contains(azure, "NOT LIKE N'PREEMPTIVE[_]%'") || strings.Contains(box, "PREEMPTIVE[_]%") {
		t.Error("preemptive waits must be left out on Azure SQL Database only")
	}
	for _, w := range []string{"LOG_RATE_GOVERNOR", "POOL_LOG_RATE_GOVERNOR", "INSTANCE_LOG_RATE_GOVERNOR", "HADR_THROTTLE_LOG_RATE_GOVERNOR"} {
		if !slices.Contains(monitoredWaits, w) || slices.Contains(idleWaits, w) {
			t.Errorf("%s is not read as a wait of its own", w)
		}
	}
	if !strings.Contains(resourceStatsQuery(), "xtp_storage_percent") || !strings.Contains(resourceStatsQuery(), "avg_memory_usage_percent") {
		t.Error("sys.dm_db_resource_stats' memory and In-Memory OLTP storage are not read")
	}
	if !strings.Contains(monitorProbeQuery(), "'VIEW SERVER PERFORMANCE STATE'") {
		t.Error("VIEW SERVER PERFORMANCE STATE (SQL Server 2022) is not accepted")
	}
}

func TestMonitorNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{waitStatName("WRITELOG"), "wait_ms:WRITELOG"},
		{waitCountName("LCK_M_X"), "waiting_tasks:LCK_M_X"},
		{fileStatName("log", "num_of_bytes_written"), "log.bytes_written"},
		{fileStatName("data", "io_stall_read_ms"), "data.io_stall_read_ms"},
		{fileStatName("data", "num_of_reads"), "data.reads"},
		{perfCounterName("Batch Requests/sec", ""), "Batch Requests/sec"},
		{perfCounterName("Transactions/sec", "bench"), "Transactions/sec"},
		{perfCounterName("Transactions/sec", "_Total"), "Transactions/sec:_Total"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestWaitStatsFromRows feeds constructed rows of waitStatsQuery through
// the code that names them.
func TestWaitStatsFromRows(t *testing.T) {
	type row struct {
		waitType    string
		ms, tasks   float64
		wantMs      string
		wantMsVal   float64
		wantTasks   string
		wantTaskVal float64
	}
	counters := map[string]float64{}
	zeroWaitStats(counters)
	for _, w := range append(slices.Clone(monitoredWaits), totalWait) {
		if v, ok := counters[waitStatName(w)]; !ok || v != 0 {
			t.Errorf("%s not zeroed: %v, %v", waitStatName(w), v, ok)
		}
		if _, ok := counters[waitCountName(w)]; !ok {
			t.Errorf("%s not zeroed", waitCountName(w))
		}
	}
	if len(counters) != 2*(len(monitoredWaits)+1) {
		t.Errorf("%d counters for %d wait types and the total", len(counters), len(monitoredWaits))
	}
	for _, r := range []row{
		{"WRITELOG", 1500, 30, "wait_ms:WRITELOG", 1500, "waiting_tasks:WRITELOG", 30},
		{"total", 9000, 400, "wait_ms:total", 9000, "waiting_tasks:total", 400},
		{"LCK_M_X   ", 12, 1, "wait_ms:LCK_M_X", 12, "waiting_tasks:LCK_M_X", 1},
	} {
		addWaitStat(counters, r.waitType, r.ms, r.tasks)
		if counters[r.wantMs] != r.wantMsVal || counters[r.wantTasks] != r.wantTaskVal {
			t.Errorf("row %q: %s = %v, %s = %v; want %v, %v", r.waitType, r.wantMs, counters[r.wantMs], r.wantTasks, counters[r.wantTasks], r.wantMsVal, r.wantTaskVal)
		}
	}
	if counters["wait_ms:HADR_SYNC_COMMIT"] != 0 {
		t.Errorf("a wait type without a row is %v, want 0", counters["wait_ms:HADR_SYNC_COMMIT"])
	}
}

func TestFileStatsFromRows(t *testing.T) {
	counters := map[string]float64{}
	zeroFileStats(counters)
	if len(counters) != 2*len(fileStatColumns) {
		t.Errorf("%d file counters, want %d", len(counters), 2*len(fileStatColumns))
	}
	// fileStatColumns' order: reads, bytes read, read stall, writes, bytes
	// written, write stall.
	addFileStats(counters, "log", []float64{1, 512, 3, 40, 81920, 7})
	addFileStats(counters, "data", []float64{100, 819200, 50, 20, 163840, 9})
	for name, want := range map[string]float64{
		"log.reads": 1, "log.bytes_read": 512, "log.io_stall_read_ms": 3,
		"log.writes": 40, "log.bytes_written": 81920, "log.io_stall_write_ms": 7,
		"data.reads": 100, "data.bytes_read": 819200, "data.io_stall_read_ms": 50,
		"data.writes": 20, "data.bytes_written": 163840, "data.io_stall_write_ms": 9,
	} {
		if got, ok := counters[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	addFileStats(counters, "log", []float64{1}) // a short row adds what it has
	if counters["log.reads"] != 2 || counters["log.writes"] != 40 {
		t.Errorf("after a short row: log.reads = %v, log.writes = %v", counters["log.reads"], counters["log.writes"])
	}
}

func TestRefused(t *testing.T) {
	num := func(n int32) error { return mssql.Error{Number: n, Message: fmt.Sprintf("error %d\nsecond line", n)} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"VIEW SERVER STATE denied", num(300), true},
		{"no permission", num(297), true},
		{"no such object", num(208), true},
		{"wrapped", fmt.Errorf("query: %w", num(229)), true},
		{"deadlock", num(1205), false},
		{"busy", num(40501), false},
		{"transport broke", num(10054), false},
		{"fatal", fatalWrapper{inner: mssql.Error{Number: 300}}, false},
		{"network", &net.OpError{Op: "read", Err: errors.New("connection reset")}, false},
		{"context", context.DeadlineExceeded, false},
	} {
		if got := refused(tc.err); got != tc.want {
			t.Errorf("%s: refused = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := serverMessage(num(300)); got != "error 300: error 300" {
		t.Errorf("serverMessage = %q", got)
	}
}

// monitorDB opens the test server through the driver, closed when the
// test ends.
func monitorDB(t *testing.T, rawURL string) *DB {
	t.Helper()
	tg, err := driver.ParseTarget(rawURL, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Driver{}.Open(ctx, tg, driver.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db.(*DB)
}

// monitorAdmin opens the test server with go-mssqldb directly, under
// go-mssqldb's own application name, outside the driver.
func monitorAdmin(t *testing.T, rawURL string) *sql.DB {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("%s is not a URL", testdb.SQLServerURLEnv)
	}
	u.Scheme = "sqlserver"
	q := u.Query()
	q.Set("app name", "dbprobe-monitor-test")
	u.RawQuery = q.Encode()
	a, err := sql.Open("sqlserver", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestMonitorAgainstServer samples a real server (DBPROBE_SQLSERVER_URL):
// the counters grow with work, and a session of the DB waiting for a row
// lock that another client holds is seen as its own, in a lock wait.
func TestMonitorAgainstServer(t *testing.T) {
	u := testdb.SQLServerURL(t)
	db := monitorDB(t, u)
	a := monitorAdmin(t, u)
	ctx := context.Background()
	tbl := testTable(1)
	tbl.Name = fmt.Sprintf("dbprobe_monitor_%d", time.Now().UnixNano())
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { db.DropTable(context.Background(), tbl) })

	m, err := db.Monitor(ctx)
	if err != nil {
		t.Fatalf("Monitor: %v", err)
	}
	defer m.Close()
	t.Logf("unavailable: %q", m.Unavailable())
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := []byte("monitored")
	if err := s.Insert(ctx, key, [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}

	before, err := m.Sample(ctx)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	for i := range 20 {
		if err := s.Update(ctx, key, []int{0}, [][]byte{[]byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := m.Sample(ctx)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	mon := m.(*monitor)
	if mon.has("sys.dm_os_performance_counters") && after.Counters["Batch Requests/sec"] <= before.Counters["Batch Requests/sec"] {
		t.Errorf("Batch Requests/sec did not grow over 20 updates: %v then %v", before.Counters["Batch Requests/sec"], after.Counters["Batch Requests/sec"])
	}
	if mon.has("sys.dm_io_virtual_file_stats") && after.Counters["log.bytes_written"] <= before.Counters["log.bytes_written"] {
		t.Errorf("log.bytes_written did not grow over 20 updates: %v then %v", before.Counters["log.bytes_written"], after.Counters["log.bytes_written"])
	}
	if mon.has("sys.dm_io_virtual_file_stats") && after.Counters[driver.CounterLogBytes] != after.Counters["log.bytes_written"] {
		t.Errorf("log_bytes %v is not log.bytes_written %v", after.Counters[driver.CounterLogBytes], after.Counters["log.bytes_written"])
	}
	if mon.has("sys.dm_os_performance_counters") && after.Counters[driver.CounterLogicalReads] <= before.Counters[driver.CounterLogicalReads] {
		t.Errorf("logical_reads did not grow over 20 updates: %v then %v", before.Counters[driver.CounterLogicalReads], after.Counters[driver.CounterLogicalReads])
	}
	if mon.has(waitStatsView(mon.azure)) {
		if _, ok := after.Counters["wait_ms:WRITELOG"]; !ok {
			t.Errorf("no wait_ms:WRITELOG in %v", after.Counters)
		}
	}

	// Another client holds the row; the session's update waits for it.
	c, err := a.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	table := qualify(db.schema, tbl.Name)
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION; UPDATE "+table+" SET FIELD0 = 0x00 WHERE YCSB_KEY = @p1", key); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Update(ctx, key, []int{0}, [][]byte{[]byte("after the lock")}) }()
	if mon.noRequests || slices.ContainsFunc(m.Unavailable(), func(l string) bool { return strings.Contains(l, "dm_exec_requests") }) {
		t.Log("sys.dm_exec_requests cannot be read: the wait is not looked for")
	} else {
		var last []driver.Wait
		found := false
		for deadline := time.Now().Add(20 * time.Second); !found && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if last, err = m.Waits(ctx); err != nil {
				t.Fatalf("Waits: %v", err)
			}
			found = slices.ContainsFunc(last, func(w driver.Wait) bool { return w.Own && strings.HasPrefix(w.Event, "LCK_M_") })
		}
		if !found {
			t.Errorf("Waits never showed the session in a lock wait; last: %+v", last)
		}
	}
	if _, err := c.ExecContext(ctx, "ROLLBACK TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("update after the lock was let go: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the update still waits after the lock was let go")
	}
}
