package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// A session's operation ends as soon as its context is cancelled, though
// the server has not answered, with or without a read_timeout in the URL
// (redigo's per-command deadlines); the session works again afterwards.
func TestCancelDuringOperation(t *testing.T) {
	u := testdb.StartRedis(t, "--enable-debug-command", "yes")
	for i, query := range []string{"", "?read_timeout=30s"} {
		t.Run("url"+query, func(t *testing.T) {
			db := drivertest.MustOpen(t, u+query, driver.Options{Sessions: 1})
			ctx := context.Background()
			s := oneRecord(t, db, "usertable"+strconv.Itoa(i))
			vals := make([][]byte, 1)

			slept := make(chan error, 1)
			sleeper := testdb.OpenRedis(t, u)
			go func() {
				_, err := sleeper.Do(ctx, "DEBUG", "SLEEP", "2")
				slept <- err
			}()
			time.Sleep(100 * time.Millisecond) // the server is asleep
			canceled, cancel := context.WithCancel(ctx)
			time.AfterFunc(150*time.Millisecond, cancel)
			start := time.Now()
			err := s.Read(canceled, []byte("k"), nil, vals)
			if driver.Code(err) != "canceled" {
				t.Errorf("Read cancelled while the server sleeps: %v (class %v, code %q), want code canceled", err, driver.ClassOf(err), driver.Code(err))
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the Read returned %v after it began, not when cancelled (150ms)", d)
			}
			if err := <-slept; err != nil {
				t.Fatal(err)
			}
			if err := s.Read(ctx, []byte("k"), nil, vals); err != nil || string(vals[0]) != "v" {
				t.Errorf("Read after the cancelled one: %v, %q", err, vals[0])
			}
			if err := s.Update(ctx, []byte("k"), nil, [][]byte{[]byte("w")}); err != nil {
				t.Errorf("Update after the cancelled Read: %v", err)
			}
		})
	}
}

// A context that ends between operations, as each operation's own does
// under --op-timeout, leaves the session's connection alone: the server
// sees no new connection however many operations run that way.
func TestContextPerOperationKeepsTheConnection(t *testing.T) {
	u := testdb.FreshRedisDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 2)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	admin := testdb.OpenRedis(t, u)
	received := func() int {
		t.Helper()
		info, err := redis.String(admin.Do(ctx, "INFO", "stats"))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatal("INFO stats has no total_connections_received")
		return 0
	}
	before := received()
	vals := make([][]byte, 2)
	for i := range 100 {
		opCtx, cancel := context.WithTimeout(ctx, time.Second)
		if i%2 == 1 {
			opCtx, cancel = context.WithCancel(ctx)
		}
		err := s.Read(opCtx, []byte("k"), nil, vals)
		if err == nil {
			err = s.Update(opCtx, []byte("k"), []int{1}, [][]byte{[]byte("c")})
		}
		cancel()
		if err != nil {
			t.Fatalf("operation %d: %v", i, err)
		}
	}
	if after := received(); after != before {
		t.Errorf("the server received %d connections during 200 operations, each under a context of its own; want 0", after-before)
	}
}
