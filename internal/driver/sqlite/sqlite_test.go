package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// openURL opens a target through the registry, as the command does.
func openURL(t testing.TB, raw string, opts driver.Options) driver.DB {
	t.Helper()
	target, err := driver.ParseTarget(raw, "")
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", raw, err)
	}
	drv, _, err := driver.Lookup(target.URL.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	db, err := drv.Open(context.Background(), target, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", raw, err)
	}
	return db
}

// TestConformanceFile runs the suite on a database file, once per
// combination of knobs SQLite has. --table-type memory with a file URL puts
// the database in memory instead: the file is never created.
func TestConformanceFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts driver.Options
	}{
		{"default", driver.Options{}},
		{"TableMemory", driver.Options{TableType: driver.TableMemory}},
		{"DurabilityFull", driver.Options{Durability: driver.DurabilityFull}},
		{"DurabilityDelayed", driver.Options{Durability: driver.DurabilityDelayed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "conformance.db")
			memory := tc.opts.TableType == driver.TableMemory
			var first *db
			cfg := drivertest.Config{
				Options:  tc.opts,
				Settings: drivertest.SessionSettings,
				Open: func(t *testing.T, opts driver.Options) driver.DB {
					d := openURL(t, "sqlite://"+path, opts)
					if first == nil {
						first = d.(*db)
					}
					return d
				},
				CreateForeignTable: func(t *testing.T, name string) {
					if memory {
						// The suite's first DB holds the in-memory database.
						createForeign(t, first.pool, name)
						return
					}
					// Plain SQL through the library, on a connection of its own.
					raw := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path)})
					defer raw.Close()
					createForeign(t, raw, name)
				},
				DropBehindDbprobe: func(t *testing.T, name string) {
					if memory {
						dropBehind(t, first.pool, name)
						return
					}
					raw := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path)})
					defer raw.Close()
					dropBehind(t, raw, name)
				},
				ProvokeConflict: func(t *testing.T, d driver.DB, tbl driver.Table) error {
					if memory {
						return provokeLocked(t, d.(*db), tbl)
					}
					return provokeBusy(t, path, tc.opts, tbl)
				},
			}
			if memory && !sharedCacheLockFails {
				cfg.ProvokeConflict = nil
			}
			drivertest.Run(t, cfg)
			if _, err := os.Stat(path); memory != errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database file after the suite: %v (in memory: %v)", err, memory)
			}
		})
	}
}

func TestConformanceMemory(t *testing.T) {
	// Each DB has its own in-memory database, so the foreign table is made
	// through the pool of the first DB the suite opened. A sqlite::memory:
	// URL is an in-memory database whatever --table-type says, and Inspect
	// reports it as it is.
	var first *db
	cfg := drivertest.Config{
		Options:  driver.Options{TableType: driver.TableMemory},
		Settings: drivertest.SessionSettings,
		Open: func(t *testing.T, opts driver.Options) driver.DB {
			d := openURL(t, "sqlite::memory:", opts)
			if first == nil {
				first = d.(*db)
			}
			return d
		},
		CreateForeignTable: func(t *testing.T, name string) {
			createForeign(t, first.pool, name)
		},
		DropBehindDbprobe: func(t *testing.T, name string) { dropBehind(t, first.pool, name) },
	}
	if sharedCacheLockFails {
		cfg.ProvokeConflict = func(t *testing.T, d driver.DB, tbl driver.Table) error {
			return provokeLocked(t, d.(*db), tbl)
		}
	}
	drivertest.Run(t, cfg)
}

// provokeBusy makes an insert fail with SQLITE_BUSY, as it does when
// another process writes to the same file: a connection outside the
// driver holds the write lock (BEGIN IMMEDIATE) while a DB opened on the
// file with busy_timeout=0, so that SQLite does not wait, inserts. The lock
// is taken before the insert starts, so the outcome never depends on
// timing. (Within one DB writes never meet: the writer serializes them.)
func provokeBusy(t *testing.T, path string, opts driver.Options, tbl driver.Table) error {
	t.Helper()
	ctx := context.Background()
	opts.Sessions = 1
	d := openURL(t, "sqlite://"+path+"?busy_timeout=0", opts)
	defer d.Close()
	s, err := d.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path)})
	defer raw.Close()
	c, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer c.ExecContext(ctx, "ROLLBACK")
	err = s.Insert(ctx, []byte("busy-0001"), make([][]byte, len(tbl.Fields)))
	if driver.Code(err) != "5" {
		t.Errorf("insert while another connection holds the write lock: %v (code %q), want SQLite's BUSY (5)", err, driver.Code(err))
	}
	return err
}

// provokeLocked makes an insert fail with SQLITE_LOCKED, the shared-cache
// form of BUSY: another connection to the same in-memory database holds
// the write lock. dbprobe's own connections never do that (every write
// goes through the writer), so the test takes one from the DB's pool. Only
// with a library that fails rather than waits (sharedCacheLockFails).
func provokeLocked(t *testing.T, d *db, tbl driver.Table) error {
	t.Helper()
	ctx := context.Background()
	s, err := d.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := d.pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer c.ExecContext(ctx, "ROLLBACK")
	err = s.Insert(ctx, []byte("locked-0001"), make([][]byte, len(tbl.Fields)))
	if driver.Code(err) != "6" {
		t.Errorf("insert while another connection holds the write lock: %v (code %q), want SQLite's LOCKED (6)", err, driver.Code(err))
	}
	return err
}

func createForeign(t *testing.T, raw *sql.DB, name string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE "` + name + `" (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT)`,
		`INSERT INTO "` + name + `" VALUES ('someone-elses-row', 'precious')`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// dropBehind drops a table with plain SQL, as someone other than dbprobe
// would.
func dropBehind(t *testing.T, raw *sql.DB, name string) {
	t.Helper()
	if _, err := raw.ExecContext(context.Background(), `DROP TABLE "`+name+`"`); err != nil {
		t.Fatal(err)
	}
}

func TestURLForms(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		path   string
		memory bool
	}{
		{"sqlite:///abs/path.db", "/abs/path.db", false},
		{"sqlite:/abs/path.db", "/abs/path.db", false},
		{"sqlite:rel/path.db", "rel/path.db", false},
		{"sqlite:./rel.db", "rel.db", false},
		{"sqlite://./rel.db", "rel.db", false},
		{"sqlite://../up/rel.db", "../up/rel.db", false},
		{"sqlite://bench.db", "bench.db", false},
		{"sqlite://data/bench.db", "data/bench.db", false},
		{"sqlite:my%20file.db", "my file.db", false},
		{"sqlite3:///abs/x.db", "/abs/x.db", false},
		{"sqlite::memory:", "", true},
		{"sqlite://:memory:", "", true},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			target, err := driver.ParseTarget(tc.raw, "")
			if err != nil {
				t.Fatalf("ParseTarget: %v", err)
			}
			cfg, err := parseTarget(target.URL)
			if err != nil {
				t.Fatalf("parseTarget: %v", err)
			}
			if cfg.path != tc.path || cfg.memory != tc.memory {
				t.Errorf("path %q memory %v, want %q %v", cfg.path, cfg.memory, tc.path, tc.memory)
			}
			if cfg.synchronous != "NORMAL" || cfg.busyTimeoutMS != 5000 || cfg.synchronousSet || cfg.journalModeSet {
				t.Errorf("defaults: %+v", cfg)
			}
			if want := map[bool]string{false: "WAL", true: ""}[tc.memory]; cfg.journalMode != want {
				t.Errorf("journal mode %q, want %q", cfg.journalMode, want)
			}
		})
	}
}

// A knob SQLite does not have, or one the URL contradicts, is bad input
// from Open, and no file is created.
func TestKnobMistakesAreBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		opts  driver.Options
		says  string
	}{
		{"nondurable", "", driver.Options{TableType: driver.TableNondurable},
			"SQLite has no non-durable table (--table-type nondurable); use --table-type memory (an in-memory database) or --durability delayed (synchronous=OFF)"},
		{"procedure", "", driver.Options{OpPath: driver.PathProcedure},
			"SQLite has no stored procedures (--op-path procedure); use --op-path statement"},
		{"scope transaction", "", driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction},
			"SQLite has no per-transaction durability (--durability-scope transaction)"},
		{"full against the URL", "?synchronous=NORMAL", driver.Options{Durability: driver.DurabilityFull},
			"sqlite: --durability full asks for synchronous=FULL, but the URL says synchronous=NORMAL; remove one of them"},
		{"delayed against the URL", "?synchronous=full", driver.Options{Durability: driver.DurabilityDelayed},
			"sqlite: --durability delayed asks for synchronous=OFF, but the URL says synchronous=FULL; remove one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "refused.db")
			target, err := driver.ParseTarget("sqlite://"+path+tc.query, "")
			if err != nil {
				t.Fatal(err)
			}
			d, err := Driver{}.Open(context.Background(), target, tc.opts)
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if !badinput.Is(err) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Open: %v (bad input: %v), want bad input saying %q", err, badinput.Is(err), tc.says)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused Open left a file: %v", err)
			}
		})
	}
}

// --durability sets PRAGMA synchronous, read back into Info; a URL that
// agrees keeps its level.
func TestDurability(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		d     driver.Durability
		sync  string
		says  string
	}{
		{"server", "", driver.DurabilityServer, "NORMAL (1)", "server (the URL's or dbprobe's default synchronous): synchronous=NORMAL, commits are synced only at checkpoints"},
		{"server, the URL's", "?synchronous=OFF", driver.DurabilityServer, "OFF (0)", "server (the URL's or dbprobe's default synchronous): synchronous=OFF, commits are never synced"},
		{"full", "", driver.DurabilityFull, "FULL (2)", "full (--durability): synchronous=FULL, every commit is synced before it returns"},
		{"full, the URL's EXTRA", "?synchronous=extra", driver.DurabilityFull, "EXTRA (3)", "full (--durability): synchronous=EXTRA, every commit is synced"},
		{"delayed", "", driver.DurabilityDelayed, "OFF (0)", "delayed (--durability): synchronous=OFF, commits are never synced"},
		{"delayed, rollback journal", "?journal_mode=DELETE", driver.DurabilityDelayed, "OFF (0)", "synchronous=OFF"},
		{"full, rollback journal", "?journal_mode=DELETE", driver.DurabilityFull, "FULL (2)", "every commit is synced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "durability.db")
			d := openURL(t, "sqlite://"+path+tc.query, driver.Options{Sessions: 1, Durability: tc.d})
			defer d.Close()
			got := map[string]string{}
			for _, s := range d.Info().Settings {
				got[s.Name] = s.Value
			}
			if got["synchronous"] != tc.sync || !strings.Contains(got["durability"], tc.says) {
				t.Errorf("synchronous = %q, durability = %q; want %q and %q", got["synchronous"], got["durability"], tc.sync, tc.says)
			}
			// Every connection runs at that level, not only the one Info read.
			var level int
			if err := d.(*db).pool.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&level); err != nil {
				t.Fatal(err)
			}
			if want := tc.sync[strings.Index(tc.sync, "(")+1 : len(tc.sync)-1]; fmt.Sprint(level) != want {
				t.Errorf("a pooled connection runs at synchronous %d, want %s", level, want)
			}
		})
	}
}

// --table-type memory with a file URL runs on an in-memory database: the
// file is not created, Info says so, and Inspect reports the table as
// in memory.
func TestTableMemoryWithFileURL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "unused.db")
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1, TableType: driver.TableMemory})
	defer d.Close()
	var where, journal string
	for _, s := range d.Info().Settings {
		switch s.Name {
		case "database":
			where = s.Value
		case "journal_mode":
			journal = s.Value
		}
	}
	if !strings.Contains(where, "in-memory database") || !strings.Contains(where, "the file "+path+" in the URL is not used") || journal != "memory" {
		t.Errorf("database = %q, journal_mode = %q", where, journal)
	}
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 10}
	if err := d.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	st, err := d.Inspect(ctx, tbl)
	if err != nil || st.Type != driver.TableMemory || !strings.Contains(st.Storage, "in-memory database") {
		t.Errorf("Inspect = %+v, %v", st, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file named in the URL was touched: %v", err)
	}
	// A file database's table is on disk, in Inspect's words too.
	f := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	defer f.Close()
	if err := f.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	st, err = f.Inspect(ctx, tbl)
	if want := "rowid table in the file " + path + " (journal_mode wal)"; err != nil || st.Type != driver.TableDisk || st.Storage != want {
		t.Errorf("Inspect of the file's table = %+v, %v; want storage %q", st, err, want)
	}
}

func TestURLOptions(t *testing.T) {
	target, err := driver.ParseTarget("sqlite:x.db?synchronous=full&journal_mode=delete&busy_timeout=250", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseTarget(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.synchronous != "FULL" || cfg.journalMode != "DELETE" || cfg.busyTimeoutMS != 250 || !cfg.synchronousSet || !cfg.journalModeSet {
		t.Errorf("got %+v", cfg)
	}
	if cfg, _ := parseTarget(mustURL(t, "sqlite:x.db?synchronous=0")); cfg.synchronous != "OFF" {
		t.Errorf("synchronous=0 gave %q, want OFF", cfg.synchronous)
	}
	if cfg.vfs != vfsExclusive || cfg.vfsSet {
		t.Errorf("default vfs %q (set %v), want %s", cfg.vfs, cfg.vfsSet, vfsExclusive)
	}
	if cfg, _ := parseTarget(mustURL(t, "sqlite:x.db?vfs=unix")); cfg.vfs != vfsShared || !cfg.vfsSet {
		t.Errorf("vfs=unix gave %q (set %v)", cfg.vfs, cfg.vfsSet)
	}
}

func TestURLMistakesAreBadInput(t *testing.T) {
	for _, tc := range []struct{ raw, says string }{
		{"sqlite:", "names no database file"},
		{"sqlite://", "names no database file"},
		{"sqlite:x.db?cache=shared", `unknown option "cache"`},
		{"sqlite:x.db?cache=shared", "busy_timeout, journal_mode, synchronous"},
		{"sqlite:x.db?synchronous=fast", "OFF, NORMAL, FULL, EXTRA"},
		{"sqlite:x.db?journal_mode=wall", "WAL"},
		{"sqlite:x.db?busy_timeout=-1", "busy_timeout=-1"},
		{"sqlite:x.db?busy_timeout=1s", "milliseconds"},
		{"sqlite:x.db?synchronous=FULL&synchronous=OFF", "given 2 times"},
		{"sqlite://user@host:5432/db", "user name"},
		{"sqlite://host:5432/db", "server address"},
		{"sqlite:///tmp/", "is a directory"},
		{"sqlite:x.db?vfs=win32", "use unix-excl (the default"},
		{"sqlite:x.db?vfs=UNIX", "vfs=UNIX is not a VFS"},
		{"sqlite::memory:?vfs=unix", ":memory: has no file"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := parseTarget(mustURL(t, tc.raw))
			if err == nil {
				t.Fatal("accepted, want an error")
			}
			if !badinput.Is(err) {
				t.Errorf("%v is not bad input", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"sqlite:///a/b.db?synchronous=FULL", "sqlite::memory:", "sqlite://./x.db", "sqlite:%zz", "sqlite://h:1/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		cfg, err := parseTarget(u)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("parseTarget(%q): %v is not bad input", raw, err)
			}
			return
		}
		if cfg.memory == (cfg.path != "") {
			t.Fatalf("parseTarget(%q) = %+v: exactly one of memory and path must be set", raw, cfg)
		}
	})
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestOpenMistakesAreBadInput(t *testing.T) {
	dir := t.TempDir()
	notADB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notADB, []byte(strings.Repeat("this is not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, says string }{
		{filepath.Join(dir, "missing", "x.db"), "does not exist"},
		{dir, "is a directory"},
		{filepath.Join(notADB, "x.db"), "is not a directory"},
		{notADB, "not a SQLite database"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			target, err := driver.ParseTarget("sqlite://"+tc.path, "")
			if err != nil {
				t.Fatal(err)
			}
			db, err := Driver{}.Open(context.Background(), target, driver.Options{})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if !badinput.Is(err) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Open: %v (bad input: %v), want bad input saying %q", err, badinput.Is(err), tc.says)
			}
		})
	}
}

// A query that does not parse is refused without being quoted: a
// ?password= in it may be the target's password, or one meant to be.
func TestBadQueryIsNotQuoted(t *testing.T) {
	for _, query := range []string{"?password=S3cret&busy_timeout=%zz", "?password=S3cret;busy_timeout=1"} {
		target, err := driver.ParseTarget("sqlite://"+filepath.Join(t.TempDir(), "x.db")+query, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseTarget(target.URL)
		if !badinput.Is(err) || !strings.Contains(err.Error(), "does not parse") || strings.Contains(err.Error(), "S3cret") {
			t.Errorf("parseTarget(…%s) = %v: want bad input saying the query does not parse, without the password", query, err)
		}
	}
}

// A run opens the database a load filled: with Options.Existing a missing
// file is bad input, and none is left behind.
func TestExistingDatabaseIsNotCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "never-loaded.db")
	target, err := driver.ParseTarget("sqlite://"+path, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := Driver{}.Open(context.Background(), target, driver.Options{Sessions: 1, Existing: true})
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded on a missing file with Existing")
	}
	if !badinput.Is(err) || !strings.Contains(err.Error(), "dbprobe load") {
		t.Errorf("Open: %v, want bad input saying to load first", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s after the refused open: %v, want no such file", path, err)
	}
	created := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	keepFile(t, created)
	created.Close()
	db, err = Driver{}.Open(context.Background(), target, driver.Options{Sessions: 1, Existing: true})
	if err != nil {
		t.Fatalf("Open with Existing on a database that exists: %v", err)
	}
	db.Close()
}

func TestSettingsReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.db")
	for _, tc := range []struct {
		query string
		want  map[string]string
	}{
		{"", map[string]string{"journal_mode": "wal", "synchronous": "NORMAL (1)", "busy_timeout": "5000 ms"}},
		{"?synchronous=FULL&journal_mode=DELETE&busy_timeout=1234", map[string]string{"journal_mode": "delete", "synchronous": "FULL (2)", "busy_timeout": "1234 ms"}},
		{"?synchronous=off&journal_mode=truncate", map[string]string{"journal_mode": "truncate", "synchronous": "OFF (0)"}},
		{"?vfs=unix", map[string]string{"journal_mode": "wal"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			db := openURL(t, "sqlite://"+path+tc.query, driver.Options{Sessions: 1})
			defer db.Close()
			info := db.Info()
			got := map[string]string{}
			for _, s := range info.Settings {
				got[s.Name] = s.Value
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("setting %s = %q, want %q (all: %v)", name, got[name], want, info.Settings)
				}
			}
			for _, name := range []string{"page_size", "cache_size", "database", "autocommit"} {
				if got[name] == "" {
					t.Errorf("setting %s missing: %v", name, info.Settings)
				}
			}
			// What a session's connection reads back: dbprobe sets none of
			// these, so they are SQLite's defaults.
			for name, want := range map[string]string{
				"transaction_isolation": "SERIALIZABLE (read_uncommitted = 0): ",
				"locking_mode":          "normal",
				"mmap_size":             "0 (reads copy pages with read calls)",
			} {
				if !strings.HasPrefix(got[name], want) {
					t.Errorf("setting %s = %q, want it to start %q", name, got[name], want)
				}
			}
			vfs := vfsExclusive
			if strings.Contains(tc.query, "vfs=unix") {
				vfs = vfsShared
			}
			if !strings.HasPrefix(got["vfs"], vfs+" (") {
				t.Errorf("setting vfs = %q, want %s and what it means", got["vfs"], vfs)
			}
			if info.Driver != "sqlite" || !strings.Contains(info.Library, libraryModule) || !strings.Contains(info.Library, info.ServerVersion) || info.ServerVersion == "" {
				t.Errorf("Info = %+v", info)
			}
		})
	}
	mem := openURL(t, "sqlite::memory:", driver.Options{})
	defer mem.Close()
	for _, s := range mem.Info().Settings {
		if s.Name == "transaction_isolation" && !strings.HasPrefix(s.Value, "READ UNCOMMITTED (read_uncommitted = 1 ") {
			t.Errorf("in-memory transaction_isolation = %q, want READ UNCOMMITTED: its connections share a cache, with read_uncommitted", s.Value)
		}
		if s.Name == "mmap_size" && !strings.HasPrefix(s.Value, "none: ") {
			t.Errorf("in-memory mmap_size = %q, want none", s.Value)
		}
		if s.Name == "journal_mode" && s.Value != "memory" {
			t.Errorf("in-memory journal_mode = %q, want memory", s.Value)
		}
		if s.Name == "vfs" {
			t.Errorf("an in-memory database reports vfs %q: it has no file", s.Value)
		}
	}
}

// The pragmas are read on a connection the connector opens, whatever set
// them: values other than SQLite's defaults, set by a connector's own
// setup, come back as set.
func TestSessionPragmasReadBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pragmas.db")
	pool := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path), setup: []string{
		"PRAGMA mmap_size = 1048576", "PRAGMA locking_mode = EXCLUSIVE", "PRAGMA read_uncommitted = 1",
	}})
	defer pool.Close()
	p, err := readSessionPragmas(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if p != (sessionPragmas{readUncommitted: 1, lockingMode: "exclusive", mmapSize: 1 << 20}) {
		t.Errorf("read back %+v", p)
	}
	want := []driver.Setting{
		{Name: "locking_mode", Value: "exclusive"},
		{Name: "mmap_size", Value: "1048576 (1 MiB of the file is read through memory mapping)"},
		// Without a shared cache read_uncommitted changes nothing.
		{Name: "transaction_isolation", Value: "SERIALIZABLE (read_uncommitted = 1): a read sees the database as of its statement's start, and writes run one transaction at a time"},
	}
	got := p.settings(false)
	if len(got) != 4 || fmt.Sprint(got[:3]) != fmt.Sprint(want) || got[3].Name != "autocommit" {
		t.Errorf("settings = %v, want %v and autocommit", got, want)
	}
}

// TestMemoryDatabasesAreApart checks that two in-memory DBs do not share
// tables, and that one DB's sessions all see its database.
func TestMemoryDatabasesAreApart(t *testing.T) {
	ctx := context.Background()
	a := openURL(t, "sqlite::memory:", driver.Options{})
	defer a.Close()
	b := openURL(t, "sqlite::memory:", driver.Options{})
	defer b.Close()
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 10}
	if err := a.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Inspect(ctx, tbl); err != nil || st.Exists {
		t.Fatalf("the second in-memory DB sees the first's table: %+v, %v", st, err)
	}
	s1, err := a.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := a.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s1.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	got := [][]byte{nil}
	if err := s2.Read(ctx, []byte("k"), nil, got); err != nil || string(got[0]) != "v" {
		t.Fatalf("another session of the same DB read %q, %v", got[0], err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "classify.db"), driver.Options{})
	defer db.Close()
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 10}
	s := tableSession(t, db, tbl)
	defer s.Close()
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")})
	if driver.Code(err) != "19" || driver.ClassOf(err) != driver.ClassOther {
		t.Errorf("duplicate key: code %q class %v (%v), want 19 other", driver.Code(err), driver.ClassOf(err), err)
	}
	if err := db.CreateTable(ctx, tbl); err == nil || driver.Code(err) != "1" {
		t.Errorf("CreateTable of an existing table: %v (code %q), want SQLite error 1", err, driver.Code(err))
	}
	busy := classify(fakeBusy(t))
	if !driver.IsRetryable(busy) || driver.Code(busy) != "5" || driver.ClassOf(busy) != driver.ClassBusy {
		t.Errorf("BUSY: code %q class %v, want 5 busy", driver.Code(busy), driver.ClassOf(busy))
	}
	ctxErr := classify(context.DeadlineExceeded)
	if !driver.IsTimeout(ctxErr) || !errors.Is(ctxErr, context.DeadlineExceeded) {
		t.Errorf("deadline: %v class %v, want timeout", ctxErr, driver.ClassOf(ctxErr))
	}
}

// fakeBusy makes a real SQLITE_BUSY: a second connection, without the
// writer's serialization and with no busy timeout, asks for the write lock
// another connection holds.
func fakeBusy(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	pool := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path), setup: []string{"PRAGMA busy_timeout = 0"}})
	defer pool.Close()
	ctx := context.Background()
	c1, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c1.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer c1.ExecContext(ctx, "ROLLBACK")
	_, err = c2.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err == nil {
		t.Fatal("a second writer got the lock")
	}
	return err
}

// A table dropped behind dbprobe's back and created again with dbprobe's
// own statement, which SQLite gives the freed root page, is still told
// apart: the statement carries the id of the table dbprobe created.
func TestRecreatedWithSameStatementIsNotOurs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "same.db")
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	defer d.Close()
	tbl := drivertest.Table("usertable", 2)
	if err := d.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	raw := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path)})
	defer raw.Close()
	var before, stmt string
	if err := raw.QueryRowContext(ctx, tableIdentitySQL, tbl.Name).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = ?", tbl.Name).Scan(&stmt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stmt, "created by dbprobe, id ") {
		t.Fatalf("sqlite_master holds %q: the id is not kept with the statement", stmt)
	}
	if _, err := raw.ExecContext(ctx, `DROP TABLE "usertable"`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, createTableSQL(tbl, "0000000000000000")); err != nil {
		t.Fatal(err)
	}
	var after string
	if err := raw.QueryRowContext(ctx, tableIdentitySQL, tbl.Name).Scan(&after); err != nil {
		t.Fatal(err)
	}
	t.Logf("identity before %q, after %q", before, after)
	st, err := d.Inspect(ctx, tbl)
	if err != nil || !st.Exists || st.CreatedByDbprobe || !strings.Contains(st.OwnershipNote, "VACUUM") {
		t.Fatalf("Inspect of the recreated table = %+v, %v; want it not dbprobe's, with a note that names VACUUM", st, err)
	}
	if err := d.DropTable(ctx, tbl); !badinput.Is(err) {
		t.Fatalf("DropTable of the recreated table: %v, want a refusal", err)
	}
}

func TestDialect(t *testing.T) {
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0", "FIELD1"}, FieldLength: 100}
	for _, tc := range []struct{ got, want string }{
		{createTableSQL(tbl, "0123456789abcdef"), `CREATE TABLE "usertable" /* created by dbprobe, id 0123456789abcdef */ ("YCSB_KEY" VARCHAR(255) NOT NULL PRIMARY KEY, "FIELD0" VARCHAR(100) NOT NULL, "FIELD1" VARCHAR(100) NOT NULL)`},
		{selectSQL(tbl, nil), `SELECT "FIELD0", "FIELD1" FROM "usertable" WHERE "YCSB_KEY" = ?`},
		{selectSQL(tbl, []int{1}), `SELECT "FIELD1" FROM "usertable" WHERE "YCSB_KEY" = ?`},
		{scanSQL(tbl, []int{1, 0}), `SELECT "YCSB_KEY", "FIELD1", "FIELD0" FROM "usertable" WHERE "YCSB_KEY" >= ? ORDER BY "YCSB_KEY" LIMIT ?`},
		{updateSQL(tbl, []int{1, 0}), `UPDATE "usertable" SET "FIELD1" = ?, "FIELD0" = ? WHERE "YCSB_KEY" = ?`},
		{insertSQL(tbl, 2), `INSERT INTO "usertable" ("YCSB_KEY", "FIELD0", "FIELD1") VALUES (?, ?, ?), (?, ?, ?)`},
		{deleteSQL(tbl), `DELETE FROM "usertable" WHERE "YCSB_KEY" = ?`},
		{quoteIdent(`a"b`), `"a""b"`},
		{fileURI("/tmp/a b?c#d%e.db"), `file:/tmp/a%20b%3Fc%23d%25e.db`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// TestFileURIOpensTheNamedFile checks that characters SQLite's URI parser
// treats specially end up in the file name, not in the query.
func TestFileURIOpensTheNamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd name?x=1#y%z.db")
	db := openURL(t, "sqlite://"+(&url.URL{Path: path}).EscapedPath(), driver.Options{})
	keepFile(t, db)
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database file was not created under its own name: %v", err)
	}
}

// TestGroupCommitIsolatesFailures sends many writes at once, some of which
// fail, so that they share commits: each failure must stay with its own
// write, and every other write must land.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "group.db"), driver.Options{Sessions: 32})
	defer db.Close()
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0", "FIELD1"}, FieldLength: 10}
	s := tableSession(t, db, tbl)
	defer s.Close()
	if err := s.Insert(ctx, []byte("taken"), [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				s, err := db.Session(ctx, tbl)
				if err != nil {
					return err
				}
				defer s.Close()
				for i := range rounds {
					key := []byte(fmt.Sprintf("k-%02d-%02d", w, i))
					switch w % 4 {
					case 0: // a duplicate: must fail alone
						if err := s.Insert(ctx, []byte("taken"), [][]byte{[]byte("x"), []byte("y")}); driver.Code(err) != "19" {
							return fmt.Errorf("duplicate insert: %v, want code 19", err)
						}
					case 1: // an update of a missing key: ErrNotFound alone
						if err := s.Update(ctx, key, []int{0}, [][]byte{[]byte("x")}); !errors.Is(err, driver.ErrNotFound) {
							return fmt.Errorf("update of missing %s: %v, want ErrNotFound", key, err)
						}
					default: // good writes
						if err := s.Insert(ctx, key, [][]byte{[]byte("v0"), []byte("v1")}); err != nil {
							return fmt.Errorf("insert %s: %w", key, err)
						}
						if err := s.Update(ctx, key, []int{1}, [][]byte{[]byte("u1")}); err != nil {
							return fmt.Errorf("update %s: %w", key, err)
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got := [][]byte{nil, nil}
	for w := range workers {
		for i := range rounds {
			key := []byte(fmt.Sprintf("k-%02d-%02d", w, i))
			err := s.Read(ctx, key, nil, got)
			switch {
			case w%4 < 2 && !errors.Is(err, driver.ErrNotFound):
				t.Fatalf("%s: %v, want no such record", key, err)
			case w%4 >= 2 && (err != nil || string(got[0]) != "v0" || string(got[1]) != "u1"):
				t.Fatalf("%s = %q, %v; want v0 u1", key, got, err)
			}
		}
	}
	if err := s.Read(ctx, []byte("taken"), nil, got); err != nil || string(got[0]) != "a" {
		t.Fatalf("the existing record became %q, %v", got, err)
	}
}

// TestCheckpointsKeepTheWALShort writes several times checkpointEvery
// records one by one and checks that the WAL was checkpointed and started
// over meanwhile.
func TestCheckpointsKeepTheWALShort(t *testing.T) {
	ctx := context.Background()
	d := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "wal.db"), driver.Options{Sessions: 1})
	defer d.Close()
	found := false
	for _, s := range d.Info().Settings {
		found = found || s.Name == "checkpoints"
	}
	if !found {
		t.Errorf("Info.Settings has no checkpoints entry: %v", d.Info().Settings)
	}
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 100}
	s := tableSession(t, d, tbl)
	defer s.Close()
	const n = 5 * checkpointEvery
	value := [][]byte{[]byte(strings.Repeat("v", 100))}
	for i := range n {
		if err := s.Insert(ctx, []byte(fmt.Sprintf("k%06d", i)), value); err != nil {
			t.Fatal(err)
		}
	}
	var busy, frames, copied int
	if err := d.(*db).pool.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	// Each insert writes a page of the table and one of the key's index.
	if frames > 2*walRestartPages {
		t.Errorf("the WAL holds %d frames after %d single-record commits: it was not started over", frames, n)
	}
}

// tableSession creates tbl in d and opens a session on it.
func tableSession(t *testing.T, d driver.DB, tbl driver.Table) driver.Session {
	t.Helper()
	ctx := context.Background()
	if err := d.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s, err := d.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCheckpointerSyncsItsFiles checks that the background checkpoints
// sync the database file and the WAL under synchronous=NORMAL, so the
// writer's own checkpoint finds little to flush, and that they sync
// nothing under synchronous=OFF, where SQLite syncs nothing either.
func TestCheckpointerSyncsItsFiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     driver.Options
		wantSync bool
	}{
		{"NORMAL", driver.Options{Sessions: 1}, true},
		{"OFF", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "sync.db"), tc.opts)
			defer d.Close()
			setting := ""
			for _, s := range d.Info().Settings {
				if s.Name == "checkpoints" {
					setting = s.Value
				}
			}
			if got := strings.Contains(setting, "sync"); got != tc.wantSync {
				t.Errorf("checkpoints setting %q: mentions a sync %v, want %v", setting, got, tc.wantSync)
			}
			tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 100}
			s := tableSession(t, d, tbl)
			defer s.Close()
			value := [][]byte{[]byte(strings.Repeat("v", 100))}
			cp := d.(*db).ckpt
			for i := 0; cp.done.Load() == 0; i++ {
				if i == 20*checkpointEvery {
					t.Fatalf("no background checkpoint after %d records", i)
				}
				if err := s.Insert(ctx, []byte(fmt.Sprintf("k%06d", i)), value); err != nil {
					t.Fatal(err)
				}
			}
			// The pass that was counted syncs right after; give it time.
			deadline := time.Now().Add(10 * time.Second)
			for tc.wantSync && cp.synced.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := cp.synced.Load() > 0; got != tc.wantSync {
				t.Errorf("after %d background checkpoints, files synced: %v, want %v", cp.done.Load(), got, tc.wantSync)
			}
		})
	}
}

// TestSyncFilesSkipsAMissingWAL: before the first connection opens it
// there is no WAL, which leaves nothing to flush; a path that cannot be
// opened for another reason is an error.
func TestSyncFilesSkipsAMissingWAL(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.db")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := newSyncFiles(file, file+"-wal")
	defer files.close()
	if err := files.sync(); err != nil {
		t.Errorf("sync with no WAL: %v", err)
	}
	bad := newSyncFiles(filepath.Join(file, "not-a-dir"))
	defer bad.close()
	if err := bad.sync(); err == nil {
		t.Error("sync of a path under a regular file: no error")
	}
}

// keepFile gives a database a table, so that closing it does not remove
// the file Open created (an empty new database is removed at Close).
func keepFile(t testing.TB, d driver.DB) {
	t.Helper()
	if _, err := d.(*db).pool.ExecContext(context.Background(), "CREATE TABLE dbprobe_test_keep (x)"); err != nil {
		t.Fatal(err)
	}
}

// A database file Open created is removed at Close when nothing was put
// in it — a command refused after opening leaves no empty file — and
// kept when it holds a table, or when it was there before.
func TestEmptyNewDatabaseIsRemovedAtClose(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	openURL(t, "sqlite://"+empty, driver.Options{Sessions: 1}).Close()
	if m, _ := filepath.Glob(empty + "*"); len(m) != 0 {
		t.Errorf("an empty new database left %v", m)
	}
	kept := filepath.Join(dir, "kept.db")
	d := openURL(t, "sqlite://"+kept, driver.Options{Sessions: 1})
	keepFile(t, d)
	d.Close()
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a new database with a table: %v", err)
	}
	before := filepath.Join(dir, "before.db")
	if err := os.WriteFile(before, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	openURL(t, "sqlite://"+before, driver.Options{Sessions: 1}).Close()
	if _, err := os.Stat(before); err != nil {
		t.Errorf("an empty database that was there before: %v", err)
	}
	openURL(t, "sqlite://"+before, driver.Options{Sessions: 1, Existing: true}).Close()
	if _, err := os.Stat(before); err != nil {
		t.Errorf("an empty database opened with Existing: %v", err)
	}
}

// checkPath's one look at the file tells open whether it is missing:
// that decides both what Close may remove and what Existing refuses.
func TestCheckPathSaysMissing(t *testing.T) {
	dir := t.TempDir()
	there := filepath.Join(dir, "there.db")
	if err := os.WriteFile(there, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		missing bool
	}{
		{there, false},
		{filepath.Join(dir, "absent.db"), true},
	} {
		abs, missing, err := checkPath(tc.path)
		if err != nil || abs != tc.path || missing != tc.missing {
			t.Errorf("checkPath(%s) = %s, %v, %v; want %s, %v, nil", tc.path, abs, missing, err, tc.path, tc.missing)
		}
	}
}
