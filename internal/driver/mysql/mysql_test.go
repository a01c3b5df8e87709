package mysql_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	_ "github.com/dbprobe/dbprobe/internal/driver/mysql"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// withParams returns rawURL with extra query parameters.
func withParams(t testing.TB, rawURL string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// createForeignTable creates a table with one row outside dbprobe.
func createForeignTable(t testing.TB, admin *sql.DB, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE TABLE `"+name+"` (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 VARCHAR(100) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, "INSERT INTO `"+name+"` VALUES ('precious', 'data')"); err != nil {
		t.Fatal(err)
	}
}

// provokeLockWait holds a row lock (a table lock for ENGINE=MEMORY) from a
// connection of its own and has a session update that row: with
// innodb_lock_wait_timeout=1 and lock_wait_timeout=1 in the DB's URL the
// update fails with 1205 after a second.
func provokeLockWait(t *testing.T, admin *sql.DB, db driver.DB, tbl driver.Table) error {
	ctx := context.Background()
	s, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := []byte("conflict-0001")
	values := make([][]byte, len(tbl.Fields))
	for i := range values {
		values[i] = []byte(fmt.Sprintf("v%d", i))
	}
	if err := s.Insert(ctx, key, values); err != nil {
		t.Fatal(err)
	}
	defer s.Delete(ctx, key)
	c, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st, err := db.Inspect(ctx, tbl); err != nil || st.Type == driver.TableMemory {
		// ENGINE=MEMORY locks whole tables, and only for a statement:
		// hold the table with LOCK TABLES (lock_wait_timeout=1).
		if _, err := c.ExecContext(ctx, "LOCK TABLES `"+tbl.Name+"` WRITE"); err != nil {
			t.Fatal(err)
		}
		defer c.ExecContext(ctx, "UNLOCK TABLES")
	} else {
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var got string
		if err := tx.QueryRowContext(ctx, "SELECT YCSB_KEY FROM `"+tbl.Name+"` WHERE YCSB_KEY = ? FOR UPDATE", key).Scan(&got); err != nil {
			t.Fatal(err)
		}
	}
	return s.Update(ctx, key, []int{0}, [][]byte{[]byte("blocked")})
}

// conformance runs the suite on a fresh database with opts.
func conformance(t *testing.T, opts driver.Options) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	locked := withParams(t, u, "innodb_lock_wait_timeout", "1", "lock_wait_timeout", "1")
	drivertest.Run(t, drivertest.Config{
		Options:  opts,
		Settings: drivertest.SessionSettings,
		Open: func(t *testing.T, opts driver.Options) driver.DB {
			db, err := drivertest.OpenURL(t, locked, "", opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return db
		},
		CreateForeignTable: func(t *testing.T, name string) { createForeignTable(t, admin, name) },
		DropBehindDbprobe: func(t *testing.T, name string) {
			if _, err := admin.Exec("DROP TABLE `" + name + "`"); err != nil {
				t.Fatal(err)
			}
		},
		ProvokeConflict: func(t *testing.T, db driver.DB, tbl driver.Table) error {
			err := provokeLockWait(t, admin, db, tbl)
			if driver.Code(err) != "1205" {
				t.Errorf("conflict %v has code %q, want 1205", err, driver.Code(err))
			}
			return err
		},
	})
}

// TestConformance runs the suite every driver passes, once per combination
// of knobs MySQL has.
func TestConformance(t *testing.T) {
	for name, opts := range map[string]driver.Options{
		"default":          {},
		"memory":           {TableType: driver.TableMemory},
		"durability-full":  {Durability: driver.DurabilityFull},
		"durability-delay": {Durability: driver.DurabilityDelayed},
		"procedure":        {OpPath: driver.PathProcedure},
		"memory-procedure": {TableType: driver.TableMemory, OpPath: driver.PathProcedure},
	} {
		t.Run(name, func(t *testing.T) { conformance(t, opts) })
	}
}

// setup gives the test a fresh database, an open DB on it, a created
// table of n fields and an admin connection pool.
func setup(t testing.TB, n int, opts driver.Options) (string, *sql.DB, driver.DB, driver.Table) {
	t.Helper()
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	db := drivertest.MustOpen(t, u, opts)
	tbl := drivertest.Table("usertable", n)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return u, admin, db, tbl
}

// globalVar reads a global variable through the admin pool.
func globalVar(t testing.TB, admin *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := admin.QueryRow("SELECT @@GLOBAL." + name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// setGlobal sets a global variable and puts the old value back when the
// test ends.
func setGlobal(t testing.TB, admin *sql.DB, name, value string) {
	t.Helper()
	old := globalVar(t, admin, name)
	if _, err := admin.Exec("SET GLOBAL " + name + " = " + value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("SET GLOBAL " + name + " = " + old); err != nil {
			t.Errorf("put %s back to %s: %v", name, old, err)
		}
	})
}

// setting returns the value of a named setting of Info, or "".
func setting(info driver.Info, name string) string {
	for _, s := range info.Settings {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

func TestRegistered(t *testing.T) {
	for _, scheme := range []string{"mysql", "mariadb"} {
		if _, name, err := driver.Lookup(scheme); err != nil || name != "mysql" {
			t.Errorf("Lookup(%q) = %q, %v; want mysql", scheme, name, err)
		}
	}
}

func TestOpenWrongPassword(t *testing.T) {
	base := testdb.MySQLURL(t)
	u, _ := url.Parse(base)
	realPW, _ := u.User.Password()
	const wrong = "Wr0ng-pässword!"
	u.User = url.UserPassword(u.User.Username(), wrong)
	noPW := *u
	noPW.User = url.User(u.User.Username())

	for name, tc := range map[string]struct{ url, password string }{
		"in the URL":       {u.String(), ""},
		"DBPROBE_PASSWORD": {noPW.String(), wrong},
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
			msg := err.Error()
			want := fmt.Sprintf("MySQL at %s refused user %q: access denied; check the user and password (URL, DBPROBE_PASSWORD)", u.Host, u.User.Username())
			if msg != want {
				t.Errorf("message\n %q\nwant\n %q", msg, want)
			}
			for _, secret := range []string{wrong, url.QueryEscape(wrong), realPW} {
				if strings.Contains(msg, secret) {
					t.Errorf("message holds a password: %q", msg)
				}
			}
		})
	}
}

func TestOpenPasswordFromEnvironment(t *testing.T) {
	u, _ := url.Parse(testdb.MySQLURL(t))
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	db, err := drivertest.OpenURL(t, u.String(), pw, driver.Options{Sessions: 1})
	if err != nil {
		t.Fatalf("Open with the password given apart: %v", err)
	}
	db.Close()
}

func TestOpenUnknownDatabase(t *testing.T) {
	u, _ := url.Parse(testdb.MySQLURL(t))
	u.Path = "/no_such_db"
	db, err := drivertest.OpenURL(t, u.String(), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a missing database succeeded")
	}
	want := fmt.Sprintf("MySQL at %s: database \"no_such_db\" does not exist; create it with CREATE DATABASE `no_such_db` or name another database in the URL", u.Host)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
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
	db, err := drivertest.OpenURL(t, fmt.Sprintf("mysql://dbprobe:secret@127.0.0.1:%d/dbprobe", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	want := fmt.Sprintf("cannot reach MySQL at 127.0.0.1:%d: connection refused; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

// A server that accepts connections and never answers: Open must end.
func TestOpenSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	db, err := drivertest.OpenURL(t, fmt.Sprintf("mysql://dbprobe:secret@127.0.0.1:%d/dbprobe?timeout=1s", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a silent server succeeded")
	}
	want := fmt.Sprintf("cannot reach MySQL at 127.0.0.1:%d: no answer in time; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

func TestOpenRefusesOptions(t *testing.T) {
	base := testdb.MySQLURL(t)
	u, _ := url.Parse(base)
	pw, _ := u.User.Password()
	for name, tc := range map[string]struct{ url, says string }{
		"unknown option": {withParams(t, base, "sslmode", "disable"), `unknown option "sslmode"; known: `},
		"bad value":      {withParams(t, base, "innodb_lock_wait_timeout", "soon"), "innodb_lock_wait_timeout"},
		// MariaDB has max_statement_time, not MySQL's max_execution_time.
		"variable the server lacks": {withParams(t, base, "max_execution_time", "100"), "rejected a setting from the URL"},
		"TLS the server lacks":      {withParams(t, base, "tls", "true"), "TLS"},
	} {
		t.Run(name, func(t *testing.T) {
			db, err := drivertest.OpenURL(t, tc.url, "", driver.Options{Sessions: 1})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			if !badinput.Is(err) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q (bad input %v), want bad input saying %q", err, badinput.Is(err), tc.says)
			}
			if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
				t.Errorf("message holds the password or several lines: %q", err)
			}
		})
	}
}

func TestOpenRefusesKnobsMySQLLacks(t *testing.T) {
	base := testdb.MySQLURL(t)
	for name, tc := range map[string]struct {
		opts driver.Options
		says string
	}{
		"nondurable table": {driver.Options{TableType: driver.TableNondurable},
			"MySQL has no non-durable table (--table-type nondurable); use --table-type memory (ENGINE=MEMORY, not durable) or --durability delayed"},
		"per-transaction durability": {driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction},
			"MySQL has no per-transaction durability"},
	} {
		t.Run(name, func(t *testing.T) {
			before := globalVar(t, testdb.OpenMySQL(t, base), "innodb_flush_log_at_trx_commit")
			db, err := drivertest.OpenURL(t, base, "", tc.opts)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if !badinput.Is(err) || !strings.HasPrefix(err.Error(), tc.says) {
				t.Errorf("error %q (bad input %v), want bad input starting %q", err, badinput.Is(err), tc.says)
			}
			if after := globalVar(t, testdb.OpenMySQL(t, base), "innodb_flush_log_at_trx_commit"); after != before {
				t.Errorf("innodb_flush_log_at_trx_commit changed from %s to %s", before, after)
			}
		})
	}
}

func TestInfoReadsSettingsBack(t *testing.T) {
	base := testdb.MySQLURL(t)
	db := drivertest.MustOpen(t, withParams(t, base, "innodb_lock_wait_timeout", "7"), driver.Options{Sessions: 1, BulkLoad: true})
	info := db.Info()
	t.Logf("%+v", info)
	if info.Driver != "mysql" {
		t.Errorf("Driver = %q", info.Driver)
	}
	// Test binaries carry no dependency versions: "unknown" is all a test
	// can see; dbprobe's own binary reports v1.x.y.
	if !strings.HasPrefix(info.Library, "go-sql-driver/mysql v1.") && info.Library != "go-sql-driver/mysql unknown" {
		t.Errorf("Library = %q", info.Library)
	}
	admin := testdb.OpenMySQL(t, base)
	var version string
	if err := admin.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if info.ServerVersion != version {
		t.Errorf("ServerVersion = %q, want %q", info.ServerVersion, version)
	}
	want := map[string]string{
		"innodb_flush_log_at_trx_commit": globalVar(t, admin, "innodb_flush_log_at_trx_commit"),
		"sync_binlog":                    globalVar(t, admin, "sync_binlog"),
		"innodb_buffer_pool_size":        globalVar(t, admin, "innodb_buffer_pool_size"),
		"transaction_isolation":          globalVar(t, admin, "tx_isolation"),
		"innodb_lock_wait_timeout":       "7 (from the URL)", // on the DB's own connections
		"load path":                      "LOAD DATA LOCAL INFILE",
	}
	for name, v := range want {
		if got := setting(info, name); got != v {
			t.Errorf("setting %s = %q, want %q", name, got, v)
		}
	}
	if got := setting(info, "log_bin"); got != "OFF" && got != "ON" {
		t.Errorf("setting log_bin = %q", got)
	}
}

func TestTableLifecycle(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 3)

	st, err := db.Inspect(ctx, tbl)
	if err != nil || st.Exists || st.CreatedByDbprobe || st.HasRows || st.Columns != nil {
		t.Fatalf("Inspect before create = %+v, %v", st, err)
	}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	st, err = db.Inspect(ctx, tbl)
	wantCols := "[YCSB_KEY FIELD0 FIELD1 FIELD2]"
	if err != nil || !st.Exists || !st.CreatedByDbprobe || st.HasRows || fmt.Sprint(st.Columns) != wantCols {
		t.Fatalf("Inspect after create = %+v, %v; want columns %s", st, err, wantCols)
	}
	if st.Type != driver.TableDisk || st.Storage != "ENGINE=InnoDB ROW_FORMAT=Dynamic" {
		t.Errorf("Inspect: type %v, storage %q", st.Type, st.Storage)
	}
	if err := db.CreateTable(ctx, tbl); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("CreateTable of an existing table: %v, want bad input", err)
	}
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), drivertest.Values("k", 3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st, err = db.Inspect(ctx, tbl); err != nil || !st.HasRows {
		t.Fatalf("Inspect after insert = %+v, %v", st, err)
	}
	if err := db.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || st.Exists || st.CreatedByDbprobe {
		t.Fatalf("Inspect after drop = %+v, %v", st, err)
	}
	var markers int
	if err := admin.QueryRow("SELECT COUNT(*) FROM dbprobe_tables").Scan(&markers); err != nil || markers != 0 {
		t.Fatalf("marker rows after drop: %d, %v", markers, err)
	}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || !st.CreatedByDbprobe {
		t.Fatalf("Inspect after second create = %+v, %v", st, err)
	}
}

func TestDropRefusesForeignTable(t *testing.T) {
	_, admin, db, _ := setup(t, 1, driver.Options{Sessions: 1}) // the marker table exists
	ctx := context.Background()
	foreign := drivertest.Table("theirs", 1)
	createForeignTable(t, admin, foreign.Name)
	st, err := db.Inspect(ctx, foreign)
	if err != nil || !st.Exists || st.CreatedByDbprobe || !st.HasRows {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	err = db.DropTable(ctx, foreign)
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "dbprobe did not create it") {
		t.Fatalf("DropTable of a foreign table: %v", err)
	}
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM theirs").Scan(&n); err != nil || n != 1 {
		t.Fatalf("foreign table after refused drop: %d rows, %v", n, err)
	}

	// Without any marker table too.
	u2 := testdb.FreshMySQLDatabase(t)
	admin2 := testdb.OpenMySQL(t, u2)
	db2 := drivertest.MustOpen(t, u2, driver.Options{Sessions: 1})
	createForeignTable(t, admin2, "usertable")
	if err := db2.DropTable(ctx, drivertest.Table("usertable", 1)); err == nil || !badinput.Is(err) {
		t.Fatalf("DropTable without a marker table: %v", err)
	}
	if err := admin2.QueryRow("SELECT COUNT(*) FROM usertable").Scan(&n); err != nil || n != 1 {
		t.Fatalf("foreign table after refused drop: %d rows, %v", n, err)
	}
}

// allBytes is every byte value, 0 to 255.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// Every byte value, not only the printable ones the suite uses, goes
// through each path unchanged: the columns are binary and nothing
// converts between character sets.
func TestEveryByteValueRoundTrips(t *testing.T) {
	all := allBytes()
	values := func(seed int) [][]byte {
		v := make([][]byte, 4)
		for i := range v {
			rot := (seed*7 + i*31) % 256
			v[i] = append(append([]byte{}, all[rot:]...), all[:rot]...)[:100]
		}
		v[3] = []byte("\\N") // LOAD DATA's NULL, as text
		return v
	}
	keys := [][]byte{
		{0x00}, {0x00, 0x00}, {0xff, 0xfe}, []byte("\t\n\\"), []byte("A "), []byte("a"), {0x80}, all[1:200],
	}
	for _, path := range []driver.OpPath{driver.PathStatement, driver.PathProcedure} {
		for _, bulk := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/bulk=%v", path, bulk), func(t *testing.T) {
				_, _, db, tbl := setup(t, 4, driver.Options{Sessions: 1, BulkLoad: bulk, OpPath: path})
				ctx := context.Background()
				s := drivertest.Session(t, db, tbl)
				// Half through InsertBatch, half through Insert.
				var batchKeys [][]byte
				var batchValues [][][]byte
				for i, k := range keys {
					if i%2 == 0 {
						batchKeys, batchValues = append(batchKeys, k), append(batchValues, values(i))
					} else if err := s.Insert(ctx, k, values(i)); err != nil {
						t.Fatalf("Insert %q: %v", k, err)
					}
				}
				if err := s.InsertBatch(ctx, batchKeys, batchValues); err != nil {
					t.Fatalf("InsertBatch: %v", err)
				}
				got := make([][]byte, 4)
				for i, k := range keys {
					if err := s.Read(ctx, k, nil, got); err != nil {
						t.Fatalf("Read %q: %v", k, err)
					}
					for f, v := range values(i) {
						if !bytes.Equal(got[f], v) {
							t.Fatalf("key %q field %d = %q, want %q", k, f, got[f], v)
						}
					}
				}
				// Keys come back in byte order, whatever their bytes.
				want := make([][]byte, len(keys))
				copy(want, keys)
				slices.SortFunc(want, bytes.Compare)
				var scanned [][]byte
				if _, err := s.Scan(ctx, nil, 100, []int{2}, func(k []byte, v [][]byte) {
					scanned = append(scanned, bytes.Clone(k))
				}); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%q", scanned) != fmt.Sprintf("%q", want) {
					t.Fatalf("scan order %q, want byte order %q", scanned, want)
				}
				if err := s.Update(ctx, keys[0], []int{1}, [][]byte{all}); err == nil {
					t.Fatal("Update with a 256-byte value into VARBINARY(100) succeeded: the value must not be cut silently")
				}
				if err := s.Update(ctx, keys[0], []int{1}, [][]byte{all[156:]}); err != nil {
					t.Fatal(err)
				}
				if err := s.Read(ctx, keys[0], []int{1}, got[:1]); err != nil || !bytes.Equal(got[0], all[156:]) {
					t.Fatalf("after Update: %q, %v", got[0], err)
				}
			})
		}
	}
}

// An update that writes the values a row already holds found its row: it
// is not ErrNotFound, on either path.
func TestUpdateToTheSameValue(t *testing.T) {
	for _, path := range []driver.OpPath{driver.PathStatement, driver.PathProcedure} {
		t.Run(path.String(), func(t *testing.T) {
			_, _, db, tbl := setup(t, 2, driver.Options{Sessions: 1, OpPath: path})
			ctx := context.Background()
			s := drivertest.Session(t, db, tbl)
			v := drivertest.Values("k", 2)
			if err := s.Insert(ctx, []byte("k"), v); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, []byte("k"), nil, v); err != nil {
				t.Errorf("Update to the same values: %v", err)
			}
			if err := s.Update(ctx, []byte("k"), []int{1}, v[1:]); err != nil {
				t.Errorf("Update of one field to its value: %v", err)
			}
			if err := s.Update(ctx, []byte("nobody"), []int{1}, v[1:]); !errors.Is(err, driver.ErrNotFound) {
				t.Errorf("Update of a missing key: %v, want ErrNotFound", err)
			}
		})
	}
}

// A batch LOAD DATA cannot take whole is rolled back: LOAD DATA LOCAL
// skips a duplicate and cuts a value too long with a warning only.
func TestLoadDataFailsWholeBatch(t *testing.T) {
	_, admin, db, tbl := setup(t, 2, driver.Options{Sessions: 1, BulkLoad: true})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("existing"), drivertest.Values("existing", 2)); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		keys   [][]byte
		values [][][]byte
		code   string
	}{
		"duplicate key": {[][]byte{[]byte("new1"), []byte("existing"), []byte("new2")},
			[][][]byte{drivertest.Values("new1", 2), drivertest.Values("other", 2), drivertest.Values("new2", 2)}, "1062"},
		"value too long": {[][]byte{[]byte("new1"), []byte("new2")},
			[][][]byte{drivertest.Values("new1", 2), {bytes.Repeat([]byte("x"), 101), []byte("y")}}, "1265"},
	} {
		t.Run(name, func(t *testing.T) {
			err := s.InsertBatch(ctx, tc.keys, tc.values)
			if err == nil {
				t.Fatal("InsertBatch succeeded")
			}
			if driver.Code(err) != tc.code || driver.IsRetryable(err) {
				t.Errorf("InsertBatch: %v, code %q, class %v; want code %s, not retryable", err, driver.Code(err), driver.ClassOf(err), tc.code)
			}
			var n int
			if err := admin.QueryRow("SELECT COUNT(*) FROM usertable WHERE YCSB_KEY LIKE 'new%'").Scan(&n); err != nil || n != 0 {
				t.Errorf("after the failed batch: %d of its rows stayed, %v", n, err)
			}
		})
	}
	got := make([][]byte, 2)
	if err := s.Read(ctx, []byte("existing"), nil, got); err != nil || string(got[0]) != "existing-f0" {
		t.Errorf("the existing row after the failed batches: %q, %v", got, err)
	}
	if got := setting(db.Info(), "load path"); got != "LOAD DATA LOCAL INFILE" {
		t.Errorf("load path = %q: a failed batch is no reason to stop using LOAD DATA", got)
	}
}

// With local_infile=OFF the batch goes through INSERT, and Info says so:
// when it is off at Open, and when the server refuses it later.
func TestLoadDataRefused(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 2)
	batch := func(prefix string) ([][]byte, [][][]byte) {
		var keys [][]byte
		var values [][][]byte
		for i := 0; i < 20; i++ {
			k := fmt.Sprintf("%s%02d", prefix, i)
			keys, values = append(keys, []byte(k)), append(values, drivertest.Values(k, 2))
		}
		return keys, values
	}

	later := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, BulkLoad: true})
	if got := setting(later.Info(), "load path"); got != "LOAD DATA LOCAL INFILE" {
		t.Fatalf("load path with local_infile=ON: %q", got)
	}
	if err := later.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	setGlobal(t, admin, "local_infile", "0")

	t.Run("off at Open", func(t *testing.T) {
		db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, BulkLoad: true})
		want := "multi-row INSERT: the server has local_infile=OFF, which refuses LOAD DATA LOCAL"
		if got := setting(db.Info(), "load path"); got != want {
			t.Errorf("load path = %q, want %q", got, want)
		}
		keys, values := batch("open")
		if err := drivertest.Session(t, db, tbl).InsertBatch(ctx, keys, values); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("refused later", func(t *testing.T) {
		keys, values := batch("later")
		if err := drivertest.Session(t, later, tbl).InsertBatch(ctx, keys, values); err != nil {
			t.Fatalf("InsertBatch after the server turned local_infile off: %v", err)
		}
		got := setting(later.Info(), "load path")
		if !strings.HasPrefix(got, "multi-row INSERT: the server refused LOAD DATA LOCAL (error ") {
			t.Errorf("load path = %q", got)
		}
	})
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM usertable").Scan(&n); err != nil || n != 40 {
		t.Errorf("%d rows loaded, %v; want 40", n, err)
	}
}

func TestDurability(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	const flush = "innodb_flush_log_at_trx_commit"
	setGlobal(t, admin, flush, "1")

	t.Run("delayed, then put back", func(t *testing.T) {
		db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
		if err != nil {
			t.Fatal(err)
		}
		info := db.Info()
		if got := setting(info, flush); got != "2" {
			t.Errorf("Info reports %s = %q, want 2", flush, got)
		}
		if got := setting(info, "durability"); !strings.Contains(got, "from 1 to 2") {
			t.Errorf("durability setting %q", got)
		}
		if got := globalVar(t, admin, flush); got != "2" {
			t.Errorf("global %s = %s while open, want 2", flush, got)
		}
		// A second DB finds it set already, changes nothing and puts nothing back.
		other := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
		if got := setting(other.Info(), "durability"); !strings.Contains(got, "already 2") {
			t.Errorf("second DB: durability setting %q", got)
		}
		other.Close()
		if got := globalVar(t, admin, flush); got != "2" {
			t.Errorf("global %s = %s after the second DB closed, want 2 still", flush, got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := globalVar(t, admin, flush); got != "1" {
			t.Errorf("global %s = %s after Close, want 1 put back", flush, got)
		}
		if err := db.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if got := globalVar(t, admin, flush); got != "1" {
			t.Errorf("global %s = %s after a second Close, want 1", flush, got)
		}
	})

	t.Run("full when it is full already", func(t *testing.T) {
		db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, Durability: driver.DurabilityFull})
		if got := setting(db.Info(), "durability"); !strings.Contains(got, "already 1") {
			t.Errorf("durability setting %q", got)
		}
	})

	t.Run("someone else's change stands", func(t *testing.T) {
		db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec("SET GLOBAL " + flush + " = 0"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if got := globalVar(t, admin, flush); got != "0" {
			t.Errorf("global %s = %s after Close, want the 0 another client set", flush, got)
		}
		if _, err := admin.Exec("SET GLOBAL " + flush + " = 1"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("without the privilege", func(t *testing.T) {
		limited := testdb.MySQLDatabaseUser(t, admin, u, "dbprobe_limited", "limited-pw")
		before := globalVar(t, admin, flush)
		db, err := drivertest.OpenURL(t, limited, "", driver.Options{Sessions: 1, Durability: driver.DurabilityDelayed})
		if err == nil {
			db.Close()
			t.Fatal("Open with durability delayed by a user without SUPER succeeded")
		}
		want := `--durability delayed needs innodb_flush_log_at_trx_commit=2, a server-wide setting, and user "dbprobe_limited" may not set it (it needs the SUPER or SYSTEM_VARIABLES_ADMIN privilege); ask the DBA to set it, then run with --durability server`
		if !badinput.Is(err) || err.Error() != want {
			t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
		}
		if after := globalVar(t, admin, flush); after != before {
			t.Errorf("global %s changed from %s to %s", flush, before, after)
		}
		// The user can run with the server's setting.
		db = drivertest.MustOpen(t, limited, driver.Options{Sessions: 1})
		if got := setting(db.Info(), flush); got != before {
			t.Errorf("Info reports %s = %q, want %s", flush, got, before)
		}
	})
}

func TestMemoryTable(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 10)

	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, TableType: driver.TableMemory})
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	st, err := db.Inspect(ctx, tbl)
	if err != nil || st.Type != driver.TableMemory || !strings.HasPrefix(st.Storage, "ENGINE=MEMORY (not durable: rows are lost when the server restarts") {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	if strings.Contains(st.Storage, "at most") {
		t.Errorf("storage %q: the table's size limit was not raised above the server's default", st.Storage)
	}
	if got := setting(db.Info(), "table type"); !strings.Contains(got, "not durable") {
		t.Errorf("Info does not warn that the table is not durable: %q", got)
	}

	// A limit from the URL.
	small := drivertest.Table("small", 10)
	db2 := drivertest.MustOpen(t, withParams(t, u, "max_heap_table_size", "1M"), driver.Options{Sessions: 1, TableType: driver.TableMemory})
	if err := db2.CreateTable(ctx, small); err != nil {
		t.Fatal(err)
	}
	if st, err := db2.Inspect(ctx, small); err != nil || !strings.Contains(st.Storage, "room for at most") || !strings.Contains(st.Storage, " KiB of rows") {
		t.Errorf("Inspect with max_heap_table_size=1M: %+v, %v", st, err)
	}

	// Too wide for MEMORY: refused before anything is created.
	wide := drivertest.Table("wide", 10)
	wide.FieldLength = 10000
	if err := db.CreateTable(ctx, wide); !badinput.Is(err) {
		t.Errorf("CreateTable of a MEMORY table with 100 kB rows: %v, want bad input", err)
	}
	if st, err := db.Inspect(ctx, wide); err != nil || st.Exists {
		t.Errorf("after the refused CreateTable: %+v, %v", st, err)
	}
}

// Rows wider than MySQL's 65535-byte limit keep their fields in BLOBs, on
// both load paths.
func TestLargeRows(t *testing.T) {
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			u := testdb.FreshMySQLDatabase(t)
			db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, BulkLoad: bulk})
			ctx := context.Background()
			tbl := drivertest.Table("usertable", 4)
			tbl.FieldLength = 20000
			if err := db.CreateTable(ctx, tbl); err != nil {
				t.Fatal(err)
			}
			s := drivertest.Session(t, db, tbl)
			big := func(key string, f int) []byte {
				unit := fmt.Sprintf("%s.%d\t\\|", key, f)
				return bytes.Repeat([]byte(unit), 15000/len(unit)+1)[:15000]
			}
			var keys [][]byte
			var values [][][]byte
			for i := 0; i < 20; i++ {
				k := fmt.Sprintf("big%02d", i)
				keys = append(keys, []byte(k))
				values = append(values, [][]byte{big(k, 0), big(k, 1), big(k, 2), big(k, 3)})
			}
			if err := s.InsertBatch(ctx, keys, values); err != nil {
				t.Fatal(err)
			}
			i := 0
			n, err := s.Scan(ctx, []byte("big"), 100, nil, func(k []byte, v [][]byte) {
				if string(k) != string(keys[i]) || !bytes.Equal(v[3], values[i][3]) {
					t.Errorf("scan record %d: key %q", i, k)
				}
				i++
			})
			if err != nil || n != 20 {
				t.Fatalf("Scan = %d, %v", n, err)
			}
		})
	}
}

func TestProcedures(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 3)
	procs := func() []string {
		t.Helper()
		rows, err := admin.Query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		return names
	}
	all := "[dbprobe_usertable_delete dbprobe_usertable_insert dbprobe_usertable_read dbprobe_usertable_scan dbprobe_usertable_update]"

	// Created on the statement path: no procedures.
	plain := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	if err := plain.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := procs(); len(got) != 0 {
		t.Fatalf("procedures after CreateTable on the statement path: %v", got)
	}
	ps := drivertest.Session(t, plain, tbl)
	if err := ps.Insert(ctx, []byte("k1"), drivertest.Values("k1", 3)); err != nil {
		t.Fatal(err)
	}

	// A procedure-path session creates them, once even when many start together.
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 4, OpPath: driver.PathProcedure})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := db.Session(ctx, tbl)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(procs()); got != all {
		t.Fatalf("procedures after Session on the procedure path: %s, want %s", got, all)
	}
	s := drivertest.Session(t, db, tbl)
	got := make([][]byte, 2)
	if err := s.Read(ctx, []byte("k1"), []int{2, 0}, got); err != nil || string(got[0]) != "k1-f2" || string(got[1]) != "k1-f0" {
		t.Fatalf("Read through the procedure: %q, %v", got, err)
	}
	if err := s.Update(ctx, []byte("k1"), []int{1}, [][]byte{[]byte("new")}); err != nil {
		t.Fatal(err)
	}
	got = make([][]byte, 3)
	if err := s.Read(ctx, []byte("k1"), nil, got); err != nil || fmt.Sprintf("%s", got) != "[k1-f0 new k1-f2]" {
		t.Fatalf("after updating one field through the procedure: %s, %v", got, err)
	}
	if err := s.Delete(ctx, []byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, []byte("k1")); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("second Delete through the procedure: %v, want ErrNotFound", err)
	}

	// DropTable drops them whatever path the DB is on.
	if err := plain.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := procs(); len(got) != 0 {
		t.Fatalf("procedures after DropTable: %v", got)
	}
	// CreateTable on the procedure path creates them with the table.
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(procs()); got != all {
		t.Fatalf("procedures after CreateTable on the procedure path: %s", got)
	}
}

// A row lock held past innodb_lock_wait_timeout in the middle of a
// multi-statement batch: the batch fails as a retryable conflict and
// leaves nothing, though 1205 rolls back only its statement by itself.
func TestLockWaitTimeoutRollsBackBatch(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	db := drivertest.MustOpen(t, withParams(t, u, "innodb_lock_wait_timeout", "1"), driver.Options{Sessions: 1})
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 1)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	// More rows than one INSERT's placeholders hold: two statements.
	const n = 40000
	keys := make([][]byte, n)
	values := make([][][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%06d", i))
		values[i] = [][]byte{[]byte("v")}
	}
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// An uncommitted insert of the last key: the batch's second statement waits for it.
	if _, err := tx.Exec("INSERT INTO usertable VALUES (?, 'theirs')", keys[n-1]); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	err = s.InsertBatch(ctx, keys, values)
	if !driver.IsRetryable(err) || driver.Code(err) != "1205" {
		t.Fatalf("InsertBatch against a held lock: %v, class %v, code %q; want a retryable 1205", err, driver.ClassOf(err), driver.Code(err))
	}
	tx.Rollback()
	var count int
	if err := admin.QueryRow("SELECT COUNT(*) FROM usertable").Scan(&count); err != nil || count != 0 {
		t.Fatalf("%d rows after the failed batch, %v; want none", count, err)
	}
	// The session goes on: the retried batch succeeds.
	if err := s.InsertBatch(ctx, keys, values); err != nil {
		t.Fatalf("retried InsertBatch: %v", err)
	}
}

func TestTimeoutsAndCancellation(t *testing.T) {
	u, admin, db, tbl := setup(t, 1, driver.Options{Sessions: 2})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)
	for _, k := range []string{"k", "k2"} {
		if err := s.Insert(ctx, []byte(k), [][]byte{[]byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	// lock holds key k in a transaction of its own until release.
	lock := func(t *testing.T, key string) (release func()) {
		tx, err := admin.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := tx.QueryRow("SELECT YCSB_KEY FROM usertable WHERE YCSB_KEY = ? FOR UPDATE", key).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return func() { tx.Rollback() }
	}
	read := func(t *testing.T, key string) string {
		got := make([][]byte, 1)
		if err := s.Read(ctx, []byte(key), nil, got); err != nil {
			t.Fatalf("Read %s: %v", key, err)
		}
		return string(got[0])
	}

	t.Run("context deadline", func(t *testing.T) {
		release := lock(t, "k")
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err := s.Update(short, []byte("k"), []int{0}, [][]byte{[]byte("late")})
		if !driver.IsTimeout(err) {
			t.Fatalf("blocked update past its deadline: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
		release()
		// The server was told to stop the statement: it does not run once
		// the lock is free.
		time.Sleep(300 * time.Millisecond)
		if got := read(t, "k"); got != "v" {
			t.Fatalf("after the timed-out update: %q, want v (the update ran after all)", got)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		release := lock(t, "k")
		defer release()
		run, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Update(run, []byte("k"), []int{0}, [][]byte{[]byte("w")}) }()
		time.Sleep(200 * time.Millisecond)
		cancel()
		err := <-done
		if driver.Code(err) != "canceled" || driver.IsRetryable(err) || driver.IsConnLost(err) {
			t.Fatalf("update canceled while blocked: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
		if err := s.Read(run, []byte("k"), nil, make([][]byte, 1)); err == nil {
			t.Fatal("Read under the canceled context succeeded")
		}
	})

	t.Run("cancel with read_timeout", func(t *testing.T) {
		// go-sql-driver sets a deadline of its own before every read; the
		// cancellation must not wait for it.
		release := lock(t, "k")
		defer release()
		db2 := drivertest.MustOpen(t, withParams(t, u, "read_timeout", "30s"), driver.Options{Sessions: 1})
		s2 := drivertest.Session(t, db2, tbl)
		run, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s2.Update(run, []byte("k"), []int{0}, [][]byte{[]byte("w")}) }()
		time.Sleep(200 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if driver.Code(err) != "canceled" {
				t.Fatalf("update canceled while blocked: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a canceled update is still waiting 10 s later")
		}
	})

	t.Run("max_statement_time", func(t *testing.T) {
		release := lock(t, "k")
		defer release()
		db2 := drivertest.MustOpen(t, withParams(t, u, "max_statement_time", "0.3"), driver.Options{Sessions: 1})
		s2 := drivertest.Session(t, db2, tbl)
		err := s2.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte("w")})
		if !driver.IsTimeout(err) || driver.Code(err) != "1969" {
			t.Fatalf("update past max_statement_time: %v, class %v, code %q; want a timeout, 1969", err, driver.ClassOf(err), driver.Code(err))
		}
	})

	t.Run("connection killed", func(t *testing.T) {
		if got := read(t, "k2"); got != "v" {
			t.Fatal(got)
		}
		var killed int
		rows, err := admin.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			if _, err := admin.Exec("KILL CONNECTION " + strconv.FormatInt(id, 10)); err == nil {
				killed++
			}
		}
		if killed == 0 {
			t.Fatal("no connection to kill")
		}
		err = s.Read(ctx, []byte("k2"), nil, make([][]byte, 1))
		if !driver.IsConnLost(err) {
			t.Fatalf("Read on a killed connection: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
		// The next operation takes a new connection.
		if got := read(t, "k2"); got != "v" {
			t.Fatal(got)
		}
	})

	// After all that the session works, and has not leaked connections.
	if got := read(t, "k"); got != "v" {
		t.Fatalf("k = %q", got)
	}
	var conns int
	if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE()").Scan(&conns); err != nil || conns > 8 {
		t.Errorf("%d connections on the database, %v", conns, err)
	}
}

// Closing a DB closes the sessions left open rather than waiting for them.
func TestCloseWithOpenSession(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	tbl := drivertest.Table("usertable", 1)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	s, err := db.Session(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for a session left open")
	}
	if err := s.Read(context.Background(), []byte("k"), nil, make([][]byte, 1)); !driver.IsConnLost(err) {
		t.Errorf("Read on a session of a closed DB: %v, want a lost connection", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close of a session already closed: %v", err)
	}
}
