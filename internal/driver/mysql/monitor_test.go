package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// monitored gives the test a fresh database, an open DB on it (closed when
// the test ends) with a created table of n fields, and an admin pool.
func monitored(t *testing.T, n int) (string, *sql.DB, *DB, driver.Table) {
	t.Helper()
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	db := openDB(t, u)
	tbl := testTable(n)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return u, admin, db, tbl
}

// openDB opens rawURL, closed when the test ends.
func openDB(t *testing.T, rawURL string) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Driver{}.Open(ctx, target(t, rawURL, ""), driver.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db.(*DB)
}

// openSession opens a session on tbl, closed when the test ends.
func openSession(t *testing.T, db *DB, tbl driver.Table) *session {
	t.Helper()
	s, err := db.Session(context.Background(), tbl)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*session)
}

// fields returns n values for a record of key.
func fields(key string, n int) [][]byte {
	v := make([][]byte, n)
	for i := range v {
		v[i] = []byte(fmt.Sprintf("%s-f%d", key, i))
	}
	return v
}

// openMonitor opens the DB's monitor, closed when the test ends.
func openMonitor(t *testing.T, db driver.DB) driver.Monitor {
	t.Helper()
	mdb, ok := db.(driver.Monitorable)
	if !ok {
		t.Fatalf("%T is not driver.Monitorable", db)
	}
	m, err := mdb.Monitor(context.Background())
	if err != nil {
		t.Fatalf("Monitor: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func mustSample(t *testing.T, m driver.Monitor) driver.Sample {
	t.Helper()
	s, err := m.Sample(context.Background())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return s
}

// unavailableMentions reports whether a line of Unavailable names word.
func unavailableMentions(m driver.Monitor, word string) bool {
	return slices.ContainsFunc(m.Unavailable(), func(l string) bool { return strings.Contains(l, word) })
}

func TestMonitorCountersGrowWithWork(t *testing.T) {
	_, _, db, tbl := monitored(t, 3)
	m := openMonitor(t, db)
	s := openSession(t, db, tbl)
	ctx := context.Background()
	if err := s.Insert(ctx, []byte("k1"), fields("k1", 3)); err != nil {
		t.Fatal(err)
	}

	before := mustSample(t, m)
	const updates = 20
	for i := range updates {
		if err := s.Update(ctx, []byte("k1"), []int{0}, [][]byte{[]byte(fmt.Sprintf("value-%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	after := mustSample(t, m)

	if !after.Time.After(before.Time) {
		t.Errorf("sample times %v then %v", before.Time, after.Time)
	}
	for _, name := range []string{"Com_update", "Innodb_os_log_written", "Questions", "Bytes_received"} {
		b, okb := before.Counters[name]
		a, oka := after.Counters[name]
		if !okb || !oka {
			t.Errorf("counter %s missing: before %v, after %v", name, okb, oka)
			continue
		}
		if a <= b {
			t.Errorf("%s did not grow over %d updates: %v then %v", name, updates, b, a)
		}
	}
	if d := after.Counters["Com_update"] - before.Counters["Com_update"]; d < updates {
		t.Errorf("Com_update grew by %v over %d updates", d, updates)
	}
	if after.Gauges["Threads_connected"] < 2 {
		t.Errorf("Threads_connected = %v with the monitor's and a session's connections open", after.Gauges["Threads_connected"])
	}
	// Every variable asked for is in the sample or named in Unavailable.
	for _, name := range append(append([]string(nil), statusCounters...), statusGauges...) {
		_, c := after.Counters[name]
		_, g := after.Gauges[name]
		alt, hasAlt := statusAlternatives[name]
		_, altThere := after.Counters[alt]
		if !c && !g && !(hasAlt && altThere) && !unavailableMentions(m, name) {
			t.Errorf("%s is neither sampled nor named in Unavailable %q", name, m.Unavailable())
		}
	}
}

func TestMonitorPerformanceSchema(t *testing.T) {
	_, admin, db, _ := monitored(t, 1)
	m := openMonitor(t, db)
	var ps string
	if err := admin.QueryRow("SELECT @@GLOBAL.performance_schema").Scan(&ps); err != nil {
		t.Fatal(err)
	}
	on := ps == "1" || strings.EqualFold(ps, "ON")
	s := mustSample(t, m)
	_, summed := s.Counters[sumTimerName("wait/io/file")]
	switch {
	case on && !summed:
		t.Errorf("performance_schema is on but the sample has no wait summaries: %v; Unavailable %q", s.Counters, m.Unavailable())
	case !on && summed:
		t.Errorf("performance_schema is off but the sample has wait summaries")
	case !on && !unavailableMentions(m, "performance_schema is off"):
		t.Errorf("performance_schema is off and Unavailable does not say so: %q", m.Unavailable())
	}
	// The summaries' statements run here even with performance_schema
	// off, whose tables are then empty: their text is checked either way.
	for _, q := range []string{waitSummaryQuery, instrumentsQuery} {
		rows, err := admin.Query(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rows.Close()
	}
	if on {
		for _, name := range append(append([]string(nil), waitClasses...), waitEvents...) {
			if _, ok := s.Counters[countStarName(name)]; !ok {
				t.Errorf("no %s in a sample", countStarName(name))
			}
		}
	}
}

// waitingUntil polls Waits until found accepts what it saw, or fails the
// test after a while.
func waitingUntil(t *testing.T, m driver.Monitor, found func([]driver.Wait) bool) []driver.Wait {
	t.Helper()
	var last []driver.Wait
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		w, err := m.Waits(context.Background())
		if err != nil {
			t.Fatalf("Waits: %v", err)
		}
		if found(w) {
			return w
		}
		last = w
	}
	t.Fatalf("Waits never showed what was looked for; last: %+v", last)
	return nil
}

func TestMonitorWaitsShowOwnRowLockWait(t *testing.T) {
	u, admin, db, tbl := monitored(t, 1)
	m := openMonitor(t, db)
	s := openSession(t, db, tbl)
	ctx := context.Background()
	key := []byte("locked")
	if err := s.Insert(ctx, key, fields("locked", 1)); err != nil {
		t.Fatal(err)
	}

	// A foreign client holds the row...
	holder, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var got string
	if err := tx.QueryRowContext(ctx, "SELECT YCSB_KEY FROM usertable WHERE YCSB_KEY = ? FOR UPDATE", key).Scan(&got); err != nil {
		t.Fatal(err)
	}

	// ...the driver's session and another foreign client wait for it.
	ownDone := make(chan error, 1)
	go func() { ownDone <- s.Update(ctx, key, []int{0}, [][]byte{[]byte("mine")}) }()
	other := testdb.OpenMySQL(t, u)
	otherDone := make(chan error, 1)
	go func() {
		_, err := other.ExecContext(ctx, "UPDATE usertable SET FIELD0 = 'theirs' WHERE YCSB_KEY = ?", key)
		otherDone <- err
	}()

	waits := waitingUntil(t, m, func(w []driver.Wait) bool {
		return slices.Contains(w, driver.Wait{Event: eventRowLock, Own: true}) &&
			slices.Contains(w, driver.Wait{Event: eventRowLock, Own: false})
	})
	t.Logf("waits: %+v; unavailable: %q", waits, m.Unavailable())

	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for name, done := range map[string]chan error{"session": ownDone, "foreign client": otherDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s's update after the lock was let go: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s's update still waits after the lock was let go", name)
		}
	}

	// Idle again: no session of the run is active, and the monitor's own
	// query, which is running while it reads, is not listed. The server
	// sends a statement's answer before it marks the thread idle, so the
	// session, its update answered, can still be listed for a moment
	// (MariaDB: COMMAND Execute, STATE "Writing to net", 1-3 ms; 21 runs
	// in 200 under load): wait for it to go. The monitor's own query runs
	// at every read, so were it listed, no read would come back clean.
	var w []driver.Wait
	own := func(e driver.Wait) bool { return e.Own }
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if w, err = m.Waits(ctx); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(w, own) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an own session is still active 20 s after every one went idle: %+v (the monitor's own?)", w)
		}
	}
}

func TestMonitorClosed(t *testing.T) {
	_, _, db, _ := monitored(t, 1)
	m, err := db.Monitor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sample(context.Background()); err == nil {
		t.Error("Sample on a closed monitor succeeded")
	}
}

// TestMonitorWithoutProcessPrivilege: a user without PROCESS cannot read
// INNODB_TRX; the monitor says so and still lists its own sessions.
func TestMonitorWithoutProcessPrivilege(t *testing.T) {
	u, admin, _, _ := monitored(t, 1)
	db := openDB(t, testdb.MySQLDatabaseUser(t, admin, u, "dbprobe_monitor", "monitor-pw"))
	m := openMonitor(t, db)
	if !unavailableMentions(m, "PROCESS") {
		t.Errorf("Unavailable does not name the missing PROCESS privilege: %q", m.Unavailable())
	}
	mustSample(t, m)
	if _, err := m.Waits(context.Background()); err != nil {
		t.Errorf("Waits: %v", err)
	}
}

func TestStatusSample(t *testing.T) {
	full := map[string]string{}
	for _, n := range statusCounters {
		full[n] = "7"
	}
	for _, n := range statusGauges {
		full[n] = "3"
	}
	without := func(names ...string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			if !slices.Contains(names, k) {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name        string
		status      map[string]string
		wantMissing []string
		counter     string
		want        float64
		gauge       string
		wantGauge   float64
	}{
		{name: "everything", status: full, counter: "Com_update", want: 7, gauge: "Threads_running", wantGauge: 3},
		{name: "one fsync counter is enough", status: without("Innodb_os_log_fsyncs"), counter: "Innodb_data_fsyncs", want: 7},
		{name: "neither fsync counter", status: without("Innodb_os_log_fsyncs", "Innodb_data_fsyncs"),
			wantMissing: []string{"Innodb_os_log_fsyncs", "Innodb_data_fsyncs"}},
		{name: "a gauge missing", status: without("Innodb_row_lock_current_waits"), wantMissing: []string{"Innodb_row_lock_current_waits"}},
		{name: "names in another case", status: map[string]string{"COM_UPDATE": " 12 "}, counter: "Com_update", want: 12},
		{name: "not a number", status: map[string]string{"Com_update": "many"}, counter: "Com_update"},
		{name: "large values", status: map[string]string{"Bytes_sent": "18446744073709551615"}, counter: "Bytes_sent", want: 18446744073709551615},
		// The checkpoint age's variables are one server's or the
		// other's: none is ever missing on its own.
		{name: "no checkpoint variables", status: full, wantMissing: []string{}},
		{name: "a checkpoint variable", status: map[string]string{"Innodb_checkpoint_age": "4096"}, gauge: "Innodb_checkpoint_age", wantGauge: 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counters, gauges, missing := statusSample(tc.status)
			if tc.wantMissing != nil && !slices.Equal(missing, tc.wantMissing) {
				t.Errorf("missing = %q, want %q", missing, tc.wantMissing)
			}
			if tc.counter != "" {
				got, ok := counters[tc.counter]
				if tc.want == 0 && ok {
					t.Errorf("%s = %v, want it left out", tc.counter, got)
				}
				if tc.want != 0 && got != tc.want {
					t.Errorf("%s = %v, want %v", tc.counter, got, tc.want)
				}
				if tc.want == 0 && !slices.Contains(missing, tc.counter) {
					t.Errorf("%s left out but not listed missing: %q", tc.counter, missing)
				}
			}
			if tc.gauge != "" && gauges[tc.gauge] != tc.wantGauge {
				t.Errorf("gauge %s = %v, want %v", tc.gauge, gauges[tc.gauge], tc.wantGauge)
			}
			for n := range gauges {
				if _, both := counters[n]; both {
					t.Errorf("%s is both a counter and a gauge", n)
				}
			}
		})
	}
}

// FuzzStatusSample: whatever the server sends, every variable asked for
// is either sampled or missing, never both, and nothing else is sampled.
func FuzzStatusSample(f *testing.F) {
	f.Add("Com_update", "12", "Threads_running", "x")
	f.Add("innodb_data_fsyncs", "1e3", "Innodb_os_log_fsyncs", "")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		counters, gauges, missing := statusSample(map[string]string{n1: v1, n2: v2})
		for n := range counters {
			if !slices.Contains(statusCounters, n) {
				t.Errorf("sampled counter %q was not asked for", n)
			}
			if slices.Contains(missing, n) {
				t.Errorf("%q both sampled and missing", n)
			}
		}
		for n := range gauges {
			if !slices.Contains(statusGauges, n) && !slices.Contains(checkpointStatus, n) {
				t.Errorf("sampled gauge %q was not asked for", n)
			}
			if slices.Contains(missing, n) {
				t.Errorf("%q both sampled and missing", n)
			}
		}
		if len(counters)+len(gauges) > 2 {
			t.Errorf("two variables gave %d values", len(counters)+len(gauges))
		}
	})
}

func TestWaitEvent(t *testing.T) {
	for _, tc := range []struct {
		state    string
		lockWait bool
		want     string
	}{
		{"", false, ""},
		{"Updating", true, eventRowLock},
		{"Waiting for table metadata lock", false, "Waiting for table metadata lock"},
		{"  Sending data ", false, "Sending data"},
	} {
		if got := waitEvent(tc.state, tc.lockWait); got != tc.want {
			t.Errorf("waitEvent(%q, %v) = %q, want %q", tc.state, tc.lockWait, got, tc.want)
		}
	}
}

func TestIDValue(t *testing.T) {
	for _, tc := range []struct {
		v       any
		want    int64
		wantErr bool
	}{
		{int64(42), 42, false},
		{uint64(43), 43, false},
		{[]byte("44"), 44, false},
		{"45", 45, false},
		{[]byte("x"), 0, true},
		{nil, 0, true},
		{3.5, 0, true},
	} {
		got, err := intValue(tc.v)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("intValue(%#v) = %d, %v; want %d, error %v", tc.v, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestConnIDsRecordsPoolConnections: every connection the DB's pool opens
// is recorded, and a connection of another pool is not.
func TestConnIDsRecordsPoolConnections(t *testing.T) {
	_, admin, db, tbl := monitored(t, 1)
	s := openSession(t, db, tbl)
	if !db.conns.has(s.connID) {
		t.Errorf("the session's connection %d is not recorded", s.connID)
	}
	var foreign int64
	if err := admin.QueryRow("SELECT CONNECTION_ID()").Scan(&foreign); err != nil {
		t.Fatal(err)
	}
	if db.conns.has(foreign) {
		t.Errorf("a connection of another pool (%d) is recorded", foreign)
	}
	var nilIDs *connIDs
	if nilIDs.has(1) {
		t.Error("a nil set has an id")
	}
}

// The standard counters are InnoDB's own under the names every experiment
// reads: log_bytes follows the redo log's position (Innodb_lsn_current,
// within 10% and some blocks: the log is written in 512-byte blocks, a
// partly filled one again at each flush) while rows are written, and the
// cache figures add up.
func TestMonitorStandardCounters(t *testing.T) {
	_, admin, db, tbl := monitored(t, 1)
	m := openMonitor(t, db)
	s := openSession(t, db, tbl)
	ctx := context.Background()
	lsn := func() float64 {
		var name string
		var v float64
		if err := admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(&name, &v); err != nil {
			t.Skipf("no Innodb_lsn_current on this server: %v", err)
		}
		return v
	}
	before, start := mustSample(t, m), lsn()
	keys := make([][]byte, 2000)
	values := make([][][]byte, len(keys))
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key%05d", i))
		values[i] = [][]byte{[]byte(strings.Repeat("v", 100))}
	}
	if err := s.InsertBatch(ctx, keys, values); err != nil {
		t.Fatal(err)
	}
	after, moved := mustSample(t, m), lsn()-start
	logged := after.Counters[driver.CounterLogBytes] - before.Counters[driver.CounterLogBytes]
	if moved < float64(len(keys)*100) || logged < 0.9*moved || logged > 1.1*moved+64<<10 {
		t.Errorf("log_bytes grew %v while the redo log's position moved %v, for %d rows of 100 bytes", logged, moved, len(keys))
	}
	c := after.Counters
	for name, want := range map[string]float64{
		driver.CounterLogBytes:         c["Innodb_os_log_written"],
		driver.CounterLogicalReads:     c["Innodb_buffer_pool_read_requests"],
		driver.CounterPhysicalReads:    c["Innodb_buffer_pool_reads"],
		driver.CounterCacheHits:        c["Innodb_buffer_pool_read_requests"] - c["Innodb_buffer_pool_reads"],
		driver.CounterDeviceReadBytes:  c["Innodb_data_read"],
		driver.CounterDeviceWriteBytes: c["Innodb_data_written"],
	} {
		if got, ok := c[name]; !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	var page float64
	if err := admin.QueryRowContext(ctx, "SELECT @@innodb_page_size").Scan(&page); err != nil {
		t.Fatal(err)
	}
	if after.Gauges[driver.GaugePageBytes] != page {
		t.Errorf("page_bytes = %v, innodb_page_size = %v", after.Gauges[driver.GaugePageBytes], page)
	}
}

// Commits count statements in autocommit: YCSB's updates commit one by
// one without a COMMIT statement, so Com_commit stays put while the
// standard commits (Handler_commit) rise with every update.
func TestMonitorCommitsCountAutocommit(t *testing.T) {
	_, _, db, tbl := monitored(t, 1)
	m := openMonitor(t, db)
	s := openSession(t, db, tbl)
	ctx := context.Background()
	if err := s.Insert(ctx, []byte("k"), fields("k", len(tbl.Fields))); err != nil {
		t.Fatal(err)
	}
	const updates = 50
	before := mustSample(t, m)
	for i := range updates {
		if err := s.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	after := mustSample(t, m)
	delta := func(name string) float64 { return after.Counters[name] - before.Counters[name] }
	if _, ok := after.Counters[driver.CounterCommits]; !ok {
		t.Fatalf("no %s counter in %v", driver.CounterCommits, after.Counters)
	}
	// The server's other sessions (the monitor's own reads commit too)
	// may add some; the updates' must all be there.
	if got := delta(driver.CounterCommits); got < updates {
		t.Errorf("commits rose by %v over %d autocommit updates", got, updates)
	}
	if after.Counters[driver.CounterCommits] != after.Counters["Handler_commit"] {
		t.Errorf("commits %v, Handler_commit %v", after.Counters[driver.CounterCommits], after.Counters["Handler_commit"])
	}
	if got := delta("Com_commit"); got >= updates {
		t.Errorf("Com_commit rose by %v: autocommit statements are not COMMIT statements, so it was not expected to count them", got)
	}
}

// InnoDB's checkpoints are the standard checkpoints counter while its
// metric log_checkpoints is enabled, and Unavailable says how to enable
// it when it is not. The page cleaner is told to flush everything, so
// that checkpoints follow a write within a second or two.
func TestMonitorCheckpoints(t *testing.T) {
	_, admin, db, tbl := monitored(t, 1)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Skipf("%s: %v", q, err)
		}
	}
	var enabled int
	if err := admin.QueryRowContext(ctx, "SELECT ENABLED FROM information_schema.INNODB_METRICS WHERE NAME = 'log_checkpoints'").Scan(&enabled); err != nil {
		t.Skipf("no INNODB_METRICS log_checkpoints: %v", err)
	}
	if enabled == 0 {
		m := openMonitor(t, db)
		if _, ok := mustSample(t, m).Counters[driver.CounterCheckpoints]; ok || !unavailableMentions(m, "innodb_monitor_enable = 'log_checkpoints'") {
			t.Errorf("metric off: counted %v, Unavailable %q", ok, m.Unavailable())
		}
		exec("SET GLOBAL innodb_monitor_enable = 'log_checkpoints'")
		t.Cleanup(func() { admin.ExecContext(ctx, "SET GLOBAL innodb_monitor_disable = 'log_checkpoints'") })
	}
	var pct float64
	if err := admin.QueryRowContext(ctx, "SELECT @@innodb_max_dirty_pages_pct").Scan(&pct); err != nil {
		t.Fatal(err)
	}
	exec("SET GLOBAL innodb_max_dirty_pages_pct = 0")
	t.Cleanup(func() { admin.ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_max_dirty_pages_pct = %g", pct)) })
	m := openMonitor(t, db)
	before, ok := mustSample(t, m).Counters[driver.CounterCheckpoints]
	if !ok {
		t.Fatalf("metric on, no checkpoints counter; Unavailable %q", m.Unavailable())
	}
	s := openSession(t, db, tbl)
	for i := range 200 {
		k := []byte(fmt.Sprintf("cp%04d", i))
		if err := s.Insert(ctx, k, fields(string(k), 1)); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if mustSample(t, m).Counters[driver.CounterCheckpoints] > before {
			return
		}
	}
	t.Errorf("no checkpoint counted within 15 s of 200 inserts with every dirty page to be flushed (from %v)", before)
}

// The standard checkpoint age comes from MariaDB's own pair, or from
// MySQL 8.0.30's LSNs and redo capacity, and is left out when neither
// is there or the LSNs make no sense.
func TestCheckpointAge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   map[string]string
		age, max float64 // -1: left out
	}{
		{"MariaDB", map[string]string{"Innodb_checkpoint_age": "1048576", "Innodb_checkpoint_max_age": "87031808"}, 1048576, 87031808},
		{"MariaDB before its first checkpoint", map[string]string{"Innodb_checkpoint_age": "12", "Innodb_checkpoint_max_age": "0"}, 12, -1},
		{"MySQL 8.0.30", map[string]string{"Innodb_redo_log_current_lsn": "900000000000", "Innodb_redo_log_checkpoint_lsn": "899990000000",
			"Innodb_redo_log_capacity_resized": "104857600"}, 10000000, 104857600},
		// Near 2^63: float64 loses units there, the difference stays
		// about right.
		{"MySQL, large LSNs", map[string]string{"Innodb_redo_log_current_lsn": "9223372036854775807", "Innodb_redo_log_checkpoint_lsn": "9223372036753000000"}, 101775807, -1},
		{"the checkpoint past the current LSN", map[string]string{"Innodb_redo_log_current_lsn": "10", "Innodb_redo_log_checkpoint_lsn": "20"}, -1, -1},
		{"only one LSN", map[string]string{"Innodb_redo_log_current_lsn": "10"}, -1, -1},
		{"MySQL before 8.0.30", map[string]string{"Innodb_os_log_written": "10"}, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counters, gauges, _ := statusSample(tc.status)
			standardize(counters, gauges, 16384)
			for name, want := range map[string]float64{driver.GaugeCheckpointAge: tc.age, driver.GaugeCheckpointAgeMax: tc.max} {
				got, ok := gauges[name]
				switch {
				case want < 0 && ok:
					t.Errorf("%s = %v, want it left out", name, got)
				case want >= 0 && (!ok || got < want-4096 || got > want+4096):
					t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
				}
			}
		})
	}
}

// The checkpoint age is sampled on a server that gives it (MariaDB 10.5+,
// MySQL 8.0.30+), between 0 and its maximum, and equal to the server's
// own figure beside it; a server that gives none says so in Unavailable.
func TestMonitorCheckpointAge(t *testing.T) {
	_, admin, db, tbl := monitored(t, 1)
	m := openMonitor(t, db)
	s := openSession(t, db, tbl)
	ctx := context.Background()
	first := mustSample(t, m)
	if _, ok := first.Gauges[driver.GaugeCheckpointAge]; !ok {
		if !unavailableMentions(m, "checkpoint age: this server gives neither") {
			t.Errorf("no checkpoint age and no word of it in Unavailable %q", m.Unavailable())
		}
		t.Skipf("this server gives no checkpoint age: %q", m.Unavailable())
	}
	for i := range 200 {
		k := []byte(fmt.Sprintf("ca%04d", i))
		if err := s.Insert(ctx, k, fields(string(k), 1)); err != nil {
			t.Fatal(err)
		}
	}
	after := mustSample(t, m)
	g := after.Gauges
	age, most := g[driver.GaugeCheckpointAge], g[driver.GaugeCheckpointAgeMax]
	if age < 0 || most <= 0 || age > most {
		t.Errorf("checkpoint age %v of at most %v", age, most)
	}
	if own, ok := g["Innodb_checkpoint_age"]; ok && own != age {
		t.Errorf("checkpoint_age %v, Innodb_checkpoint_age %v", age, own)
	}
	if unavailableMentions(m, "checkpoint age:") {
		t.Errorf("the age is sampled, yet Unavailable says %q", m.Unavailable())
	}
	// The setting named to make the log larger is one the server has.
	setting := m.(driver.LogSizer).LogSizeSetting()
	var v sql.NullInt64
	if err := admin.QueryRowContext(ctx, "SELECT @@GLOBAL."+setting).Scan(&v); err != nil || v.Int64 <= 0 {
		t.Errorf("LogSizeSetting %q: %v (%v)", setting, v, err)
	}
	t.Logf("checkpoint age %.0f of at most %.0f (%.1f%%)", age, most, 100*age/most)
}
