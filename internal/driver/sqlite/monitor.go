package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var _ driver.Monitorable = (*db)(nil)

// sqliteMonitor reads what an embedded database can tell while it runs:
// the sizes of its files, its page count and the driver's own checkpoints.
// SQLite keeps no server-wide statistics and no view of its connections.
type sqliteMonitor struct {
	d *db
	// conn is a connection of the DB's pool held for the monitor, so that a
	// sample never waits for a session's.
	conn *sql.Conn
	// file is the main database file, "" for an in-memory database; wal is
	// set when it is in WAL mode.
	file string
	wal  bool
	// failed holds the gauges whose file could not be read, each named once
	// in unavailable and then left out.
	failed      map[string]bool
	unavailable []string
	// noProcessIO is set once /proc/self/io could not be read.
	noProcessIO bool
}

// Monitor holds a connection of the DB's pool for the monitor and reads
// where the database lives and in which journal mode.
func (d *db) Monitor(ctx context.Context) (driver.Monitor, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open the monitor's connection: %w", classify(err))
	}
	var file, journal string
	if err := c.QueryRowContext(ctx, mainFileSQL).Scan(&file); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite: monitor: find the database file: %w", classify(err))
	}
	if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite: monitor: read the journal mode: %w", classify(err))
	}
	m := &sqliteMonitor{d: d, conn: c, file: file, wal: strings.EqualFold(journal, "wal"), failed: map[string]bool{}}
	m.unavailable = monitorUnavailable(file, journal, d.ckpt != nil)
	return m, nil
}

// monitorUnavailable names what a database of this file (empty: in memory)
// and journal mode does not show, and what neither library offers.
func monitorUnavailable(file, journal string, checkpointer bool) []string {
	var lines []string
	switch {
	case file == "":
		lines = append(lines, "WAL and file sizes: the database is in memory, with no WAL and no file")
	case !strings.EqualFold(journal, "wal"):
		lines = append(lines, "WAL size and checkpoints: journal_mode is "+strings.ToLower(journal)+", not WAL")
	}
	if checkpointer {
		lines = append(lines, "checkpoints: only the background PASSIVE checkpoints are counted; SQLite does not report those the writer runs itself at "+
			strconv.Itoa(walRestartPages)+" WAL pages (wal_autocheckpoint)")
	}
	// modernc.org/sqlite has sqlite3_db_status, mattn/go-sqlite3 does not:
	// both builds report the same things.
	lines = append(lines, "page cache hits, misses and writes (sqlite3_db_status): not exposed by github.com/mattn/go-sqlite3, so read by neither build; "+
		"no "+driver.CounterLogicalReads+", "+driver.CounterPhysicalReads+" or "+driver.CounterCacheHits)
	lines = append(lines, driver.CounterLogBytes+": SQLite keeps no count of the bytes it appends to its journal or WAL; "+
		driver.CounterDeviceWriteBytes+" counts them with the database file's")
	return lines
}

// Sample reads the page count and size on the monitor's connection and
// the sizes of the database's files. Counters: "checkpoints", the
// background checkpoints run, and "writer_busy_seconds", the time the one
// writer spent running writes (its rate is the share of each second it
// was busy), and the standard "commits", the writer's transactions (one
// per group of writes). Gauges: "database_bytes" (page_count ×
// page_size, what SQLite holds, WAL pages included), "database_file_bytes"
// and "wal_file_bytes" (the files on disk; the WAL is 0 while it does not
// exist).
func (m *sqliteMonitor) Sample(ctx context.Context) (driver.Sample, error) {
	s := driver.Sample{Time: time.Now(), Counters: map[string]float64{}, Gauges: map[string]float64{}}
	var pages, pageSize int64
	if err := m.conn.QueryRowContext(ctx, "SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()").Scan(&pages, &pageSize); err != nil {
		return driver.Sample{}, fmt.Errorf("sqlite: monitor: read the page count: %w", classify(err))
	}
	s.Gauges["database_bytes"] = float64(pages * pageSize)
	if m.d.ckpt != nil {
		s.Counters["checkpoints"] = float64(m.d.ckpt.done.Load())
	}
	s.Counters["writer_busy_seconds"] = time.Duration(m.d.w.busy.Load()).Seconds()
	s.Counters[driver.CounterCommits] = float64(m.d.w.commits.Load())
	s.Gauges[driver.GaugePageBytes] = float64(pageSize)
	if m.file != "" {
		m.fileSize(s, "database_file_bytes", m.file, false)
		if m.wal {
			m.fileSize(s, "wal_file_bytes", m.file+"-wal", true)
		}
		m.processIO(s)
	}
	return s, nil
}

// processIO reads the bytes this process read from and wrote to the
// storage layer (/proc/self/io read_bytes and write_bytes, Linux) into
// the standard device counters: SQLite runs inside dbprobe, so its I/O is
// the process's, with the little dbprobe writes itself (its result file)
// besides. A write is counted when it dirties the page cache, before the
// device has it; a read only when the device, not the page cache,
// answered it.
func (m *sqliteMonitor) processIO(s driver.Sample) {
	if m.noProcessIO {
		return
	}
	read, written, err := readProcessIO("/proc/self/io")
	if err != nil {
		m.noProcessIO = true
		m.unavailable = append(m.unavailable, driver.CounterDeviceReadBytes+" and "+driver.CounterDeviceWriteBytes+": "+err.Error())
		return
	}
	s.Counters[driver.CounterDeviceReadBytes] = read
	s.Counters[driver.CounterDeviceWriteBytes] = written
}

// readProcessIO reads read_bytes and write_bytes from a /proc/PID/io file.
func readProcessIO(path string) (read, written float64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dest *float64
		switch name {
		case "read_bytes":
			dest = &read
		case "write_bytes":
			dest = &written
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		*dest = v
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s has no read_bytes and write_bytes (the kernel does not account I/O per task)", path)
	}
	return read, written, nil
}

// fileSize puts a file's size in a gauge. A file that may be missing is 0;
// a file that cannot be read is named once in Unavailable and left out
// from then on.
func (m *sqliteMonitor) fileSize(s driver.Sample, gauge, path string, mayBeMissing bool) {
	if m.failed[gauge] {
		return
	}
	st, err := os.Stat(path)
	switch {
	case err == nil:
		s.Gauges[gauge] = float64(st.Size())
	case mayBeMissing && errors.Is(err, fs.ErrNotExist):
		s.Gauges[gauge] = 0
	default:
		m.failed[gauge] = true
		m.unavailable = append(m.unavailable, gauge+": "+err.Error())
	}
}

// Waits returns nil: SQLite has no view of what its connections wait on.
func (m *sqliteMonitor) Waits(context.Context) ([]driver.Wait, error) { return nil, nil }

// Unavailable lists what this database does not show.
func (m *sqliteMonitor) Unavailable() []string {
	return append([]string(nil), m.unavailable...)
}

// Close gives the monitor's connection back to the pool.
func (m *sqliteMonitor) Close() error { return m.conn.Close() }
