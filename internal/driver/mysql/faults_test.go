package mysql_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// Sessions whose transactions are read-only by default refuse the write
// with 1792, which no repeat fixes: fatal, and named.
func TestReadOnlyTransactionIsFatal(t *testing.T) {
	u, admin, _, tbl := setup(t, 2, driver.Options{Sessions: 1})
	setGlobal(t, admin, "tx_read_only", "1")
	ro := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	s := drivertest.Session(t, ro, tbl)
	err := s.Insert(context.Background(), []byte("k"), drivertest.Values("k", 2))
	if !driver.IsFatal(err) || driver.IsRetryable(err) || driver.Label(err) != "1792 ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION" {
		t.Fatalf("insert in a read-only transaction: %v, class %v, label %q", err, driver.ClassOf(err), driver.Label(err))
	}
}

// A server set read_only refuses a user without SUPER with 1290, and a
// user without INSERT meets 1142: both fatal.
func TestReadOnlyServerAndRefusedPrivilegeAreFatal(t *testing.T) {
	u, admin, _, tbl := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()

	selectOnly := drivertest.MustOpen(t, leastPrivilegeUser(t, u, "usertable", "SELECT"), driver.Options{Sessions: 1})
	err := drivertest.Session(t, selectOnly, tbl).Insert(ctx, []byte("k"), drivertest.Values("k", 2))
	if !driver.IsFatal(err) || driver.Label(err) != "1142 ER_TABLEACCESS_DENIED_ERROR" {
		t.Fatalf("insert without INSERT: %v, class %v, label %q", err, driver.ClassOf(err), driver.Label(err))
	}

	writer := drivertest.MustOpen(t, leastPrivilegeUser(t, u, "usertable", "SELECT, INSERT"), driver.Options{Sessions: 1})
	s := drivertest.Session(t, writer, tbl)
	setGlobal(t, admin, "read_only", "1")
	err = s.Insert(ctx, []byte("k"), drivertest.Values("k", 2))
	if !driver.IsFatal(err) || driver.Label(err) != "1290 ER_OPTION_PREVENTS_STATEMENT" {
		t.Fatalf("insert into a read-only server: %v, class %v, label %q", err, driver.ClassOf(err), driver.Label(err))
	}
}

func TestConnectionRoom(t *testing.T) {
	u, admin, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()
	want, _ := strconv.Atoi(globalVar(t, admin, "max_connections"))
	limiter := db.(driver.ConnectionLimiter)
	before, err := limiter.ConnectionRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.Max != want || before.Setting != "max_connections" || before.InUse < 1 {
		t.Fatalf("room %+v, want Max %d (max_connections) and this test's connections in use", before, want)
	}
	// One more connection, held open: database/sql would give an idle one
	// back to the pool, where it stays connected.
	other := testdb.OpenMySQL(t, u)
	c, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.PingContext(ctx); err != nil {
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
	_, _, db, _ := setup(t, 2, driver.Options{Sessions: 1})
	dir, err := db.(driver.DataLocator).DataDirectory(context.Background())
	if err != nil || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		t.Fatalf("DataDirectory = %q, %v", dir, err)
	}
	// The throwaway server runs here: its datadir holds InnoDB's system
	// tablespace and the mysql schema.
	for _, name := range []string{"ibdata1", "mysql"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("data directory %s: %v", dir, err)
		}
	}
}
