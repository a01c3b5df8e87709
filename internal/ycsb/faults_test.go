package ycsb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/sqlite"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// faultDBs are the databases the test driver "faultmem" opens, by the
// URL's host: faultmem://NAME:5432 opens faultDBs[NAME].
var (
	faultMu  sync.Mutex
	faultDBs = map[string]*faultDB{}
)

func init() {
	driver.Register("faultmem", faultDriver{})
	driver.Register("sqlitefull", sqliteFullDriver{})
}

type faultDriver struct{}

func (faultDriver) Open(_ context.Context, t driver.Target, _ driver.Options) (driver.DB, error) {
	faultMu.Lock()
	defer faultMu.Unlock()
	db, ok := faultDBs[t.URL.Hostname()]
	if !ok {
		return nil, errors.New("no fault database " + t.URL.Hostname())
	}
	return db, nil
}

// faultDB is a memDB on a server that can say how many connections it
// accepts, and whose monitor (one connection of its own) cannot open.
type faultDB struct {
	*memDB
	room    driver.ConnectionRoom
	roomErr error
}

func (f *faultDB) Info() driver.Info { return driver.Info{Driver: "faultmem"} }
func (f *faultDB) Inspect(context.Context, driver.Table) (driver.TableState, error) {
	return driver.TableState{Stateless: true, Storage: "in the test's memory"}, nil
}
func (f *faultDB) ConnectionRoom(context.Context) (driver.ConnectionRoom, error) {
	return f.room, f.roomErr
}
func (f *faultDB) Monitor(context.Context) (driver.Monitor, error) {
	return nil, errors.New("no monitor in this test")
}

// addFaultDB makes a faultmem database named after the test.
func addFaultDB(t *testing.T, db *faultDB) string {
	name := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(t.Name(), ""))
	faultMu.Lock()
	faultDBs[name] = db
	faultMu.Unlock()
	t.Cleanup(func() { faultMu.Lock(); delete(faultDBs, name); faultMu.Unlock() })
	return "faultmem://" + name + ":5432/x"
}

// runYCSB runs the phases on url with -p kvs, the JSON result in a file;
// it returns the command's error and the result read back.
func runYCSB(t *testing.T, url string, phases []runner.Phase, kvs ...string) (error, *result.File, string) {
	t.Helper()
	p := config.NewProperties()
	if err := p.LoadBuiltin("a", ""); err != nil {
		t.Fatal(err)
	}
	for _, kv := range kvs {
		if err := p.SetAssignment(kv); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "result.jsonl")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), &Config{
		Phases: phases, Properties: p, Strict: true,
		Target:  experiment.TargetConfig{DB: url},
		Outputs: experiment.OutputConfig{Out: out},
		Monitor: experiment.MonitorConfig{Interval: time.Second, WaitSamples: 10},
		Seed:    1, SeedGiven: true, DrainTimeout: time.Second,
		Stdout: &stdout, Stderr: &stderr,
	})
	f, ferr := os.Open(out)
	if ferr != nil {
		return err, nil, stdout.String()
	}
	defer f.Close()
	res, rerr := result.Read(f)
	if rerr != nil {
		t.Fatalf("reading the result: %v", rerr)
	}
	return err, res, stdout.String()
}

// A phase whose threads the server would turn away is refused before it
// starts, with the numbers: the threads and the monitor's connection
// against what the server accepts now.
func TestTooFewConnectionsRefusePhase(t *testing.T) {
	db := &faultDB{memDB: newMemDB(), room: driver.ConnectionRoom{Max: 100, InUse: 6, Setting: "max_connections"}}
	url := addFaultDB(t, db)
	err, _, _ := runYCSB(t, url, []runner.Phase{runner.Load}, "recordcount=1000", "threadcount=200")
	want := "--threads 200 needs 201 connections, but faultmem at " + strings.TrimPrefix(strings.TrimSuffix(url, "/x"), "faultmem://") +
		" accepts 94 more (max_connections 100, 6 in use); lower --threads or raise max_connections"
	if !badinput.Is(err) || err.Error() != want {
		t.Fatalf("err %v (bad input %v), want bad input:\n%s", err, badinput.Is(err), want)
	}
	if db.sessions.Load() != 0 || db.calls.Load() != 0 {
		t.Fatalf("%d sessions opened, %d calls before the refusal", db.sessions.Load(), db.calls.Load())
	}
	// With room enough, or a server that cannot say, the phase goes on.
	db.room.Max = 1000
	if err, _, _ := runYCSB(t, url, []runner.Phase{runner.Load}, "recordcount=1000", "threadcount=200"); err != nil {
		t.Fatalf("with room: %v", err)
	}
	db.room.Max, db.roomErr = 100, errors.New("permission denied for pg_stat_activity")
	if err, _, _ := runYCSB(t, url, []runner.Phase{runner.Load}, "recordcount=1000", "threadcount=200"); err != nil {
		t.Fatalf("with a server that cannot say: %v", err)
	}
}

// A load whose server goes away for good waits reconnect.timeout, then
// stops with one line, exit status 1, and a result complete up to then.
func TestUnreachableServerStopsALoad(t *testing.T) {
	db := &faultDB{memDB: newMemDB()}
	var batches atomic.Int64
	db.failKey = func(string) error {
		if batches.Add(1) > 10 {
			db.down.Store(true)
			return errShutdown
		}
		return nil
	}
	url := addFaultDB(t, db)
	err, res, stdout := runYCSB(t, url, []runner.Phase{runner.Load}, "recordcount=100000", "db.batchsize=100", "reconnect.timeout=200ms")
	if !errors.Is(err, ErrPhaseFailed) || badinput.Is(err) {
		t.Fatalf("err %v, want a failed phase (exit 1)", err)
	}
	t.Log(err)
	where := strings.TrimPrefix(strings.TrimSuffix(url, "/x"), "faultmem://")
	msg := regexp.MustCompile(`since \d\d:\d\d:\d\d:`).ReplaceAllString(err.Error(), "since HH:MM:SS:")
	want := "faultmem at " + where + " has not answered for 0.2 s since HH:MM:SS: the load stops, after 1,000 of 100,000 rows; the table usertable is incomplete (left as it is); bring the server back (or wait longer with --reconnect-timeout), then load again"
	if msg != want {
		t.Fatalf("message\n%s\nwant\n%s", err, want)
	}
	sum := res.Phases[0].Summary
	if sum == nil || sum.Stopped == nil || sum.Stopped.Reason != result.StopUnreachable || sum.Stopped.Text != err.Error() ||
		sum.Stopped.Since.IsZero() || sum.Ending == nil || sum.Ending.By != "unreachable" || sum.Ops-sum.Errors["ERROR(57P01)"] != 1000 {
		t.Fatalf("summary %+v, stopped %+v", sum, sum.Stopped)
	}
	if a := sum.Availability; a == nil || len(a.Outages) != 1 || !a.Outages[0].Ongoing {
		t.Fatalf("availability %+v, want one outage still going on", sum.Availability)
	}
	if want := "stopped after 1100 operations (100 failed): the database did not answer for 0.2 s (reconnect.timeout)"; sum.Ending.Text != want {
		t.Fatalf("ended %q, want %q", sum.Ending.Text, want)
	}
	if !strings.Contains(stdout, "\n# stopped: "+err.Error()+"\n") {
		t.Fatalf("text output lacks the stop:\n%s", stdout)
	}
}

// With onerror=continue a failure more attempts cannot fix is counted
// and the load goes on; the verdict says it measured the failure.
func TestOnErrorContinueMeasuresTheFailure(t *testing.T) {
	db := &faultDB{memDB: newMemDB()}
	full := driver.ClassifyNamed(errors.New("database or disk is full"), "13", "SQLITE_FULL", driver.ClassFatal)
	var batches atomic.Int64
	db.failKey = func(string) error {
		if batches.Add(1) > 10 {
			return full
		}
		return nil
	}
	url := addFaultDB(t, db)
	err, res, _ := runYCSB(t, url, []runner.Phase{runner.Load}, "recordcount=10000", "db.batchsize=100", "onerror=continue")
	if !errors.Is(err, ErrPhaseFailed) || !strings.Contains(err.Error(), "load: 9000 of 10000 inserts failed (ERROR(13 SQLITE_FULL)×9000)") {
		t.Fatalf("err %v", err)
	}
	if db.calls.Load() != 100 {
		t.Fatalf("%d batches sent, want all 100", db.calls.Load())
	}
	sum := res.Phases[0].Summary
	if sum.Stopped != nil || sum.Diagnosis == nil || sum.Diagnosis.Limit != "failing" ||
		!strings.HasPrefix(sum.Diagnosis.Verdict, "failing: 9,000 rows failed with ERROR(13 SQLITE_FULL) database or disk is full") {
		t.Fatalf("stopped %+v, diagnosis %+v", sum.Stopped, sum.Diagnosis)
	}
}

// sqliteFullDriver is the SQLite driver with SQLITE_FULL (13) classified
// as a failure more attempts cannot fix, under its name, as the SQLite
// driver does from issue 25 on, and with the database's directory known
// (driver.DataLocator).
type sqliteFullDriver struct{}

func (sqliteFullDriver) Open(ctx context.Context, t driver.Target, opts driver.Options) (driver.DB, error) {
	d, _, err := driver.Lookup("sqlite")
	if err != nil {
		return nil, err
	}
	db, err := d.Open(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return &sqliteFull{DB: db, dir: filepath.Dir(t.URL.Path)}, nil
}

type sqliteFull struct {
	driver.DB
	dir string
}

func (s *sqliteFull) DataDirectory(context.Context) (string, error) { return s.dir, nil }
func (s *sqliteFull) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	sess, err := s.DB.Session(ctx, t)
	if err != nil {
		return nil, err
	}
	return &fullSession{Session: sess}, nil
}

type fullSession struct{ driver.Session }

func fatalFull(err error) error {
	if driver.Code(err) == "13" {
		return driver.ClassifyNamed(err, "13", "SQLITE_FULL", driver.ClassFatal)
	}
	return err
}

func (s *fullSession) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	return fatalFull(s.Session.InsertBatch(ctx, keys, values))
}

// mountSmall mounts a tmpfs of size at a new directory for the test, or
// skips the test where mounting is not allowed (not root).
func mountSmall(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("this test fills a small file system of its own, and cannot mount one here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// A SQLite load on a file system too small for it stops at the first
// full batch with one line: the cause in words, the rows loaded, the
// table left incomplete, the file system and its free space now; exit
// status 1, the result complete up to then, and the database intact.
func TestFullDiskStopsASQLiteLoad(t *testing.T) {
	dir := mountSmall(t, "1m")
	file := filepath.Join(dir, "ycsb.db")
	err, res, _ := runYCSB(t, "sqlitefull://"+file, []runner.Phase{runner.Load}, "recordcount=100000", "db.batchsize=100")
	if !errors.Is(err, ErrPhaseFailed) || badinput.Is(err) {
		t.Fatalf("err %v, want a failed phase (exit 1)", err)
	}
	m := regexp.MustCompile(`^load stopped: ERROR\(13 SQLITE_FULL\) database or disk is full, after ([0-9,]+) of 100,000 rows; the table usertable is incomplete \(left as it is\); (.*) on (.*) \(tmpfs\) has (.*) free now: free space there, then load again$`).FindStringSubmatch(err.Error())
	if m == nil || m[2] != dir || m[3] != dir {
		t.Fatalf("message %q", err)
	}
	t.Log(err)
	loaded := strings.ReplaceAll(m[1], ",", "")
	sum := res.Phases[0].Summary
	if sum == nil || sum.Stopped == nil || sum.Stopped.Reason != result.StopFatal || sum.Stopped.Code != "13 SQLITE_FULL" || sum.Stopped.Op != "INSERT" ||
		sum.Stopped.Text != err.Error() || sum.Ending.By != "error" {
		t.Fatalf("summary %+v, stopped %+v", sum, sum.Stopped)
	}
	// One batch failed, the one that met the full disk: none was sent
	// after it (one thread).
	if n := sum.Errors["ERROR(13 SQLITE_FULL)"]; n != 100 || len(sum.Errors) != 1 {
		t.Fatalf("errors %v, want the one batch of 100 rows that met the full disk", sum.Errors)
	}
	if fmt.Sprint(sum.Ops-100) != loaded {
		t.Fatalf("ops %d, message says %s rows loaded", sum.Ops, loaded)
	}
	if sum.Diagnosis == nil || sum.Diagnosis.Limit != "stopped" || !strings.HasPrefix(sum.Diagnosis.Verdict, "stopped: ERROR(13 SQLITE_FULL) database or disk is full") {
		t.Fatalf("diagnosis %+v", sum.Diagnosis)
	}
	// Once space is freed, the table holds the rows the message says,
	// and the file is sound.
	if out, err := exec.Command("mount", "-o", "remount,size=8m", dir).CombinedOutput(); err != nil {
		t.Fatalf("freeing space: %v %s", err, out)
	}
	db, oerr := sql.Open(sqliteLib(), file)
	if oerr != nil {
		t.Fatal(oerr)
	}
	defer db.Close()
	var rows int64
	var check string
	if err := db.QueryRow("SELECT count(*) FROM usertable").Scan(&rows); err != nil || fmt.Sprint(rows) != loaded {
		t.Fatalf("usertable holds %d rows (%v), the message says %s", rows, err, loaded)
	}
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check %q, %v", check, err)
	}
}

// sqliteLib is the database/sql name of the SQLite library in the build.
func sqliteLib() string {
	for _, d := range sql.Drivers() {
		if d == "sqlite3" || d == "sqlite" {
			return d
		}
	}
	return ""
}
