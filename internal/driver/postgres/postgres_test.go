package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	_ "github.com/dbprobe/dbprobe/internal/driver/postgres"
	"github.com/dbprobe/dbprobe/internal/rawnet"
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
	// pgx does not read "+" as a space in the query: encode spaces as %20.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// admin connects to rawURL with pgx, outside the driver.
func admin(t testing.TB, rawURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// setup gives the test a fresh database, an open DB on it and a created
// table of n fields.
func setup(t testing.TB, n int, opts driver.Options) (string, driver.DB, driver.Table) {
	t.Helper()
	u := testdb.FreshPostgresDatabase(t)
	db := drivertest.MustOpen(t, u, opts)
	tbl := drivertest.Table("usertable", n)
	if err := db.CreateTable(context.Background(), tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return u, db, tbl
}

func TestRegistered(t *testing.T) {
	for _, scheme := range []string{"postgres", "postgresql"} {
		if _, name, err := driver.Lookup(scheme); err != nil || name != "postgres" {
			t.Errorf("Lookup(%q) = %q, %v; want postgres", scheme, name, err)
		}
	}
}

func TestOpenWrongPassword(t *testing.T) {
	base := testdb.PostgresURL(t)
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
			want := fmt.Sprintf("PostgreSQL at %s refused user %q: password authentication failed; check the user and password (URL, DBPROBE_PASSWORD)", u.Host, u.User.Username())
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
	base := testdb.PostgresURL(t)
	u, _ := url.Parse(base)
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	db, err := drivertest.OpenURL(t, u.String(), pw, driver.Options{Sessions: 1})
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
	db, err := drivertest.OpenURL(t, fmt.Sprintf("postgres://dbprobe:secret@127.0.0.1:%d/dbprobe?sslmode=disable", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v to fail", d)
	}
	want := fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d: connection refused; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

// A server that accepts connections and never answers: the connect timeout
// must end the wait.
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
	start := time.Now()
	db, err := drivertest.OpenURL(t, fmt.Sprintf("postgres://dbprobe:secret@127.0.0.1:%d/dbprobe?sslmode=disable&connect_timeout=1", port), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a silent server succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to fail with connect_timeout=1", d)
	}
	want := fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d: no answer in time; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

func TestOpenMissingDatabase(t *testing.T) {
	u, _ := url.Parse(testdb.PostgresURL(t))
	u.Path = "/no_such_db"
	db, err := drivertest.OpenURL(t, u.String(), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open of a missing database succeeded")
	}
	msg := err.Error()
	if !badinput.Is(err) || !strings.Contains(msg, `database "no_such_db" does not exist`) || !strings.Contains(msg, "createdb no_such_db") {
		t.Errorf("error %q (bad input %v)", msg, badinput.Is(err))
	}
}

func TestOpenMalformedOptions(t *testing.T) {
	base := testdb.PostgresURL(t)
	u, _ := url.Parse(base)
	pw, _ := u.User.Password()
	for name, raw := range map[string]string{
		"bad sslmode":         withParams(t, base, "sslmode", "sometimes"),
		"bad connect_timeout": withParams(t, base, "connect_timeout", "soon"),
		"unknown setting":     withParams(t, base, "no_such_setting", "1"),
	} {
		t.Run(name, func(t *testing.T) {
			db, err := drivertest.OpenURL(t, raw, "", driver.Options{Sessions: 1})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			if !badinput.Is(err) {
				t.Errorf("not bad input: %v", err)
			}
			if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
				t.Errorf("message holds the password or several lines: %q", err)
			}
		})
	}
}

func TestInfoReadsSettingsBack(t *testing.T) {
	base := testdb.PostgresURL(t)
	// A setting in the URL applies to every connection and shows in Info.
	db := drivertest.MustOpen(t, withParams(t, base, "synchronous_commit", "off"), driver.Options{Sessions: 1})
	info := db.Info()
	t.Logf("%+v", info)
	if info.Driver != "postgres" {
		t.Errorf("Driver = %q", info.Driver)
	}
	// Test binaries carry no dependency versions: "unknown" is all a test
	// can see; dbprobe's own binary reports v5.x.y.
	if !strings.HasPrefix(info.Library, "github.com/jackc/pgx/v5 v5.") && info.Library != "github.com/jackc/pgx/v5 unknown" {
		t.Errorf("Library = %q", info.Library)
	}
	c := admin(t, base)
	ctx := context.Background()
	var version string
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if info.ServerVersion != version {
		t.Errorf("ServerVersion = %q, want %q", info.ServerVersion, version)
	}
	want := map[string]string{
		"synchronous_commit": "off (from the URL)",
		"autocommit":         "implicit: every operation is one statement, committed on its own; a load batch is one transaction (BEGIN, multi-row INSERTs, COMMIT)",
		"durability":         "server: synchronous_commit as the server and the URL set it",
		"tls":                "off (loopback)",
		"raw socket calls":   rawnet.Setting(),
	}
	// The others are the server's own here: current_setting on any
	// connection gives them.
	for _, name := range []string{"fsync", "wal_sync_method", "wal_level", "shared_buffers", "max_connections", "full_page_writes",
		"transaction_isolation", "default_transaction_read_only", "statement_timeout", "lock_timeout", "idle_session_timeout",
		"commit_delay", "plan_cache_mode", "log_statement", "log_min_duration_statement"} {
		var v string
		if err := c.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		want[name] = v
	}
	got := map[string]string{}
	var order []string
	for _, s := range info.Settings {
		got[s.Name] = s.Value
		order = append(order, s.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Settings = %v, want %v", got, want)
	}
	// The order is stable, so that two headers compare line by line.
	wantOrder := "[synchronous_commit fsync wal_sync_method full_page_writes wal_level shared_buffers max_connections " +
		"transaction_isolation autocommit default_transaction_read_only statement_timeout lock_timeout idle_session_timeout " +
		"commit_delay plan_cache_mode log_statement log_min_duration_statement durability tls raw socket calls]"
	if fmt.Sprint(order) != wantOrder {
		t.Errorf("order = %v, want %v", order, wantOrder)
	}
}

func TestTableLifecycle(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
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
	wantCols := "[ycsb_key field0 field1 field2]"
	if err != nil || !st.Exists || !st.CreatedByDbprobe || st.HasRows || fmt.Sprint(st.Columns) != wantCols {
		t.Fatalf("Inspect after create = %+v, %v; want columns %s", st, err, wantCols)
	}
	if err := db.CreateTable(ctx, tbl); err == nil || !badinput.Is(err) {
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
	if err := admin(t, u).QueryRow(ctx, "SELECT count(*) FROM dbprobe_tables").Scan(&markers); err != nil || markers != 0 {
		t.Fatalf("marker rows after drop: %d, %v", markers, err)
	}
	// Created again, it is dbprobe's again.
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if st, err = db.Inspect(ctx, tbl); err != nil || !st.CreatedByDbprobe {
		t.Fatalf("Inspect after second create = %+v, %v", st, err)
	}
}

func createForeignTable(t testing.TB, rawURL, name string) {
	t.Helper()
	_, err := admin(t, rawURL).Exec(context.Background(),
		"CREATE TABLE "+pgx.Identifier{strings.ToLower(name)}.Sanitize()+
			" (ycsb_key varchar(255) PRIMARY KEY, field0 varchar(100) NOT NULL); INSERT INTO "+
			pgx.Identifier{strings.ToLower(name)}.Sanitize()+" VALUES ('precious', 'data')")
	if err != nil {
		t.Fatal(err)
	}
}

func TestDropRefusesForeignTable(t *testing.T) {
	u, db, _ := setup(t, 1, driver.Options{Sessions: 1}) // the marker table exists
	ctx := context.Background()
	foreign := drivertest.Table("theirs", 1)
	createForeignTable(t, u, foreign.Name)

	st, err := db.Inspect(ctx, foreign)
	if err != nil || !st.Exists || st.CreatedByDbprobe || !st.HasRows {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	err = db.DropTable(ctx, foreign)
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "refusing to drop") {
		t.Fatalf("DropTable of a foreign table: %v", err)
	}
	var n int
	if err := admin(t, u).QueryRow(ctx, "SELECT count(*) FROM theirs").Scan(&n); err != nil || n != 1 {
		t.Fatalf("foreign table after refused drop: %d rows, %v", n, err)
	}

	// Without any marker table too.
	u2 := testdb.FreshPostgresDatabase(t)
	db2 := drivertest.MustOpen(t, u2, driver.Options{Sessions: 1})
	createForeignTable(t, u2, "usertable")
	if err := db2.DropTable(ctx, drivertest.Table("usertable", 1)); err == nil || !badinput.Is(err) {
		t.Fatalf("DropTable without a marker table: %v", err)
	}
}

func TestSessionOperations(t *testing.T) {
	_, db, tbl := setup(t, 4, driver.Options{Sessions: 2})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)

	// Values that need escaping somewhere, and the caller's reused buffers.
	special := [][]byte{[]byte("tab\there"), []byte("new\nline\r\\back"), []byte(`quote'"é€`), []byte("")}
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
	for _, fields := range [][]int{{2}, {3, 1}, {0, 1, 2}, {3, 1}} {
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
	if err := s.Read(ctx, []byte("nobody"), nil, vals); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Read of a missing key: %v", err)
	}
	if err := s.Read(ctx, []byte("user2"), []int{7}, vals); err == nil {
		t.Errorf("Read of field 7 of 4 succeeded")
	}

	if err := s.Update(ctx, []byte("user2"), []int{1}, [][]byte{[]byte("one")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, []byte("user2"), []int{3, 0}, [][]byte{[]byte("three"), []byte("zero")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(ctx, []byte("user2"), nil, vals); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s", vals); got != "[zero one user2-f2 three]" {
		t.Errorf("after updates: %s", got)
	}
	if err := s.Update(ctx, []byte("nobody"), []int{1}, [][]byte{[]byte("x")}); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Update of a missing key: %v", err)
	}
	if err := s.Update(ctx, []byte("user3"), nil, drivertest.Values("again", 4)); err != nil {
		t.Fatal(err)
	}

	var keys []string
	var firstVals []string
	n, err := s.Scan(ctx, []byte("user1x"), 10, []int{0}, func(k []byte, v [][]byte) {
		keys = append(keys, string(k))
		firstVals = append(firstVals, string(v[0]))
	})
	if err != nil || n != 2 || fmt.Sprint(keys) != "[user2 user3]" || fmt.Sprint(firstVals) != "[zero again-f0]" {
		t.Errorf("Scan = %d, %v, keys %v, values %v", n, err, keys, firstVals)
	}
	if n, err := s.Scan(ctx, []byte(""), 2, nil, nil); err != nil || n != 2 {
		t.Errorf("Scan without visit = %d, %v", n, err)
	}
	if n, err := s.Scan(ctx, []byte("user1"), 0, nil, nil); err != nil || n != 0 {
		t.Errorf("Scan of 0 = %d, %v", n, err)
	}

	if err := s.Delete(ctx, []byte("user1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, []byte("user1")); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if err := s.Read(ctx, []byte("user1"), nil, vals); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Read after Delete: %v", err)
	}

	// Sessions come and go on the pool's connections without clashing
	// statements.
	for i := 0; i < 6; i++ {
		s2, err := db.Session(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Read(ctx, []byte("user2"), []int{1}, vals); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInsertBatch(t *testing.T) {
	// 10 fields: 5957 records fit one INSERT, so 13000 take three, in one
	// transaction.
	const records = 13000
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("BulkLoad=%v", bulk), func(t *testing.T) {
			u, db, tbl := setup(t, 10, driver.Options{Sessions: 1, BulkLoad: bulk})
			ctx := context.Background()
			s := drivertest.Session(t, db, tbl)
			keys := make([][]byte, records)
			values := make([][][]byte, records)
			var want int
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("user%06d", i))
				values[i] = drivertest.Values(string(keys[i]), 10)
				if i%1000 == 0 {
					values[i][3] = []byte("a\tb\\c\nd\re'\"é")
				}
				for _, v := range values[i] {
					want += len(v)
				}
			}
			if err := s.InsertBatch(ctx, keys, values); err != nil {
				t.Fatal(err)
			}
			c := admin(t, u)
			var n, total int
			err := c.QueryRow(ctx, `SELECT count(*), sum(octet_length(field0)+octet_length(field1)+octet_length(field2)+octet_length(field3)+
				octet_length(field4)+octet_length(field5)+octet_length(field6)+octet_length(field7)+octet_length(field8)+octet_length(field9)) FROM usertable`).
				Scan(&n, &total)
			if err != nil || n != records || total != want {
				t.Fatalf("loaded %d records, %d bytes (%v); want %d, %d", n, total, err, records, want)
			}
			got := make([][]byte, 10)
			for _, i := range []int{0, 1, 5956, 5957, 9000, records - 1} {
				if err := s.Read(ctx, keys[i], nil, got); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", values[i]) {
					t.Errorf("record %d = %q, want %q", i, got, values[i])
				}
			}

			// A batch that fails loads nothing, and a duplicate key is not
			// retryable.
			dup := [][]byte{[]byte("new1"), []byte("new2"), keys[7]}
			err = s.InsertBatch(ctx, dup, [][][]byte{drivertest.Values("a", 10), drivertest.Values("b", 10), drivertest.Values("c", 10)})
			if driver.Code(err) != "23505" || driver.IsRetryable(err) {
				t.Fatalf("duplicate in batch: %v (code %q)", err, driver.Code(err))
			}
			if err := c.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&n); err != nil || n != records {
				t.Fatalf("after the failed batch: %d records, %v", n, err)
			}
			if err := s.InsertBatch(ctx, nil, nil); err != nil {
				t.Errorf("empty batch: %v", err)
			}
		})
	}
}

func TestUniqueViolationIsNotRetryable(t *testing.T) {
	_, db, tbl := setup(t, 2, driver.Options{Sessions: 1})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), drivertest.Values("k", 2)); err != nil {
		t.Fatal(err)
	}
	err := s.Insert(ctx, []byte("k"), drivertest.Values("k", 2))
	if driver.ClassOf(err) != driver.ClassOther || driver.Code(err) != "23505" || driver.IsRetryable(err) {
		t.Fatalf("duplicate insert: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
	}
	// The session is still usable.
	if err := s.Read(ctx, []byte("k"), nil, make([][]byte, 2)); err != nil {
		t.Fatal(err)
	}
}

// waitForLockWait waits until some backend of the database waits on a lock.
func waitForLockWait(t *testing.T, c *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 500; i++ {
		var waiting bool
		err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no backend started waiting on a lock")
}

// Under REPEATABLE READ, an update that waited for a concurrent update to
// commit fails with 40001.
func TestSerializationFailureIsConflict(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	db := drivertest.MustOpen(t, withParams(t, u, "default_transaction_isolation", "repeatable read"), driver.Options{Sessions: 1})
	tbl := drivertest.Table("usertable", 1)
	ctx := context.Background()
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v0")}); err != nil {
		t.Fatal(err)
	}
	other := admin(t, u)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE usertable SET field0 = 'other' WHERE ycsb_key = 'k'"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte("mine")}) }()
	waitForLockWait(t, admin(t, u))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if driver.ClassOf(err) != driver.ClassConflict || driver.Code(err) != "40001" || !driver.IsRetryable(err) {
		t.Fatalf("update after a concurrent one: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
	}
	// Retrying succeeds.
	if err := s.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte("mine")}); err != nil {
		t.Fatal(err)
	}
}

// A batch insert that waits for a key another transaction inserted, while
// holding a key that transaction then waits for, is a deadlock. The
// session's short deadlock_timeout makes its backend the one that detects
// it and fails.
func TestDeadlockIsConflict(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	db := drivertest.MustOpen(t, withParams(t, u, "deadlock_timeout", "100ms"), driver.Options{Sessions: 1})
	tbl := drivertest.Table("usertable", 1)
	ctx := context.Background()
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	other := admin(t, u)
	if _, err := other.Exec(ctx, "SET deadlock_timeout = '10s'"); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO usertable VALUES ('a', 'other')"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.InsertBatch(ctx, [][]byte{[]byte("b"), []byte("a")}, [][][]byte{{[]byte("mine")}, {[]byte("mine")}})
	}()
	waitForLockWait(t, admin(t, u))
	otherErr := make(chan error, 1)
	go func() {
		_, err := tx.Exec(ctx, "INSERT INTO usertable VALUES ('b', 'other')")
		otherErr <- err
	}()
	err = <-done
	if driver.ClassOf(err) != driver.ClassConflict || driver.Code(err) != "40P01" || !driver.IsRetryable(err) {
		t.Fatalf("deadlocked batch: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
	}
	if err := <-otherErr; err != nil {
		t.Fatalf("the other transaction failed too: %v", err)
	}
}

func TestTerminatedBackendIsConnLost(t *testing.T) {
	u, db, tbl := setup(t, 1, driver.Options{Sessions: 1})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)
	if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	var killed int
	err := admin(t, u).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&killed)
	if err != nil || killed == 0 {
		t.Fatalf("terminated %d backends: %v", killed, err)
	}
	time.Sleep(100 * time.Millisecond) // let the FATAL message arrive
	vals := make([][]byte, 1)
	err = s.Read(ctx, []byte("k"), nil, vals)
	t.Logf("%v (code %q)", err, driver.Code(err))
	if !driver.IsConnLost(err) {
		t.Fatalf("read on a terminated backend: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
	}
	// Once broken, it stays so; a new session works.
	if err := s.Read(ctx, []byte("k"), nil, vals); !driver.IsConnLost(err) {
		t.Errorf("second read on the broken session: %v, class %v", err, driver.ClassOf(err))
	}
	s.Close()
	s2 := drivertest.Session(t, db, tbl)
	if err := s2.Read(ctx, []byte("k"), nil, vals); err != nil {
		t.Fatalf("new session after the loss: %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	u, db, tbl := setup(t, 1, driver.Options{Sessions: 2})
	ctx := context.Background()
	s := drivertest.Session(t, db, tbl)
	for _, k := range []string{"k", "k2"} {
		if err := s.Insert(ctx, []byte(k), [][]byte{[]byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	other := admin(t, u)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT * FROM usertable WHERE ycsb_key = 'k' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	t.Run("context deadline", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Update(short, []byte("k"), []int{0}, [][]byte{[]byte("w")})
		if !driver.IsTimeout(err) {
			t.Fatalf("blocked update past its deadline: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("returned after %v", d)
		}
		// The cancel request kept the connection.
		if err := s.Read(ctx, []byte("k"), nil, make([][]byte, 1)); err != nil {
			t.Fatalf("session after a timeout: %v", err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// One context for several operations, as a worker uses its run's.
		run, cancel := context.WithCancel(ctx)
		vals := make([][]byte, 1)
		for i := 0; i < 3; i++ {
			if err := s.Read(run, []byte("k"), nil, vals); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- s.Update(run, []byte("k"), []int{0}, [][]byte{[]byte("w")}) }()
		waitForLockWait(t, admin(t, u))
		cancel()
		err := <-done
		if driver.Code(err) != "canceled" || driver.IsRetryable(err) || driver.IsConnLost(err) {
			t.Fatalf("update canceled while blocked: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
		if err := s.Read(run, []byte("k"), nil, vals); err == nil {
			t.Fatal("Read under the canceled context succeeded")
		}
		if err := s.Read(ctx, []byte("k"), nil, vals); err != nil {
			t.Fatalf("session after a cancellation: %v", err)
		}
	})

	t.Run("an old context does not cancel", func(t *testing.T) {
		old, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := s.Read(old, []byte("k"), nil, make([][]byte, 1)); err != nil {
			t.Fatal(err)
		}
		other2 := admin(t, u)
		tx2, err := other2.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx2.Exec(ctx, "SELECT * FROM usertable WHERE ycsb_key = 'k2' FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Update(ctx, []byte("k2"), []int{0}, [][]byte{[]byte("w")}) }()
		waitForLockWait(t, admin(t, u))
		cancel() // the session's previous context: must not touch this update
		time.Sleep(300 * time.Millisecond)
		if err := tx2.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("update under a live context failed: %v", err)
		}
	})

	t.Run("statement_timeout", func(t *testing.T) {
		db2 := drivertest.MustOpen(t, withParams(t, u, "statement_timeout", "200"), driver.Options{Sessions: 1})
		s2 := drivertest.Session(t, db2, tbl)
		err := s2.Update(ctx, []byte("k"), []int{0}, [][]byte{[]byte("w")})
		if !driver.IsTimeout(err) || driver.Code(err) != "57014" {
			t.Fatalf("update past statement_timeout: %v, class %v, code %q", err, driver.ClassOf(err), driver.Code(err))
		}
	})
}

// Rows larger than the session's read buffer go through whole.
func TestLargeRows(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, BulkLoad: true})
	ctx := context.Background()
	tbl := drivertest.Table("usertable", 4)
	tbl.FieldLength = 20000
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	s := drivertest.Session(t, db, tbl)
	big := func(key string, f int) []byte {
		unit := fmt.Sprintf("%s.%d|", key, f)
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
	got := make([][]byte, 4)
	if err := s.Read(ctx, keys[7], nil, got); err != nil {
		t.Fatal(err)
	}
	for f := range got {
		if !bytes.Equal(got[f], values[7][f]) {
			t.Fatalf("field %d of a 60 kB row differs", f)
		}
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
}

// Closing a DB closes the sessions left open rather than waiting for them.
func TestCloseWithOpenSession(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
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

// TestConformance runs the suite every driver passes, once per combination
// of knobs PostgreSQL has, each on a database of its own.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts driver.Options
	}{
		{"default", driver.Options{}},
		{"TableNondurable", driver.Options{TableType: driver.TableNondurable}},
		{"DurabilityDelayed", driver.Options{Durability: driver.DurabilityDelayed}},
		{"PathProcedure", driver.Options{OpPath: driver.PathProcedure}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := testdb.FreshPostgresDatabase(t)
			drivertest.Run(t, drivertest.Config{
				Options:  tc.opts,
				Settings: drivertest.SessionSettings,
				Open: func(t *testing.T, opts driver.Options) driver.DB {
					db, err := drivertest.OpenURL(t, u, "", opts)
					if err != nil {
						t.Fatalf("Open: %v", err)
					}
					return db
				},
				CreateForeignTable: func(t *testing.T, name string) { createForeignTable(t, u, name) },
				DropBehindDbprobe: func(t *testing.T, name string) {
					if _, err := admin(t, u).Exec(context.Background(), "DROP TABLE "+pgx.Identifier{strings.ToLower(name)}.Sanitize()); err != nil {
						t.Fatal(err)
					}
				},
				ProvokeConflict: func(t *testing.T, _ driver.DB, tbl driver.Table) error {
					return provokeSerializationFailure(t, u, tc.opts, tbl)
				},
			})
		})
	}
}

// provokeSerializationFailure makes an update fail with 40001: a session
// whose connection runs at REPEATABLE READ (a URL setting, so a DB of its
// own on the same database) updates a row that another transaction has
// updated and not yet committed; once that one commits, the waiting
// update cannot proceed on its older snapshot. The order is forced by
// waiting until the session's backend waits on the row's lock, so the
// outcome never depends on timing.
func provokeSerializationFailure(t *testing.T, rawURL string, opts driver.Options, tbl driver.Table) error {
	t.Helper()
	ctx := context.Background()
	opts.Sessions = 1
	db := drivertest.MustOpen(t, withParams(t, rawURL, "default_transaction_isolation", "repeatable read"), opts)
	s := drivertest.Session(t, db, tbl)
	key := []byte("conflict-0001")
	values := make([][]byte, len(tbl.Fields))
	for i := range values {
		values[i] = []byte("v0")
	}
	if err := s.Insert(ctx, key, values); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	t.Cleanup(func() { _ = s.Delete(ctx, key) })
	tx, err := admin(t, rawURL).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE "+pgx.Identifier{strings.ToLower(tbl.Name)}.Sanitize()+
		" SET "+pgx.Identifier{strings.ToLower(tbl.Fields[0])}.Sanitize()+" = 'other' WHERE "+
		pgx.Identifier{strings.ToLower(tbl.KeyColumn)}.Sanitize()+" = $1", string(key)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Update(ctx, key, []int{0}, [][]byte{[]byte("mine")}) }()
	waitForLockWait(t, admin(t, rawURL))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if driver.Code(err) != "40001" {
		t.Errorf("update after a concurrent one: %v (code %q), want 40001", err, driver.Code(err))
	}
	return err
}

// A knob PostgreSQL does not have is bad input from Open, which touches
// nothing on the server.
func TestUnsupportedKnobs(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	_, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1, TableType: driver.TableMemory})
	if err == nil {
		t.Fatal("Open with --table-type memory succeeded")
	}
	want := "PostgreSQL has no in-memory table (--table-type memory); use --table-type nondurable for an UNLOGGED table (not crash-safe, still on disk)"
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
	// Not even a connection was opened: the database has no table, no
	// function and no session but the one looking.
	var objects, sessions int
	err = admin(t, u).QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public')
		+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'),
		(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend')`).Scan(&objects, &sessions)
	if err != nil {
		t.Fatal(err)
	}
	if objects != 0 || sessions != 0 {
		t.Errorf("after the refused Open: %d objects in public, %d other sessions; want none", objects, sessions)
	}
}

// --durability is applied to every connection, read back from one opened
// as the sessions' are, and a URL that says otherwise is bad input.
func TestDurability(t *testing.T) {
	base := testdb.PostgresURL(t)
	setting := func(db driver.DB, name string) string {
		for _, s := range db.Info().Settings {
			if s.Name == name {
				return s.Value
			}
		}
		t.Fatalf("Info has no setting %s: %v", name, db.Info().Settings)
		return ""
	}
	var server string
	if err := admin(t, base).QueryRow(context.Background(), "SELECT setting FROM pg_settings WHERE name = 'synchronous_commit'").Scan(&server); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		url   string
		opts  driver.Options
		value string
		says  string
	}{
		{"server", base, driver.Options{}, server, "server: "},
		{"full", base, driver.Options{Durability: driver.DurabilityFull}, "on (set by dbprobe for --durability full)", "full: synchronous_commit = on"},
		{"delayed", base, driver.Options{Durability: driver.DurabilityDelayed}, "off (set by dbprobe for --durability delayed)", "delayed: synchronous_commit = off"},
		{"delayed, scope transaction", base, driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction}, "off (set by dbprobe for --durability delayed)", "scope transaction is the same here"},
		{"full with an agreeing URL", withParams(t, base, "synchronous_commit", "local"), driver.Options{Durability: driver.DurabilityFull}, "local (from the URL)", "full: "},
		{"server with the URL's", withParams(t, base, "options", "-c synchronous_commit=off"), driver.Options{}, "off (from the URL)", "server: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Sessions = 1
			db := drivertest.MustOpen(t, tc.url, tc.opts)
			if got := setting(db, "synchronous_commit"); got != tc.value {
				t.Errorf("synchronous_commit = %q, want %q", got, tc.value)
			}
			if got := setting(db, "durability"); !strings.Contains(got, tc.says) {
				t.Errorf("durability = %q, want it to say %q", got, tc.says)
			}
		})
	}
	for _, tc := range []struct {
		name string
		url  string
		d    driver.Durability
	}{
		{"full against the URL", withParams(t, base, "synchronous_commit", "off"), driver.DurabilityFull},
		{"delayed against options", withParams(t, base, "options", "-c synchronous_commit=on"), driver.DurabilityDelayed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := drivertest.OpenURL(t, tc.url, "", driver.Options{Sessions: 1, Durability: tc.d})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if !badinput.Is(err) || !strings.Contains(err.Error(), "--durability "+tc.d.String()) || !strings.Contains(err.Error(), "the URL sets synchronous_commit") {
				t.Errorf("error %q (bad input %v): want bad input naming both", err, badinput.Is(err))
			}
		})
	}
}

// An UNLOGGED table is what --table-type nondurable creates, as the catalog
// and Inspect say.
func TestNondurableTable(t *testing.T) {
	u, db, tbl := setup(t, 2, driver.Options{Sessions: 1, TableType: driver.TableNondurable})
	ctx := context.Background()
	var persistence string
	if err := admin(t, u).QueryRow(ctx, "SELECT relpersistence::text FROM pg_class WHERE oid = 'usertable'::regclass").Scan(&persistence); err != nil {
		t.Fatal(err)
	}
	if persistence != "u" {
		t.Errorf("relpersistence = %q, want u (UNLOGGED)", persistence)
	}
	st, err := db.Inspect(ctx, tbl)
	if err != nil || st.Type != driver.TableNondurable || !strings.HasPrefix(st.Storage, "UNLOGGED heap table") {
		t.Errorf("Inspect = %+v, %v", st, err)
	}
	// A DB opened with the default knobs still reports the table as it is.
	other := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	if st, err := other.Inspect(ctx, tbl); err != nil || st.Type != driver.TableNondurable {
		t.Errorf("Inspect through a default DB = %+v, %v", st, err)
	}
}

// functions lists the dbprobe functions of the database, with their
// arguments.
func functions(t *testing.T, rawURL string) []string {
	t.Helper()
	rows, err := admin(t, rawURL).Query(context.Background(),
		"SELECT oid::regprocedure::text FROM pg_proc WHERE proname LIKE 'dbprobe\\_%' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// The procedure path's functions: created with the table, created by a
// session when a table loaded on the statement path has none, used by the
// sessions, and dropped with the table whatever the path.
func TestProcedurePath(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	ctx := context.Background()
	stmt := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	// track_functions counts the calls of PL/pgSQL functions (the writes);
	// read and scan are inlined SQL functions, which are never called as
	// such.
	tracked := withParams(t, u, "track_functions", "all")
	proc := drivertest.MustOpen(t, tracked, driver.Options{Sessions: 2, OpPath: driver.PathProcedure})
	tbl := drivertest.Table("UserTable", 2)
	all := "[dbprobe_usertable_delete(character varying) dbprobe_usertable_insert(character varying,character varying,character varying) " +
		"dbprobe_usertable_read(character varying) dbprobe_usertable_scan(character varying,integer) " +
		"dbprobe_usertable_update(character varying,character varying,character varying)]"

	// Loaded on the statement path: no functions.
	if err := stmt.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := functions(t, u); len(got) != 0 {
		t.Fatalf("functions after CreateTable on the statement path: %v", got)
	}
	s0 := drivertest.Session(t, stmt, tbl)
	if err := s0.Insert(ctx, []byte("k1"), drivertest.Values("k1", 2)); err != nil {
		t.Fatal(err)
	}

	// A session on the procedure path creates them, once.
	s := drivertest.Session(t, proc, tbl)
	if got := fmt.Sprint(functions(t, u)); got != all {
		t.Fatalf("functions after a procedure session:\n got %s\nwant %s", got, all)
	}
	c := admin(t, u)
	var xmin int64
	if err := c.QueryRow(ctx, "SELECT xmin::text::bigint FROM pg_proc WHERE proname = 'dbprobe_usertable_read'").Scan(&xmin); err != nil {
		t.Fatal(err)
	}
	s2 := drivertest.Session(t, proc, tbl)
	// A second DB on the procedure path finds them rather than making them again.
	proc2 := drivertest.MustOpen(t, tracked, driver.Options{Sessions: 1, OpPath: driver.PathProcedure})
	s3 := drivertest.Session(t, proc2, tbl)
	var xmin2 int64
	if err := c.QueryRow(ctx, "SELECT xmin::text::bigint FROM pg_proc WHERE proname = 'dbprobe_usertable_read'").Scan(&xmin2); err != nil {
		t.Fatal(err)
	}
	if xmin2 != xmin {
		t.Errorf("the functions were created again by a later session")
	}

	// The sessions call them: what one writes through a function the
	// statement path reads, and the other way round.
	got := make([][]byte, 2)
	if err := s.Read(ctx, []byte("k1"), nil, got); err != nil || fmt.Sprintf("%s", got) != "[k1-f0 k1-f1]" {
		t.Fatalf("Read through the function = %s, %v", got, err)
	}
	if err := s2.Insert(ctx, []byte("k2"), drivertest.Values("k2", 2)); err != nil {
		t.Fatal(err)
	}
	if err := s3.Update(ctx, []byte("k2"), []int{1}, [][]byte{[]byte("new")}); err != nil {
		t.Fatal(err)
	}
	if err := s0.Read(ctx, []byte("k2"), nil, got); err != nil || fmt.Sprintf("%s", got) != "[k2-f0 new]" {
		t.Fatalf("k2 after the function's update = %s, %v", got, err)
	}
	if err := s.Update(ctx, []byte("nobody"), []int{0}, [][]byte{[]byte("x")}); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("update of a missing key through the function: %v", err)
	}
	if err := s.Delete(ctx, []byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, []byte("k1")); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("second delete through the function: %v", err)
	}
	if err := s.Insert(ctx, []byte("k2"), drivertest.Values("k2", 2)); driver.Code(err) != "23505" || driver.IsRetryable(err) {
		t.Errorf("duplicate insert through the function: %v (code %q)", err, driver.Code(err))
	}
	for _, x := range []driver.Session{s0, s, s2, s3} {
		x.Close()
	}
	// The writes went through the functions: the server counted the calls
	// (a backend reports them at the latest when it ends), all but the
	// duplicate insert's, whose transaction failed.
	want := "map[dbprobe_usertable_delete:2 dbprobe_usertable_insert:1 dbprobe_usertable_update:2]"
	calls := ""
	for i := 0; i < 100 && calls != want; i++ {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		rows, err := c.Query(ctx, "SELECT funcname::text, calls FROM pg_stat_user_functions WHERE funcname LIKE 'dbprobe\\_%'")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		var name string
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { got[name] = n; return nil }); err != nil {
			t.Fatal(err)
		}
		calls = fmt.Sprint(got)
		if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
	}
	if calls != want {
		t.Errorf("function calls counted: %s, want %s", calls, want)
	}
	// Dropped with the table, by a DB on the statement path too.
	if err := stmt.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := functions(t, u); len(got) != 0 {
		t.Fatalf("functions after DropTable: %v", got)
	}
	// CreateTable on the procedure path creates them with the table, and a
	// session after a DropTable of this DB makes them again.
	if err := proc.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(functions(t, u)); got != all {
		t.Fatalf("functions after CreateTable on the procedure path: %s", got)
	}
	if err := proc.DropTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := stmt.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	drivertest.Session(t, proc, tbl).Close()
	if got := fmt.Sprint(functions(t, u)); got != all {
		t.Fatalf("functions after a session following DropTable: %s", got)
	}
}

// A table name too long for the function names is bad input on the
// procedure path, before anything is created.
func TestProcedurePathLongName(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1, OpPath: driver.PathProcedure})
	tbl := drivertest.Table(strings.Repeat("t", 49), 1)
	if err := db.CreateTable(context.Background(), tbl); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "--op-path statement") {
		t.Fatalf("CreateTable of a 49-byte name on the procedure path: %v", err)
	}
	if st, err := db.Inspect(context.Background(), tbl); err != nil || st.Exists {
		t.Fatalf("Inspect after the refusal = %+v, %v", st, err)
	}
}

// A search_path that names no schema of the database leaves nowhere to
// put or find the table: one line of bad input at Open, not an SQL error
// from the first statement.
func TestSearchPathWithoutASchema(t *testing.T) {
	u, err := url.Parse(testdb.FreshPostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", "nosuchschema")
	u.RawQuery = q.Encode()
	db, err := drivertest.OpenURL(t, u.String(), "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded with a search_path of no schema")
	}
	if !badinput.Is(err) || !strings.Contains(err.Error(), "no schema of search_path (nosuchschema) exists") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open = %v, want one line of bad input naming the search_path", err)
	}
}

// TestInspectWhileCreated inspects tables while another client creates
// them, as a load's client 1 does while client 0 creates the table: a
// table seen to exist must be seen with its columns, or the client
// refuses it as a table of another shape ("has columns , but …").
func TestInspectWhileCreated(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	creator := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	watcher := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
	ctx := context.Background()
	for i := range 40 {
		tbl := drivertest.Table(fmt.Sprintf("race%d", i), 3)
		done := make(chan error, 1)
		go func() { done <- creator.CreateTable(ctx, tbl) }()
		for {
			st, err := watcher.Inspect(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if st.Exists {
				if len(st.Columns) != 4 {
					t.Fatalf("table %s seen to exist with columns %q, want its 4", tbl.Name, st.Columns)
				}
				break
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
