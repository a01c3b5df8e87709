package redis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	_ "github.com/dbprobe/dbprobe/internal/driver/redis"
	"github.com/dbprobe/dbprobe/internal/rawnet"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// admin connects to rawURL with redigo, outside the driver.
func admin(t testing.TB, rawURL string) *testdb.RedisClient {
	t.Helper()
	return testdb.OpenRedis(t, rawURL)
}

// setup gives the test a fresh logical database, an open DB on it and a
// created table of n fields.
func setup(t testing.TB, n int, opts driver.Options) (string, driver.DB, driver.Table) {
	t.Helper()
	u := testdb.FreshRedisDatabase(t)
	db := drivertest.MustOpen(t, u, opts)
	tbl := drivertest.Table("usertable", n)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return u, db, tbl
}

// withPassword returns rawURL with another password.
func withPassword(t testing.TB, rawURL, password string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if password == "" {
		u.User = nil
	} else {
		u.User = url.UserPassword(u.User.Username(), password)
	}
	return u.String()
}

func passwordOf(t testing.TB, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := u.User.Password()
	return p
}

func hostOf(t testing.TB, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestRegistered(t *testing.T) {
	for _, scheme := range []string{"redis", "rediss"} {
		if _, name, err := driver.Lookup(scheme); err != nil || name != "redis" {
			t.Errorf("Lookup(%q) = %q, %v; want redis", scheme, name, err)
		}
	}
}

func TestOpenWrongPassword(t *testing.T) {
	base := testdb.RedisURL(t)
	realPW := passwordOf(t, base)
	const wrong = "Wr0ng-pässword!"
	addr := hostOf(t, base)
	for name, tc := range map[string]struct{ url, password string }{
		"in the URL":       {withPassword(t, base, wrong), ""},
		"DBPROBE_PASSWORD": {withPassword(t, base, ""), wrong},
	} {
		t.Run(name, func(t *testing.T) {
			db, err := drivertest.OpenURL(t, tc.url, tc.password, driver.Options{Sessions: 1})
			if err == nil {
				db.Close()
				t.Fatal("Open with a wrong password succeeded")
			}
			if !badinput.Is(err) {
				t.Errorf("error is not bad input: %v", err)
			}
			want := fmt.Sprintf("Redis at %s refused the default user: WRONGPASS: wrong password or user disabled; check the user and password (URL, DBPROBE_PASSWORD)", addr)
			if msg := err.Error(); msg != want {
				t.Errorf("message\n %q\nwant\n %q", msg, want)
			}
			for _, secret := range []string{wrong, url.QueryEscape(wrong), realPW} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("message holds a password: %q", err)
				}
			}
		})
	}
	t.Run("unknown user", func(t *testing.T) {
		u, _ := url.Parse(base)
		u.User = url.UserPassword("mallory", realPW)
		_, err := drivertest.OpenURL(t, u.String(), "", driver.Options{Sessions: 1})
		if !badinput.Is(err) || !strings.Contains(fmt.Sprint(err), `refused user "mallory": WRONGPASS`) || strings.Contains(fmt.Sprint(err), realPW) {
			t.Errorf("Open as an unknown user: %v", err)
		}
	})
}

func TestOpenWithoutPassword(t *testing.T) {
	base := testdb.RedisURL(t)
	_, err := drivertest.OpenURL(t, withPassword(t, base, ""), "", driver.Options{Sessions: 1})
	want := fmt.Sprintf("Redis at %[1]s wants a password: NOAUTH; give it in the URL (redis://:PASSWORD@%[1]s/0) or DBPROBE_PASSWORD", hostOf(t, base))
	if !badinput.Is(err) || fmt.Sprint(err) != want {
		t.Errorf("Open without a password: %v (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

func TestOpenPasswordFromEnvironment(t *testing.T) {
	base := testdb.RedisURL(t)
	db, err := drivertest.OpenURL(t, withPassword(t, base, ""), passwordOf(t, base), driver.Options{Sessions: 1})
	if err != nil {
		t.Fatalf("Open with the password given apart: %v", err)
	}
	db.Close()
}

// closedPort returns a port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestOpenUnreachable(t *testing.T) {
	port := closedPort(t)
	start := time.Now()
	db, err := drivertest.OpenURL(t, fmt.Sprintf("redis://:secret@127.0.0.1:%d/0", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v to fail", d)
	}
	want := fmt.Sprintf("cannot reach Redis at 127.0.0.1:%d: connection refused; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

// A server that accepts connections and never answers: the dial timeout
// must end the wait.
func TestOpenSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	defer func() {
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	start := time.Now()
	db, err := drivertest.OpenURL(t, fmt.Sprintf("redis://:secret@127.0.0.1:%d/0?dial_timeout=1s&read_timeout=1s", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a silent server succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to fail with a 1s timeout", d)
	}
	want := fmt.Sprintf("cannot reach Redis at 127.0.0.1:%d: no answer in time; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

func TestOpenMissingDatabase(t *testing.T) {
	base := testdb.RedisURL(t)
	u, _ := url.Parse(base)
	u.Path = "/999"
	_, err := drivertest.OpenURL(t, u.String(), "", driver.Options{Sessions: 1})
	if !badinput.Is(err) || !strings.Contains(fmt.Sprint(err), "has no database 999") || strings.Contains(fmt.Sprint(err), passwordOf(t, base)) {
		t.Errorf("Open of database 999: %v (bad input %v)", err, badinput.Is(err))
	}
}

// Knobs Redis does not have are refused before anything is sent: the
// address here is a closed port, so any attempt to connect would show.
func TestUnsupportedKnobs(t *testing.T) {
	u := fmt.Sprintf("redis://:secret@127.0.0.1:%d/0", closedPort(t))
	for _, tc := range []struct {
		name string
		opts driver.Options
		want string
	}{
		{"nondurable table", driver.Options{TableType: driver.TableNondurable},
			"Redis has no per-table durability (--table-type nondurable); persistence is server-wide: run the server with appendonly no"},
		{"procedures", driver.Options{OpPath: driver.PathProcedure},
			"Redis has no stored procedures (--op-path procedure); use --op-path statement; each operation already runs as one server-side script"},
		{"per-transaction durability", driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction},
			"Redis has no per-transaction durability (--durability-scope transaction); use --durability-scope database: appendfsync applies to the whole server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Sessions = 1
			_, err := drivertest.OpenURL(t, u, "", tc.opts)
			if !badinput.Is(err) || fmt.Sprint(err) != tc.want {
				t.Errorf("Open = %v (bad input %v), want %q", err, badinput.Is(err), tc.want)
			}
		})
	}
}

// settings returns Info's settings as a map.
func settings(db driver.DB) map[string]string {
	m := map[string]string{}
	for _, s := range db.Info().Settings {
		m[s.Name] = s.Value
	}
	return m
}

func TestInfoReadsSettingsBack(t *testing.T) {
	u := testdb.FreshRedisDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	info := db.Info()
	t.Logf("%+v", info)
	// A test binary records no dependencies' versions: "redigo (version
	// unknown)" here, "redigo v1.9.3" in dbprobe.
	if info.Driver != "redis" || !strings.HasPrefix(info.Library, "redigo ") {
		t.Errorf("Driver, Library = %q, %q", info.Driver, info.Library)
	}
	c := admin(t, u)
	ctx := context.Background()
	server, err := redis.String(c.Do(ctx, "INFO", "server"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(server, "redis_version:"+info.ServerVersion+"\r\n") || info.ServerVersion == "" {
		t.Errorf("ServerVersion = %q, not INFO server's redis_version", info.ServerVersion)
	}
	want := map[string]string{
		"tls":                   "off (loopback)",
		"raw socket calls":      rawnet.Setting(),
		"transaction_isolation": "none to set: the server runs one command or script at a time, so a read (HMGET) or a write (one script) sees and leaves no half-done operation; a scan's index read and its records' reads are separate commands",
		"autocommit":            "no transactions: every operation is one command or one script, applied as it runs; a load batch is all or nothing (WATCH, MULTI, the records' writes, EXEC)",
	}
	for _, name := range []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy"} {
		v, err := redis.StringMap(c.Do(ctx, "CONFIG", "GET", name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = v[name]
		switch {
		case want[name] == "":
			want[name] = `""`
		case name == "maxmemory" && want[name] == "0":
			want[name] = "0 (no limit)"
		}
	}
	if got := settings(db); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Settings = %v, want %v", got, want)
	}
}

// Settings changed on the server outside dbprobe (on a server of the
// test's own: they are server-wide) are what Info shows, with the bulk
// load path's batch.
func TestInfoShowsServerSettings(t *testing.T) {
	u := testdb.StartRedis(t)
	c := admin(t, u)
	ctx := context.Background()
	for name, value := range map[string]string{"appendfsync": "always", "maxmemory": "67108864", "maxmemory-policy": "allkeys-lru", "save": "900 1"} {
		if _, err := c.Do(ctx, "CONFIG", "SET", name, value); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", name, value, err)
		}
	}
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, BulkLoad: true})
	want := []driver.Setting{
		{Name: "appendonly", Value: "yes"},
		{Name: "appendfsync", Value: "always"},
		{Name: "save", Value: "900 1"},
		{Name: "maxmemory", Value: "67108864 (64.0 MiB)"},
		{Name: "maxmemory-policy", Value: "allkeys-lru"},
		{Name: "transaction_isolation", Value: "none to set: the server runs one command or script at a time, so a read (HMGET) or a write (one script) sees and leaves no half-done operation; a scan's index read and its records' reads are separate commands"},
		{Name: "autocommit", Value: "no transactions: every operation is one command or one script, applied as it runs; a load batch is all or nothing (one script)"},
		{Name: "tls", Value: "off (loopback)"},
		{Name: "raw socket calls", Value: rawnet.Setting()},
	}
	if got := db.Info().Settings; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Settings = %v\nwant       %v", got, want)
	}
}

func appendfsync(t testing.TB, c *testdb.RedisClient) string {
	t.Helper()
	v, err := redis.StringMap(c.Do(context.Background(), "CONFIG", "GET", "appendfsync"))
	if err != nil {
		t.Fatal(err)
	}
	return v["appendfsync"]
}

// Durability changes a server-wide setting: these tests run on a server of
// their own.
func TestDurability(t *testing.T) {
	u := testdb.StartRedis(t)
	c := admin(t, u)
	if got := appendfsync(t, c); got != "everysec" {
		t.Fatalf("the private server starts with appendfsync %s, want everysec", got)
	}

	t.Run("full sets always and Close puts everysec back", func(t *testing.T) {
		db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendfsync(t, c); got != "always" {
			t.Errorf("appendfsync with --durability full = %s, want always", got)
		}
		s := settings(db)
		if s["appendfsync"] != "always" || !strings.Contains(s["durability"], "dbprobe set appendfsync always (it was everysec)") {
			t.Errorf("Settings = %v: want the value read back, and what dbprobe changed", s)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := appendfsync(t, c); got != "everysec" {
			t.Errorf("appendfsync after Close = %s, want everysec again", got)
		}
		if err := db.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("delayed on everysec changes nothing", func(t *testing.T) {
		db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
		s := settings(db)
		if s["appendfsync"] != "everysec" || s["durability"] != "" {
			t.Errorf("Settings = %v", s)
		}
	})

	t.Run("the last of several DBs puts it back", func(t *testing.T) {
		a, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
		if err != nil {
			t.Fatal(err)
		}
		b, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
		if err != nil {
			t.Fatal(err)
		}
		// A third that wants the opposite is refused: the setting is
		// server-wide.
		if other, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed}); !badinput.Is(err) {
			if other != nil {
				other.Close()
			}
			t.Errorf("Open with delayed while full is held: %v, want bad input", err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got := appendfsync(t, c); got != "always" {
			t.Errorf("appendfsync after the first Close = %s, want always while the second DB is open", got)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if got := appendfsync(t, c); got != "everysec" {
			t.Errorf("appendfsync after the last Close = %s, want everysec", got)
		}
	})

	t.Run("a change by someone else is left alone", func(t *testing.T) {
		db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(context.Background(), "CONFIG", "SET", "appendfsync", "no"); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := appendfsync(t, c); got != "no" {
			t.Errorf("appendfsync = %s, want the other client's no", got)
		}
		if _, err := c.Do(context.Background(), "CONFIG", "SET", "appendfsync", "everysec"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDurabilityNeedsAppendonly(t *testing.T) {
	u := testdb.StartRedis(t, "--appendonly", "no", "--appendfsync", "always")
	c := admin(t, u)
	for _, d := range []driver.Durability{driver.DurabilityFull, driver.DurabilityDelayed} {
		t.Run(d.String(), func(t *testing.T) {
			_, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: d})
			want := fmt.Sprintf("Redis at %s: no write is durable: appendonly=no; CONFIG SET appendonly yes or run with --durability server", hostOf(t, u))
			if !badinput.Is(err) || fmt.Sprint(err) != want {
				t.Errorf("Open = %v (bad input %v), want %q", err, badinput.Is(err), want)
			}
			if got := appendfsync(t, c); got != "always" {
				t.Errorf("appendfsync = %s after a refused Open, want always untouched", got)
			}
		})
	}
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	if s := settings(db); s["appendonly"] != "no" {
		t.Errorf("Settings with durability server = %v, want appendonly no reported", s)
	}
}

// A user whose ACL denies CONFIG, as managed services give.
func TestConfigDeniedByACL(t *testing.T) {
	u := testdb.StartRedis(t)
	ctx := context.Background()
	if _, err := admin(t, u).Do(ctx, "ACL", "SETUSER", "bench", "on", ">bench-pw", "~*", "+@all", "-config"); err != nil {
		t.Fatal(err)
	}
	parsed, _ := url.Parse(u)
	parsed.User = url.UserPassword("bench", "bench-pw")
	bench := parsed.String()
	_, err := drivertest.OpenURL(t, bench, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
	if !badinput.Is(err) || !strings.Contains(fmt.Sprint(err), "refused CONFIG GET: NOPERM") || strings.Contains(fmt.Sprint(err), "bench-pw") {
		t.Errorf("Open with durability delayed: %v (bad input %v)", err, badinput.Is(err))
	}
	db := drivertest.MustOpen(t, bench, driver.Options{Sessions: 1})
	s := settings(db)
	if !strings.HasPrefix(s["appendfsync"], "unknown: CONFIG GET refused (NOPERM") || !strings.HasPrefix(s["save"], "unknown: CONFIG GET refused (NOPERM") ||
		s["appendonly"] != "yes (INFO persistence aof_enabled)" || s["maxmemory"] != "0 (no limit) (INFO memory maxmemory)" ||
		s["maxmemory-policy"] != "noeviction (INFO memory maxmemory_policy)" {
		t.Errorf("Settings = %v: want CONFIG's refusal said, and what INFO shows from INFO", s)
	}
}

// A server where CONFIG is renamed away, as managed services do.
func TestConfigRefused(t *testing.T) {
	u := testdb.StartRedis(t, "--rename-command", "CONFIG", "")
	_, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
	if !badinput.Is(err) || !strings.Contains(fmt.Sprint(err), "refused CONFIG GET: ERR unknown command") ||
		!strings.Contains(fmt.Sprint(err), "or run with --durability server") {
		t.Errorf("Open with durability full: %v (bad input %v)", err, badinput.Is(err))
	}

	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	s := settings(db)
	if !strings.HasPrefix(s["appendfsync"], "unknown: CONFIG GET refused (ERR unknown command") || s["appendonly"] != "yes (INFO persistence aof_enabled)" ||
		s["maxmemory-policy"] != "noeviction (INFO memory maxmemory_policy)" {
		t.Errorf("Settings = %v: want CONFIG's refusal said, and what INFO shows from INFO", s)
	}
	tbl := drivertest.Table("usertable", 2)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	st, err := db.Inspect(context.Background(), tbl)
	if err != nil || !strings.HasSuffix(st.Storage, "persistence appendonly=yes (from INFO; CONFIG GET refused)") {
		t.Errorf("Inspect = %+v, %v", st, err)
	}
}

func TestTableLifecycle(t *testing.T) {
	u := testdb.FreshRedisDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 3)
	c := admin(t, u)

	st, err := db.Inspect(ctx, tbl)
	if err != nil || st.Exists || st.CreatedByDbprobe || st.HasRows || st.Columns != nil {
		t.Fatalf("Inspect before create = %+v, %v", st, err)
	}
	if _, err := db.Session(ctx, tbl); !badinput.Is(err) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Session on a missing table: %v", err)
	}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	st, err = db.Inspect(ctx, tbl)
	if err != nil || !st.Exists || !st.CreatedByDbprobe || st.HasRows || fmt.Sprint(st.Columns) != "[YCSB_KEY FIELD0 FIELD1 FIELD2]" ||
		st.Type != driver.TableDisk {
		t.Fatalf("Inspect after create = %+v, %v", st, err)
	}
	wantStorage := "a hash per record (usertable:<key>), sorted-set index usertable#index, every key in memory; persistence appendonly=yes appendfsync=everysec save=\"\""
	if st.Storage != wantStorage {
		t.Errorf("Storage = %q, want %q", st.Storage, wantStorage)
	}
	if err := db.CreateTable(ctx, tbl); !badinput.Is(err) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("CreateTable of an existing table: %v, want bad input", err)
	}
	if _, err := db.Session(ctx, drivertest.Table("usertable", 10)); !badinput.Is(err) ||
		!strings.Contains(err.Error(), "has the columns YCSB_KEY,FIELD0,FIELD1,FIELD2 and the workload wants YCSB_KEY,FIELD0") {
		t.Errorf("Session with another field count: %v", err)
	}

	// Enough records for several drop chunks.
	s := drivertest.Session(t, db, tbl)
	const n = 2500
	keys := make([][]byte, n)
	values := make([][][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user%05d", i))
		values[i] = drivertest.Values(string(keys[i]), 3)
	}
	if err := s.InsertBatch(ctx, keys, values); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || !st.HasRows {
		t.Fatalf("Inspect after insert = %+v, %v", st, err)
	}
	if err := db.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || st.Exists || st.CreatedByDbprobe {
		t.Fatalf("Inspect after drop = %+v, %v", st, err)
	}
	if left, err := redis.Strings(c.Do(ctx, "KEYS", "*")); err != nil || len(left) != 0 {
		t.Fatalf("keys left after the drop: %v (%v)", left, err)
	}
	// Created again, it is dbprobe's again, of the type asked for.
	mem := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, TableType: driver.TableMemory})
	if err := mem.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || !st.CreatedByDbprobe || st.Type != driver.TableMemory ||
		!strings.Contains(st.Storage, "(--table-type memory: the same storage as disk)") {
		t.Fatalf("Inspect after a second create = %+v, %v", st, err)
	}
}

// Keys with a table's prefix that dbprobe did not write are someone
// else's: they make the table exist, are never changed or deleted, and
// keep CreateTable and Insert from taking them over.
func TestForeignKeys(t *testing.T) {
	u := testdb.FreshRedisDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	c := admin(t, u)
	tbl := drivertest.Table("usertable", 1)

	if _, err := c.Do(ctx, "HSET", "usertable:precious", "FIELD0", "theirs"); err != nil {
		t.Fatal(err)
	}
	st, err := db.Inspect(ctx, tbl)
	if err != nil || !st.Exists || st.CreatedByDbprobe || !st.HasRows || st.Columns != nil ||
		st.Storage != `keys usertable:* without a dbprobe schema (usertable#schema); persistence appendonly=yes appendfsync=everysec save=""` {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	if err := db.CreateTable(ctx, tbl); !badinput.Is(err) || !strings.Contains(err.Error(), "already holds keys usertable:* that dbprobe did not create") {
		t.Errorf("CreateTable over someone else's keys: %v", err)
	}
	if err := db.DropTable(ctx, tbl); !badinput.Is(err) || !strings.Contains(err.Error(), "refusing to drop table usertable: dbprobe did not create it") {
		t.Errorf("DropTable of someone else's keys: %v", err)
	}

	// A dbprobe table beside a key someone wrote with its prefix later.
	other := drivertest.Table("mine", 1)
	if err := db.CreateTable(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "HSET", "mine:theirs", "FIELD0", "theirs"); err != nil {
		t.Fatal(err)
	}
	if st, err := db.Inspect(ctx, other); err != nil || !st.CreatedByDbprobe || !st.HasRows {
		t.Errorf("Inspect of a dbprobe table holding someone else's key = %+v, %v; want HasRows", st, err)
	}
	s := drivertest.Session(t, db, other)
	if err := s.Update(ctx, []byte("theirs"), []int{0}, [][]byte{[]byte("ours")}); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Update of a key dbprobe did not write: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, []byte("theirs")); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Delete of a key dbprobe did not write: %v, want ErrNotFound", err)
	}
	err = s.Insert(ctx, []byte("theirs"), [][]byte{[]byte("ours")})
	if driver.Code(err) != "EXISTS" || driver.IsRetryable(err) {
		t.Errorf("Insert over a key dbprobe did not write: %v (code %q)", err, driver.Code(err))
	}
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := db.DropTable(ctx, other); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"mine:theirs": "theirs", "usertable:precious": "theirs"} {
		if v, err := redis.String(c.Do(ctx, "HGET", key, "FIELD0")); err != nil || v != want {
			t.Errorf("%s after the drop = %q, %v; want %q untouched", key, v, err, want)
		}
	}
	if n, err := redis.Int64(c.Do(ctx, "EXISTS", "mine:k", "mine#index", "mine#schema")); err != nil || n != 0 {
		t.Errorf("%d of dbprobe's keys left after the drop (%v)", n, err)
	}
}

func TestSessionOperations(t *testing.T) {
	u, db, tbl := setup(t, 4, driver.Options{Sessions: 2})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)

	// Values that need escaping somewhere, binary ones, and the caller's
	// reused buffers.
	special := [][]byte{[]byte("tab\there\r\n"), {0, 0xff, 0x80, '\\'}, []byte(`quote'"é€`), []byte("")}
	key := []byte("user1")
	if err := s.Insert(ctx, key, special); err != nil {
		t.Fatal(err)
	}
	key[4] = '2'
	if err := s.Insert(ctx, key, drivertest.Values("user2", 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, []byte("user3"), drivertest.Values("user3", 4)); err != nil {
		t.Fatal(err)
	}
	vals := make([][]byte, 4)
	if err := s.Read(ctx, []byte("user1"), nil, vals); err != nil {
		t.Fatal(err)
	}
	for i := range special {
		if !bytes.Equal(vals[i], special[i]) {
			t.Errorf("field %d = %q, want %q", i, vals[i], special[i])
		}
	}
	for _, fields := range [][]int{{2}, {3, 1}, {0, 1, 2}} {
		got := make([][]byte, len(fields))
		if err := s.Read(ctx, []byte("user2"), fields, got); err != nil {
			t.Fatal(err)
		}
		for i, f := range fields {
			if want := fmt.Sprintf("user2-f%d", f); string(got[i]) != want {
				t.Errorf("Read %v: value %d = %q, want %q", fields, i, got[i], want)
			}
		}
	}
	if err := s.Read(ctx, []byte("user2"), []int{7}, vals); err == nil {
		t.Errorf("Read of field 7 of 4 succeeded")
	}
	if err := s.Update(ctx, []byte("user2"), []int{3, 0}, [][]byte{[]byte("three"), []byte("zero")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, []byte("user3"), nil, drivertest.Values("again", 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(ctx, []byte("user2"), nil, vals); err != nil || fmt.Sprintf("%s", vals) != "[zero user2-f1 user2-f2 three]" {
		t.Errorf("after updates: %s, %v", vals, err)
	}

	var keys, firsts []string
	n, err := s.Scan(ctx, []byte("user1x"), 10, []int{0}, func(k []byte, v [][]byte) {
		keys = append(keys, string(k))
		firsts = append(firsts, string(v[0]))
	})
	if err != nil || n != 2 || fmt.Sprint(keys) != "[user2 user3]" || fmt.Sprint(firsts) != "[zero again-f0]" {
		t.Errorf("Scan = %d, %v, keys %v, values %v", n, err, keys, firsts)
	}
	// Keys compare as bytes: 0xff sorts after every ASCII key.
	if err := s.Insert(ctx, []byte{0xff}, drivertest.Values("ff", 4)); err != nil {
		t.Fatal(err)
	}
	keys = nil
	if _, err := s.Scan(ctx, []byte("user3"), 10, nil, func(k []byte, _ [][]byte) { keys = append(keys, string(k)) }); err != nil ||
		fmt.Sprintf("%q", keys) != `["user3" "\xff"]` {
		t.Errorf("Scan from user3 = %q, %v", keys, err)
	}

	// Scripts the server forgot (SCRIPT FLUSH, a restart) are sent again.
	if _, err := admin(t, u).Do(ctx, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, []byte("user2"), []int{1}, [][]byte{[]byte("one")}); err != nil {
		t.Fatalf("Update after SCRIPT FLUSH: %v", err)
	}
	if err := s.Read(ctx, []byte("user2"), []int{1}, vals[:1]); err != nil || string(vals[0]) != "one" {
		t.Fatalf("Read after the Update = %q, %v", vals[0], err)
	}

	// A record someone stripped of a field is reported, not read as empty.
	if _, err := admin(t, u).Do(ctx, "HDEL", "usertable:user3", "FIELD2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(ctx, []byte("user3"), nil, vals); err == nil || errors.Is(err, driver.ErrNotFound) || !strings.Contains(err.Error(), "has no field FIELD2") {
		t.Errorf("Read of a record without FIELD2: %v", err)
	}
}

func TestInsertBatchAllOrNothing(t *testing.T) {
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("BulkLoad=%v", bulk), func(t *testing.T) {
			u, db, tbl := setup(t, 10, driver.Options{Sessions: 1, BulkLoad: bulk})
			ctx := context.Background()
			s := drivertest.Session(t, db, tbl)
			c := admin(t, u)
			const n = 3000
			keys := make([][]byte, n)
			values := make([][][]byte, n)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("user%06d", i))
				values[i] = drivertest.Values(string(keys[i]), 10)
			}
			values[17][3] = []byte{0, 1, 2, 0xfe, 0xff, '\r', '\n'}
			if err := s.InsertBatch(ctx, keys, values); err != nil {
				t.Fatal(err)
			}
			if card, err := redis.Int64(c.Do(ctx, "ZCARD", "usertable#index")); err != nil || card != n {
				t.Fatalf("index holds %d keys (%v), want %d", card, err, n)
			}
			got := make([][]byte, 10)
			for _, i := range []int{0, 17, 1999, n - 1} {
				if err := s.Read(ctx, keys[i], nil, got); err != nil {
					t.Fatal(err)
				}
				for f := range got {
					if !bytes.Equal(got[f], values[i][f]) {
						t.Fatalf("record %d field %d = %q, want %q", i, f, got[f], values[i][f])
					}
				}
			}

			// A batch holding an existing key writes nothing, and names it.
			fresh := [][]byte{[]byte("new1"), keys[1234], []byte("new2")}
			err := s.InsertBatch(ctx, fresh, [][][]byte{drivertest.Values("a", 10), drivertest.Values("b", 10), drivertest.Values("c", 10)})
			if driver.Code(err) != "EXISTS" || driver.IsRetryable(err) || !strings.Contains(fmt.Sprint(err), `key "user001234" of table usertable already exists`) {
				t.Errorf("batch with an existing key: %v (code %q, class %v)", err, driver.Code(err), driver.ClassOf(err))
			}
			// So does one holding a key twice.
			twice := [][]byte{[]byte("new3"), []byte("new3")}
			if err := s.InsertBatch(ctx, twice, [][][]byte{drivertest.Values("a", 10), drivertest.Values("b", 10)}); driver.Code(err) != "EXISTS" {
				t.Errorf("batch with a key twice: %v (code %q)", err, driver.Code(err))
			}
			if k, err := redis.Int64(c.Do(ctx, "EXISTS", "usertable:new1", "usertable:new2", "usertable:new3")); err != nil || k != 0 {
				t.Errorf("%d records of the failed batches were written (%v)", k, err)
			}
			if card, err := redis.Int64(c.Do(ctx, "ZCARD", "usertable#index")); err != nil || card != n {
				t.Errorf("index holds %d keys after the failed batches (%v), want %d", card, err, n)
			}
			if err := s.InsertBatch(ctx, [][]byte{[]byte("x")}, [][][]byte{drivertest.Values("x", 9)}); err == nil {
				t.Error("a record of 9 values for 10 fields was accepted")
			}
		})
	}
}

// An index key of the wrong type fails the write before anything is
// written: Redis does not roll a script back.
func TestWrongTypeWritesNothing(t *testing.T) {
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("BulkLoad=%v", bulk), func(t *testing.T) {
			u, db, tbl := setup(t, 2, driver.Options{Sessions: 1, BulkLoad: bulk})
			ctx := context.Background()
			s := drivertest.Session(t, db, tbl)
			c := admin(t, u)
			if _, err := c.Do(ctx, "SET", "usertable#index", "not a sorted set"); err != nil {
				t.Fatal(err)
			}
			err := s.Insert(ctx, []byte("k1"), drivertest.Values("k1", 2))
			if driver.Code(err) != "WRONGTYPE" || driver.ClassOf(err) != driver.ClassOther {
				t.Errorf("Insert: %v (code %q, class %v), want WRONGTYPE", err, driver.Code(err), driver.ClassOf(err))
			}
			err = s.InsertBatch(ctx, [][]byte{[]byte("k2"), []byte("k3")}, [][][]byte{drivertest.Values("k2", 2), drivertest.Values("k3", 2)})
			if err == nil {
				t.Error("InsertBatch with a string as the index succeeded")
			}
			if n, err := redis.Int64(c.Do(ctx, "EXISTS", "usertable:k1", "usertable:k2", "usertable:k3")); err != nil || n != 0 {
				t.Errorf("%d records written beside a broken index (%v)", n, err)
			}
		})
	}
}

// oneRecord creates a table of one field holding the record k = "v", and
// returns a session on it.
func oneRecord(t *testing.T, db driver.DB, table string) driver.Session {
	t.Helper()
	ctx := context.Background()
	tbl := drivertest.Table(table, 1)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTimeoutsAndClosedDB(t *testing.T) {
	u := testdb.StartRedis(t, "--enable-debug-command", "yes")
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 2})
	ctx := context.Background()
	s := oneRecord(t, db, "usertable")
	vals := make([][]byte, 1)

	t.Run("deadline", func(t *testing.T) {
		c := admin(t, u)
		slept := make(chan error, 1)
		go func() {
			_, err := c.Do(ctx, "DEBUG", "SLEEP", "1")
			slept <- err
		}()
		time.Sleep(100 * time.Millisecond) // the server is asleep
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Read(short, []byte("k"), nil, vals)
		if !driver.IsTimeout(err) || driver.Code(err) != "timeout" {
			t.Errorf("Read past its deadline: %v (class %v, code %q)", err, driver.ClassOf(err), driver.Code(err))
		}
		if d := time.Since(start); d > 900*time.Millisecond {
			t.Errorf("the Read returned after %v, not at its 200ms deadline", d)
		}
		if err := <-slept; err != nil {
			t.Fatal(err)
		}
		if err := s.Read(ctx, []byte("k"), nil, vals); err != nil {
			t.Errorf("Read after a timeout: %v", err)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Update(canceled, []byte("k"), nil, [][]byte{[]byte("w")})
		if driver.Code(err) != "canceled" || driver.IsRetryable(err) || driver.IsConnLost(err) {
			t.Errorf("Update under a canceled context: %v (class %v, code %q)", err, driver.ClassOf(err), driver.Code(err))
		}
	})

	t.Run("closed DB", func(t *testing.T) {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		err := s.Read(ctx, []byte("k"), nil, vals)
		if !driver.IsConnLost(err) {
			t.Errorf("Read on a closed DB: %v (class %v), want a lost connection", err, driver.ClassOf(err))
		}
	})
}

// provokeBusy makes the server answer BUSY: a script that loops until
// killed, past a busy-reply threshold lowered to 50 ms. It needs a server
// of its own, since every client of the server gets BUSY meanwhile.
func provokeBusy(rawURL string) func(t *testing.T, db driver.DB, tbl driver.Table) error {
	return func(t *testing.T, db driver.DB, tbl driver.Table) error {
		ctx := context.Background()
		c := admin(t, rawURL)
		if _, err := c.Do(ctx, "CONFIG", "SET", "lua-time-limit", "50"); err != nil {
			t.Fatal(err)
		}
		defer c.Do(ctx, "CONFIG", "SET", "lua-time-limit", "5000")
		s := drivertest.Session(t, db, tbl)
		if err := s.Insert(ctx, []byte("busy-0001"), drivertest.Values("busy", len(tbl.Fields))); err != nil {
			t.Fatal(err)
		}
		looper := admin(t, rawURL) // no read timeout: it waits for the script however long it runs
		looped := make(chan error, 1)
		go func() {
			_, err := looper.Do(ctx, "EVAL", "while true do end", 0)
			looped <- err
		}()
		kill := func() {
			for {
				_, err := c.Do(ctx, "SCRIPT", "KILL")
				if err == nil {
					return
				}
				if strings.HasPrefix(err.Error(), "NOTBUSY") {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				t.Errorf("SCRIPT KILL: %v", err)
				return
			}
		}
		defer func() {
			kill()
			if err := <-looped; err == nil || !strings.Contains(err.Error(), "killed") {
				t.Errorf("the looping script ended with %v, want killed", err)
			}
		}()
		vals := make([][]byte, len(tbl.Fields))
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if err := s.Read(ctx, []byte("busy-0001"), nil, vals); err != nil {
				if driver.Code(err) != "BUSY" {
					t.Logf("Read while the script loops: %v", err)
				}
				return err
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the server never answered BUSY")
		return nil
	}
}

func createForeignTable(t *testing.T, rawURL, name string) {
	t.Helper()
	if _, err := admin(t, rawURL).Do(context.Background(), "HSET", name+":precious", "FIELD0", "data"); err != nil {
		t.Fatal(err)
	}
}

func conformance(t *testing.T, rawURL string, cfg drivertest.Config) {
	cfg.Open = func(t *testing.T, opts driver.Options) driver.DB {
		db, err := drivertest.OpenURL(t, rawURL, "", opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return db
	}
	cfg.CreateForeignTable = func(t *testing.T, name string) { createForeignTable(t, rawURL, name) }
	cfg.Settings = drivertest.SessionSettings
	drivertest.Run(t, cfg)
}

// TestConformance runs the suite every driver passes, on a logical
// database of its own, with the default knobs and with delayed durability
// (appendfsync everysec, which the test server has already, so the shared
// server is left as it is).
func TestConformance(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		conformance(t, testdb.FreshRedisDatabase(t), drivertest.Config{})
	})
	t.Run("delayed", func(t *testing.T) {
		conformance(t, testdb.FreshRedisDatabase(t), drivertest.Config{Options: driver.Options{Durability: driver.DurabilityDelayed}})
	})
}

// TestConformanceFullMemory runs the suite with durability full (which sets
// appendfsync always) and table type memory, and provokes BUSY, on a server
// of its own: both change what every client of the server sees.
func TestConformanceFullMemory(t *testing.T) {
	u := testdb.StartRedis(t)
	conformance(t, u, drivertest.Config{
		Options:         driver.Options{Durability: driver.DurabilityFull, TableType: driver.TableMemory},
		ProvokeConflict: provokeBusy(u),
	})
	if got := appendfsync(t, admin(t, u)); got != "everysec" {
		t.Errorf("appendfsync after the suite = %s, want everysec put back", got)
	}
}
