package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// openMonitor opens the DB's monitor, closed when the test ends.
func openMonitor(t *testing.T, d driver.DB) driver.Monitor {
	t.Helper()
	mon, ok := d.(driver.Monitorable)
	if !ok {
		t.Fatalf("%T is not driver.Monitorable", d)
	}
	m, err := mon.Monitor(context.Background())
	if err != nil {
		t.Fatalf("Monitor: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func sampleOf(t *testing.T, m driver.Monitor) driver.Sample {
	t.Helper()
	s, err := m.Sample(context.Background())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return s
}

// insertRows writes n records of 100 bytes through a session.
func insertRows(t *testing.T, d driver.DB, tbl driver.Table, from, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := d.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := [][]byte{[]byte(strings.Repeat("v", 100))}
	for i := from; i < from+n; i++ {
		if err := s.Insert(ctx, []byte(fmt.Sprintf("k%06d", i)), value); err != nil {
			t.Fatal(err)
		}
	}
}

var monitorTable = driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 100}

// In WAL mode the WAL grows with writes, the database with its pages, and
// the background checkpoints are counted; the gauges are the files' sizes.
func TestMonitorFileInWALMode(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mon.db")
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	defer d.Close()
	if err := d.CreateTable(ctx, monitorTable); err != nil {
		t.Fatal(err)
	}
	m := openMonitor(t, d)
	if w, err := m.Waits(ctx); w != nil || err != nil {
		t.Errorf("Waits = %v, %v; want nil, nil", w, err)
	}
	before := sampleOf(t, m)
	// Fewer records than start a background checkpoint: the WAL only grows.
	insertRows(t, d, monitorTable, 0, checkpointEvery/2)
	after := sampleOf(t, m)
	for _, g := range []string{"wal_file_bytes", "database_bytes"} {
		if after.Gauges[g] <= before.Gauges[g] {
			t.Errorf("%s went from %v to %v over %d inserts", g, before.Gauges[g], after.Gauges[g], checkpointEvery/2)
		}
	}
	for g, file := range map[string]string{"wal_file_bytes": path + "-wal", "database_file_bytes": path} {
		st, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if after.Gauges[g] != float64(st.Size()) {
			t.Errorf("%s = %v, the file holds %d bytes", g, after.Gauges[g], st.Size())
		}
	}
	// Every insert ran on the writer, so its busy time grew, and by no
	// more than the time the inserts took.
	busy := after.Counters["writer_busy_seconds"] - before.Counters["writer_busy_seconds"]
	if elapsed := after.Time.Sub(before.Time).Seconds(); busy <= 0 || busy > elapsed {
		t.Errorf("writer_busy_seconds grew by %v over %d inserts in %.3f s", busy, checkpointEvery/2, elapsed)
	}
	if after.Counters["checkpoints"] != before.Counters["checkpoints"] {
		t.Errorf("checkpoints went from %v to %v before %d records were written", before.Counters["checkpoints"], after.Counters["checkpoints"], checkpointEvery)
	}

	// Enough records for background checkpoints, which run on their own
	// goroutine: wait for the first. The checkpointer may drop a request
	// while busy, so only "some" is certain.
	insertRows(t, d, monitorTable, checkpointEvery/2, 3*checkpointEvery)
	later := sampleOf(t, m)
	if _, ok := later.Counters["checkpoints"]; !ok {
		t.Fatalf("no checkpoints counter in %v", later.Counters)
	}
	for deadline := time.Now().Add(30 * time.Second); later.Counters["checkpoints"] <= after.Counters["checkpoints"] && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		later = sampleOf(t, m)
	}
	if later.Counters["checkpoints"] <= after.Counters["checkpoints"] {
		t.Errorf("checkpoints stayed at %v over %d inserts", later.Counters["checkpoints"], 3*checkpointEvery)
	}
	lines := m.Unavailable()
	if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "WAL") && strings.Contains(l, "in memory") }) {
		t.Errorf("a file database reported as in memory: %q", lines)
	}
}

func TestMonitorUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		url        func(t *testing.T) string
		opts       driver.Options
		line       string   // part of an Unavailable line
		gauges     []string // gauges every sample has
		noGauges   []string
		checkpoint bool // the checkpoints counter is there
	}{
		{
			name:     "memory URL",
			url:      func(*testing.T) string { return "sqlite::memory:" },
			line:     "the database is in memory, with no WAL and no file",
			gauges:   []string{"database_bytes"},
			noGauges: []string{"wal_file_bytes", "database_file_bytes"},
		},
		{
			name:     "file URL with --table-type memory",
			url:      func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "unused.db") },
			opts:     driver.Options{TableType: driver.TableMemory},
			line:     "the database is in memory, with no WAL and no file",
			gauges:   []string{"database_bytes"},
			noGauges: []string{"wal_file_bytes", "database_file_bytes"},
		},
		{
			name: "rollback journal",
			url: func(t *testing.T) string {
				return "sqlite://" + filepath.Join(t.TempDir(), "j.db") + "?journal_mode=DELETE"
			},
			line:     "journal_mode is delete, not WAL",
			gauges:   []string{"database_bytes", "database_file_bytes"},
			noGauges: []string{"wal_file_bytes"},
		},
		{
			name:       "WAL",
			url:        func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "w.db") },
			line:       "only the background PASSIVE checkpoints are counted",
			gauges:     []string{"database_bytes", "database_file_bytes", "wal_file_bytes"},
			checkpoint: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openURL(t, tc.url(t), tc.opts)
			defer d.Close()
			if err := d.CreateTable(context.Background(), monitorTable); err != nil {
				t.Fatal(err)
			}
			m := openMonitor(t, d)
			lines := m.Unavailable()
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.line) }) {
				t.Errorf("Unavailable %q has no line with %q", lines, tc.line)
			}
			insertRows(t, d, monitorTable, 0, 10)
			s := sampleOf(t, m)
			for _, g := range tc.gauges {
				if _, ok := s.Gauges[g]; !ok {
					t.Errorf("no gauge %s in %v", g, s.Gauges)
				}
			}
			for _, g := range tc.noGauges {
				if _, ok := s.Gauges[g]; ok {
					t.Errorf("gauge %s in %v", g, s.Gauges)
				}
			}
			if s.Gauges["database_bytes"] <= 0 {
				t.Errorf("database_bytes = %v with a table in it", s.Gauges["database_bytes"])
			}
			if _, ok := s.Counters["checkpoints"]; ok != tc.checkpoint {
				t.Errorf("checkpoints counter present %v, want %v: %v", ok, tc.checkpoint, s.Counters)
			}
		})
	}
}

// After Close the monitor's connection is gone, and Sample says so.
func TestMonitorClose(t *testing.T) {
	d := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "c.db"), driver.Options{})
	defer d.Close()
	m, err := d.(driver.Monitorable).Monitor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := m.Sample(context.Background()); err == nil {
		t.Fatal("Sample after Close succeeded")
	}
}

// The device counters are the process's own I/O: the bytes the WAL grew
// by were written (counted as they dirty the page cache), and an
// in-memory database has none; the page size is the database's.
func TestMonitorStandardCounters(t *testing.T) {
	if _, _, err := readProcessIO("/proc/self/io"); err != nil {
		t.Skipf("no per-process I/O accounting here: %v", err)
	}
	ctx := context.Background()
	d := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "std.db"), driver.Options{Sessions: 1})
	defer d.Close()
	if err := d.CreateTable(ctx, monitorTable); err != nil {
		t.Fatal(err)
	}
	m := openMonitor(t, d)
	before := sampleOf(t, m)
	insertRows(t, d, monitorTable, 0, checkpointEvery/2)
	after := sampleOf(t, m)
	grew := after.Gauges["wal_file_bytes"] - before.Gauges["wal_file_bytes"]
	wrote := after.Counters[driver.CounterDeviceWriteBytes] - before.Counters[driver.CounterDeviceWriteBytes]
	if grew < float64(checkpointEvery/2*100) || wrote < 0.9*grew {
		t.Errorf("the WAL grew %v bytes and device_write_bytes %v", grew, wrote)
	}
	if _, ok := after.Counters[driver.CounterDeviceReadBytes]; !ok {
		t.Errorf("no %s in %v", driver.CounterDeviceReadBytes, after.Counters)
	}
	var page float64
	if err := d.(*db).pool.QueryRowContext(ctx, "PRAGMA page_size").Scan(&page); err != nil {
		t.Fatal(err)
	}
	if after.Gauges[driver.GaugePageBytes] != page {
		t.Errorf("page_bytes = %v, page_size = %v", after.Gauges[driver.GaugePageBytes], page)
	}
	if !slices.ContainsFunc(m.Unavailable(), func(l string) bool { return strings.HasPrefix(l, driver.CounterLogBytes+": ") }) {
		t.Errorf("Unavailable %q does not say there is no %s", m.Unavailable(), driver.CounterLogBytes)
	}

	mem := openURL(t, "sqlite://:memory:", driver.Options{Sessions: 1})
	defer mem.Close()
	if s := sampleOf(t, openMonitor(t, mem)); len(s.Counters) > 0 {
		for _, name := range driver.StandardCounters {
			if _, ok := s.Counters[name]; ok {
				t.Errorf("an in-memory database has %s", name)
			}
		}
	}
}

func TestReadProcessIO(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "io")
	os.WriteFile(good, []byte("rchar: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"), 0o644)
	if r, w, err := readProcessIO(good); err != nil || r != 4096 || w != 8192 {
		t.Errorf("readProcessIO = %v, %v, %v", r, w, err)
	}
	bare := filepath.Join(dir, "bare")
	os.WriteFile(bare, []byte("rchar: 1\n"), 0o644)
	if _, _, err := readProcessIO(bare); err == nil || !strings.Contains(err.Error(), "does not account I/O") {
		t.Errorf("readProcessIO of a file without the fields: %v", err)
	}
}
