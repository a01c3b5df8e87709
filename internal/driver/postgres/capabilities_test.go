package postgres

import (
	"context"
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

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// capDB opens a DB on a fresh database and an admin connection to it,
// outside the driver, to check what the capabilities did.
func capDB(t *testing.T) (*DB, *pgx.Conn) {
	t.Helper()
	return capDBAt(t, testdb.FreshPostgresDatabase(t))
}

// capDBAt is capDB on the database at u.
func capDBAt(t *testing.T, u string) (*DB, *pgx.Conn) {
	t.Helper()
	target, err := driver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 4, BulkLoad: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return d.(*DB), admin
}

func count(t *testing.T, admin *pgx.Conn, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := admin.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestCapabilitiesDescribeTheDriver(t *testing.T) {
	db, _ := capDB(t)
	if err := driver.CheckDescription(db); err != nil {
		t.Fatal(err)
	}
	for _, c := range driver.AllCapabilities() {
		if !db.Capabilities().OK(c) {
			t.Errorf("PostgreSQL lacks %s", c)
		}
	}
}

// A data table is created as dbprobe's, with its payload stored inline,
// filled on the server, sized, scanned in slices that add up, copied at a
// degree whose workers the plan shows, written by INSERT … SELECT and
// loaded by writers at once; the database's own answers check each.
func TestDataTables(t *testing.T) {
	// Chunks of 1 MB, so that a small fill commits several times.
	defer func(was int64) { fillChunkBytes = was }(fillChunkBytes)
	fillChunkBytes = 1 << 20
	db, admin := capDB(t)
	ctx := context.Background()
	src := driver.DataTable{Name: "Storage_Src", PayloadBytes: 500}
	if err := db.CreateDataTable(ctx, src); err != nil {
		t.Fatalf("CreateDataTable: %v", err)
	}
	st, err := db.Inspect(ctx, src.Table())
	if err != nil || !st.CreatedByDbprobe || st.HasRows {
		t.Fatalf("Inspect = %+v, %v; want dbprobe's, empty", st, err)
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'storage_src'::regclass AND attname = 'payload' AND attstorage = 'p'"); got != 1 {
		t.Error("the payload is not stored PLAIN")
	}
	if err := db.CreateDataTable(ctx, src); !badinput.Is(err) {
		t.Errorf("CreateDataTable of an existing table: %v, want bad input", err)
	}

	rows := chunkRows(src)*5 + 17 // five full chunks and a short one
	n, err := db.FillTable(ctx, src, 1, rows)
	if err != nil || n != rows {
		t.Fatalf("FillTable = %d, %v", n, err)
	}
	if got := count(t, admin, "SELECT count(*) FROM storage_src WHERE octet_length(payload) = 500 AND id BETWEEN 1 AND $1", rows); got != rows {
		t.Fatalf("%d rows of 500 bytes, want %d", got, rows)
	}
	size, err := db.TableSize(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := count(t, admin, "SELECT pg_total_relation_size('storage_src')"); size.Bytes != want || size.Bytes < rows*500 {
		t.Errorf("TableSize = %d, pg_total_relation_size %d, payload alone %d", size.Bytes, want, rows*500)
	}

	var total driver.ScanResult
	for part := range 3 {
		r, err := db.ScanTable(ctx, src, part, 3)
		if err != nil {
			t.Fatalf("ScanTable %d/3: %v", part, err)
		}
		if r.Rows == 0 {
			t.Errorf("slice %d/3 read nothing", part)
		}
		total.Rows += r.Rows
		total.PayloadBytes += r.PayloadBytes
	}
	whole, err := db.ScanTable(ctx, src, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (driver.ScanResult{Rows: rows, PayloadBytes: rows * 500}); total != want || whole != want {
		t.Errorf("slices add up to %+v, the whole scan %+v, want %+v", total, whole, want)
	}

	serial := driver.DataTable{Name: "storage_copy1", PayloadBytes: 500}
	res, err := db.CopyTable(ctx, src, serial, 1)
	if err != nil || res.Rows != rows || res.Degree != 1 {
		t.Fatalf("CopyTable degree 1 = %+v, %v", res, err)
	}
	parallel := driver.DataTable{Name: "storage_copy3", PayloadBytes: 500}
	res, err = db.CopyTable(ctx, src, parallel, 3)
	if err != nil || res.Rows != rows {
		t.Fatalf("CopyTable degree 3 = %+v, %v", res, err)
	}
	if res.Degree != 3 {
		t.Errorf("degree 3 planned %d (%s)", res.Degree, res.How)
	}
	// One worker is the hardest to plan: it saves the least of the
	// scan's cost.
	two := driver.DataTable{Name: "storage_copy2", PayloadBytes: 500}
	res, err = db.CopyTable(ctx, src, two, 2)
	if err != nil || res.Rows != rows || res.Degree != 2 || !strings.Contains(res.How, "(1 asked, 1 planned, 1 launched)") {
		t.Errorf("CopyTable degree 2 = %+v, %v", res, err)
	}
	if got := count(t, admin, "SELECT count(*) FROM storage_copy2"); got != rows {
		t.Errorf("the copy at degree 2 has %d rows, want %d", got, rows)
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_class WHERE relname = 'storage_src' AND reloptions IS NOT NULL"); got != 0 {
		t.Error("the source keeps the parallel_workers set for the copy")
	}
	for _, c := range []driver.DataTable{serial, parallel, two} {
		if st, err := db.Inspect(ctx, c.Table()); err != nil || !st.CreatedByDbprobe || !st.HasRows {
			t.Errorf("the copy %s: %+v, %v; want dbprobe's, with rows", c.Name, st, err)
		}
	}

	n, err = db.InsertSelect(ctx, src, serial, 101, 1100, rows)
	if err != nil || n != 1000 {
		t.Fatalf("InsertSelect = %d, %v", n, err)
	}
	if got := count(t, admin, "SELECT count(*) FROM storage_copy1 WHERE id BETWEEN $1 AND $2", rows+101, rows+1100); got != 1000 {
		t.Errorf("%d shifted rows, want 1000", got)
	}

	// Two writers at once, each its own ids; payloads with the bytes COPY's
	// text format escapes come back as they were.
	loaded := driver.DataTable{Name: "storage_bulk", PayloadBytes: 16}
	if err := db.CreateDataTable(ctx, loaded); err != nil {
		t.Fatal(err)
	}
	payload := []byte("a\tb\nc\\d\re" + strings.Repeat("z", 7))
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
			if !strings.HasPrefix(bw.How(), "COPY") {
				errs <- fmt.Errorf("How() = %q, want COPY", bw.How())
				return
			}
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
	if got := count(t, admin, "SELECT count(*) FROM storage_bulk WHERE payload = $1", string(payload)); got != 600 {
		t.Errorf("%d rows loaded as written, want 600", got)
	}

	for _, tbl := range []driver.DataTable{src, serial, parallel, two, loaded} {
		if err := db.DropDataTable(ctx, tbl); err != nil {
			t.Errorf("DropDataTable %s: %v", tbl.Name, err)
		}
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_class WHERE relname LIKE 'storage_%'"); got != 0 {
		t.Errorf("%d tables left", got)
	}
}

// Tables dbprobe did not create are never written into or dropped, and
// a payload that would leave the page is refused before anything runs.
func TestDataTablesRefuse(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE theirs (id bigint PRIMARY KEY, payload char(10) NOT NULL)"); err != nil {
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
	if _, err := db.CopyTable(ctx, theirs, driver.DataTable{Name: "copy_of_theirs", PayloadBytes: 10}, 2); !badinput.Is(err) {
		t.Errorf("a parallel copy that changes a foreign table's parallel_workers: %v", err)
	}
	if err := db.DropDataTable(ctx, theirs); !badinput.Is(err) {
		t.Errorf("DropDataTable of a foreign table: %v", err)
	}
	if _, err := db.FillTable(ctx, driver.DataTable{Name: "none", PayloadBytes: 10}, 1, 10); !badinput.Is(err) {
		t.Errorf("FillTable of no table: %v", err)
	}
	if err := db.CreateDataTable(ctx, driver.DataTable{Name: "wide", PayloadBytes: driver.MaxPayloadBytes + 1}); !badinput.Is(err) {
		t.Errorf("a payload wider than a page: %v", err)
	}
	if got := count(t, admin, "SELECT count(*) FROM theirs"); got != 0 {
		t.Errorf("%d rows written into a foreign table", got)
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_class WHERE relname IN ('wide', 'copy_of_theirs')"); got != 0 {
		t.Error("a refused table was created")
	}
}

// running counts the statements like pattern that other backends run.
func running(t *testing.T, admin *pgx.Conn, pattern string) int64 {
	return count(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", pattern)
}

// A statement whose context ends is stopped on the server, at once, by a
// cancel request: the connection it ran on stays usable, and no backend
// runs it on. The same holds for a fill in flight.
func TestCancelStopsTheStatementOnTheServer(t *testing.T) {
	db, admin := capDB(t)
	c, err := db.SQLConn(context.Background(), driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Prepare(context.Background(), "SELECT pg_sleep(:seconds)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err = c.Run(ctx, st, []any{30}, nil)
	cancel()
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Run under a 300 ms context: %v after %v", err, time.Since(start))
	}
	if !errors.Is(err, context.DeadlineExceeded) && !driver.IsTimeout(err) {
		t.Errorf("the error %v is neither the context's nor a timeout", err)
	}
	if n := running(t, admin, "SELECT pg_sleep%"); n != 0 {
		t.Errorf("%d backends still sleep", n)
	}
	one, err := c.Prepare(context.Background(), "SELECT 1")
	if err != nil {
		t.Fatalf("the connection after the cancel: %v", err)
	}
	if out, err := c.Run(context.Background(), one, nil, nil); err != nil || out.Rows != 1 {
		t.Fatalf("the connection after the cancel: %+v, %v", out, err)
	}

	tbl := driver.DataTable{Name: "big", PayloadBytes: 8000}
	if err := db.CreateDataTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	start = time.Now()
	_, err = db.FillTable(ctx, tbl, 1, 1e9)
	cancel()
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("FillTable of a billion rows under 500 ms: %v after %v", err, time.Since(start))
	}
	if n := running(t, admin, "INSERT INTO%big%"); n != 0 {
		t.Errorf("%d backends still fill", n)
	}
}

// SQL text runs with :name parameters bound as values (a value that looks
// like SQL is stored as text), inside a transaction or not, and a syntax
// error is the server's, found when preparing.
func TestSQLConn(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE TABLE notes (id int PRIMARY KEY, body text)"); err != nil {
		t.Fatal(err)
	}
	c, err := db.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ins, err := c.Prepare(ctx, "INSERT INTO notes (id, body) VALUES (:id, :body) -- :not_a_parameter")
	if err != nil {
		t.Fatal(err)
	}
	if got := ins.Params(); len(got) != 2 || got[0] != "id" || got[1] != "body" {
		t.Fatalf("Params = %q", got)
	}
	evil := "'); DROP TABLE notes; --"
	out, err := c.Run(ctx, ins, []any{1, evil}, nil)
	if err != nil || out.Affected != 1 || out.Rows != 0 {
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
		seen = append(seen, fmt.Sprint(row...))
		return nil
	})
	if err != nil || out.Rows != 1 || out.Affected != -1 || len(seen) != 1 || seen[0] != "1"+evil {
		t.Fatalf("select: %+v, %v, rows %q", out, err, seen)
	}
	_, err = c.Prepare(ctx, "SELEC 1")
	if driver.Code(err) != "42601" {
		t.Errorf("a syntax error: %v (code %q), want SQLSTATE 42601", err, driver.Code(err))
	}
	if _, err := c.Prepare(ctx, "SELECT 'open"); !badinput.Is(err) {
		t.Errorf("an unclosed string: %v, want bad input", err)
	}
}

// A script with a trigger function in dollar quotes, a DO block, a BEGIN
// ATOMIC body with CASE inside and a transaction is cut by SplitScript
// into statements the server prepares and runs one by one: the trigger
// fired for every row the DO block and the transaction inserted.
func TestSplitScriptRuns(t *testing.T) {
	db, admin := capDB(t)
	script := `-- a user's setup script
CREATE TABLE script_log (n int);
CREATE TABLE script_t (a int);
CREATE FUNCTION script_count() RETURNS trigger AS $$
BEGIN
  INSERT INTO script_log VALUES (NEW.a); -- one row per row
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER script_tr AFTER INSERT ON script_t
  FOR EACH ROW EXECUTE FUNCTION script_count();
DO $$
BEGIN
  FOR i IN 1..3 LOOP
    INSERT INTO script_t VALUES (i);
  END LOOP;
END
$$;
CREATE FUNCTION script_twice(x int) RETURNS int LANGUAGE sql
BEGIN ATOMIC
  SELECT CASE WHEN x > 0 THEN 2 * x ELSE 0 END;
END;
BEGIN;
INSERT INTO script_t VALUES (script_twice(5));
COMMIT;
SELECT sum(n) FROM script_log;
`
	last := drivertest.RunScript(t, db, script, []int{2, 3, 4, 10, 12, 19, 23, 24, 25, 26})
	if last != "16" || count(t, admin, "SELECT count(*) FROM script_log") != 4 {
		t.Errorf("the script's last statement returned %q, want 16 (1+2+3+10, from 4 rows)", last)
	}
	drivertest.ScriptRefused(t, db, "SELECT 1;\nDO $$ BEGIN END;", "an open dollar quote", 2)
	drivertest.RawRows(t, db, "SELECT 'abc', NULL, 42 UNION ALL SELECT 'de', 'f', 7", driver.SQLOptions{}, driver.SQLOptions{Simple: true})
}

// A tablespace is made in a directory, recorded, holds a data table's
// files there, and goes when dropped; one dbprobe did not record is
// refused. The server runs on this host as the postgres OS user
// (scripts/test), which must own the directory.
func TestPlacement(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	dir, loc := serverLocation(t, db)
	tbl := driver.DataTable{Name: "placed", PayloadBytes: 100, Where: &loc}
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, tbl, 1, 1000); err != nil {
		t.Fatal(err)
	}
	var where string
	if err := admin.QueryRow(ctx, "SELECT coalesce(tablespace, '') FROM pg_tables WHERE tablename = 'placed'").Scan(&where); err != nil || where != loc.Name {
		t.Fatalf("the table is in tablespace %q (%v), want %s", where, err, loc.Name)
	}
	var files int
	filepath.WalkDir(dir, func(_ string, e os.DirEntry, _ error) error {
		if e != nil && !e.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Errorf("no file of the table under %s", dir)
	}
	if err := db.DropLocation(ctx, loc); err == nil {
		t.Error("a tablespace with a table in it was dropped")
	}
	if err := db.DropDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.DropLocation(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if got := count(t, admin, "SELECT count(*) FROM pg_tablespace WHERE spcname = $1", loc.Name); got != 0 {
		t.Error("the tablespace is still there")
	}
	if err := db.DropLocation(ctx, driver.Location{Name: "pg_default"}); !badinput.Is(err) {
		t.Errorf("dropping a tablespace dbprobe did not create: %v", err)
	}
	if _, err := db.CreateLocation(ctx, filepath.Join(dir, "missing")); !badinput.Is(err) {
		t.Errorf("a directory that does not exist: %v", err)
	}
}

// serverLocation makes a directory the server may use and a Location in
// it. The server runs on this host as the postgres OS user (scripts/test),
// which must own the directory.
func serverLocation(t *testing.T, db *DB) (string, driver.Location) {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres OS user to give the directory to")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		for _, d := range []string{filepath.Dir(dir), dir} {
			os.Chmod(d, 0o755)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	loc, err := db.CreateLocation(context.Background(), dir)
	if err != nil {
		if badinput.Is(err) {
			t.Skipf("the server cannot use a directory of this test (%v)", err)
		}
		t.Fatal(err)
	}
	return dir, loc
}

// TestDataTableSQL pins the statements' text.
func TestDataTableSQL(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{createDataSQL(`"public"."t"`, 2000, ""), `CREATE TABLE "public"."t" (id bigint PRIMARY KEY, payload char(2000) NOT NULL)`},
		{createDataSQL(`"t"`, 10, "dbprobe_ts_1"), `CREATE TABLE "t" (id bigint PRIMARY KEY, payload char(10) NOT NULL) TABLESPACE "dbprobe_ts_1"`},
		{plainStorageSQL(`"t"`), `ALTER TABLE "t" ALTER COLUMN payload SET STORAGE PLAIN`},
		{fillSQL(`"t"`, 10), `INSERT INTO "t" (id, payload) SELECT g, repeat('x', 10) FROM generate_series($1::bigint, $2::bigint) AS g`},
		{copySQL(`"s"`, `"d"`, ""), `CREATE TABLE "d" AS SELECT id, payload FROM "s"`},
		{insertSelectSQL(`"s"`, `"d"`), `INSERT INTO "d" (id, payload) SELECT id + $3::bigint, payload FROM "s" WHERE id BETWEEN $1::bigint AND $2::bigint`},
		{scanSQL(`"t"`, true, false), `SELECT count(*), coalesce(sum(octet_length(payload)), 0) FROM "t" WHERE ctid >= $1::tid AND ctid < $2::tid`},
		{tablespaceSQL("ts", `/data/it's\here`), `CREATE TABLESPACE "ts" LOCATION E'/data/it''s\\here'`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// A copy's EXPLAIN ANALYZE gives its rows (the top node's) and its
// workers; fewer than asked say the server's limits.
func TestParseCopyPlan(t *testing.T) {
	if got, want := explainCopySQL(copySQL(`"s"`, `"d"`, "")), `EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, FORMAT JSON) CREATE TABLE "d" AS SELECT id, payload FROM "s"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	gather := `[{"Plan": {"Node Type": "Gather", "Actual Rows": 24000, "Workers Planned": 3, "Workers Launched": 1,
		"Plans": [{"Node Type": "Seq Scan", "Actual Rows": 8000}]}}]`
	p, err := parseCopyPlan(gather)
	if err != nil || p != (copyPlan{rows: 24000, planned: 3, launched: 1}) {
		t.Fatalf("parseCopyPlan = %+v, %v", p, err)
	}
	if d := p.describe(4, "max_parallel_workers = 1"); !strings.Contains(d, "with 1 parallel worker for the SELECT (3 asked, 3 planned, 1 launched); the server had no more worker slots free (max_parallel_workers = 1") {
		t.Errorf("describe: %s", d)
	}
	p, err = parseCopyPlan(`[{"Plan": {"Node Type": "Seq Scan", "Actual Rows": 7}}]`)
	if err != nil || p != (copyPlan{rows: 7}) {
		t.Fatalf("a serial plan: %+v, %v", p, err)
	}
	if d := p.describe(2, "max_parallel_workers = 8"); !strings.Contains(d, "(1 asked, 0 planned, 0 launched); the planner took fewer than asked") {
		t.Errorf("describe: %s", d)
	}
	if _, err := parseCopyPlan(`[]`); err == nil {
		t.Error("a plan without rows parsed")
	}
}

// A server with no worker slot to give launches none of the workers
// planned, and the copy says so and counts the leader only.
func TestParallelCopyWithoutWorkers(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var dbname string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&dbname); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+quote(dbname)+" SET max_parallel_workers = 0"); err != nil {
		t.Fatal(err)
	}
	db, _ := capDBAt(t, u)
	src := driver.DataTable{Name: "src", PayloadBytes: 500}
	if err := db.CreateDataTable(ctx, src); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, src, 1, 2000); err != nil {
		t.Fatal(err)
	}
	res, err := db.CopyTable(ctx, src, driver.DataTable{Name: "dst", PayloadBytes: 500}, 3)
	if err != nil || res.Rows != 2000 || res.Degree != 1 || !strings.Contains(res.How, "(2 asked, 2 planned, 0 launched); the server had no more worker slots free (max_parallel_workers = 0") {
		t.Fatalf("CopyTable = %+v, %v", res, err)
	}
}

// DOP 2 plans its one worker on a table of the storage experiments'
// kilobyte rows never analyzed, whose parallel scan saves the planner
// least: it planned none before the page cost was set aside.
func TestParallelCopyOneWorker(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	src := driver.DataTable{Name: "src", PayloadBytes: 1000}
	if err := db.CreateDataTable(ctx, src); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, src, 1, 3000); err != nil {
		t.Fatal(err)
	}
	res, err := db.CopyTable(ctx, src, driver.DataTable{Name: "dst", PayloadBytes: 1000}, 2)
	if err != nil || res.Rows != 3000 || res.Degree != 2 || !strings.Contains(res.How, "(1 asked, 1 planned, 1 launched)") {
		t.Fatalf("CopyTable = %+v, %v", res, err)
	}
	if got := count(t, admin, "SELECT count(*) FROM dst"); got != 3000 {
		t.Errorf("the copy has %d rows", got)
	}
}

// CacheSize is shared_buffers, counted by pg_settings in its own units.
func TestCacheSize(t *testing.T) {
	db, admin := capDB(t)
	c, err := db.CacheSize(context.Background())
	want := count(t, admin, "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers' AND unit = '8kB'")
	if err != nil || c.Bytes != want || !strings.HasPrefix(c.How, "shared_buffers = ") {
		t.Fatalf("CacheSize = %+v, %v; pg_settings says %d bytes", c, err, want)
	}
}
