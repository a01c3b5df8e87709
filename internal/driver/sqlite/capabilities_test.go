package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// capDB opens a file database (bulk loading on) and a second pool on the
// same file, outside the DB's, to check what the capabilities did.
func capDB(t *testing.T) (*db, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cap.db")
	d := openURL(t, "sqlite://"+path+"?vfs=unix", driver.Options{Sessions: 4, BulkLoad: true})
	t.Cleanup(func() { d.Close() })
	other := sql.OpenDB(&connector{drv: newLibraryDriver(), dsn: fileURI(path) + "?mode=rw&vfs=unix", setup: []string{"PRAGMA busy_timeout = 5000"}})
	t.Cleanup(func() { other.Close() })
	return d.(*db), other
}

func count(t *testing.T, q *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestCapabilitiesDescribeTheDriver(t *testing.T) {
	d, _ := capDB(t)
	if err := driver.CheckDescription(d); err != nil {
		t.Fatal(err)
	}
	c := d.Capabilities()
	for cap, want := range map[driver.Capability]string{
		driver.CapParallelCopy: "SQLite has no parallel table copy: it has one writer and copies serially; copy with degree 1",
		driver.CapPlace:        "SQLite has no table placement on a directory: " + noPlacement,
	} {
		if err := c.Need(cap); !badinput.Is(err) || err.Error() != want {
			t.Errorf("Need(%s) = %v, want %q", cap, err, want)
		}
	}
}

// A data table is created as dbprobe's, filled by SQLite itself in
// several transactions, sized, scanned in slices that add up, copied,
// written by INSERT … SELECT and loaded by writers at once; another
// connection to the file checks each.
func TestDataTables(t *testing.T) {
	defer func(was int64) { fillChunkBytes = was }(fillChunkBytes)
	fillChunkBytes = 1 << 20
	d, other := capDB(t)
	ctx := context.Background()
	src := driver.DataTable{Name: "storage_src", PayloadBytes: 600}
	if err := d.CreateDataTable(ctx, src); err != nil {
		t.Fatalf("CreateDataTable: %v", err)
	}
	if st, err := d.Inspect(ctx, src.Table()); err != nil || !st.CreatedByDbprobe || st.HasRows {
		t.Fatalf("Inspect = %+v, %v; want dbprobe's, empty", st, err)
	}
	if err := d.CreateDataTable(ctx, src); !badinput.Is(err) {
		t.Errorf("CreateDataTable of an existing table: %v, want bad input", err)
	}
	rows := chunkRows(src)*3 + 5
	n, err := d.FillTable(ctx, src, 1, rows)
	if err != nil || n != rows {
		t.Fatalf("FillTable = %d, %v; want %d", n, err, rows)
	}
	if got := count(t, other, "SELECT count(*) FROM storage_src WHERE length(payload) = 600 AND id BETWEEN 1 AND ?", rows); got != rows {
		t.Fatalf("%d rows of 600 bytes, want %d", got, rows)
	}
	size, err := d.TableSize(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	// A 600-byte row and its header take one page in six or so; the
	// database has the marker table besides.
	if size.Bytes < rows*600 || size.Bytes > rows*600*3/2+64<<10 {
		t.Errorf("TableSize = %+v for %d bytes of payload", size, rows*600)
	}

	var total driver.ScanResult
	for part := range 3 {
		r, err := d.ScanTable(ctx, src, part, 3)
		if err != nil {
			t.Fatalf("ScanTable %d/3: %v", part, err)
		}
		total.Rows += r.Rows
		total.PayloadBytes += r.PayloadBytes
	}
	if want := (driver.ScanResult{Rows: rows, PayloadBytes: rows * 600}); total != want {
		t.Errorf("slices add up to %+v, want %+v", total, want)
	}

	cp := driver.DataTable{Name: "storage_copy", PayloadBytes: 600}
	if _, err := d.CopyTable(ctx, src, cp, 4); !badinput.Is(err) {
		t.Errorf("a parallel copy: %v, want bad input", err)
	}
	res, err := d.CopyTable(ctx, src, cp, 1)
	if err != nil || res.Rows != rows || res.Degree != 1 {
		t.Fatalf("CopyTable = %+v, %v", res, err)
	}
	if st, err := d.Inspect(ctx, cp.Table()); err != nil || !st.CreatedByDbprobe || !st.HasRows {
		t.Errorf("the copy: %+v, %v; want dbprobe's, with rows", st, err)
	}
	n, err = d.InsertSelect(ctx, src, cp, 101, 1100, rows)
	if err != nil || n != 1000 {
		t.Fatalf("InsertSelect = %d, %v", n, err)
	}
	if got := count(t, other, "SELECT count(*) FROM storage_copy WHERE id BETWEEN ? AND ?", rows+101, rows+1100); got != 1000 {
		t.Errorf("%d shifted rows, want 1000", got)
	}

	loaded := driver.DataTable{Name: "storage_bulk", PayloadBytes: 16}
	if err := d.CreateDataTable(ctx, loaded); err != nil {
		t.Fatal(err)
	}
	payload := []byte("a\tb\nc'd\"e" + strings.Repeat("z", 7))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bw, err := d.BulkWriter(ctx, loaded)
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
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("bulk writer: %v", err)
	}
	if got := count(t, other, "SELECT count(*) FROM storage_bulk WHERE payload = ? AND typeof(id) = 'integer'", string(payload)); got != 600 {
		t.Errorf("%d rows loaded as written, with integer ids, want 600", got)
	}

	for _, tbl := range []driver.DataTable{src, cp, loaded} {
		if err := d.DropDataTable(ctx, tbl); err != nil {
			t.Errorf("DropDataTable %s: %v", tbl.Name, err)
		}
	}
	if got := count(t, other, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'storage%'"); got != 0 {
		t.Errorf("%d tables left", got)
	}
}

// Tables dbprobe did not create are never written into or dropped, and a
// placement is refused for what SQLite has not.
func TestDataTablesRefuse(t *testing.T) {
	d, other := capDB(t)
	ctx := context.Background()
	if _, err := other.Exec("CREATE TABLE theirs (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	theirs := driver.DataTable{Name: "theirs", PayloadBytes: 10}
	ours := driver.DataTable{Name: "ours", PayloadBytes: 10}
	if err := d.CreateDataTable(ctx, ours); err != nil {
		t.Fatal(err)
	}
	if _, err := d.FillTable(ctx, theirs, 1, 10); !badinput.Is(err) {
		t.Errorf("FillTable of a foreign table: %v", err)
	}
	if _, err := d.InsertSelect(ctx, ours, theirs, 1, 10, 0); !badinput.Is(err) {
		t.Errorf("InsertSelect into a foreign table: %v", err)
	}
	if _, err := d.BulkWriter(ctx, theirs); !badinput.Is(err) {
		t.Errorf("BulkWriter on a foreign table: %v", err)
	}
	if err := d.DropDataTable(ctx, theirs); !badinput.Is(err) {
		t.Errorf("DropDataTable of a foreign table: %v", err)
	}
	if err := d.CreateDataTable(ctx, driver.DataTable{Name: "placed", PayloadBytes: 10, Where: &driver.Location{Dir: "/tmp"}}); !badinput.Is(err) {
		t.Errorf("a placed table: %v", err)
	}
	if got := count(t, other, "SELECT count(*) FROM theirs"); got != 0 {
		t.Errorf("%d rows written into a foreign table", got)
	}
}

// A statement whose context ends is interrupted: the connection stays
// usable, and a fill in flight stops with its chunk rolled back.
func TestCancelInterruptsTheStatement(t *testing.T) {
	d, other := capDB(t)
	c, err := d.SQLConn(context.Background(), driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	forever, err := c.Prepare(context.Background(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err = c.Run(ctx, forever, nil, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Run under a 300 ms context: %v after %v", err, time.Since(start))
	}
	one, err := c.Prepare(context.Background(), "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Run(context.Background(), one, nil, nil); err != nil || out.Rows != 1 {
		t.Fatalf("the connection after the interrupt: %+v, %v", out, err)
	}

	tbl := driver.DataTable{Name: "big", PayloadBytes: 8000}
	if err := d.CreateDataTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	start = time.Now()
	done, err := d.FillTable(ctx, tbl, 1, 1e9)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("FillTable of a billion rows under 300 ms: %v after %v", err, time.Since(start))
	}
	if got := count(t, other, "SELECT count(*) FROM big"); got != done || got%chunkRows(tbl) != 0 {
		t.Errorf("%d rows in the table, %d reported: a chunk was left half written", got, done)
	}
}

// SQL text runs with :name parameters bound as values, inside a
// transaction or not, and a syntax error is SQLite's.
func TestSQLConn(t *testing.T) {
	d, other := capDB(t)
	ctx := context.Background()
	if _, err := other.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"); err != nil {
		t.Fatal(err)
	}
	c, err := d.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ins, err := c.Prepare(ctx, "INSERT INTO notes (id, body) VALUES (:id, :body) -- :not_a_parameter")
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
	if err := c.Rollback(ctx); err != nil {
		t.Errorf("a Rollback without a transaction: %v", err)
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
	if _, err := c.Prepare(ctx, "SELEC 1"); driver.Code(err) != "1" {
		t.Errorf("a syntax error: %v (code %q), want SQLite's 1", err, driver.Code(err))
	}
}

// A script with a trigger (a CASE inside its BEGIN … END body) and
// transactions is cut by SplitScript into statements SQLite prepares and
// runs one by one: the trigger fired for every row inserted.
func TestSplitScriptRuns(t *testing.T) {
	d, other := capDB(t)
	script := `-- a user's setup script
CREATE TABLE script_log (n INTEGER);
CREATE TABLE script_t (a INTEGER);
CREATE TRIGGER script_tr AFTER INSERT ON script_t
BEGIN
  INSERT INTO script_log VALUES (new.a);
  SELECT CASE WHEN new.a < 0 THEN RAISE(ABORT, 'negative; refused') END;
END;
BEGIN IMMEDIATE;
INSERT INTO script_t VALUES (1), (2), (3);
COMMIT;
BEGIN;
INSERT INTO script_t VALUES (10);
END TRANSACTION;
SELECT sum(n) FROM script_log;
`
	last := drivertest.RunScript(t, d, script, []int{2, 3, 4, 9, 10, 11, 12, 13, 14, 15})
	if last != "16" || count(t, other, "SELECT count(*) FROM script_log") != 4 {
		t.Errorf("the script's last statement returned %q, want 16 (1+2+3+10, from 4 rows)", last)
	}
	drivertest.ScriptRefused(t, d, "SELECT 1;\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1;", "an open BEGIN", 2)
	drivertest.RawRows(t, d, "SELECT 'abc', NULL, 42 UNION ALL SELECT 'de', 'f', 7", driver.SQLOptions{})
}

// TestDataTableSQL pins the statements' text.
func TestDataTableSQL(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{createDataSQL("t", "ab", true), `CREATE TABLE "t" /* created by dbprobe, id ab */ (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)`},
		{createDataSQL("t", "ab", false), `CREATE TABLE "t" /* created by dbprobe, id ab */ (id INTEGER NOT NULL, payload BLOB NOT NULL)`},
		{fillSQL("t", 10), `WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2) INSERT INTO "t" (id, payload) SELECT n, printf('%.*c', 10, 'x') FROM seq`},
		{insertSelectSQL("s", "d"), `INSERT INTO "d" (id, payload) SELECT id + ?3, payload FROM "s" WHERE id BETWEEN ?1 AND ?2`},
		{scanDataSQL("t", true), `SELECT count(*), coalesce(sum(length(CAST(payload AS BLOB))), 0) FROM "t" WHERE id BETWEEN ?1 AND ?2`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// CacheSize is a reading connection's cache_size in bytes, read on its
// own from another connection of the same file.
func TestCacheSize(t *testing.T) {
	d, other := capDB(t)
	c, err := d.CacheSize(context.Background())
	cache, page := count(t, other, "PRAGMA cache_size"), count(t, other, "PRAGMA page_size")
	want := cache * page
	if cache < 0 {
		want = -cache * 1024
	}
	if err != nil || c.Bytes != want || c.Bytes <= 0 || !strings.HasPrefix(c.How, "cache_size = ") {
		t.Fatalf("CacheSize = %+v, %v; want %d bytes", c, err, want)
	}
	for _, tc := range []struct {
		cache, page, want int64
	}{{-2000, 4096, 2_048_000}, {500, 8192, 4_096_000}} {
		if got := cacheSizeOf(tc.cache, tc.page); got.Bytes != tc.want {
			t.Errorf("cacheSizeOf(%d, %d) = %+v, want %d", tc.cache, tc.page, got, tc.want)
		}
	}
}
