package storage

import (
	"context"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

// evidence reads, before and after each measured part, the counters that
// back a rate: the database's own (through a driver.Monitor of its own,
// by the standard names) and the block device that holds the table's
// files (/proc/diskstats, when the database is on this machine). Exact
// differences of cumulative counters, not sums of per-second samples.
type evidence struct {
	mon driver.Monitor
	// device is the diskstats name of the table's device, "" when none;
	// why says why not.
	device, why string
}

// reading is the counters at one instant.
type reading struct {
	at       time.Time
	counters map[string]float64
	gauges   map[string]float64
	disk     monitor.DiskCounters
	haveDisk bool
}

// delta is what the counters moved between two readings; a figure is -1
// where it was not counted.
type delta struct {
	seconds float64
	// log is the log bytes; read the bytes the database read from
	// storage (readHow names the counter).
	log, read int64
	readHow   string
	// checkpoints is the checkpoints the database ran, -1 when not
	// counted.
	checkpoints int64
	disk        monitor.DiskCounters
	haveDisk    bool
}

// openEvidence opens the database's monitor when it has one and finds
// the device of dir (the table's file, or the data directory), when dir
// is not "".
func openEvidence(ctx context.Context, db driver.DB, path string) *evidence {
	e := &evidence{why: "the database is not on this machine"}
	if m, ok := db.(driver.Monitorable); ok {
		if mon, err := m.Monitor(ctx); err == nil {
			e.mon = mon
		}
	}
	if path != "" {
		if dev, err := monitor.DeviceOf(path); err == nil {
			e.device, e.why = dev, ""
		} else {
			e.why = err.Error()
		}
	}
	return e
}

func (e *evidence) close() {
	if e.mon != nil {
		e.mon.Close()
	}
}

// read takes a reading now.
func (e *evidence) read(ctx context.Context) reading {
	r := reading{at: time.Now()}
	if e.mon != nil {
		if s, err := e.mon.Sample(ctx); err == nil {
			r.counters, r.gauges = s.Counters, s.Gauges
		}
	}
	if e.device != "" {
		if d, err := monitor.ReadDisk(e.device); err == nil {
			r.disk, r.haveDisk = d, true
		}
	}
	return r
}

// since is what moved from earlier to r.
func (r reading) since(earlier reading) delta {
	d := delta{seconds: r.at.Sub(earlier.at).Seconds(), log: -1, read: -1, checkpoints: -1}
	diff := func(name string) (float64, bool) {
		a, ok1 := r.counters[name]
		b, ok2 := earlier.counters[name]
		if !ok1 || !ok2 || a < b {
			return 0, false
		}
		return a - b, true
	}
	if v, ok := diff(driver.CounterLogBytes); ok {
		d.log = int64(v)
	}
	if v, ok := diff(driver.CounterCheckpoints); ok {
		d.checkpoints = int64(v)
	}
	// Bytes read from the database's files where it counts them
	// (InnoDB's read-ahead is in them, not in its page reads), else its
	// page reads at its page size.
	if v, ok := diff(driver.CounterDeviceReadBytes); ok {
		d.read, d.readHow = int64(v), "the database's count of bytes read from its files (database counter "+driver.CounterDeviceReadBytes+")"
	} else if v, ok := diff(driver.CounterPhysicalReads); ok {
		if page := r.gauges[driver.GaugePageBytes]; page > 0 {
			d.read, d.readHow = int64(v*page), "the database's pages read into its cache × its page size (database counter "+driver.CounterPhysicalReads+")"
		}
	}
	if r.haveDisk && earlier.haveDisk {
		d.disk, d.haveDisk = r.disk.Sub(earlier.disk), true
	}
	return d
}

// deviceRead and deviceWrite are the device's bytes, -1 when not seen.
func (d delta) deviceRead() int64 {
	if !d.haveDisk {
		return -1
	}
	return int64(d.disk.ReadBytes)
}

func (d delta) deviceWrite() int64 {
	if !d.haveDisk {
		return -1
	}
	return int64(d.disk.WriteBytes)
}

// figures are the device's figures over the delta.
func (d delta) figures() *result.DeviceFigures {
	if !d.haveDisk || d.seconds <= 0 {
		return nil
	}
	k := d.disk
	ios := float64(k.Reads + k.Writes)
	f := &result.DeviceFigures{Name: k.Name, ReadBytes: int64(k.ReadBytes), WriteBytes: int64(k.WriteBytes),
		IOPS: ios / d.seconds, UtilPct: min(100, float64(k.IOMillis)/(d.seconds*1000)*100)}
	if ios > 0 {
		f.AvgRequestBytes = float64(k.ReadBytes+k.WriteBytes) / ios
		f.AwaitMs = float64(k.ReadMillis+k.WriteMillis) / ios
	}
	return f
}

// statsLag is how long a database may keep a session's counters before
// publishing them: PostgreSQL's sessions publish theirs when a statement
// ends at most once a second, and otherwise only after ten idle seconds.
// Waiting this long and then running one statement on the pool publishes
// them (see settle).
const statsLag = 1100 * time.Millisecond

// settle waits for the database to publish the counters of what just ran,
// then runs one cheap statement (touch) on the connections that ran it, so
// that a reading taken next includes them.
func settle(ctx context.Context, touch func(context.Context)) {
	t := time.NewTimer(statsLag)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	touch(ctx)
}
