package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// A database set read-only refuses the write with 25006, which no repeat
// fixes: fatal, and named.
func TestReadOnlyIsFatal(t *testing.T) {
	u, _, tbl := setup(t, 2, driver.Options{Sessions: 1})
	ro := drivertest.MustOpen(t, withParams(t, u, "default_transaction_read_only", "on"), driver.Options{Sessions: 1})
	s := drivertest.Session(t, ro, tbl)
	err := s.Insert(context.Background(), []byte("k"), drivertest.Values("k", 2))
	if !driver.IsFatal(err) || driver.IsRetryable(err) || driver.Label(err) != "25006 read_only_sql_transaction" {
		t.Fatalf("insert into a read-only database: %v, class %v, label %q", err, driver.ClassOf(err), driver.Label(err))
	}
}

// A user without INSERT meets 42501 insufficient_privilege: fatal.
func TestRefusedPrivilegeIsFatal(t *testing.T) {
	u, _, tbl := setup(t, 2, driver.Options{Sessions: 1})
	selectOnly := leastPrivilegeUser(t, admin(t, u), u, "usertable", "SELECT")
	db := drivertest.MustOpen(t, selectOnly, driver.Options{Sessions: 1})
	s := drivertest.Session(t, db, tbl)
	err := s.Insert(context.Background(), []byte("k"), drivertest.Values("k", 2))
	if !driver.IsFatal(err) || driver.Label(err) != "42501 insufficient_privilege" {
		t.Fatalf("insert without INSERT: %v, class %v, label %q", err, driver.ClassOf(err), driver.Label(err))
	}
}

func TestConnectionRoom(t *testing.T) {
	u, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()
	a := admin(t, u)
	var setting string
	if err := a.QueryRow(ctx, "SHOW max_connections").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(setting)
	limiter := db.(driver.ConnectionLimiter)
	before, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The test's user is the throwaway server's superuser: every slot.
	if before.Max != want || before.Setting != "max_connections" || before.InUse < 2 {
		t.Fatalf("room %+v, want Max %d (max_connections) and at least this test's two connections in use", before, want)
	}
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	after, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.InUse != before.InUse+1 || after.Free() != before.Free()-1 {
		t.Fatalf("one more connection: in use %d then %d, free %d then %d", before.InUse, after.InUse, before.Free(), after.Free())
	}

	// An ordinary user loses the slots kept for superusers.
	var reserved int
	if err := a.QueryRow(ctx, "SELECT current_setting('superuser_reserved_connections')::int").Scan(&reserved); err != nil {
		t.Fatal(err)
	}
	lp := drivertest.MustOpen(t, leastPrivilegeUser(t, a, u, "usertable", "SELECT"), driver.Options{Sessions: 1})
	room, err := lp.(driver.ConnectionLimiter).ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reserved == 0 || room.Max != want-reserved {
		t.Fatalf("ordinary user: Max %d, want %d less %d reserved", room.Max, want, reserved)
	}
	if wantLimit := fmt.Sprintf("max_connections %d less %d reserved", want, reserved); room.Limit != wantLimit {
		t.Fatalf("ordinary user: Limit %q, want %q", room.Limit, wantLimit)
	}
	// It counts the other users' connections too, as the superuser does.
	super, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if room.InUse != super.InUse {
		t.Fatalf("ordinary user counts %d connections in use, the superuser %d", room.InUse, super.InUse)
	}
}

func TestDataDirectory(t *testing.T) {
	u, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()
	dir, err := db.(driver.DataLocator).DataDirectory(ctx)
	if err != nil || !filepath.IsAbs(dir) {
		t.Fatalf("DataDirectory = %q, %v", dir, err)
	}
	// The throwaway server runs here: its data directory holds PG_VERSION.
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		t.Fatalf("data directory %s: %v", dir, err)
	}

	// A user who may not read data_directory gets "", not an error.
	lp := drivertest.MustOpen(t, leastPrivilegeUser(t, admin(t, u), u, "usertable", "SELECT"), driver.Options{Sessions: 1})
	if dir, err := lp.(driver.DataLocator).DataDirectory(ctx); dir != "" || err != nil {
		t.Fatalf("DataDirectory as an ordinary user = %q, %v; want \"\", nil", dir, err)
	}
}
