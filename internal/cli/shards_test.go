package cli_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/keygen"
	"github.com/dbprobe/dbprobe/internal/shard"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestShardBadInput refuses shard lists that would leave records out,
// hold them twice or name one database twice, in one line with exit
// status 2 (bad input), before any database is opened.
func TestShardBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "shards")
	if err := os.WriteFile(file, []byte("# two shards\nnull@0-49\n\nnull@60-\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"gap", []string{"--shard", "null@0-399", "--shard", "null@500-"}, "records 400-499 are in no shard"},
		{"short", []string{"--shard", "null@0-399", "--shard", "null@400-899"}, "records 900-999 are in no shard"},
		{"overlap", []string{"--shard", "null@0-599", "--shard", "null@500-"}, "both hold records 500-599"},
		{"repeat", []string{"--shard", "postgres://u:hunter2@127.0.0.1:5999/a", "--shard", "postgres://u:hunter2@localhost:5999/a"}, "shards 1 and 2 are the same database"},
		{"mixed bounds", []string{"--shard", "null", "--shard", "null@0-9"}, "give bounds to every shard or to none"},
		{"one shard", []string{"--shard", "null"}, "one shard given"},
		{"with --db", []string{"--db", "null", "--shard", "null", "--shard", "null"}, "--db and --shard both given"},
		{"file with a gap", []string{"--shards-file", file}, "records 50-59 are in no shard"},
		{"missing file", []string{"--shards-file", filepath.Join(dir, "none")}, "--shards-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"load", "-p", "recordcount=1000"}, tc.args...)
			_, stderr, err := run(t, args...)
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line of bad input with %q (stderr %q)", err, tc.want, stderr)
			}
			if strings.Contains(err.Error()+stderr, "hunter2") {
				t.Errorf("the password shows: %v %s", err, stderr)
			}
		})
	}
}

// --read-db with --shard is refused before any database is opened, by
// run and by ycsb.
func TestShardWithReadDBRefused(t *testing.T) {
	for _, cmd := range []string{"run", "ycsb"} {
		_, stderr, err := run(t, cmd, "-p", "recordcount=100", "-p", "operationcount=10", "--shard", "postgres://u:hunter2@127.0.0.1:1/a", "--shard", "postgres://u:hunter2@127.0.0.1:1/b",
			"--read-db", "postgres://u:hunter2@127.0.0.1:2/a")
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "--read-db and --shard both given") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: error %v, want one line of bad input (stderr %q)", cmd, err, stderr)
		}
		if strings.Contains(err.Error()+stderr, "hunter2") {
			t.Errorf("the password shows: %v %s", err, stderr)
		}
	}
}

// TestShardsBadInputWritesNothing gives real databases a bad shard list:
// no table appears anywhere.
func TestShardsBadInputWritesNothing(t *testing.T) {
	pg := testdb.FreshPostgresDatabase(t)
	my := testdb.FreshMySQLDatabase(t)
	for _, args := range [][]string{
		{"--shard", pg + "@0-99", "--shard", my + "@200-"},
		{"--shard", pg + "@0-150", "--shard", my + "@100-"},
		{"--shard", pg, "--shard", my, "--shard", pg},
	} {
		_, _, err := run(t, append([]string{"load", "-p", "recordcount=300"}, args...)...)
		if !badinput.Is(err) {
			t.Fatalf("%v: error %v, want bad input", args[1:], err)
		}
	}
	if n := pgTables(t, pg); n != 0 {
		t.Errorf("PostgreSQL has %d tables after refused loads", n)
	}
	db := testdb.OpenMySQL(t, my)
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("MariaDB has %d tables after refused loads", n)
	}
}

func pgTables(t *testing.T, url string) int {
	t.Helper()
	return pgInt(t, url, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'")
}

// pgInt returns the integer a query asks the PostgreSQL database at url
// for, on a connection of its own.
func pgInt(t *testing.T, url, query string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func pgKeys(t *testing.T, url string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT YCSB_KEY FROM usertable")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func mysqlKeys(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query("SELECT YCSB_KEY FROM usertable")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys[k] = true
	}
	return keys
}

// TestShardsAcrossPostgresAndMariaDB loads one table over two PostgreSQL
// instances and a MariaDB, checks every record is on its shard and only
// there, runs a mix with inserts, and compares scans across the shards
// with the same scans on one unsharded database holding the same records.
func TestShardsAcrossPostgresAndMariaDB(t *testing.T) {
	pg1 := testdb.FreshPostgresDatabase(t)
	my := testdb.FreshMySQLDatabase(t)
	ref := testdb.FreshPostgresDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := instance.Start(ctx, instance.Postgres, instance.Options{})
	if errors.Is(err, instance.ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatalf("start a second PostgreSQL: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	pg2 := srv.URL()

	const records = 900
	ranges := []shard.Range{{First: 0, Last: 299}, {First: 300, Last: 599}, {First: 600, Last: shard.Open}}
	urls := []string{pg1, pg2, my}
	var shardArgs []string
	for i, u := range urls {
		shardArgs = append(shardArgs, "--shard", u+"@"+ranges[i].String())
	}
	// Batches of 7 rows straddle the boundaries; dataintegrity makes the
	// values a function of the key, so both loads write the same rows.
	common := []string{"-p", fmt.Sprintf("recordcount=%d", records), "-p", "dataintegrity=true", "-p", "db.batchsize=7", "--threads", "3", "--seed", "1"}
	resultFile := filepath.Join(t.TempDir(), "load.jsonl")
	stdout, stderr, err := run(t, append(append([]string{"load", "--out", resultFile, "--monitor-interval", "100ms"}, common...), shardArgs...)...)
	if err != nil {
		t.Fatalf("sharded load: %v\n%s\n%s", err, stdout, stderr)
	}
	// Each shard's monitor sampled its own database.
	res, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`"shard1.xact_commit/s"`, `"shard2.xact_commit/s"`, `"shard3.Com_insert/s"`} {
		if !strings.Contains(string(res), m) {
			t.Errorf("the result holds no monitor figure %s", m)
		}
	}
	for i := range urls {
		if !strings.Contains(stdout, fmt.Sprintf("shard %d (", i+1)) {
			t.Errorf("no figures for shard %d in:\n%s", i+1, stdout)
		}
	}
	if strings.Contains(stdout+stderr, srv.Password()) {
		t.Error("the second server's password shows in the output")
	}
	if _, _, err := run(t, append([]string{"load", "--db", ref}, common...)...); err != nil {
		t.Fatalf("unsharded load: %v", err)
	}

	myDB := testdb.OpenMySQL(t, my)
	got := []map[string]bool{pgKeys(t, pg1), pgKeys(t, pg2), mysqlKeys(t, myDB)}
	checkPlacement := func(when string, upTo int64) {
		t.Helper()
		for i, r := range ranges {
			last := r.Last
			if last == shard.Open {
				last = upTo - 1
			}
			want := last - r.First + 1
			if int64(len(got[i])) != want {
				t.Errorf("%s: shard %d (%s) holds %d records, want %d", when, i+1, r, len(got[i]), want)
			}
			for n := r.First; n <= last; n++ {
				if k := keygen.KeyName(n, true, 1); !got[i][k] {
					t.Fatalf("%s: record %d (%s) is not on shard %d", when, n, k, i+1)
				}
			}
		}
	}
	checkPlacement("after the load", records)

	// Scans: the sharded table against the unsharded one.
	sharded := openSharded(t, urls, ranges)
	single := openDB(t, ref)
	table := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}
	for i := range 10 {
		table.Fields = append(table.Fields, fmt.Sprintf("FIELD%d", i))
	}
	ss, err := sharded.Session(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rs, err := single.Session(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	starts := []string{"", "user", "user5", "user99999999999999999999"}
	for range 40 {
		starts = append(starts, keygen.KeyName(rng.Int64N(records), true, 1))
	}
	for _, start := range starts {
		for _, count := range []int{1, 10, 100, 1000} {
			a := scanAll(t, ss, start, count)
			b := scanAll(t, rs, start, count)
			if !slices.Equal(a, b) {
				t.Fatalf("scan from %q, %d: sharded %d rows %q…, unsharded %d rows %q…", start, count, len(a), a[:min(2, len(a))], len(b), b[:min(2, len(b))])
			}
		}
	}

	// A run with reads, updates, scans and inserts: the inserts are
	// records 900 on, all on the open-ended MariaDB shard.
	runArgs := append([]string{"run", "-p", "operationcount=600", "-p", "readproportion=0.4", "-p", "updateproportion=0.2",
		"-p", "scanproportion=0.2", "-p", "insertproportion=0.2", "-p", "requestdistribution=uniform"}, common...)
	stdout, stderr, err = run(t, append(runArgs, shardArgs...)...)
	if err != nil {
		t.Fatalf("sharded run: %v\n%s\n%s", err, stdout, stderr)
	}
	out := parseYCSB(t, stdout)[0]
	inserts := int64(out["INSERT"]["Return=OK"])
	if inserts == 0 || out["READ"]["Return=OK"] == 0 || out["SCAN"]["Return=OK"] == 0 {
		t.Fatalf("the run did too little: %v", out)
	}
	for _, op := range []string{"READ", "UPDATE", "SCAN", "INSERT"} {
		for k := range out[op] {
			if strings.HasPrefix(k, "Return=") && k != "Return=OK" {
				t.Errorf("%s %s = %v", op, k, out[op][k])
			}
		}
	}
	if out["VERIFY"]["Return=UNEXPECTED_STATE"] != 0 {
		t.Errorf("reads saw values other than those written: %v", out["VERIFY"])
	}
	got = []map[string]bool{pgKeys(t, pg1), pgKeys(t, pg2), mysqlKeys(t, myDB)}
	checkPlacement("after the run", records+inserts)
}

func openDB(t *testing.T, url string) driver.DB {
	t.Helper()
	tg, err := driver.ParseTarget(url, "")
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := driver.Lookup(tg.Driver)
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(context.Background(), tg, driver.Options{Sessions: 2, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openSharded(t *testing.T, urls []string, ranges []shard.Range) *shard.DB {
	t.Helper()
	var members []shard.Member
	for i, u := range urls {
		tg, err := driver.ParseTarget(u, "")
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := driver.Lookup(tg.Driver)
		if err != nil {
			t.Fatal(err)
		}
		db, err := d.Open(context.Background(), tg, driver.Options{Sessions: 2, Existing: true})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, shard.Member{Target: tg, DB: db, Range: ranges[i]})
	}
	db := shard.New(members)
	t.Cleanup(func() { db.Close() })
	return db
}

// scanAll returns a scan's rows as "key|field0|…|field9".
func scanAll(t *testing.T, s driver.Session, start string, count int) []string {
	t.Helper()
	var rows []string
	n, err := s.Scan(context.Background(), []byte(start), count, nil, func(k []byte, v [][]byte) {
		parts := []string{string(k)}
		for _, f := range v {
			parts = append(parts, string(f))
		}
		rows = append(rows, strings.Join(parts, "|"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(rows) {
		t.Fatalf("Scan returned %d but visited %d rows", n, len(rows))
	}
	return rows
}
