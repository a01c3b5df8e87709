package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// capDB opens a DB (bulk loading on) on a fresh database, and an admin
// pool to it, outside the driver, to check what the capabilities did.
func capDB(t *testing.T) (*DB, *sql.DB) {
	t.Helper()
	u := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, u)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Driver{}.Open(ctx, target(t, u, ""), driver.Options{Sessions: 4, BulkLoad: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d.(*DB), admin
}

func count(t *testing.T, admin *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := admin.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestCapabilitiesDescribeTheDriver(t *testing.T) {
	db, _ := capDB(t)
	if err := driver.CheckDescription(db); err != nil {
		t.Fatal(err)
	}
	c := db.Capabilities()
	err := c.Need(driver.CapCopy, driver.CapParallelCopy)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "has no parallel table copy: CREATE TABLE … SELECT runs on one thread") {
		t.Errorf("Need(parallel copy) = %v", err)
	}
}

// A data table is created as dbprobe's, filled on the server, sized as
// its .ibd file is on disk, scanned in slices that add up, copied by
// CREATE TABLE … SELECT, written by INSERT … SELECT and loaded by writers
// at once; the server's own answers check each.
func TestDataTables(t *testing.T) {
	// Chunks of 1 MB, so that a small fill commits several times.
	defer func(was int64) { fillChunkBytes = was }(fillChunkBytes)
	fillChunkBytes = 1 << 20
	db, admin := capDB(t)
	ctx := context.Background()
	src := driver.DataTable{Name: "storage_src", PayloadBytes: 700}
	if err := db.CreateDataTable(ctx, src); err != nil {
		t.Fatalf("CreateDataTable: %v", err)
	}
	if st, err := db.Inspect(ctx, src.Table()); err != nil || !st.CreatedByDbprobe || st.HasRows {
		t.Fatalf("Inspect = %+v, %v; want dbprobe's, empty", st, err)
	}
	if err := db.CreateDataTable(ctx, src); !badinput.Is(err) {
		t.Errorf("CreateDataTable of an existing table: %v, want bad input", err)
	}
	// More rows than one chunk, so that the fill commits more than once
	// and the last chunk is short.
	rows := chunkRows(src)*2 + 17
	n, err := db.FillTable(ctx, src, 1, rows)
	if err != nil || n != rows {
		t.Fatalf("FillTable = %d, %v; want %d", n, err, rows)
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM storage_src WHERE LENGTH(payload) = 700 AND id BETWEEN 1 AND ?", rows); got != rows {
		t.Fatalf("%d rows of 700 bytes, want %d", got, rows)
	}

	size, err := db.TableSize(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if size.Bytes < rows*700 {
		t.Errorf("TableSize %+v is less than the payload, %d bytes", size, rows*700)
	}
	var datadir, database string
	if err := admin.QueryRow("SELECT @@datadir, DATABASE()").Scan(&datadir, &database); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(datadir, database, "storage_src.ibd")); err == nil {
		// The pages in use, inside a file that also holds free extents.
		if size.Bytes > st.Size() {
			t.Errorf("TableSize = %d (%s), the .ibd file has %d bytes", size.Bytes, size.How, st.Size())
		}
	} else {
		t.Logf("the .ibd file cannot be looked at from here: %v", err)
	}

	var total driver.ScanResult
	for part := range 3 {
		r, err := db.ScanTable(ctx, src, part, 3)
		if err != nil {
			t.Fatalf("ScanTable %d/3: %v", part, err)
		}
		total.Rows += r.Rows
		total.PayloadBytes += r.PayloadBytes
	}
	if want := (driver.ScanResult{Rows: rows, PayloadBytes: rows * 700}); total != want {
		t.Errorf("slices add up to %+v, want %+v", total, want)
	}

	cp := driver.DataTable{Name: "storage_copy", PayloadBytes: 700}
	if _, err := db.CopyTable(ctx, src, cp, 2); !badinput.Is(err) {
		t.Errorf("a parallel copy: %v, want bad input", err)
	}
	res, err := db.CopyTable(ctx, src, cp, 1)
	if err != nil || res.Rows != rows || res.Degree != 1 {
		t.Fatalf("CopyTable = %+v, %v", res, err)
	}
	if st, err := db.Inspect(ctx, cp.Table()); err != nil || !st.CreatedByDbprobe || !st.HasRows {
		t.Errorf("the copy: %+v, %v; want dbprobe's, with rows", st, err)
	}
	n, err = db.InsertSelect(ctx, src, cp, 101, 1100, rows)
	if err != nil || n != 1000 {
		t.Fatalf("InsertSelect = %d, %v", n, err)
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM storage_copy WHERE id BETWEEN ? AND ?", rows+101, rows+1100); got != 1000 {
		t.Errorf("%d shifted rows, want 1000", got)
	}

	// Two writers at once, each its own ids; payloads with the bytes LOAD
	// DATA's format escapes come back as they were.
	loaded := driver.DataTable{Name: "storage_bulk", PayloadBytes: 16}
	if err := db.CreateDataTable(ctx, loaded); err != nil {
		t.Fatal(err)
	}
	payload := []byte("a\tb\nc\\d\x00e\x1a" + strings.Repeat("z", 6))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bw, err := db.BulkWriter(ctx, loaded)
			if err != nil {
				errs <- err
				return
			}
			defer bw.Close()
			for b := range 3 {
				ids := make([]int64, 100)
				payloads := make([][]byte, 100)
				for i := range ids {
					ids[i] = int64(w*1000 + b*100 + i)
					payloads[i] = payload
				}
				if err := bw.Write(ctx, ids, payloads); err != nil {
					errs <- err
					return
				}
			}
			if !strings.HasPrefix(bw.How(), "LOAD DATA") {
				errs <- fmt.Errorf("How() = %q, want LOAD DATA", bw.How())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("bulk writer: %v", err)
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM storage_bulk WHERE payload = ?", payload); got != 600 {
		t.Errorf("%d rows loaded as written, want 600", got)
	}

	for _, tbl := range []driver.DataTable{src, cp, loaded} {
		if err := db.DropDataTable(ctx, tbl); err != nil {
			t.Errorf("DropDataTable %s: %v", tbl.Name, err)
		}
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'storage%'"); got != 0 {
		t.Errorf("%d tables left", got)
	}
}

// Tables dbprobe did not create are never written into or dropped.
func TestDataTablesRefuse(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE theirs (id BIGINT PRIMARY KEY, payload VARBINARY(10) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	theirs := driver.DataTable{Name: "theirs", PayloadBytes: 10}
	ours := driver.DataTable{Name: "ours", PayloadBytes: 10}
	if err := db.CreateDataTable(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, theirs, 1, 10); !badinput.Is(err) {
		t.Errorf("FillTable of a foreign table: %v", err)
	}
	if _, err := db.InsertSelect(ctx, ours, theirs, 1, 10, 0); !badinput.Is(err) {
		t.Errorf("InsertSelect into a foreign table: %v", err)
	}
	if _, err := db.BulkWriter(ctx, theirs); !badinput.Is(err) {
		t.Errorf("BulkWriter on a foreign table: %v", err)
	}
	if err := db.DropDataTable(ctx, theirs); !badinput.Is(err) {
		t.Errorf("DropDataTable of a foreign table: %v", err)
	}
	if got := count(t, admin, "SELECT COUNT(*) FROM theirs"); got != 0 {
		t.Errorf("%d rows written into a foreign table", got)
	}
}

// running counts the statements like pattern that other connections run.
func running(t *testing.T, admin *sql.DB, pattern string) int64 {
	return count(t, admin, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()", pattern)
}

// A statement whose context ends is stopped on the server by KILL QUERY
// from another connection: the connection it ran on stays open and
// usable (the same thread), and no thread runs the statement on. A fill
// in flight stops the same way.
func TestCancelStopsTheStatementOnTheServer(t *testing.T) {
	db, admin := capDB(t)
	c, err := db.SQLConn(context.Background(), driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sleep, err := c.Prepare(context.Background(), "SELECT SLEEP(:seconds)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err = c.Run(ctx, sleep, []any{30}, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Run under a 300 ms context: %v after %v", err, time.Since(start))
	}
	if n := running(t, admin, "SELECT SLEEP%"); n != 0 {
		t.Errorf("%d threads still sleep", n)
	}
	id, err := c.Prepare(context.Background(), "SELECT CONNECTION_ID()")
	if err != nil {
		t.Fatalf("the connection after the cancel: %v", err)
	}
	var thread any
	if _, err := c.Run(context.Background(), id, nil, func(row []any) error { thread = row[0]; return nil }); err != nil {
		t.Fatalf("the connection after the cancel: %v", err)
	}
	if fmt.Sprint(thread) != strconv.FormatInt(c.(*sqlConn).id, 10) {
		t.Errorf("the connection after the cancel is thread %v, was %d", thread, c.(*sqlConn).id)
	}

	tbl := driver.DataTable{Name: "big", PayloadBytes: 8000}
	if err := db.CreateDataTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	start = time.Now()
	_, err = db.FillTable(ctx, tbl, 1, 1e9)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("FillTable of a billion rows under 500 ms: %v after %v", err, time.Since(start))
	}
	// KILL QUERY returns the error to the client at once; the server may
	// still be rolling back the chunk in flight (state "Killed") for a
	// moment, and that thread no longer fills.
	deadline := time.Now().Add(5 * time.Second)
	for running(t, admin, "INSERT INTO `big`%") != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := running(t, admin, "INSERT INTO `big`%"); n != 0 {
		t.Errorf("%d threads still fill 5 s after the cancel", n)
	}
}

// SQL text runs with :name parameters bound as values, inside a
// transaction or not, and a syntax error is the server's.
func TestSQLConn(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ins, err := c.Prepare(ctx, "INSERT INTO notes (id, body) VALUES (:id, CONCAT(:body, '')) # :not_a_parameter")
	if err != nil {
		t.Fatal(err)
	}
	evil := "'); DROP TABLE notes; --"
	out, err := c.Run(ctx, ins, []any{1, evil}, nil)
	if err != nil || out.Affected != 1 {
		t.Fatalf("insert: %+v, %v", out, err)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, ins, []any{2, "rolled back"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	sel, err := c.Prepare(ctx, "SELECT id, body FROM notes WHERE id >= :id OR id = :id ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	out, err = c.Run(ctx, sel, []any{0}, func(row []any) error {
		seen = append(seen, fmt.Sprintf("%v %s", row[0], row[1]))
		return nil
	})
	if err != nil || out.Rows != 1 || out.Affected != -1 || len(seen) != 1 || seen[0] != "1 "+evil {
		t.Fatalf("select: %+v, %v, rows %q", out, err, seen)
	}
	if _, err := c.Prepare(ctx, "SELEC 1"); driver.Code(err) != "1064" {
		t.Errorf("a syntax error: %v (code %q), want 1064", err, driver.Code(err))
	}
}

// A script with a procedure (IF … END IF and a CASE inside) written
// without DELIMITER, a trigger and a procedure under DELIMITER //, and a
// transaction is cut by SplitScript into statements the server prepares
// and runs one by one: the trigger fired for every row the procedures
// inserted.
func TestSplitScriptRuns(t *testing.T) {
	db, admin := capDB(t)
	script := `# a user's setup script
CREATE TABLE script_log (n INT);
CREATE TABLE script_t (a INT);
CREATE TRIGGER script_tr AFTER INSERT ON script_t FOR EACH ROW
BEGIN
  INSERT INTO script_log VALUES (NEW.a);
END;
CREATE PROCEDURE script_fill(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 1;
  IF n > 0 THEN
    WHILE i <= n DO
      INSERT INTO script_t VALUES (CASE WHEN i > 2 THEN i ELSE i END);
      SET i = i + 1;
    END WHILE;
  END IF;
END;
DELIMITER //
CREATE PROCEDURE script_ten()
BEGIN
  INSERT INTO script_t VALUES (10);
END //
DELIMITER ;
CALL script_fill(3);
START TRANSACTION;
CALL script_ten();
COMMIT;
SELECT SUM(n) FROM script_log;
`
	last := drivertest.RunScript(t, db, script, []int{2, 3, 4, 8, 19, 24, 25, 26, 27, 28})
	if last != "16" || count(t, admin, "SELECT COUNT(*) FROM script_log") != 4 {
		t.Errorf("the script's last statement returned %q, want 16 (1+2+3+10, from 4 rows)", last)
	}
	drivertest.ScriptRefused(t, db, "SELECT 1;\nCREATE PROCEDURE p() BEGIN SELECT 1;", "an open BEGIN", 2)
	drivertest.RawRows(t, db, "SELECT 'abc', NULL, 42 UNION ALL SELECT 'de', 'f', 7", driver.SQLOptions{}, driver.SQLOptions{Simple: true})
}

// A table given a DATA DIRECTORY has its file there. The server runs on
// this host as the mysql OS user (scripts/test), which must be able to
// write the directory.
func TestPlacement(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		if u, err := user.Lookup("mysql"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			os.Chmod(filepath.Dir(dir), 0o755)
			if err := os.Chown(dir, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	loc, err := db.CreateLocation(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl := driver.DataTable{Name: "placed", PayloadBytes: 100, Where: &loc}
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		if badinput.Is(err) {
			t.Skipf("the server cannot write a directory of this test: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, tbl, 1, 1000); err != nil {
		t.Fatal(err)
	}
	var database string
	if err := admin.QueryRow("SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, database, "placed.ibd")); err != nil {
		t.Errorf("the table's file is not in the directory: %v", err)
	}
	if err := db.DropDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, database, "placed.ibd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the table's file is still there: %v", err)
	}
	if err := db.DropLocation(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLocation(ctx, `relative\dir`); !badinput.Is(err) {
		t.Errorf("a relative directory: %v", err)
	}
}

// TestDataTableSQL pins the statements' text.
func TestDataTableSQL(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{createDataSQL("`t`", 2000, "", "ab"), "CREATE TABLE `t` (`id` BIGINT NOT NULL, `payload` VARBINARY(2000) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB COMMENT='created by dbprobe, id ab'"},
		{createDataSQL("`t`", 10, "/d/it's", "ab"), "CREATE TABLE `t` (`id` BIGINT NOT NULL, `payload` VARBINARY(10) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB DATA DIRECTORY = '/d/it''s' COMMENT='created by dbprobe, id ab'"},
		{fillSQL("`t`", 10, 2), "INSERT INTO `t` (`id`, `payload`) SELECT ? + seq.n, REPEAT('x', 10) FROM (SELECT d0.d * 1 + d1.d * 10 AS n FROM " + digits + " AS d0 CROSS JOIN " + digits + " AS d1) AS seq WHERE seq.n < ? ORDER BY seq.n"},
		{copySQL("`s`", "`d`", "", "ab"), "CREATE TABLE `d` ENGINE=InnoDB COMMENT='created by dbprobe, id ab' SELECT `id`, `payload` FROM `s`"},
		{insertSelectSQL("`s`", "`d`"), "INSERT INTO `d` (`id`, `payload`) SELECT `id` + ?, `payload` FROM `s` WHERE `id` BETWEEN ? AND ?"},
		{scanSQL("`t`", true), "SELECT COUNT(*), COALESCE(SUM(LENGTH(`payload`)), 0) FROM `t` WHERE `id` BETWEEN ? AND ?"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
	for count, want := range map[int64]int{1: 1, 10: 1, 11: 2, 100: 2, 101: 3, 1000000: 6} {
		if got := places(count); got != want {
			t.Errorf("places(%d) = %d, want %d", count, got, want)
		}
	}
}

// CacheSize is innodb_buffer_pool_size as the server reports it.
func TestCacheSize(t *testing.T) {
	db, admin := capDB(t)
	c, err := db.CacheSize(context.Background())
	var want int64
	if err := admin.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_SIZE'").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if err != nil || c.Bytes != want || c.Bytes <= 0 || !strings.HasPrefix(c.How, "innodb_buffer_pool_size = ") {
		t.Fatalf("CacheSize = %+v, %v; the server says %d", c, err, want)
	}
}
