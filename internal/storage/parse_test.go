package storage

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1GB": 1e9, "500MB": 5e8, "1.5GiB": 3 << 29, "2g": 2e9, "1000000": 1e6, " 64 mb ": 64e6, "1e9": 1e9, "4kib": 4096,
	} {
		if got, err := ParseSize("--size", in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "-1GB", "1XB", "NaN", "inf", "0", "0.5"} {
		if _, err := ParseSize("--size", in); !badinput.Is(err) || !strings.Contains(err.Error(), "--size") {
			t.Errorf("ParseSize(%q): %v, want bad input naming --size", in, err)
		}
	}
}

func TestParseExpect(t *testing.T) {
	got, err := ParseExpect("scan=14GB/min, log=48MB/s,write=250MB/min,bulk=1TB/h")
	if err != nil {
		t.Fatal(err)
	}
	want := []Expectation{{"scan", 14e9 / 60, "14GB/min"}, {"log", 48e6, "48MB/s"}, {"write", 250e6 / 60, "250MB/min"}, {"bulk", 1e12 / 3600, "1TB/h"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Key != want[i].Key || math.Abs(got[i].Rate-want[i].Rate) > 1e-6 || got[i].Text != want[i].Text {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, in := range []string{"scan", "scan=14GB", "scan=14GB/week", "disk=1GB/s", "scan=1GB/s,scan=2GB/s", "scan=-1GB/s", "scan=x/s", "",
		// Less than a byte: 5e-324 bytes an hour is a rate of 0.
		"scan=0.5B/s", "scan=5e-324B/h"} {
		if _, err := ParseExpect(in); !badinput.Is(err) {
			t.Errorf("ParseExpect(%q): %v, want bad input", in, err)
		}
	}
}

// A promise is held when the measured rate reaches it, and otherwise the
// shortfall is said.
func TestExpectCheck(t *testing.T) {
	e := Expectation{Key: "log", Rate: 48e6, Text: "48MB/s"}
	if c := e.check(50e6); !c.Held || c.Verdict != "held" || math.Abs(c.Ratio-50.0/48) > 1e-9 {
		t.Errorf("above: %+v", c)
	}
	if c := e.check(36e6); c.Held || c.Verdict != "below promise by 25%" {
		t.Errorf("below: %+v", c)
	}
}

func TestParsePrice(t *testing.T) {
	p, err := ParsePrice("$2.40/hour")
	if err != nil || p.PerHour != 2.4 {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = ParsePrice("730/month")
	if err != nil || math.Abs(p.PerHour-1) > 1e-12 {
		t.Fatalf("%+v %v", p, err)
	}
	c := runCost(p, 1800, 2e9)
	if math.Abs(c.Run-0.5) > 1e-12 || math.Abs(c.PerGB-0.25) > 1e-12 {
		t.Errorf("cost %+v", c)
	}
	for _, in := range []string{"2.40", "2.40/day", "x/hour", "-1/hour"} {
		if _, err := ParsePrice(in); !badinput.Is(err) {
			t.Errorf("ParsePrice(%q): %v", in, err)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("--dop", "1, 2,4,8")
	if err != nil || len(got) != 4 || got[3] != 8 {
		t.Fatalf("%v %v", got, err)
	}
	for _, in := range []string{"", "0", "1,,2", "2000", "a"} {
		if _, err := ParseList("--dop", in); !badinput.Is(err) || !strings.Contains(err.Error(), "--dop") {
			t.Errorf("ParseList(%q): %v", in, err)
		}
	}
}

// Validate refuses flags the experiment does not take, and --expect keys
// it does not measure.
func TestValidate(t *testing.T) {
	bad := []Config{
		{Kind: Read, NoCopy: true},
		{Kind: Bulk, NoCold: true},
		{Kind: Write, RestartCmd: "true"},
		{Kind: Scan, Size: 1000},
		{Kind: Scan, Expect: []Expectation{{Key: "log"}}},
		{Kind: LogCopy, Dops: []int{0}},
		{Kind: Scan, NoCold: true, RequireCold: true},
	}
	for _, c := range bad {
		c.Monitor.Off = true
		if err := c.Validate(); !badinput.Is(err) {
			t.Errorf("%+v: %v, want bad input", c, err)
		}
	}
	ok := Config{Kind: Write, Expect: []Expectation{{Key: "write"}, {Key: "log"}}}
	ok.Monitor.Off = true
	if err := ok.Validate(); err != nil {
		t.Errorf("write with write and log promises: %v", err)
	}
}

// The per-second series marks the seconds below 90% of the median, leaves
// short ones out of the spread, and the minutes add the seconds up.
func TestSeries(t *testing.T) {
	origin := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var spans []span
	rates := []float64{100, 100, 100, 50, 100, 100}
	for i, r := range rates {
		s := origin.Add(time.Duration(i) * time.Second)
		spans = append(spans, span{start: s, end: s.Add(time.Second), bytes: r})
	}
	// A 0.2 s tail at a rate that would be a fall.
	tail := origin.Add(6 * time.Second)
	spans = append(spans, span{start: tail, end: tail.Add(200 * time.Millisecond), bytes: 2})
	points, c := perSecond(spans, origin)
	if len(points) != 7 || c == nil || c.Points != 6 || c.Median != 100 || c.Min != 50 || c.Max != 100 {
		t.Fatalf("points %+v consistency %+v", points, c)
	}
	if !points[3].Fell || points[0].Fell || points[6].Fell {
		t.Errorf("fell marks: %+v", points)
	}
	mean := 550.0 / 6
	cv := math.Sqrt((5*(100-mean)*(100-mean)+(50-mean)*(50-mean))/6) / mean
	if math.Abs(c.BelowShare-1.0/6) > 1e-9 || math.Abs(c.CV-cv) > 1e-9 {
		t.Errorf("spread %+v", c)
	}
	minutes, mc := perMinute(points)
	if len(minutes) != 1 || minutes[0].Bytes != 552 || mc != nil {
		t.Errorf("minutes %+v %+v", minutes, mc)
	}
}

// A span longer than a second is cut at the whole seconds from the
// origin, each piece with its share of the bytes.
func TestSpread(t *testing.T) {
	origin := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	got := spread([]span{{start: origin.Add(500 * time.Millisecond), end: origin.Add(2500 * time.Millisecond), bytes: 400}}, origin)
	want := []float64{100, 200, 100}
	if len(got) != 3 {
		t.Fatalf("spread %+v", got)
	}
	for i, s := range got {
		if math.Abs(s.bytes-want[i]) > 1e-9 {
			t.Errorf("piece %d: %+v", i, s)
		}
	}
}

// The scan's verdict comes from the device when it was seen, else from
// the database; a scan mostly served by a cache is not physical.
func TestScanVerdict(t *testing.T) {
	tests := []struct {
		p        result.StorageProof
		local    bool
		physical bool
		prefix   string
	}{
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 1e9, DeviceBytes: 98e7, Device: "vda"}, true, true, "physical: the device vda read"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 1e9, DeviceBytes: 1e6, Device: "vda"}, true, false, "not physical: the device vda read"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 1e7, DeviceBytes: -1}, false, false, "not physical: the database read only"},
		// A busy device read for others while the database read nothing.
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 0, DeviceBytes: 3e9, Device: "vda"}, true, false, "not physical: the database read only 0 B"},
		// PostgreSQL's blks_read may be served by the page cache: a remote
		// database's own count does not prove the scan physical.
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 9e8, DeviceBytes: -1}, false, false, "not proven physical: the database read"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 1e9, DeviceBytes: -1}, true, false, "not proven physical: the database read"},
		// MariaDB, 300 MB against a 256 MB buffer pool: half from the cache.
		{result.StorageProof{Bytes: 5.1e9, DatabaseBytes: 2.7e9, DeviceBytes: 2.64e9, Device: "vda"}, true, false, "partly physical (52%): the device vda read"},
		// Other I/O on the device: SQLite's 140%, an interrupted scan's 206%.
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: -1, DeviceBytes: 1.4e9, Device: "vda"}, true, false, "not proven physical: the device vda read 1.40 GB for the 1.00 GB the scan counts (140%), well over"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: 1e9, DeviceBytes: 2.06e9, Device: "vda"}, true, false, "not proven physical: the device vda read"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: -1, DeviceBytes: 1.1e9, Device: "vda"}, true, true, "physical: the device vda read"},
		{result.StorageProof{Bytes: 1e9, DatabaseBytes: -1, DeviceBytes: -1}, false, false, "unproven"},
	}
	for _, tt := range tests {
		v, phys := scanVerdict(&tt.p, tt.local)
		if phys != tt.physical || !strings.HasPrefix(v, tt.prefix) {
			t.Errorf("%+v: %v %q", tt.p, phys, v)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GB", "1.5GiB", "12", "x", "1e400", "-3MB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize("--size", s)
		if err == nil && (n < 1 || n > 1<<60) {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if err != nil && !badinput.Is(err) {
			t.Fatalf("ParseSize(%q): %v is not bad input", s, err)
		}
	})
}

func FuzzParseExpect(f *testing.F) {
	for _, s := range []string{"scan=14GB/min,log=48MB/s", "read=2GB/min", "x=1", "scan=1e400GB/s", "cache=2GB", "cache=1e400GB,log=1MB/s", "scan=1e300GB/s", "cache=1e300GB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseExpect(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("ParseExpect(%q): %v is not bad input", s, err)
			}
			return
		}
		for _, e := range got {
			if !knownKey(e.Key) || !(e.Rate > 0) || math.IsInf(e.Rate, 0) {
				t.Fatalf("ParseExpect(%q) = %+v", s, got)
			}
		}
	})
}

func FuzzParsePrice(f *testing.F) {
	for _, s := range []string{"2.40/hour", "$100/month", "1/day", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePrice(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("ParsePrice(%q): %v is not bad input", s, err)
			}
			return
		}
		if p.PerHour < 0 || math.IsNaN(p.PerHour) || math.IsInf(p.PerHour, 0) {
			t.Fatalf("ParsePrice(%q) = %+v", s, p)
		}
	})
}

// A table's file is evicted with its segments, maps and journal, and
// nothing else of its directory.
func TestTableFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"16392", "16392.1", "16392_fsm", "16392-wal", "163920", "16393", "st.db", "st.db-wal", "st.dbx"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(files []string) string {
		var b []string
		for _, f := range files {
			b = append(b, filepath.Base(f))
		}
		slices.Sort(b)
		return strings.Join(b, " ")
	}
	if got := names(tableFiles(filepath.Join(dir, "16392"))); got != "16392 16392-wal 16392.1 16392_fsm" {
		t.Errorf("PostgreSQL-like: %s", got)
	}
	if got := names(tableFiles(filepath.Join(dir, "st.db"))); got != "st.db st.db-wal" {
		t.Errorf("SQLite-like: %s", got)
	}
}

// The device's per-second figures are iostat's, and the bursts hold the
// busiest whole second against the median one.
func TestDeviceSeconds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := func(sec float64, reads, readMB, readMs, ioMs uint64) devicePoint {
		return devicePoint{at: t0.Add(time.Duration(sec * float64(time.Second))), c: monitor.DiskCounters{Name: "loop9",
			Reads: reads, ReadBytes: readMB * 1e6, ReadMillis: readMs, IOMillis: ioMs}}
	}
	points := []devicePoint{
		c(0, 0, 0, 0, 0),
		c(1, 100, 10, 200, 500),     // 10 MB/s, 100 IO/s, 100 kB each, 2 ms, 50% busy
		c(2, 400, 50, 1400, 1500),   // a burst: 40 MB/s, 300 IO/s, 4 ms, 100% busy
		c(3, 500, 60, 1600, 2000),   // 10 MB/s
		c(4, 600, 70, 1800, 2500),   // 10 MB/s
		c(4.2, 610, 71, 1820, 2600), // cut short: not in the bursts
	}
	secs := deviceSeconds(points, t0)
	if len(secs) != 5 {
		t.Fatalf("%d seconds", len(secs))
	}
	want := result.DeviceSecond{Elapsed: 1, Seconds: 1, ReadRate: 10e6, IOPS: 100, AvgRequestBytes: 100e3, AwaitMs: 2, UtilPct: 50}
	if secs[0] != want {
		t.Errorf("first second %+v, want %+v", secs[0], want)
	}
	b := deviceBursts(secs)
	wantB := result.DeviceBursts{Seconds: 4, MedianRate: 10e6, MaxRate: 40e6, MaxAt: 2, MedianIOPS: 100, MaxIOPS: 300, MedianAwaitMs: 2, MaxAwaitMs: 4, SaturatedShare: 0.25}
	if b == nil || *b != wantB {
		t.Errorf("bursts %+v, want %+v", b, wantB)
	}
	if deviceBursts(secs[4:]) != nil {
		t.Error("bursts of a second cut short")
	}
}

// Sessions writing rows into a full socket, with the client's CPU to
// spare, make a read network-limited; sessions on CPU do not.
func TestReadLimitNetwork(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var sending, busy []monitor.Interval
	for i := range 4 {
		s, e := t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i+1)*time.Second)
		sending = append(sending, monitor.Interval{Start: s, End: e, Metrics: map[string]float64{
			"db.sessions.active": 0, "db.sessions.other.active": 1, "db.wait.other.Client:ClientWrite": 0.8, "db.wait.other.CPU": 0.2,
			"client.cpu%": 10, "host.cpu.idle%": 60}})
		busy = append(busy, monitor.Interval{Start: s, End: e, Metrics: map[string]float64{
			"db.sessions.active": 1, "db.wait.CPU": 1, "client.cpu%": 10, "host.cpu.idle%": 5}})
	}
	w := stepWindow{start: t0, end: t0.Add(4 * time.Second)}
	if v := readLimit(sending, w, 1, driver.PlacementServer); !strings.HasPrefix(v, "network-limited: 80% of the database's sampled sessions were sending rows") {
		t.Errorf("sending: %s", v)
	}
	if v := readLimit(busy, w, 1, driver.PlacementServer); !strings.HasPrefix(v, "server-limited") {
		t.Errorf("on CPU: %s", v)
	}
}

// One reader streaming rows at 94% of a core is the limit, though the
// client has a second core: a reader cannot use it. Two readers at the
// same CPU are not, and the server's idle sessions say round trips.
func TestReadLimitClientCore(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := fixture(t0, 4, map[string]float64{"db.sessions.active": 0.1, "db.wait.CPU": 1,
		"client.cpu%": 94, "client.gomaxprocs": 2, "client.cores": 2, "client.sched.latency_p99_ms": 0.5, "host.cpu.idle%": 40})
	w := stepWindow{start: t0, end: t0.Add(4 * time.Second)}
	if v := readLimit(iv, w, 1, driver.PlacementServer); !strings.HasPrefix(v, "client-limited: dbprobe itself — CPU 94% of the core its one thread can use (of 2)") {
		t.Errorf("1 thread at 94%%: %s", v)
	}
	if v := readLimit(iv, w, 2, driver.PlacementServer); !strings.HasPrefix(v, "network-limited (or round trips)") {
		t.Errorf("2 threads at 94%%: %s", v)
	}
}
