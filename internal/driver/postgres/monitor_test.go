package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

func TestPlanQueries(t *testing.T) {
	hasLine := func(lines []string, part string) bool {
		return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
	}
	views := func(qs []statQuery) []string {
		var v []string
		for _, q := range qs {
			v = append(v, q.view)
		}
		return v
	}
	cases := []struct {
		name      string
		facts     serverFacts
		views     []string
		inSQL     []string // text some query must hold
		notInSQL  []string // text no query may hold
		lines     []string // parts of Unavailable lines
		noLineFor []string
	}{
		{
			name:     "13: no pg_stat_wal",
			facts:    serverFacts{versionNum: 130011, allStats: true},
			views:    []string{"pg_stat_database", "pg_stat_activity", "pg_stat_bgwriter"},
			inSQL:    []string{"checkpoints_timed::float8", "buffers_backend::float8"},
			notInSQL: []string{"pg_stat_wal"},
			lines:    []string{"pg_stat_wal: needs PostgreSQL 14 (the server is 13)"},
		},
		{
			name:      "9.6 names its version as major.minor",
			facts:     serverFacts{versionNum: 90624, allStats: true},
			views:     []string{"pg_stat_database", "pg_stat_activity", "pg_stat_bgwriter"},
			lines:     []string{"(the server is 9.6)"},
			noLineFor: []string{"pg_read_all_stats"},
		},
		{
			name:     "15, track_wal_io_timing off",
			facts:    serverFacts{versionNum: 150004, walTiming: "off", allStats: true},
			views:    []string{"pg_stat_database", "pg_stat_activity", "pg_stat_wal", "pg_stat_bgwriter"},
			inSQL:    []string{"wal_bytes::float8", "wal_sync::float8", "checkpoint_write_time::float8"},
			notInSQL: []string{"wal_sync_time", "wal_write_time", "pg_stat_checkpointer"},
			lines:    []string{"track_wal_io_timing is off"},
		},
		{
			name:      "15, track_wal_io_timing on",
			facts:     serverFacts{versionNum: 150004, walTiming: "on", allStats: true},
			views:     []string{"pg_stat_database", "pg_stat_activity", "pg_stat_wal", "pg_stat_bgwriter"},
			inSQL:     []string{"wal_sync_time::float8", "wal_write_time::float8"},
			noLineFor: []string{"track_wal_io_timing", "pg_stat_wal"},
		},
		{
			name:     "17: pg_stat_checkpointer",
			facts:    serverFacts{versionNum: 170002, walTiming: "on", allStats: true},
			views:    []string{"pg_stat_database", "pg_stat_activity", "pg_stat_wal", "pg_stat_bgwriter", "pg_stat_checkpointer"},
			inSQL:    []string{"num_timed::float8", "buffers_written::float8", "wal_sync_time::float8"},
			notInSQL: []string{"checkpoints_timed", "buffers_backend"},
			lines:    []string{"buffers_backend and buffers_backend_fsync moved to pg_stat_io"},
		},
		{
			name:     "18: no WAL writes or syncs in pg_stat_wal",
			facts:    serverFacts{versionNum: 180000, allStats: true},
			views:    []string{"pg_stat_database", "pg_stat_activity", "pg_stat_wal", "pg_stat_bgwriter", "pg_stat_checkpointer"},
			inSQL:    []string{"wal_bytes::float8"},
			notInSQL: []string{"wal_sync", "wal_write"},
			lines:    []string{"wal_write, wal_sync and their times moved to pg_stat_io in PostgreSQL 18"},
		},
		{
			name:  "without pg_read_all_stats",
			facts: serverFacts{versionNum: 150004, walTiming: "on"},
			views: []string{"pg_stat_database", "pg_stat_activity", "pg_stat_wal", "pg_stat_bgwriter"},
			lines: []string{"grant it pg_read_all_stats"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			qs, lines := planQueries(tc.facts)
			if got := views(qs); !slices.Equal(got, tc.views) {
				t.Errorf("views %v, want %v", got, tc.views)
			}
			var all strings.Builder
			for _, q := range qs {
				all.WriteString(q.sql + "\n")
			}
			for _, s := range tc.inSQL {
				if !strings.Contains(all.String(), s) {
					t.Errorf("no query holds %q:\n%s", s, all.String())
				}
			}
			for _, s := range tc.notInSQL {
				if strings.Contains(all.String(), s) {
					t.Errorf("a query holds %q:\n%s", s, all.String())
				}
			}
			for _, l := range tc.lines {
				if !hasLine(lines, l) {
					t.Errorf("Unavailable %q has no line with %q", lines, l)
				}
			}
			for _, l := range tc.noLineFor {
				if hasLine(lines, l) {
					t.Errorf("Unavailable %q has a line with %q", lines, l)
				}
			}
		})
	}
}

// monitorSetup opens a DB on a fresh database, creates a one-field table
// and opens a monitor; everything is closed when the test ends.
func monitorSetup(t *testing.T) (string, *DB, driver.Table, driver.Monitor) {
	t.Helper()
	u := testdb.FreshPostgresDatabase(t)
	target, err := driver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 2})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	db := d.(*DB)
	t.Cleanup(func() { db.Close() })
	tbl := driver.Table{Name: "monitored", KeyColumn: "ycsb_key", KeyLength: 255, FieldLength: 100, Fields: []string{"field0"}}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	m, err := driver.Monitorable(db).Monitor(ctx)
	if err != nil {
		t.Fatalf("Monitor: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return u, db, tbl, m
}

func mustSample(t *testing.T, m driver.Monitor) driver.Sample {
	t.Helper()
	s, err := m.Sample(context.Background())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return s
}

// Work shows in the counters: the server flushes a backend's statistics
// some time after its transactions, so the test waits for them.
func TestMonitorCountersGrowWithWork(t *testing.T) {
	_, db, tbl, m := monitorSetup(t)
	ctx := context.Background()
	before := mustSample(t, m)
	for _, name := range append(append([]string{}, databaseCounters...), "wal_bytes", "wal_records", "checkpoints_req", "buffers_alloc") {
		if _, ok := before.Counters[name]; !ok {
			t.Errorf("no counter %s in %v", name, before.Counters)
		}
	}
	for _, name := range []string{"numbackends", "active_sessions", "sessions_waiting_on_lock"} {
		if _, ok := before.Gauges[name]; !ok {
			t.Errorf("no gauge %s in %v", name, before.Gauges)
		}
	}
	if before.Gauges["numbackends"] < 1 {
		t.Errorf("numbackends %v: the monitor's own connection is on the database", before.Gauges["numbackends"])
	}

	const rows = 300
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	value := [][]byte{[]byte(strings.Repeat("v", 100))}
	for i := range rows {
		if err := s.Insert(ctx, []byte(fmt.Sprintf("key%d", i)), value); err != nil {
			t.Fatalf("Insert %d: %v", i, err)
		}
	}
	// A backend that ends flushes its statistics.
	s.Close()

	grew := func(after driver.Sample) []string {
		var short []string
		for name, want := range map[string]float64{
			"xact_commit":  rows,
			"tup_inserted": rows,
			// Each row's WAL record carries its 100-byte value.
			"wal_bytes":   rows * 100,
			"wal_records": rows,
		} {
			if d := after.Counters[name] - before.Counters[name]; d < want {
				short = append(short, name)
			}
		}
		return short
	}
	var short []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		after := mustSample(t, m)
		if !after.Time.After(before.Time) {
			t.Fatalf("sample time %v not after %v", after.Time, before.Time)
		}
		if short = grew(after); len(short) == 0 {
			return
		}
	}
	t.Fatalf("after %d inserts these counters did not grow by as much: %v", rows, short)
}

// A session of the run blocked on a row lock shows in Waits as ours, with
// a Lock wait; the session holding the lock is someone else's.
func TestMonitorWaitsSeeOwnSessionOnLock(t *testing.T) {
	u, db, tbl, m := monitorSetup(t)
	ctx := context.Background()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	waits, err := m.Waits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(waits, func(w driver.Wait) bool { return w.Own }) {
		t.Fatalf("an idle session reported active: %v", waits)
	}

	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(context.Background()) })
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM monitored WHERE ycsb_key = 'k' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte("w")}) }()

	var seen []driver.Wait
	found := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !found; time.Sleep(10 * time.Millisecond) {
		if seen, err = m.Waits(ctx); err != nil {
			t.Fatal(err)
		}
		found = slices.ContainsFunc(seen, func(w driver.Wait) bool { return w.Own && strings.HasPrefix(w.Event, "Lock:") })
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Update after the lock went: %v", err)
	}
	if !found {
		t.Fatalf("no session of ours waiting on a lock in %v", seen)
	}
}

func TestMonitorUnavailable(t *testing.T) {
	u, _, _, m := monitorSetup(t)
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var timing string
	if err := c.QueryRow(context.Background(), "SELECT current_setting('track_wal_io_timing')").Scan(&timing); err != nil {
		t.Fatal(err)
	}
	lines := m.Unavailable()
	says := slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "track_wal_io_timing is off") })
	if says != (timing == "off") {
		t.Errorf("track_wal_io_timing = %s, Unavailable %q", timing, lines)
	}
	s := mustSample(t, m)
	if _, ok := s.Counters["wal_sync_time"]; ok == (timing == "off") {
		t.Errorf("track_wal_io_timing = %s, counters %v", timing, s.Counters)
	}
}

// A query the server refuses leaves the samples, once, with a line; the
// other queries go on.
func TestMonitorRefusedQueryIsDropped(t *testing.T) {
	_, _, _, m := monitorSetup(t)
	pm := m.(*pgMonitor)
	pm.queries = append(pm.queries, statQuery{view: "pg_stat_nosuchview", sql: selectFloats([]string{"x"}, "pg_stat_nosuchview")})
	before := len(pm.Unavailable())
	for range 2 {
		s := mustSample(t, m)
		if _, ok := s.Counters["xact_commit"]; !ok {
			t.Fatalf("the other queries stopped: %v", s.Counters)
		}
	}
	lines := pm.Unavailable()
	if len(lines) != before+1 || !strings.HasPrefix(lines[len(lines)-1], "pg_stat_nosuchview: ") || !strings.Contains(lines[len(lines)-1], "42P01") {
		t.Fatalf("Unavailable %q, want one line more for pg_stat_nosuchview", lines)
	}
}

// After Close the monitor's connection is gone, and Sample says so.
func TestMonitorClose(t *testing.T) {
	_, _, _, m := monitorSetup(t)
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := m.Sample(context.Background()); err == nil {
		t.Fatal("Sample after Close succeeded")
	}
	if _, err := m.Waits(context.Background()); err == nil {
		t.Fatal("Waits after Close succeeded")
	}
}

// The monitor's connection names itself, and the sessions call themselves
// dbprobe unless the URL names them.
func TestMonitorApplicationNames(t *testing.T) {
	u, db, tbl, _ := monitorSetup(t)
	ctx := context.Background()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, "SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{monitorApplicationName, applicationName} {
		if !slices.Contains(names, want) {
			t.Errorf("no connection named %q among %q", want, names)
		}
	}
}

// The standard counters are PostgreSQL's own under the names every
// experiment reads, and are left out rather than made up when what they
// come from is missing.
func TestStandardize(t *testing.T) {
	s := driver.Sample{Counters: map[string]float64{
		"wal_bytes": 1000, "blks_hit": 90, "blks_read": 10,
		"buffers_checkpoint": 3, "buffers_clean": 2, "buffers_backend": 1,
		"checkpoints_timed": 4, "checkpoints_req": 3,
	}, Gauges: map[string]float64{}}
	standardize(s, serverFacts{versionNum: 150004, blockSize: 8192})
	for name, want := range map[string]float64{
		driver.CounterLogBytes:         1000,
		driver.CounterCacheHits:        90,
		driver.CounterPhysicalReads:    10,
		driver.CounterLogicalReads:     100,
		driver.CounterDeviceReadBytes:  10 * 8192,
		driver.CounterDeviceWriteBytes: 6 * 8192,
		driver.CounterCheckpoints:      7,
	} {
		if got, ok := s.Counters[name]; !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if s.Gauges[driver.GaugePageBytes] != 8192 {
		t.Errorf("page_bytes = %v", s.Gauges[driver.GaugePageBytes])
	}

	// 17 keeps the backends' writes elsewhere; 13 has no pg_stat_wal.
	s = driver.Sample{Counters: map[string]float64{"blks_hit": 1, "buffers_clean": 2, "num_timed": 5, "num_requested": 1}, Gauges: map[string]float64{}}
	standardize(s, serverFacts{versionNum: 170002, blockSize: 8192})
	if s.Counters[driver.CounterCheckpoints] != 6 {
		t.Errorf("PostgreSQL 17's checkpoints = %v, want 6", s.Counters[driver.CounterCheckpoints])
	}
	for _, name := range []string{driver.CounterLogBytes, driver.CounterLogicalReads, driver.CounterDeviceWriteBytes} {
		if v, ok := s.Counters[name]; ok {
			t.Errorf("%s = %v from counters that are not there", name, v)
		}
	}
}

// log_bytes is the WAL the server wrote: the WAL position moves by as
// much (within 10%: the position counts page headers too) while dbprobe
// inserts rows, and logical reads are hits and reads together.
func TestMonitorLogBytesFollowTheWALPosition(t *testing.T) {
	u, db, tbl, m := monitorSetup(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	lsn := func() float64 {
		var v float64
		if err := c.QueryRow(ctx, "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before, start := mustSample(t, m), lsn()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([][]byte, 2000)
	values := make([][][]byte, len(keys))
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key%05d", i))
		values[i] = [][]byte{[]byte(strings.Repeat("v", 100))}
	}
	if err := s.InsertBatch(ctx, keys, values); err != nil {
		t.Fatal(err)
	}
	s.Close()
	end := lsn()
	moved := end - start
	if moved < float64(len(keys)*100) {
		t.Fatalf("the WAL position moved %v bytes for %d rows of 100 bytes", moved, len(keys))
	}
	var logged float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		after := mustSample(t, m)
		logged = after.Counters[driver.CounterLogBytes] - before.Counters[driver.CounterLogBytes]
		if after.Counters[driver.CounterLogBytes] != after.Counters["wal_bytes"] {
			t.Fatalf("log_bytes %v is not wal_bytes %v", after.Counters[driver.CounterLogBytes], after.Counters["wal_bytes"])
		}
		if got, want := after.Counters[driver.CounterLogicalReads], after.Counters["blks_hit"]+after.Counters["blks_read"]; got != want {
			t.Fatalf("logical_reads %v, want blks_hit + blks_read = %v", got, want)
		}
		if logged >= 0.9*moved && logged <= 1.1*(lsn()-start) {
			return
		}
	}
	t.Fatalf("log_bytes grew %v while the WAL position moved %v", logged, moved)
}
