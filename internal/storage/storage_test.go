package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// target is one real database the tests run on: a new SQLite file, or a
// new database on the servers scripts/with-databases started.
type target struct {
	name string
	url  func(t *testing.T) string
}

var targets = []target{
	{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "st.db")) }},
	{"postgres", func(t *testing.T) string { return testdb.FreshPostgresDatabase(t) }},
	{"mariadb", func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) }},
}

// outcome is what a run printed and wrote.
type outcome struct {
	text, stderr string
	sum          *result.Summary
	readErr      error // why the JSON result could not be read, if it could not
}

// small is a small, short run of kind on url, its JSON result kept.
func small(t *testing.T, kind Kind, url string) *Config {
	return &Config{
		Kind: kind, Size: 8_000_000, Duration: 500 * time.Millisecond, Chunk: 2_000_000,
		Target:       experiment.TargetConfig{DB: url},
		Outputs:      experiment.OutputConfig{Out: filepath.Join(t.TempDir(), "r.jsonl")},
		Monitor:      experiment.MonitorConfig{Interval: 250 * time.Millisecond, WaitSamples: 2},
		DrainTimeout: 5 * time.Second,
	}
}

// runC runs c and reads back its summary from the JSON result.
func runC(t *testing.T, c *Config) (outcome, error) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := Run(context.Background(), c)
	o := outcome{text: out.String(), stderr: errb.String()}
	f, rerr := os.Open(c.Outputs.Out)
	if rerr == nil {
		defer f.Close()
		var r *result.File
		if r, rerr = result.Read(f); rerr == nil && len(r.Phases) > 0 {
			o.sum = r.Phases[len(r.Phases)-1].Summary
		}
	}
	o.readErr = rerr
	return o, err
}

// mustRun runs c and fails the test on an error or a summary without
// the storage figures.
func mustRun(t *testing.T, c *Config) (outcome, *result.StorageSummary) {
	t.Helper()
	o, err := runC(t, c)
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s\nstdout: %s", c.Kind, err, o.stderr, o.text)
	}
	if o.sum == nil || o.sum.Storage == nil {
		t.Fatalf("%s: no storage summary in the result (reading it: %v)\n%s", c.Kind, o.readErr, o.text)
	}
	return o, o.sum.Storage
}

// openDB opens url through its driver, for checks beside a run's.
func openDB(t *testing.T, url string) driver.DB {
	t.Helper()
	tg, err := driver.ParseTarget(url, "")
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := driver.Lookup(tg.Driver)
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(context.Background(), tg, driver.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// count runs SELECT count(*) on table through SQL text: a path the
// experiment's own count (a server-side scan) does not take.
func count(t *testing.T, db driver.DB, table string) int64 {
	t.Helper()
	var n int64 = -1
	queryRows(t, db, "SELECT count(*) FROM "+table, func(row []any) {
		switch v := row[0].(type) {
		case int64:
			n = v
		case []byte:
			n = parseInt(string(v))
		case string:
			n = parseInt(v)
		}
	})
	return n
}

// queryRows runs text on a new SQLConn of db and calls visit with each
// row it returns (valid only during the call, as SQLConn.Run says).
func queryRows(t *testing.T, db driver.DB, text string, visit func(row []any)) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.(driver.SQLRunner).SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.Prepare(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := conn.Run(ctx, st, nil, func(row []any) error {
		visit(row)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func parseInt(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

// exists says whether the table is there.
func exists(t *testing.T, db driver.DB, table string) bool {
	t.Helper()
	st, err := db.Inspect(context.Background(), driver.DataTable{Name: table, PayloadBytes: DefaultPayload}.Table())
	if err != nil {
		t.Fatal(err)
	}
	return st.Exists
}

// A table left in the database's caches after its fill is read from
// them: the scan says "not physical", on every database.
func TestWarmScanIsNotPhysical(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			url := tg.url(t)
			c := small(t, Scan, url)
			c.NoCold = true
			o, st := mustRun(t, c)
			if st.Proof == nil || st.Proof.Physical || !strings.HasPrefix(st.Verdict, "not physical") {
				t.Fatalf("verdict %q, proof %+v\n%s", st.Verdict, st.Proof, o.text)
			}
			if !strings.Contains(o.text, "# verdict: not physical") || !strings.Contains(o.text, "[SCAN], Rate(GB/min), ") {
				t.Errorf("text:\n%s", o.text)
			}
			if st.Bytes < st.Table.Bytes || st.Table.Bytes < c.Size*9/10 || st.Rate <= 0 {
				t.Errorf("scanned %d bytes of a %d-byte table at %g B/s", st.Bytes, st.Table.Bytes, st.Rate)
			}
			if exists(t, openDB(t, url), "dbprobe_storage_scan") {
				t.Error("the scan's table is still there")
			}
			// The header holds --size against the database's own cache.
			if want := map[string]string{
				"sqlite":   "# note: scan: --size 8MB is larger than twice the database's cache (cache_size = -2000 (KiB) of the scanning connection: 2.048MB)",
				"postgres": "# note: scan: --size 8MB is not larger than the database's cache (shared_buffers = ",
				"mariadb":  "# note: scan: --size 8MB is not larger than the database's cache (innodb_buffer_pool_size = ",
			}[tg.name]; !strings.Contains(o.text, want) {
				t.Errorf("no %q in the header:\n%s", want, o.text)
			}
		})
	}
}

// Every row the writers acknowledged is in the table afterwards, counted
// by SQL text, by the bulk API and by multi-row INSERT.
func TestBulkRowsCounted(t *testing.T) {
	for _, tg := range targets {
		for _, noCopy := range []bool{false, true} {
			t.Run(tg.name+map[bool]string{false: "/bulk-api", true: "/no-copy"}[noCopy], func(t *testing.T) {
				url := tg.url(t)
				c := small(t, Bulk, url)
				c.Threads, c.Batch, c.NoCopy, c.Keep, c.Duration = []int{3}, 500, noCopy, true, time.Minute
				_, st := mustRun(t, c)
				want := c.Size / int64(8+DefaultPayload)
				db := openDB(t, url)
				got := count(t, db, "dbprobe_storage_bulk")
				if got != want || st.Rows != want || st.Steps[0].Rows != want {
					t.Fatalf("counted %d rows, the run says %d (step %d); want %d", got, st.Rows, st.Steps[0].Rows, want)
				}
				if !strings.Contains(st.Verdict, "rows acknowledged are in the table") {
					t.Errorf("verdict %q", st.Verdict)
				}
				if noCopy && !strings.Contains(st.Steps[0].How, "INSERT") {
					t.Errorf("--no-copy path %q", st.Steps[0].How)
				}
				if err := db.(driver.TableFiller).DropDataTable(context.Background(), driver.DataTable{Name: "dbprobe_storage_bulk", PayloadBytes: DefaultPayload}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// Passes of a few milliseconds, repeated for 2 s, keep the monitor at its
// interval: each execution used to end the monitor's interval early, and
// a tiny table gave hundreds of samples (392 in a 5 s scan), each a round
// of queries on the database being measured.
func TestShortPassesKeepTheMonitorsCadence(t *testing.T) {
	url := targets[1].url(t)
	c := small(t, Scan, url)
	c.NoCold, c.Duration = true, 2*time.Second
	o, st := mustRun(t, c)
	if len(st.Steps) < 20 {
		t.Fatalf("%d passes: the test needs many short ones\n%s", len(st.Steps), o.text)
	}
	f, err := os.Open(c.Outputs.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	// Short samples are the symptom (993 of them before, against 2 to 4
	// now: the edges of the fill and of the end); how many whole ones
	// there are depends on how long the fill took.
	short := 0
	for _, s := range r.Phases[len(r.Phases)-1].Monitor {
		if s.End.Sub(s.Start) < c.Monitor.Interval/2 {
			short++
		}
	}
	if short > 5 {
		t.Errorf("%d of %d monitor samples shorter than half the interval over %d passes", short, len(r.Phases[len(r.Phases)-1].Monitor), len(st.Steps))
	}
}

// A table a killed run left is dropped by the next run, which says so; a
// table of that name dbprobe did not create is refused and left alone.
func TestLeftoversAndForeignTables(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			url := tg.url(t)
			c := small(t, Scan, url)
			c.NoCold, c.Keep = true, true
			o, _ := mustRun(t, c)
			if !strings.Contains(o.stderr, "kept table dbprobe_storage_scan (--keep)") {
				t.Errorf("stderr %q", o.stderr)
			}
			db := openDB(t, url)
			if !exists(t, db, "dbprobe_storage_scan") {
				t.Fatal("--keep did not keep the table")
			}
			// The same size and payload: the kept table is used again, and
			// kept again.
			c = small(t, Scan, url)
			c.NoCold, c.Keep = true, true
			o, sum := mustRun(t, c)
			if !strings.Contains(o.stderr, "using table dbprobe_storage_scan again, which an earlier dbprobe storage scan kept (--keep)") ||
				strings.Contains(o.stderr, "filling") || sum.Table.Rows != 8_000_000/(8+DefaultPayload) {
				t.Errorf("reuse: %d rows, stderr %q", sum.Table.Rows, o.stderr)
			}
			// Another size: dropped and refilled, saying why.
			c = small(t, Scan, url)
			c.NoCold, c.Keep, c.Size = true, true, 4_000_000
			o, _ = mustRun(t, c)
			if !strings.Contains(o.stderr, "dropped table dbprobe_storage_scan, which an earlier dbprobe storage scan left (kept with --keep, or stopped before it could drop it); it does not fit this run (it has 7,936 rows, this run fills 3,968") ||
				!strings.Contains(o.stderr, "filling dbprobe_storage_scan") {
				t.Errorf("refill: stderr %q", o.stderr)
			}
			// Another experiment finds the scan's table and drops it.
			o, _ = mustRun(t, small(t, Read, url))
			if !strings.Contains(o.stderr, "dropped table dbprobe_storage_scan, which an earlier dbprobe storage scan left") {
				t.Errorf("stderr %q", o.stderr)
			}
			if exists(t, db, "dbprobe_storage_scan") || exists(t, db, "dbprobe_storage_read") {
				t.Fatal("a table is still there")
			}
			// Someone else's table of that name.
			ctx := context.Background()
			conn, err := db.(driver.SQLRunner).SQLConn(ctx, driver.SQLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st, err := conn.Prepare(ctx, "CREATE TABLE dbprobe_storage_scan (id bigint)")
			if err == nil {
				_, err = conn.Run(ctx, st, nil, nil)
				st.Close()
			}
			conn.Close()
			if err != nil {
				t.Fatal(err)
			}
			_, err = runC(t, small(t, Scan, url))
			if !badinput.Is(err) || !strings.Contains(err.Error(), "dbprobe did not create") {
				t.Fatalf("someone else's table: %v", err)
			}
			if !exists(t, db, "dbprobe_storage_scan") {
				t.Fatal("someone else's table was dropped")
			}
		})
	}
}

// Ctrl-C in the middle of a long scan stops it, keeps what was measured
// and drops the table.
func TestInterruptDropsTheTable(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			url := tg.url(t)
			c := small(t, Read, url)
			c.Duration = time.Minute
			var out, errb testdb.LockedBuffer
			c.Stdout, c.Stderr = &out, &errb
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Run(ctx, c) }()
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(out.String(), "# settings:") && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the run did not stop within 30 s of the interrupt")
			}
			if !strings.Contains(out.String(), "[READ], Rate(GB/min)") {
				t.Errorf("no figures after the interrupt:\n%s", out.String())
			}
			if exists(t, openDB(t, url), "dbprobe_storage_read") {
				t.Error("the table outlived the interrupt")
			}
		})
	}
}

// What a database cannot run is one line of bad input naming it, and
// nothing is made.
func TestRefusals(t *testing.T) {
	c := small(t, Scan, "null")
	if _, err := runC(t, c); !badinput.Is(err) || !strings.Contains(err.Error(), "dbprobe storage scan") {
		t.Errorf("null: %v", err)
	}
	t.Run("redis", func(t *testing.T) {
		c := small(t, LogCopy, testdb.RedisURL(t))
		_, err := runC(t, c)
		if !badinput.Is(err) || !strings.Contains(err.Error(), "Redis has no") {
			t.Errorf("redis: %v", err)
		}
	})
	t.Run("no room", func(t *testing.T) {
		dir := t.TempDir()
		url := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "st.db"))
		c := small(t, Scan, url)
		c.Size = 1 << 58
		_, err := runC(t, c)
		if !badinput.Is(err) || !strings.Contains(err.Error(), "free; give a smaller --size") {
			t.Fatalf("a size above the free space: %v", err)
		}
		if exists(t, openDB(t, url), "dbprobe_storage_scan") {
			t.Error("a table was made")
		}
	})
}

// The write experiment counts the table it wrote and, where the database
// counts it, its log.
func TestWriteAndRead(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			url := tg.url(t)
			w := small(t, Write, url)
			// Samples often enough for the checkpoint age to be seen
			// while the chunks are written.
			w.Monitor.Interval = 50 * time.Millisecond
			o, st := mustRun(t, w)
			if strings.Contains(o.text, "by INSERT … SELECT (INSERT … SELECT)") {
				t.Errorf("the write note names INSERT … SELECT twice:\n%s", o.text)
			}
			if want := int64(4 * (2_000_000 / (8 + DefaultPayload))); st.Rows != want {
				t.Errorf("wrote %d rows, want %d (4 chunks)", st.Rows, want)
			}
			if st.Bytes < 8_000_000*9/10 || st.Rate <= 0 || !strings.HasPrefix(st.Verdict, "write: ") {
				t.Errorf("write: %d bytes at %g, %q", st.Bytes, st.Rate, st.Verdict)
			}
			// Every row's payload goes through the log once at least.
			if payload := st.Rows * DefaultPayload; tg.name != "sqlite" && st.Steps[0].LogBytes < payload*9/10 {
				t.Errorf("log bytes %d for %d bytes of payload written", st.Steps[0].LogBytes, payload)
			}
			// Write amplification: the log's bytes per byte of table, and
			// the checkpoints where the database counts them (InnoDB only
			// with its metric enabled, which the line says how to do).
			a := st.Amplification
			if a == nil || a.TableBytes != st.Bytes || a.LogBytes != st.Steps[0].LogBytes || (a.Checkpoints < 0 && tg.name != "mariadb") {
				t.Errorf("write amplification %+v, step %+v", a, st.Steps[0])
			} else if tg.name == "mariadb" && a.Checkpoints < 0 && !strings.Contains(a.CheckpointsHow, "innodb_monitor_enable = 'log_checkpoints'") {
				t.Errorf("checkpoints: %s", a.CheckpointsHow)
			} else if tg.name == "postgres" && (a.LogPerByte < 0.9 || a.LogPerByte > 1.5) {
				t.Errorf("%.2f bytes of log per byte of table", a.LogPerByte)
			}
			// The checkpoint age: sampled on MariaDB (between 0 and its
			// maximum, the setting that sizes the log named), and on the
			// others a line that says why not. A write done within one
			// monitor interval has one sample: the count is not asked for.
			ca := st.CheckpointAge
			switch {
			case ca == nil:
				t.Errorf("no checkpoint age in the result")
			case tg.name == "mariadb" && (ca.NotSampled != "" || ca.Samples < 1 || ca.PeakBytes < 0 || ca.MaxBytes <= 0 || ca.PeakBytes > ca.MaxBytes ||
				ca.Setting != "innodb_log_file_size" || !strings.Contains(o.text, "# checkpoint age: peak ")):
				t.Errorf("checkpoint age %+v\n%s", ca, o.text)
			case tg.name != "mariadb" && (ca.NotSampled == "" || !strings.Contains(o.text, "# checkpoint age: not sampled: ")):
				t.Errorf("checkpoint age %+v\n%s", ca, o.text)
			}
			if ca != nil {
				t.Logf("checkpoint age: %s", ca.Text())
			}
			c := small(t, Read, url)
			c.Threads = []int{1, 2}
			_, st = mustRun(t, c)
			if len(st.Steps) != 2 || st.Steps[1].Rows == 0 || st.Bytes != (st.Steps[0].Rows+st.Steps[1].Rows)*DefaultPayload {
				t.Errorf("read steps %+v, bytes %d", st.Steps, st.Bytes)
			}
		})
	}
}

// A role that may not create tables in the schema is told so in one
// line of bad input, and nothing is left: no table, no marker table.
func TestNoPrivilegeToCreate(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	admin := openDB(t, url)
	var rnd [6]byte
	rand.Read(rnd[:])
	role, password := "dbprobe_st_"+hex.EncodeToString(rnd[:]), "pw-"+hex.EncodeToString(rnd[:3])
	if err := execSQL(admin, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { execSQL(admin, "DROP ROLE IF EXISTS "+role) })
	// PostgreSQL 15 gives PUBLIC no CREATE on the public schema; an older
	// server does, and it is taken back here.
	if err := execSQL(admin, "REVOKE CREATE ON SCHEMA public FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.UserPassword(role, password)
	o, err := runC(t, small(t, Scan, u.String()))
	if !badinput.Is(err) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "refused to create the table dbprobe_storage_scan: permission denied for schema public") ||
		!strings.Contains(err.Error(), "grant the user CREATE (and DROP) on the schema") || strings.Contains(err.Error(), password) {
		t.Fatalf("no CREATE on the schema: %v\nstderr: %s", err, o.stderr)
	}
	t.Logf("%v", err)
	if n := count(t, admin, "pg_tables WHERE schemaname = 'public'"); n != 0 {
		t.Errorf("%d tables left in the schema", n)
	}
}
