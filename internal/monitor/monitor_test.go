package monitor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// fakeClock is stepped by the test. SleepUntil blocks until the test has
// moved the time past the wake-up, and each sleep hands the test a token
// so that advance returns only once the loop has done its work and is
// asleep again.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	wakeAt  time.Time
	wake    chan struct{}
	blocked chan struct{}
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, blocked: make(chan struct{}, 1)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time) bool {
	f.mu.Lock()
	if !t.After(f.now) {
		f.mu.Unlock()
		return ctx.Err() == nil
	}
	wake := make(chan struct{})
	f.wake, f.wakeAt = wake, t
	f.mu.Unlock()
	f.blocked <- struct{}{}
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	}
}

// advance moves the time on by d, and when that wakes the loop, waits
// until it sleeps again. The loop must be asleep when it is called.
func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	woke := f.wake != nil && !f.wakeAt.After(f.now)
	if woke {
		close(f.wake)
		f.wake = nil
	}
	f.mu.Unlock()
	if woke {
		<-f.blocked
	}
}

// advanceTo steps the time to t in 50 ms steps, so that every wait sample
// on the way is taken.
func (f *fakeClock) advanceTo(t time.Time) {
	for f.Now().Before(t) {
		f.advance(min(50*time.Millisecond, t.Sub(f.Now())))
	}
}

var (
	waitsA = []driver.Wait{
		{Event: "IO:WALSync", Own: true}, {Event: "IO:WALSync", Own: true}, {Event: "", Own: true},
		{Event: "Client:ClientRead"},
	}
	waitsB = []driver.Wait{{Event: "", Own: true}}
)

// fakeMonitor is a database whose counters grow by known amounts on every
// Sample, and whose Waits alternate between waitsA and waitsB.
type fakeMonitor struct {
	clock            *fakeClock
	samples, waits   int
	failSampleAt     int // Sample number (from 0) that fails; -1 never
	failWaitsAt      int // Waits number (from 0) that fails; -1 never
	callsAfterFailed int
	failed, closed   bool
}

// resets is the "resets" counter per sample: it goes down at sample 2.
var resets = []float64{10, 20, 5, 15, 25, 35}

func (m *fakeMonitor) Sample(context.Context) (driver.Sample, error) {
	if m.failed {
		m.callsAfterFailed++
	}
	n := m.samples
	m.samples++
	if n == m.failSampleAt {
		m.failed = true
		return driver.Sample{}, errors.New("connection reset by peer")
	}
	s := driver.Sample{
		Time:     m.clock.Now(),
		Counters: map[string]float64{"xact_commit": float64(100 * n), "resets": resets[n]},
		Gauges:   map[string]float64{"wal_file_bytes": float64(1000 * n)},
	}
	if n >= 2 {
		s.Counters["late"] = float64(7 * n)
	}
	return s, nil
}

func (m *fakeMonitor) Waits(context.Context) ([]driver.Wait, error) {
	if m.failed {
		m.callsAfterFailed++
	}
	n := m.waits
	m.waits++
	if n == m.failWaitsAt {
		m.failed = true
		return nil, errors.New("connection reset by peer")
	}
	if n%2 == 0 {
		return waitsA, nil
	}
	return waitsB, nil
}

func (m *fakeMonitor) Unavailable() []string { return []string{"pg_stat_wal: needs PostgreSQL 14"} }

func (m *fakeMonitor) Close() error {
	m.closed = true
	return nil
}

// fakeDB is a DB with a monitor; the rest of driver.DB is not used here.
type fakeDB struct {
	driver.DB
	mon     *fakeMonitor
	openErr error
	// reopen, when set, gives the monitor a reconnection gets once mon
	// failed; without it the database stays unreachable.
	reopen func() *fakeMonitor
	opens  int
}

func (d *fakeDB) Monitor(context.Context) (driver.Monitor, error) {
	d.opens++
	if d.openErr != nil {
		return nil, d.openErr
	}
	if d.mon.failed {
		if d.reopen == nil {
			return nil, errors.New("dial tcp 127.0.0.1:5432: connection refused")
		}
		d.mon = d.reopen()
	}
	return d.mon, nil
}

// collector keeps what onInterval receives.
type collector struct {
	mu        sync.Mutex
	intervals []Interval
}

func (c *collector) add(iv Interval) {
	c.mu.Lock()
	c.intervals = append(c.intervals, iv)
	c.mu.Unlock()
}

func (c *collector) all() []Interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Interval(nil), c.intervals...)
}

// dbMetrics keeps the metrics whose names start with "db.".
func dbMetrics(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if strings.HasPrefix(k, "db.") {
			out[k] = v
		}
	}
	return out
}

var origin = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// startFake starts a monitor 300 ms after origin on a fake clock, with four
// wait samples per second (at .125, .375, .625 and .875 s).
func startFake(t *testing.T, db driver.DB, fm *fakeMonitor) (*Monitor, *fakeClock, *collector) {
	t.Helper()
	clk := newFakeClock(origin.Add(300 * time.Millisecond))
	if fm != nil {
		fm.clock = clk
	}
	c := &collector{}
	m, err := start(context.Background(), db, Options{WaitSamples: 4, Host: true, Origin: origin}, c.add,
		env{clock: clk, procRoot: "testdata/t0"})
	if err != nil {
		t.Fatal(err)
	}
	<-clk.blocked
	return m, clk, c
}

func TestMonitorDatabase(t *testing.T) {
	fm := &fakeMonitor{failSampleAt: -1, failWaitsAt: -1}
	m, clk, c := startFake(t, &fakeDB{mon: fm}, fm)
	clk.advanceTo(origin.Add(3200 * time.Millisecond))
	m.Stop()

	got := c.all()
	if len(got) != 4 {
		t.Fatalf("got %d intervals, want 4", len(got))
	}
	s := time.Second
	bounds := [][2]time.Duration{{300 * time.Millisecond, s}, {s, 2 * s}, {2 * s, 3 * s}, {3 * s, 3200 * time.Millisecond}}
	// Samples are taken at 0.3 s (the base), 1, 2, 3 and 3.2 s. Wait
	// samples alternate A, B, …: the first interval has those at .375,
	// .625 and .875 (A B A), the full ones four (B A B A), the last one
	// the one at 3.125 (B).
	want := []map[string]float64{
		{
			"db.xact_commit/s": 100 / 0.7, "db.resets/s": 10 / 0.7, "db.wal_file_bytes": 1000,
			"db.wait.IO:WALSync": 4.0 / 7, "db.wait.CPU": 3.0 / 7, "db.wait.other.Client:ClientRead": 1,
			"db.sessions.active": 7.0 / 3, "db.sessions.other.active": 2.0 / 3,
		},
		{
			// resets went from 20 to 5: no rate; late is new: no rate.
			"db.xact_commit/s": 100, "db.wal_file_bytes": 2000,
			"db.wait.IO:WALSync": 0.5, "db.wait.CPU": 0.5, "db.wait.other.Client:ClientRead": 1,
			"db.sessions.active": 2, "db.sessions.other.active": 0.5,
		},
		{
			"db.xact_commit/s": 100, "db.resets/s": 10, "db.late/s": 7, "db.wal_file_bytes": 3000,
			"db.wait.IO:WALSync": 0.5, "db.wait.CPU": 0.5, "db.wait.other.Client:ClientRead": 1,
			"db.sessions.active": 2, "db.sessions.other.active": 0.5,
		},
		{
			"db.xact_commit/s": 100 / 0.2, "db.resets/s": 10 / 0.2, "db.late/s": 7 / 0.2, "db.wal_file_bytes": 4000,
			"db.wait.IO:WALSync": 0, "db.wait.CPU": 1,
			"db.sessions.active": 1, "db.sessions.other.active": 0,
		},
	}
	for i, iv := range got {
		if !iv.Start.Equal(origin.Add(bounds[i][0])) || !iv.End.Equal(origin.Add(bounds[i][1])) {
			t.Errorf("interval %d: %v – %v, want %v – %v", i, iv.Start.Sub(origin), iv.End.Sub(origin), bounds[i][0], bounds[i][1])
		}
		t.Run(bounds[i][1].String(), func(t *testing.T) {
			checkMetrics(t, dbMetrics(iv.Metrics), want[i])
			for _, name := range []string{"host.mem.used%", "client.goroutines"} {
				if _, ok := iv.Metrics[name]; !ok {
					t.Errorf("%s missing", name)
				}
			}
		})
	}
	if !fm.closed {
		t.Error("database monitor not closed")
	}
	if notes := m.Notes(); len(notes) != 1 || notes[0] != "pg_stat_wal: needs PostgreSQL 14" {
		t.Errorf("notes = %q", notes)
	}
	m.Stop() // a second Stop does nothing
	if n := len(c.all()); n != 4 {
		t.Errorf("second Stop: %d intervals", n)
	}
}

// TestMonitorLate checks that a loop held up past several boundaries
// reports one interval spanning them, still ending on a boundary.
func TestMonitorLate(t *testing.T) {
	fm := &fakeMonitor{failSampleAt: -1, failWaitsAt: -1}
	m, clk, c := startFake(t, &fakeDB{mon: fm}, fm)
	clk.advanceTo(origin.Add(time.Second))
	clk.advance(2500 * time.Millisecond)
	m.Stop()
	got := c.all()
	if len(got) != 3 {
		t.Fatalf("got %d intervals, want 3", len(got))
	}
	if !got[1].Start.Equal(origin.Add(time.Second)) || !got[1].End.Equal(origin.Add(3*time.Second)) {
		t.Errorf("late interval: %v – %v, want 1s – 3s", got[1].Start.Sub(origin), got[1].End.Sub(origin))
	}
	if r := got[1].Metrics["db.xact_commit/s"]; r != 100.0/2.5 {
		t.Errorf("rate over the late interval = %v, want 40 (100 over the 2.5 s between readings)", r)
	}
	// The wait samples the loop slept through are skipped, not taken late
	// in a burst.
	if w := fm.waits; w != 3 {
		t.Errorf("%d wait samples, want the 3 of the first interval", w)
	}
	if !got[2].Start.Equal(origin.Add(3*time.Second)) || !got[2].End.Equal(origin.Add(3500*time.Millisecond)) {
		t.Errorf("final interval: %v – %v", got[2].Start.Sub(origin), got[2].End.Sub(origin))
	}
}

func TestMonitorDatabaseFails(t *testing.T) {
	tests := []struct {
		name     string
		db       driver.DB
		fm       *fakeMonitor
		wantNote string
		dbUntil  int // intervals that have database counter rates
	}{
		{
			name: "sample fails", fm: &fakeMonitor{failSampleAt: 2, failWaitsAt: -1},
			wantNote: "database monitor lost its connection 2s into the run (it reconnects at the next interval; the host and the client are still sampled): connection reset by peer", dbUntil: 1,
		},
		{
			// The sixth wait sample is due at 1.625 s; the clock steps reach it at 1.65 s.
			name: "waits fail", fm: &fakeMonitor{failSampleAt: -1, failWaitsAt: 5},
			wantNote: "database monitor lost its connection 1.65s into the run (it reconnects at the next interval; the host and the client are still sampled): connection reset by peer", dbUntil: 1,
		},
		{
			name: "base sample fails", fm: &fakeMonitor{failSampleAt: 0, failWaitsAt: -1},
			wantNote: "database monitor lost its connection 300ms into the run (it reconnects at the next interval; the host and the client are still sampled): connection reset by peer", dbUntil: 0,
		},
		{
			name: "open fails", db: &fakeDB{openErr: errors.New("dial tcp 127.0.0.1:5432: connection refused")},
			wantNote: "database monitor could not be opened, so only the host and the client are sampled: dial tcp 127.0.0.1:5432: connection refused",
		},
		{name: "not monitorable", db: struct{ driver.DB }{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.db
			if db == nil {
				db = &fakeDB{mon: tt.fm}
			}
			m, clk, c := startFake(t, db, tt.fm)
			clk.advanceTo(origin.Add(3200 * time.Millisecond))
			m.Stop()

			got := c.all()
			if len(got) != 4 {
				t.Fatalf("got %d intervals, want 4: the loop goes on", len(got))
			}
			for i, iv := range got {
				_, hasDB := iv.Metrics["db.xact_commit/s"]
				if hasDB != (i < tt.dbUntil) {
					t.Errorf("interval %d: database rates present: %v", i, hasDB)
				}
				for _, name := range []string{"host.mem.used%", "client.goroutines"} {
					if _, ok := iv.Metrics[name]; !ok {
						t.Errorf("interval %d: %s missing", i, name)
					}
				}
			}
			notes := m.Notes()
			var own []string
			for _, n := range notes {
				if !strings.HasPrefix(n, "pg_stat_wal") {
					own = append(own, n)
				}
			}
			if tt.wantNote == "" {
				if len(own) != 0 {
					t.Errorf("notes = %q", own)
				}
				return
			}
			if len(own) != 1 || own[0] != tt.wantNote {
				t.Errorf("notes = %q, want %q", own, tt.wantNote)
			}
			if tt.fm != nil {
				if tt.fm.callsAfterFailed != 0 {
					t.Errorf("%d database calls after the failure", tt.fm.callsAfterFailed)
				}
				if !tt.fm.closed {
					t.Error("database monitor not closed")
				}
			}
		})
	}
}

// TestMonitorReconnects loses the database monitor's connection in the
// second interval and gets a new one at the end of the third: the fourth
// has database rates again, and the notes say both.
func TestMonitorReconnects(t *testing.T) {
	fm := &fakeMonitor{failSampleAt: 2, failWaitsAt: -1}
	var second *fakeMonitor
	db := &fakeDB{mon: fm}
	m, clk, c := startFake(t, db, fm)
	clk.advanceTo(origin.Add(2500 * time.Millisecond))
	db.reopen = func() *fakeMonitor {
		second = &fakeMonitor{clock: clk, failSampleAt: -1, failWaitsAt: -1}
		return second
	}
	clk.advanceTo(origin.Add(4200 * time.Millisecond))
	m.Stop()
	got := c.all()
	if len(got) != 5 {
		t.Fatalf("got %d intervals, want 5", len(got))
	}
	for i, want := range []bool{true, false, false, true, true} {
		if _, ok := got[i].Metrics["db.xact_commit/s"]; ok != want {
			t.Errorf("interval %d: database rates present: %v, want %v", i, ok, want)
		}
	}
	if !fm.closed || second == nil {
		t.Fatalf("the failed monitor closed: %v; reopened: %v", fm.closed, second != nil)
	}
	notes := strings.Join(m.Notes(), "\n")
	if !strings.Contains(notes, "lost its connection 2s into the run") || !strings.Contains(notes, "database monitor reconnected 3s into the run, after 1s without database samples") {
		t.Errorf("notes: %s", notes)
	}
}

// TestMonitorRealClock runs the loop on the real clock briefly: the
// boundaries still fall on Origin + k×Interval, and Stop reports the
// interval in progress.
func TestMonitorRealClock(t *testing.T) {
	c := &collector{}
	org := time.Now().Add(-15 * time.Millisecond)
	m, err := Start(context.Background(), struct{ driver.DB }{}, Options{Interval: 20 * time.Millisecond, Origin: org}, c.add)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(c.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	m.Stop()
	got := c.all()
	if len(got) < 3 {
		t.Fatalf("got %d intervals", len(got))
	}
	for i, iv := range got[:len(got)-1] {
		if d := iv.End.Sub(org); d%(20*time.Millisecond) != 0 {
			t.Errorf("interval %d ends %v after origin, not on a boundary", i, d)
		}
		if i > 0 && !iv.Start.Equal(got[i-1].End) {
			t.Errorf("interval %d starts at %v, previous ended at %v", i, iv.Start, got[i-1].End)
		}
	}
	if last := got[len(got)-1]; !last.Start.Equal(got[len(got)-2].End) || !last.End.After(last.Start) {
		t.Errorf("final interval %v – %v", last.Start, last.End)
	}
}

func TestStartRejects(t *testing.T) {
	noop := func(Interval) {}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		opts Options
		fn   func(Interval)
	}{
		{"nil callback", context.Background(), Options{}, nil},
		{"negative interval", context.Background(), Options{Interval: -time.Second}, noop},
		{"negative wait samples", context.Background(), Options{WaitSamples: -1}, noop},
		{"context done", cancelled, Options{}, noop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := Start(tt.ctx, struct{ driver.DB }{}, tt.opts, tt.fn); err == nil {
				m.Stop()
				t.Fatal("no error")
			}
		})
	}
}

// TestWaitCountingAllocs: counting a wait sample allocates nothing once its
// events have been seen, so sampling ten times a second costs the run no
// garbage beyond what the driver returns.
func TestWaitCountingAllocs(t *testing.T) {
	var w waitCounts
	w.init()
	w.add(waitsA)
	w.add(waitsB)
	w.reset()
	if n := testing.AllocsPerRun(100, func() {
		w.add(waitsA)
		w.add(waitsB)
	}); n != 0 {
		t.Errorf("%v allocations per wait sample", n)
	}
}

// TestWaitsNoView: a database that has no view of its waits answers nil
// every time; it gets no session count of 0, which would be a claim.
func TestWaitsNoView(t *testing.T) {
	var w waitCounts
	w.init()
	for range 4 {
		w.add(nil)
	}
	m := map[string]float64{}
	w.report(m)
	if len(m) != 0 {
		t.Errorf("metrics from nil answers: %v", m)
	}
}

// cancelFragileMonitor behaves like go-sql-driver/mysql: a query whose
// context is cancelled takes the connection down with it, and every later
// query fails. Its Waits blocks until the test releases it.
type cancelFragileMonitor struct {
	entered chan struct{}
	release chan struct{}

	mu      sync.Mutex
	samples int
	broken  bool
}

func (m *cancelFragileMonitor) Sample(context.Context) (driver.Sample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken {
		return driver.Sample{}, errors.New("invalid connection")
	}
	m.samples++
	return driver.Sample{Counters: map[string]float64{"xact_commit": float64(100 * m.samples)}}, nil
}

func (m *cancelFragileMonitor) Waits(ctx context.Context) ([]driver.Wait, error) {
	select {
	case m.entered <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		m.mu.Lock()
		m.broken = true
		m.mu.Unlock()
		return nil, ctx.Err()
	case <-m.release:
		return nil, nil
	}
}

func (m *cancelFragileMonitor) Unavailable() []string { return nil }
func (m *cancelFragileMonitor) Close() error          { return nil }

type cancelFragileDB struct {
	driver.DB
	mon *cancelFragileMonitor
}

func (d *cancelFragileDB) Monitor(context.Context) (driver.Monitor, error) { return d.mon, nil }

// TestStopDuringWaits stops the monitor while a wait sample is being read:
// the reading must finish rather than be cancelled, so that the final
// interval still has the database's rates (a short run has no other).
func TestStopDuringWaits(t *testing.T) {
	fm := &cancelFragileMonitor{entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := &collector{}
	m, err := Start(context.Background(), &cancelFragileDB{mon: fm}, Options{Interval: time.Hour, WaitSamples: 1000000}, c.add)
	if err != nil {
		t.Fatal(err)
	}
	<-fm.entered
	stopped := make(chan struct{})
	go func() { m.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a wait sample was still being read")
	case <-time.After(50 * time.Millisecond):
	}
	close(fm.release)
	<-stopped
	got := c.all()
	if len(got) != 1 {
		t.Fatalf("got %d intervals, want the one in progress", len(got))
	}
	if _, ok := got[0].Metrics["db.xact_commit/s"]; !ok {
		t.Errorf("the final interval has no database rate: %v; notes %q", got[0].Metrics, m.Notes())
	}
}

// TestAlign moves the boundaries to the runner's start, known only once
// the monitor runs: the interval in progress ends there and then, and the
// later ones end on the new boundaries.
func TestAlign(t *testing.T) {
	fm := &fakeMonitor{failSampleAt: -1, failWaitsAt: -1}
	m, clk, c := startFake(t, &fakeDB{mon: fm}, fm)
	clk.advanceTo(origin.Add(1450 * time.Millisecond))
	m.Align(origin.Add(1400 * time.Millisecond))
	<-clk.blocked // asleep again, on the new boundaries
	clk.advanceTo(origin.Add(3500 * time.Millisecond))
	m.Stop()
	var ends []time.Duration
	for _, iv := range c.all() {
		ends = append(ends, iv.End.Sub(origin))
		if _, ok := iv.Metrics["db.xact_commit/s"]; !ok {
			t.Errorf("interval ending %v has no database rates", iv.End.Sub(origin))
		}
	}
	want := []time.Duration{1000, 1450, 2400, 3400, 3500}
	if len(ends) != len(want) {
		t.Fatalf("intervals end at %v, want %v ms", ends, want)
	}
	for i, w := range want {
		if ends[i] != w*time.Millisecond {
			t.Fatalf("intervals end at %v, want %v ms", ends, want)
		}
	}
}

// A note keeps the monitor's own words and shows an error as Describe
// says it, and the driver's own notes as DescribeText says them: a
// password-holding library message is withheld, not the whole note.
func TestNotesDescribeErrors(t *testing.T) {
	fm := &fakeMonitor{failSampleAt: 2, failWaitsAt: -1}
	clk := newFakeClock(origin.Add(300 * time.Millisecond))
	fm.clock = clk
	c := &collector{}
	opts := Options{WaitSamples: 4, Host: true, Origin: origin,
		Describe:     func(err error) string { return "<" + err.Error() + ">" },
		DescribeText: func(s string) string { return "[" + s + "]" }}
	m, err := start(context.Background(), &fakeDB{mon: fm}, opts, c.add, env{clock: clk, procRoot: "testdata/t0"})
	if err != nil {
		t.Fatal(err)
	}
	<-clk.blocked
	clk.advanceTo(origin.Add(3200 * time.Millisecond))
	m.Stop()
	notes := strings.Join(m.Notes(), "\n")
	for _, want := range []string{"database monitor lost its connection 2s into the run (it reconnects at the next interval; the host and the client are still sampled): <connection reset by peer>", "[pg_stat_wal"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// An error the driver classified shows its code and the code's name
// first, as every result shows them.
func TestDescribeShowsTheLabel(t *testing.T) {
	named := driver.ClassifyNamed(errors.New("terminating connection due to administrator command"), "57P01", "admin_shutdown", driver.ClassConnLost)
	if got, want := (Options{}).describe(named), "ERROR(57P01 admin_shutdown) terminating connection due to administrator command"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got, want := (Options{}).describe(errors.New("connection reset by peer")), "connection reset by peer"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
}

// hangingMonitor answers its first Sample and then hangs in every reading
// until its context ends, as a database behind a cut network does.
type hangingMonitor struct {
	mu      sync.Mutex
	samples int
	hung    chan struct{} // closed when a reading hangs
	ended   error         // the hung reading's ctx.Err()
}

func (m *hangingMonitor) Sample(ctx context.Context) (driver.Sample, error) {
	m.mu.Lock()
	m.samples++
	n := m.samples
	m.mu.Unlock()
	if n == 1 {
		return driver.Sample{Counters: map[string]float64{"xact_commit": 1}}, nil
	}
	return driver.Sample{}, m.hang(ctx)
}

func (m *hangingMonitor) Waits(ctx context.Context) ([]driver.Wait, error) { return nil, m.hang(ctx) }

func (m *hangingMonitor) hang(ctx context.Context) error {
	m.mu.Lock()
	select {
	case <-m.hung:
	default:
		close(m.hung)
	}
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	m.ended = ctx.Err()
	m.mu.Unlock()
	return ctx.Err()
}

func (m *hangingMonitor) Unavailable() []string { return nil }
func (m *hangingMonitor) Close() error          { return nil }

type hangingDB struct {
	driver.DB
	mon *hangingMonitor
}

func (d hangingDB) Monitor(context.Context) (driver.Monitor, error) { return d.mon, nil }

// Abandon cancels a reading of a database that stopped answering instead
// of waiting queryTimeout for it, and reads the database no more.
func TestAbandonCancelsAHungReading(t *testing.T) {
	hm := &hangingMonitor{hung: make(chan struct{})}
	c := &collector{}
	m, err := Start(context.Background(), hangingDB{mon: hm}, Options{Interval: 20 * time.Millisecond}, c.add)
	if err != nil {
		t.Fatal(err)
	}
	<-hm.hung
	m.Abandon()
	hm.mu.Lock()
	ended, samples := hm.ended, hm.samples
	hm.mu.Unlock()
	if !errors.Is(ended, context.Canceled) {
		t.Fatalf("the hung reading ended with %v, want it cancelled (not its %v timeout)", ended, queryTimeout)
	}
	got := c.all()
	if len(got) == 0 {
		t.Fatal("no interval reported")
	}
	if _, ok := got[len(got)-1].Metrics["db.xact_commit/s"]; ok {
		t.Error("the last interval has database rates from a database that stopped answering")
	}
	if samples > 2 {
		t.Errorf("%d database readings, want no more after the hung one", samples)
	}
	if notes := strings.Join(m.Notes(), "\n"); !strings.Contains(notes, "not read at the end: it had stopped answering") {
		t.Errorf("notes: %s", notes)
	}
}
