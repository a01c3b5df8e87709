package sqlserver_test

// Integration tests: they run against the server DBPROBE_SQLSERVER_URL
// names and are skipped without it (see testdb.SQLServerURL).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // the "sqlserver" database/sql driver, for the tests' own connections
	"github.com/microsoft/go-mssqldb/azuread"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// mustOpen opens rawURL with opts and closes it when the test ends.
func mustOpen(t testing.TB, rawURL string, opts driver.Options) driver.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := openURL(t, ctx, rawURL, "", opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// admin opens the test server with go-mssqldb directly, outside the
// driver: the scheme becomes go-mssqldb's, and fedauth= goes through its
// azuread driver as the driver under test does.
func admin(t testing.TB, rawURL string) *sql.DB {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("%s is not a URL", testdb.SQLServerURLEnv)
	}
	u.Scheme = "sqlserver"
	name := "sqlserver"
	for k := range u.Query() {
		if strings.EqualFold(k, "fedauth") {
			name = azuread.DriverName
		}
	}
	db, err := sql.Open(name, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schema is the default schema of the test login, where the driver puts
// its tables.
func schema(t testing.TB, a *sql.DB) string {
	t.Helper()
	var s string
	if err := a.QueryRow("SELECT ISNULL(SCHEMA_NAME(), N'dbo')").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// quote delimits an identifier.
func quote(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }

// databaseOption reads one column of sys.databases for the test database.
func databaseOption(t testing.TB, a *sql.DB, column string) string {
	t.Helper()
	var v string
	if err := a.QueryRow("SELECT CAST(" + column + " AS nvarchar(60)) FROM sys.databases WHERE name = DB_NAME()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// memoryUnsupported reports Open's refusal of memory-optimized tables on a
// database that cannot hold them.
func memoryUnsupported(err error) bool {
	return badinput.Is(err) && strings.Contains(err.Error(), "memory-optimized tables")
}

// TestConformance runs the conformance suite once per knob combination.
func TestConformance(t *testing.T) {
	base := testdb.SQLServerURL(t)
	a := admin(t, base)
	delayed := func(scope driver.DurabilityScope) driver.Options {
		return driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: scope}
	}
	withPath := func(o driver.Options, tt driver.TableType, path driver.OpPath) driver.Options {
		o.TableType, o.OpPath, o.BucketCount = tt, path, 1024
		return o
	}
	for _, tc := range []struct {
		name string
		opts driver.Options
	}{
		{"disk", driver.Options{}},
		{"memory", withPath(driver.Options{}, driver.TableMemory, driver.PathStatement)},
		{"nondurable", withPath(driver.Options{}, driver.TableNondurable, driver.PathStatement)},
		{"durability=full", driver.Options{Durability: driver.DurabilityFull}},
		{"delayed/database", delayed(driver.ScopeDatabase)},
		{"delayed/transaction", delayed(driver.ScopeTransaction)},
		{"delayed/transaction/memory", withPath(delayed(driver.ScopeTransaction), driver.TableMemory, driver.PathStatement)},
		{"procedure/disk", withPath(driver.Options{}, driver.TableDisk, driver.PathProcedure)},
		{"procedure/memory", withPath(driver.Options{}, driver.TableMemory, driver.PathProcedure)},
		{"procedure/nondurable", withPath(driver.Options{}, driver.TableNondurable, driver.PathProcedure)},
		{"procedure/delayed/transaction", withPath(delayed(driver.ScopeTransaction), driver.TableDisk, driver.PathProcedure)},
		{"procedure/delayed/transaction/memory", withPath(delayed(driver.ScopeTransaction), driver.TableMemory, driver.PathProcedure)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.TableType != driver.TableDisk {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				db, err := openURL(t, ctx, base, "", tc.opts)
				cancel()
				if memoryUnsupported(err) {
					t.Skipf("the test database cannot hold memory-optimized tables: %v", err)
				}
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				db.Close()
			}
			conflict := provokeDeadlock
			if tc.opts.TableType != driver.TableDisk {
				conflict = provokeWriteConflict
			}
			drivertest.Run(t, drivertest.Config{
				Options: tc.opts,
				Open: func(t *testing.T, opts driver.Options) driver.DB {
					return mustOpen(t, base, opts)
				},
				CreateForeignTable: func(t *testing.T, name string) { createForeignTable(t, a, name) },
				DropBehindDbprobe:  func(t *testing.T, name string) { dropBehind(t, a, name) },
				ProvokeConflict: func(t *testing.T, db driver.DB, tbl driver.Table) error {
					return conflict(t, a, db, tbl)
				},
			})
		})
	}
}

// dropBehind drops a table dbprobe created with plain SQL, as someone else
// would, leaving its marker row; natively compiled procedures are bound to
// the table and go first.
func dropBehind(t *testing.T, a *sql.DB, name string) {
	t.Helper()
	s := quote(schema(t, a))
	var stmts []string
	for _, p := range driver.Procedures(drivertest.Table(name, 1)).All() {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+s+"."+quote(p))
	}
	for _, q := range append(stmts, "DROP TABLE "+s+"."+quote(name)) {
		if _, err := a.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// createForeignTable makes a table with one row that dbprobe did not
// create, and drops it when the test ends.
func createForeignTable(t *testing.T, a *sql.DB, name string) {
	t.Helper()
	table := quote(schema(t, a)) + "." + quote(name)
	if _, err := a.Exec("CREATE TABLE " + table + " (YCSB_KEY varchar(255) NOT NULL PRIMARY KEY, FIELD0 varchar(100) NOT NULL); " +
		"INSERT INTO " + table + " VALUES ('precious', 'data')"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := a.Exec("DROP TABLE " + table); err != nil {
			t.Errorf("drop the foreign table: %v", err)
		}
	})
}

// provokeWriteConflict makes a memory-optimized table refuse an update
// with 41302: another transaction has updated the row and not committed.
// In-Memory OLTP does not wait for it: the second writer fails at once.
func provokeWriteConflict(t *testing.T, a *sql.DB, db driver.DB, tbl driver.Table) error {
	ctx := context.Background()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := []byte("conflict-0001")
	if err := s.Insert(ctx, key, drivertest.Values(string(key), len(tbl.Fields))); err != nil {
		t.Fatal(err)
	}
	c, err := a.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	table := quote(schema(t, a)) + "." + quote(tbl.Name)
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION; UPDATE "+table+" WITH (SNAPSHOT) SET FIELD0 = 0x00 WHERE YCSB_KEY = @p1", key); err != nil {
		t.Fatal(err)
	}
	defer c.ExecContext(ctx, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
	return s.Update(ctx, key, []int{1}, [][]byte{[]byte("second writer")})
}

// provokeDeadlock makes the driver's batch insert the victim of a deadlock
// (1205): this test's transaction holds key b and then asks for key a,
// which the batch (keys a, b, in one transaction) holds while it waits for
// b. The test's transaction runs at high deadlock priority, so SQL Server
// picks the batch as the victim.
func provokeDeadlock(t *testing.T, a *sql.DB, db driver.DB, tbl driver.Table) error {
	ctx := context.Background()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := a.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	table := quote(schema(t, a)) + "." + quote(tbl.Name)
	insert := "INSERT INTO " + table + " (YCSB_KEY"
	values := " VALUES (@p1"
	for i, f := range tbl.Fields {
		insert += ", " + quote(f)
		values += ", 0x" + fmt.Sprintf("%02x", i)
	}
	insert += ")" + values + ")"
	keyA, keyB := []byte("deadlock-a"), []byte("deadlock-b")

	var spid int
	if err := c.QueryRowContext(ctx, "SET DEADLOCK_PRIORITY HIGH; SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	defer c.ExecContext(ctx, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
	if _, err := c.ExecContext(ctx, insert, keyB); err != nil {
		t.Fatal(err)
	}

	batch := make(chan error, 1)
	go func() {
		batch <- s.InsertBatch(ctx, [][]byte{keyA, keyB},
			[][][]byte{drivertest.Values(string(keyA), len(tbl.Fields)), drivertest.Values(string(keyB), len(tbl.Fields))})
	}()
	// Wait until the batch waits for key b, holding key a.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var blocked int
		if err := a.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.dm_exec_requests WHERE blocking_session_id = @p1", spid).Scan(&blocked); err != nil {
			t.Fatalf("watch for the blocked batch (needs VIEW SERVER STATE): %v", err)
		}
		if blocked > 0 {
			break
		}
		select {
		case err := <-batch:
			t.Fatalf("the batch ended before it waited for key b: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch never waited for key b")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Close the cycle: this waits until SQL Server has chosen the victim.
	if _, err := c.ExecContext(ctx, insert, keyA); err != nil {
		t.Fatalf("the test's transaction, at high deadlock priority, failed instead of the batch: %v", err)
	}
	return <-batch
}

func TestOpenWrongPassword(t *testing.T) {
	base := testdb.SQLServerURL(t)
	u, _ := url.Parse(base)
	if u.Query().Get("fedauth") != "" {
		t.Skip("the test server is reached with Entra ID, not a password")
	}
	const wrong = "Wr0ng-pässword!"
	realPW, _ := u.User.Password()
	u.User = url.UserPassword(u.User.Username(), wrong)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := openURL(t, ctx, u.String(), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open with a wrong password succeeded")
	}
	msg := err.Error()
	want := fmt.Sprintf("refused login %q: login failed; check the user and password (URL, DBPROBE_PASSWORD)", u.User.Username())
	if !badinput.Is(err) || !strings.Contains(msg, want) {
		t.Errorf("error %q (bad input %v), want it to contain %q", msg, badinput.Is(err), want)
	}
	for _, secret := range []string{wrong, url.QueryEscape(wrong), realPW} {
		if secret != "" && strings.Contains(msg, secret) {
			t.Errorf("message holds a password: %q", msg)
		}
	}
}

func TestOpenMissingDatabase(t *testing.T) {
	u, _ := url.Parse(testdb.SQLServerURL(t))
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "database") {
			q.Del(k)
		}
	}
	q.Set("database", "dbprobe_no_such_db")
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := openURL(t, ctx, u.String(), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a missing database succeeded")
	}
	if !badinput.Is(err) || !strings.Contains(err.Error(), `cannot open database "dbprobe_no_such_db"`) {
		t.Errorf("error %q (bad input %v)", err, badinput.Is(err))
	}
}

func TestInfoReadsSettingsBack(t *testing.T) {
	base := testdb.SQLServerURL(t)
	a := admin(t, base)
	info := mustOpen(t, base, driver.Options{Sessions: 1}).Info()
	t.Logf("%+v", info)
	if info.Driver != "sqlserver" || !strings.HasPrefix(info.Library, "go-mssqldb ") {
		t.Errorf("Driver %q, Library %q", info.Driver, info.Library)
	}
	var version string
	var edition int
	if err := a.QueryRow("SELECT @@VERSION, CAST(SERVERPROPERTY('EngineEdition') AS int)").Scan(&version, &edition); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(version, "\n")
	if !strings.Contains(info.ServerVersion, strings.TrimSpace(first)) || (edition == 5) != strings.HasPrefix(info.ServerVersion, "Azure SQL Database") {
		t.Errorf("ServerVersion = %q; @@VERSION begins %q, engine edition %d", info.ServerVersion, first, edition)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Name] = s.Value
	}
	if want := databaseOption(t, a, "delayed_durability_desc"); got["delayed_durability"] != want {
		t.Errorf("delayed_durability = %q, the server says %q", got["delayed_durability"], want)
	}
	if want := databaseOption(t, a, "DB_NAME()"); got["database"] != want {
		t.Errorf("database = %q, want %q", got["database"], want)
	}
}

// TestDurabilityPutBack opens with delayed durability, checks the server
// has it, and checks Close puts the previous value back, once.
func TestDurabilityPutBack(t *testing.T) {
	base := testdb.SQLServerURL(t)
	a := admin(t, base)
	var canAlter int
	if err := a.QueryRow("SELECT ISNULL(HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'ALTER'), 0)").Scan(&canAlter); err != nil {
		t.Fatal(err)
	}
	before := databaseOption(t, a, "delayed_durability_desc")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		scope driver.DurabilityScope
		want  string
	}{{driver.ScopeDatabase, "FORCED"}, {driver.ScopeTransaction, "ALLOWED"}} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			db, err := openURL(t, ctx, base, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed, DurabilityScope: tc.scope})
			if canAlter == 0 {
				if err == nil {
					db.Close()
					t.Fatal("Open changed DELAYED_DURABILITY without the ALTER permission")
				}
				if !badinput.Is(err) || !strings.Contains(err.Error(), "ALTER permission") {
					t.Errorf("error %q, want bad input naming the ALTER permission", err)
				}
				if now := databaseOption(t, a, "delayed_durability_desc"); now != before {
					t.Errorf("DELAYED_DURABILITY is %s after a refused Open, was %s", now, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if now := databaseOption(t, a, "delayed_durability_desc"); now != tc.want {
				t.Errorf("DELAYED_DURABILITY = %s while open, want %s", now, tc.want)
			}
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if now := databaseOption(t, a, "delayed_durability_desc"); now != before {
				t.Errorf("DELAYED_DURABILITY = %s after Close, want %s back", now, before)
			}
			if err := db.Close(); err != nil {
				t.Errorf("a second Close: %v", err)
			}
		})
	}
}

// TestSessionCreatesMissingProcedures loads a table on the statement path
// and opens a session on the procedure path, which must create the
// procedures; DropTable removes them with the table.
func TestSessionCreatesMissingProcedures(t *testing.T) {
	base := testdb.SQLServerURL(t)
	a := admin(t, base)
	ctx := context.Background()
	tbl := drivertest.Table(fmt.Sprintf("dbprobe_test_procs_%d", time.Now().UnixNano()%1e9), 3)
	plain := mustOpen(t, base, driver.Options{Sessions: 2})
	if err := plain.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.DropTable(ctx, tbl) })
	count := func() int {
		var n int
		if err := a.QueryRow("SELECT COUNT(*) FROM sys.procedures WHERE name LIKE @p1 AND schema_id = SCHEMA_ID(@p2)",
			"dbprobe_"+tbl.Name+"_%", schema(t, a)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%d procedures after a statement-path CreateTable, want 0", n)
	}
	procs := mustOpen(t, base, driver.Options{Sessions: 2, OpPath: driver.PathProcedure})
	s, err := procs.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := count(); n != 5 {
		t.Fatalf("%d procedures after a procedure-path Session, want 5", n)
	}
	key := []byte("k1")
	if err := s.Insert(ctx, key, drivertest.Values("k1", 3)); err != nil {
		t.Fatal(err)
	}
	got := [][]byte{nil}
	if err := s.Read(ctx, key, []int{2}, got); err != nil || string(got[0]) != "k1-f2" {
		t.Fatalf("Read through the procedure = %q, %v", got[0], err)
	}
	if err := s.Delete(ctx, []byte("missing")); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Delete of a missing key through the procedure = %v, want ErrNotFound", err)
	}
	s.Close()
	if err := procs.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d procedures left after DropTable", n)
	}
}
