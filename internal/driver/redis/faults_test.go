package redis_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// A server out of memory (maxmemory reached, noeviction) refuses writes
// with OOM, and a replica with READONLY: fatal, both. A server of the
// test's own, so that no other test meets its limits.
func TestOOMAndReadOnlyAreFatal(t *testing.T) {
	u := testdb.StartRedis(t)
	ctx := context.Background()
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	tbl := drivertest.Table("usertable", 2)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	c := admin(t, u)
	if _, err := c.Do(ctx, "CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	err := s.Insert(ctx, []byte("k1"), drivertest.Values("k1", 2))
	if driver.Code(err) != "OOM" || !driver.IsFatal(err) {
		t.Fatalf("insert past maxmemory: %v, code %q, class %v", err, driver.Code(err), driver.ClassOf(err))
	}
	if _, err := c.Do(ctx, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, []byte("k1"), drivertest.Values("k1", 2)); err != nil {
		t.Fatalf("insert once the limit is lifted: %v", err)
	}

	// A replica of a master that is not there still refuses writes.
	if _, err := c.Do(ctx, "REPLICAOF", "127.0.0.1", "1"); err != nil {
		t.Fatal(err)
	}
	err = s.Insert(ctx, []byte("k2"), drivertest.Values("k2", 2))
	if driver.Code(err) != "READONLY" || !driver.IsFatal(err) {
		t.Fatalf("insert into a replica: %v, code %q, class %v", err, driver.Code(err), driver.ClassOf(err))
	}
	if _, err := c.Do(ctx, "REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
}

// A failed RDB save stops writes with MISCONF (stop-writes-on-bgsave-error,
// the default): fatal. The save fails because its directory is gone, as a
// full disk would make it fail. Redis stops writes only when snapshots are
// on (a save point).
func TestMisconfIsFatal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	u := testdb.StartRedis(t, "--dir", dir, "--appendonly", "no", "--save", "3600 1", "--stop-writes-on-bgsave-error", "yes")
	ctx := context.Background()
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	tbl := drivertest.Table("usertable", 2)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	c := admin(t, u)
	t.Cleanup(func() {
		// Without save points the server stops at once, where it would
		// try to save at shutdown, fail and wait to be killed.
		if _, err := c.Do(context.Background(), "CONFIG", "SET", "save", ""); err != nil {
			t.Errorf("CONFIG SET save: %v", err)
		}
	})
	if _, err := c.Do(ctx, "BGSAVE"); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		info, err := redis.String(c.Do(ctx, "INFO", "persistence"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "rdb_last_bgsave_status:err") {
			break
		}
		if i == 100 {
			t.Fatalf("the save did not fail:\n%s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	err := s.Insert(ctx, []byte("k"), drivertest.Values("k", 2))
	if driver.Code(err) != "MISCONF" || !driver.IsFatal(err) {
		t.Fatalf("insert after a failed save: %v, code %q, class %v", err, driver.Code(err), driver.ClassOf(err))
	}
}

func TestConnectionRoom(t *testing.T) {
	u, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()
	c := admin(t, u)
	cfg, err := redis.StringMap(c.Do(ctx, "CONFIG", "GET", "maxclients"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(cfg["maxclients"])
	limiter := db.(driver.ConnectionLimiter)
	before, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want == 0 || before.Max != want || before.Setting != "maxclients" || before.InUse < 2 {
		t.Fatalf("room %+v, want Max %d (maxclients) and this test's connections in use", before, want)
	}
	// Another client, whose connection stays open in its pool.
	other := testdb.OpenRedis(t, u)
	if _, err := other.Do(ctx, "PING"); err != nil {
		t.Fatal(err)
	}
	after, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.InUse != before.InUse+1 || after.Free() != before.Free()-1 {
		t.Fatalf("one more connection: in use %d then %d, free %d then %d", before.InUse, after.InUse, before.Free(), after.Free())
	}
}

func TestDataDirectory(t *testing.T) {
	_, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	dir, err := db.(driver.DataLocator).DataDirectory(context.Background())
	if err != nil || dir == "" {
		t.Fatalf("DataDirectory = %q, %v", dir, err)
	}
	// The throwaway server runs here, in a directory of its own.
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("data directory %s: %v", dir, err)
	}
}

// Without CONFIG (renamed away, as managed services do) the room is
// unknown, an error, and the directory "".
func TestWithoutConfig(t *testing.T) {
	u := testdb.StartRedis(t, "--rename-command", "CONFIG", "")
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	if room, err := db.(driver.ConnectionLimiter).ConnectionRoom(ctx); err == nil {
		t.Errorf("ConnectionRoom without CONFIG = %+v, want an error", room)
	}
	if dir, err := db.(driver.DataLocator).DataDirectory(ctx); dir != "" || err != nil {
		t.Errorf("DataDirectory without CONFIG = %q, %v; want \"\", nil", dir, err)
	}
}
