package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// run executes dbprobe and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Execute(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// ycsbOutput is YCSB text output read the way its parsers read it: each
// "[SECTION], metric, value" line split on ", ".
type ycsbOutput map[string]map[string]float64

func parseYCSB(t *testing.T, text string) []ycsbOutput {
	t.Helper()
	var blocks []ycsbOutput
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[") {
			continue
		}
		parts := strings.Split(line, ", ")
		if len(parts) != 3 {
			t.Fatalf("YCSB line %q does not split into 3 parts", line)
		}
		v, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			t.Fatalf("YCSB line %q: value is not a number", line)
		}
		section := strings.Trim(parts[0], "[]")
		if section == "OVERALL" && parts[1] == "RunTime(ms)" {
			blocks = append(blocks, ycsbOutput{})
		}
		if len(blocks) == 0 {
			t.Fatalf("YCSB line %q before [OVERALL], RunTime(ms)", line)
		}
		b := blocks[len(blocks)-1]
		if b[section] == nil {
			b[section] = map[string]float64{}
		}
		b[section][parts[1]] = v
	}
	return blocks
}

func integritySpec(records int64) *workload.Spec {
	return &workload.Spec{
		RecordCount: records, InsertCount: records, FieldCount: 10, FieldLength: 100, MinFieldLength: 1,
		FieldNamePrefix: "field", ReadAllFields: true, Proportions: [5]float64{1}, ZeroPadding: 1,
		MinScanLength: 1, MaxScanLength: 1, Table: "usertable", DataIntegrity: true,
		ExponentialPercentile: 95, ExponentialFrac: 0.8, HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
	}
}

// checkLoaded reads every record back through the driver and compares it
// with what dataintegrity wrote.
func checkLoaded(t *testing.T, dbURL string, records int64) {
	t.Helper()
	ctx := context.Background()
	db, err := drivertest.OpenURL(t, dbURL, "", driver.Options{Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spec := integritySpec(records)
	table := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: spec.FieldNames(), FieldLength: 100}
	sess, err := db.Session(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	gen := workload.NewGenerator(spec, workload.NewShared(spec), 1)
	values := make([][]byte, 10)
	for k := int64(0); k < records; k++ {
		key, _ := gen.Record(k)
		if err := sess.Read(ctx, key, nil, values); err != nil {
			t.Fatalf("record %d (%s): %v", k, key, err)
		}
		if !gen.Verify(key, nil, values) {
			t.Fatalf("record %d (%s) does not hold what was loaded: %q", k, key, values[0])
		}
	}
	// One past the end must not exist: the count is exact.
	key, _ := gen.Record(records)
	if err := sess.Read(ctx, key, nil, values); err != driver.ErrNotFound {
		t.Fatalf("record %d beyond recordcount: err %v, want not found", records, err)
	}
}

// loadAndRun is the end-to-end check on one database: load N rows and
// check count and content, run workload A and check the operations add up,
// the read/update split holds, reads return every field and verify.
func loadAndRun(t *testing.T, dbURL string, wantMetrics []string, extraLoad ...string) {
	const records, ops = 2000, 4000
	out := filepath.Join(t.TempDir(), "result.jsonl")
	args := append([]string{"load", "--db", dbURL, "-P", "workloads/workloada", "-p", "recordcount=" + fmt.Sprint(records),
		"-p", "dataintegrity=true", "--threads", "4", "-p", "db.batchsize=300"}, extraLoad...)
	stdout, stderr, err := run(t, args...)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	load := parseYCSB(t, stdout)
	if len(load) != 1 || load[0]["INSERT"]["Operations"] != records || load[0]["INSERT"]["Return=OK"] != records {
		t.Fatalf("load output:\n%s", stdout)
	}
	checkLoaded(t, dbURL, records)

	stdout, stderr, err = run(t, "run", "--db", dbURL, "--workload", "a", "-p", "recordcount="+fmt.Sprint(records),
		"-p", "operationcount="+fmt.Sprint(ops), "-p", "dataintegrity=true", "--threads", "8", "--out", out, "-s")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	blocks := parseYCSB(t, stdout)
	if len(blocks) != 1 {
		t.Fatalf("run output has %d result blocks:\n%s", len(blocks), stdout)
	}
	r := blocks[0]
	reads, updates := r["READ"]["Operations"], r["UPDATE"]["Operations"]
	if reads+updates != ops || r["READ-FAILED"] != nil || r["UPDATE-FAILED"] != nil {
		t.Fatalf("reads %v + updates %v != %d, or failures:\n%s", reads, updates, ops, stdout)
	}
	// 5 standard deviations of a binomial(4000, 0.5) is about 158.
	if math.Abs(reads-ops/2) > 160 {
		t.Fatalf("reads %v of %d with readproportion 0.5", reads, ops)
	}
	if r["VERIFY"]["Return=OK"] != reads || r["VERIFY"]["Return=UNEXPECTED_STATE"] != 0 {
		t.Fatalf("dataintegrity: VERIFY %v for %v reads", r["VERIFY"], reads)
	}
	for _, metric := range []string{"AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)", "50thPercentileLatency(us)",
		"95thPercentileLatency(us)", "99thPercentileLatency(us)", "99.9PercentileLatency(us)"} {
		if _, ok := r["READ"][metric]; !ok {
			t.Errorf("[READ] lacks %s", metric)
		}
	}
	if r["OVERALL"]["Throughput(ops/sec)"] <= 0 {
		t.Fatalf("throughput %v", r["OVERALL"]["Throughput(ops/sec)"])
	}
	if !regexp.MustCompile(`(?m)^#\s+requestdistribution\s+= zipfian\s`).MatchString(stdout) {
		t.Fatalf("the header does not show the request distribution in force:\n%s", stdout)
	}
	for _, setting := range []string{`warmup\s+= 0s\s+\(default\)`, `drain-timeout\s+= 10s\s+\(default\)`, `strict\s+= false\s+\(default\)`} {
		if !regexp.MustCompile(`(?m)^#\s+` + setting).MatchString(stdout) {
			t.Errorf("the header lacks %s:\n%s", setting, stdout)
		}
	}
	if !strings.Contains(stderr, "current ops/sec") {
		t.Fatalf("-s printed no status line on stderr:\n%s", stderr)
	}

	res := readResult(t, out)
	if len(res.Phases) != 1 || res.Phases[0].Summary == nil || res.Phases[0].Summary.Ops != ops {
		t.Fatalf("JSON result: %+v", res)
	}
	if len(res.Phases[0].Intervals) == 0 {
		t.Fatal("JSON result has no per-second interval")
	}
	// The monitor's samples ride along: dbprobe's own figures always, and
	// the database's where its driver can be watched.
	mon := res.Phases[0].Monitor
	if len(mon) == 0 {
		t.Fatal("JSON result has no monitor sample")
	}
	last := mon[len(mon)-1].Metrics
	if _, ok := last["client.goroutines"]; !ok {
		t.Errorf("the monitor's last sample has no client.goroutines: %v", last)
	}
	for _, want := range wantMetrics {
		found := false
		for _, m := range mon {
			if _, ok := m.Metrics[want]; ok {
				found = true
			}
		}
		if !found {
			t.Errorf("no monitor sample has %s; the last one: %v", want, last)
		}
	}
}

func TestSQLiteEndToEnd(t *testing.T) {
	loadAndRun(t, "sqlite://"+filepath.Join(t.TempDir(), "e2e.db"), []string{"host.cpu.user%"})
}

func TestPostgresEndToEnd(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	loadAndRun(t, url, []string{"db.xact_commit/s", "db.wal_bytes/s", "host.cpu.user%"})
	// --no-copy loads through multi-row INSERTs into a second table.
	stdout, stderr, err := run(t, "load", "--db", url, "-p", "table=usertable_insert", "-p", "recordcount=500", "--no-copy", "--threads", "2")
	if err != nil {
		t.Fatalf("load --no-copy: %v\n%s", err, stderr)
	}
	if b := parseYCSB(t, stdout); b[0]["INSERT"]["Return=OK"] != 500 {
		t.Fatalf("load --no-copy output:\n%s", stdout)
	}
	// A nondurable table, delayed durability and the procedure path, read
	// back into the header.
	stdout, stderr, err = run(t, "ycsb", "--db", url, "-p", "table=kv_unlogged", "-p", "recordcount=300", "-p", "operationcount=600",
		"--table-type", "nondurable", "--durability", "delayed", "--op-path", "procedure", "--threads", "4")
	if err != nil {
		t.Fatalf("ycsb with knobs: %v\n%s", err, stderr)
	}
	if b := parseYCSB(t, stdout); b[1]["READ"]["Operations"]+b[1]["UPDATE"]["Operations"] != 600 {
		t.Fatalf("ycsb with knobs:\n%s", stdout)
	}
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`(?m)^#\s+synchronous_commit\s+= off`), regexp.MustCompile(`UNLOGGED`)} {
		if !want.MatchString(stdout) {
			t.Errorf("the header does not show %s:\n%s", want, stdout)
		}
	}
	// Running on it while asking for a disk table is refused.
	_, _, err = run(t, "run", "--db", url, "-p", "table=kv_unlogged", "--table-type", "disk")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "nondurable table") {
		t.Fatalf("run --table-type disk on an UNLOGGED table: %v, want bad input", err)
	}
}

func TestMySQLEndToEnd(t *testing.T) {
	url := testdb.FreshMySQLDatabase(t)
	loadAndRun(t, url, []string{"db.Com_update/s", "db.Innodb_os_log_written/s"})
	// The plain path, and the knobs a run can turn: a memory table,
	// procedures, retries. Delayed durability is server-wide on MySQL, and
	// the driver's own tests change it on this shared server: it is checked
	// end to end on PostgreSQL, where it is per session.
	stdout, stderr, err := run(t, "ycsb", "--db", url, "-p", "table=kv_memory", "-p", "recordcount=300", "-p", "operationcount=600",
		"--no-copy", "--table-type", "memory", "--op-path", "procedure", "--retries", "2", "--threads", "4")
	if err != nil {
		t.Fatalf("ycsb with knobs: %v\n%s", err, stderr)
	}
	blocks := parseYCSB(t, stdout)
	if blocks[0]["INSERT"]["Return=OK"] != 300 || blocks[1]["READ"]["Operations"]+blocks[1]["UPDATE"]["Operations"] != 600 {
		t.Fatalf("ycsb with knobs:\n%s", stdout)
	}
	for _, want := range []string{"ENGINE=MEMORY", "innodb_flush_log_at_trx_commit"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the header does not show %s:\n%s", want, stdout)
		}
	}
}

func TestRedisEndToEnd(t *testing.T) {
	url := testdb.FreshRedisDatabase(t)
	loadAndRun(t, url, nil)
	stdout, stderr, err := run(t, "ycsb", "--db", url, "--workload", "e", "-p", "table=scans", "-p", "recordcount=300", "-p", "operationcount=300", "--no-copy", "-p", "db.batchsize=20", "--threads", "4")
	if err != nil {
		t.Fatalf("ycsb workload e: %v\n%s", err, stderr)
	}
	// Concurrent plain batches must not abort each other.
	if b := parseYCSB(t, stdout); b[0]["INSERT"]["Return=OK"] != 300 || b[1]["SCAN"]["Operations"] == 0 || b[1]["SCAN-FAILED"] != nil {
		t.Fatalf("workload e on Redis:\n%s", stdout)
	}
	_, _, err = run(t, "run", "--db", url, "--op-path", "procedure")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "Redis has no stored procedures") {
		t.Fatalf("procedure path on Redis: %v, want bad input naming Redis", err)
	}
}

func TestDefaultYCSBRunsOnTemporarySQLite(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("DBPROBE_DB", "")
	stdout, stderr, err := run(t, "ycsb")
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "using a new SQLite database") {
		t.Fatalf("ycsb does not say where its database is:\n%s", stderr)
	}
	blocks := parseYCSB(t, stdout)
	if len(blocks) != 2 || blocks[0]["INSERT"]["Operations"] != 1000 ||
		blocks[1]["READ"]["Operations"]+blocks[1]["UPDATE"]["Operations"] != 1000 {
		t.Fatalf("ycsb output:\n%s", stdout)
	}
	entries, _ := os.ReadDir(os.Getenv("TMPDIR"))
	if len(entries) != 0 {
		t.Fatalf("the temporary database was not removed: %v", entries)
	}
}

// --influx-out writes the per-second figures and the monitor's samples as
// InfluxDB line protocol.
func TestInfluxOut(t *testing.T) {
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "influx.db")
	influx := filepath.Join(dir, "run.influx")
	if _, stderr, err := run(t, "ycsb", "--db", dbURL, "-p", "recordcount=500", "-p", "operationcount=0", "--duration", "1500ms", "--influx-out", influx); err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(influx)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"dbprobe_ops,", "dbprobe_latency,", "op=READ", "dbprobe_client,", "dbprobe_db,"} {
		if !strings.Contains(text, want) {
			t.Errorf("--influx-out lacks %q:\n%.2000s", want, text)
		}
	}
}

// With --retries every operation gets a Retries line, even when nothing
// was retried, so that a zero is visible.
func TestRetriesLineWithARetryPolicy(t *testing.T) {
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "retries.db")
	if _, stderr, err := run(t, "load", "--db", dbURL, "-p", "recordcount=100"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	stdout, stderr, err := run(t, "run", "--db", dbURL, "-p", "recordcount=100", "-p", "operationcount=200", "--retries", "3", "--threads", "2")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	r := parseYCSB(t, stdout)[0]
	for _, op := range []string{"READ", "UPDATE"} {
		if n, ok := r[op]["Retries"]; !ok || n != 0 {
			t.Errorf("[%s], Retries = %v (present %v), want a line with 0:\n%s", op, n, ok, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^#\s+retries\s+= 3\s+\(--retries\)`).MatchString(stdout) {
		t.Errorf("the header does not show retries=3 from --retries:\n%s", stdout)
	}
}

// Retries are counted per error code, in the text and in the JSON: at
// serializable isolation, eight threads updating ten rows make PostgreSQL
// refuse concurrent updates with 40001, and each refusal is retried.
func TestRetriesPerCodeOnPostgres(t *testing.T) {
	base := testdb.FreshPostgresDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_isolation", "serializable")
	u.RawQuery = q.Encode()
	out := filepath.Join(t.TempDir(), "retries.jsonl")
	stdout, stderr, err := run(t, "ycsb", "--db", u.String(), "-p", "recordcount=10", "-p", "operationcount=4000",
		"-p", "readproportion=0", "-p", "updateproportion=1", "--threads", "8", "--retries", "100", "--out", out)
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	upd := parseYCSB(t, stdout)[1]["UPDATE"]
	// Retries(40001), or Retries(40001 serialization_failure) once the
	// driver names the code: the code comes first either way.
	total, byCode := upd["Retries"], 0.0
	var codes float64
	for k, n := range upd {
		if strings.HasPrefix(k, "Retries(") {
			codes += n
		}
		if k == "Retries(40001)" || strings.HasPrefix(k, "Retries(40001 ") {
			byCode += n
		}
	}
	if byCode == 0 || codes != total {
		t.Fatalf("[UPDATE] Retries %v, Retries(40001) %v, all codes %v: want 40001 retries adding up to the total\n%s", total, byCode, codes, stdout)
	}
	res := readResult(t, out)
	for _, s := range res.Phases[1].Summary.Series {
		if s.Name == "UPDATE" {
			var got int64
			for code, n := range s.RetriesByCode {
				if code == "40001" || strings.HasPrefix(code, "40001 ") {
					got += n
				}
			}
			if float64(got) != byCode {
				t.Fatalf("JSON retries_by_code %v, the text says 40001: %v", s.RetriesByCode, byCode)
			}
			return
		}
	}
	t.Fatal("no UPDATE series in the JSON summary")
}

// With fieldlengthdistribution=histogram the stored values have the
// lengths YCSB draws from the file (bucket i gives (i+1)×BlockSize, the
// last bucket the one before it), and the columns are sized for the
// longest of them rather than fieldlength.
func TestFieldLengthHistogramOnSQLite(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "sizes.txt")
	if err := os.WriteFile(hist, []byte("BlockSize\t8\n0\t10\n1\t30\n2\t0\n3\t40\n4\t20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hist.db")
	stdout, stderr, err := run(t, "ycsb", "--db", "sqlite://"+path, "-p", "fieldlengthdistribution=histogram",
		"-p", "fieldlengthhistogram="+hist, "-p", "recordcount=200", "-p", "operationcount=300",
		"-p", "readproportion=0", "-p", "updateproportion=1", "-p", "writeallfields=true", "--threads", "2")
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "# note: fieldlengthhistogram "+hist+": 5 buckets of 8 bytes; field lengths 8 to 32 bytes, mean 24.6") {
		t.Errorf("the header does not summarise the histogram:\n%s", stdout)
	}
	db, err := sql.Open(firstSQLiteDriver(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ddl string
	if err := db.QueryRow("SELECT sql FROM sqlite_master WHERE name = 'usertable'").Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	if strings.Count(ddl, "VARCHAR(32)") != 10 {
		t.Errorf("table %s: want its 10 fields VARCHAR(32), the histogram's longest", ddl)
	}
	var cols []string
	for i := range 10 {
		cols = append(cols, fmt.Sprintf("length(FIELD%d)", i))
	}
	rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM usertable")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	lengths := map[int]float64{}
	total := 0.0
	for rows.Next() {
		var l [10]int
		if err := rows.Scan(&l[0], &l[1], &l[2], &l[3], &l[4], &l[5], &l[6], &l[7], &l[8], &l[9]); err != nil {
			t.Fatal(err)
		}
		for _, n := range l {
			lengths[n]++
			total++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if total != 2000 {
		t.Fatalf("%v values stored, want 2000", total)
	}
	// YCSB's shares: 8 bytes 11%, 16 bytes 30%, 32 bytes 59%; each within
	// 5 standard deviations.
	for length, p := range map[int]float64{8: 0.11, 16: 0.30, 32: 0.59} {
		if sd := math.Sqrt(total * p * (1 - p)); math.Abs(lengths[length]-total*p) > 5*sd {
			t.Errorf("%v values of %d bytes, want %.0f ± %.0f (all lengths: %v)", lengths[length], length, total*p, 5*sd, lengths)
		}
	}
	if len(lengths) != 3 {
		t.Errorf("stored lengths %v, want only 8, 16 and 32", lengths)
	}

	// A malformed file is refused in one line before anything runs.
	if err := os.WriteFile(hist, []byte("BlockSize\t8\n0\t10\n1 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "load", "--db", "sqlite://"+filepath.Join(dir, "bad.db"), "-p", "fieldlengthdistribution=histogram", "-p", "fieldlengthhistogram="+hist)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "line 3") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("malformed histogram: %v, want one line of bad input naming line 3", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "bad.db")); serr == nil {
		t.Error("the bad histogram's database was created anyway")
	}
}

// An update changes exactly one field (writeallfields=false).
func TestUpdateChangesOneField(t *testing.T) {
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "one.db")
	if _, stderr, err := run(t, "load", "--db", dbURL, "-p", "recordcount=1", "-p", "dataintegrity=true"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	if _, stderr, err := run(t, "run", "--db", dbURL, "-p", "recordcount=1", "-p", "operationcount=1",
		"-p", "readproportion=0", "-p", "updateproportion=1"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	spec := integritySpec(1)
	gen := workload.NewGenerator(spec, workload.NewShared(spec), 1)
	key, want := gen.Record(0)
	got := readRow(t, dbURL, key)
	changed := 0
	for i := range want {
		if string(got[i]) != string(want[i]) {
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("%d fields changed by one update, want exactly 1", changed)
	}
}

func readRow(t *testing.T, dbURL string, key []byte) [][]byte {
	t.Helper()
	ctx := context.Background()
	db, err := drivertest.OpenURL(t, dbURL, "", driver.Options{Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spec := integritySpec(1)
	sess, err := db.Session(ctx, driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: spec.FieldNames(), FieldLength: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	values := make([][]byte, 10)
	if err := sess.Read(ctx, key, nil, values); err != nil {
		t.Fatal(err)
	}
	return values
}

// sqliteExec runs SQL on an SQLite file through whichever SQLite driver the
// build registered with database/sql.
func sqliteExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	name := ""
	for _, d := range sql.Drivers() {
		if d == "sqlite3" || d == "sqlite" {
			name = d
		}
	}
	db, err := sql.Open(name, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestBadInputIsOneLineAndExitTwo(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	sqliteExec(t, foreign, "CREATE TABLE usertable (YCSB_KEY varchar(255) primary key, FIELD0 varchar(100))", "INSERT INTO usertable VALUES ('mine', 'precious')")
	// An empty file is an empty SQLite database: it exists, with no table.
	if err := os.WriteFile(filepath.Join(dir, "empty.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := "sqlite://" + filepath.Join(dir, "empty.db")
	loaded := "sqlite://" + filepath.Join(dir, "loaded.db")
	if _, stderr, err := run(t, "load", "--db", loaded, "-p", "recordcount=10"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown workload", []string{"run", "--db", loaded, "--workload", "z"}, "unknown workload"},
		{"malformed URL", []string{"run", "--db", "postgres://u:canary-pw@[::1"}, "not a valid URL"},
		{"unknown scheme", []string{"run", "--db", "oracle://x"}, "unknown database"},
		{"recordcount=0", []string{"load", "--db", empty, "-p", "recordcount=0"}, "recordcount=0"},
		{"threads 0", []string{"run", "--db", loaded, "--threads", "0"}, "threadcount=0"},
		{"proportions", []string{"run", "--db", loaded, "-p", "readproportion=0.7"}, "sum to 1"},
		{"unreadable file", []string{"run", "--db", loaded, "-P", filepath.Join(dir, "nope.properties")}, "cannot read properties file"},
		{"missing table", []string{"run", "--db", empty}, "does not exist"},
		{"missing database file", []string{"run", "--db", "sqlite://" + filepath.Join(dir, "never.db")}, "there is no database"},
		{"wrong field count", []string{"run", "--db", loaded, "-p", "fieldcount=3"}, "columns"},
		{"foreign rows", []string{"load", "--db", "sqlite://" + foreign}, "holds rows dbprobe did not write"},
		{"foreign drop", []string{"load", "--db", "sqlite://" + foreign, "--drop-existing"}, "was not created by dbprobe"},
		{"reload", []string{"load", "--db", loaded, "-p", "recordcount=10"}, "earlier dbprobe load"},
		{"strict", []string{"run", "--db", loaded, "--strict", "-p", "recordcont=5"}, "unknown property recordcont"},
		{"unknown flag", []string{"run", "--db", loaded, "--threds", "3"}, "unknown flag"},
		{"run without db", []string{"run"}, "run needs --db"},
		{"nothing to do", []string{"run", "--db", loaded, "-p", "operationcount=0"}, "would do nothing"},
		{"unreachable", []string{"run", "--db", "postgres://u:canary-pw@127.0.0.1:1/x?sslmode=disable"}, "cannot reach"},
		{"unknown table type", []string{"run", "--db", loaded, "--table-type", "ssd"}, "unknown table type"},
		{"unknown durability", []string{"run", "--db", loaded, "--durability", "lazy"}, "unknown durability"},
		{"negative retries", []string{"run", "--db", loaded, "--retries", "-1"}, "retries=-1"},
		{"monitor too often", []string{"run", "--db", loaded, "--monitor-interval", "1ms"}, "--monitor-interval 1ms is too short"},
		{"metrics beyond loopback", []string{"run", "--db", loaded, "--metrics-addr", "0.0.0.0:9464"}, "add --metrics-allow-remote"},
		{"metrics linger without endpoint", []string{"run", "--db", loaded, "--metrics-linger", "30s"}, "no --metrics-addr is given"},
		{"metrics remote without endpoint", []string{"run", "--db", loaded, "--metrics-allow-remote"}, "no --metrics-addr is given"},
		{"metrics port in use", []string{"run", "--db", loaded, "--metrics-addr", busy.Addr().String()}, "the port is in use"},
		{"unknown on-error", []string{"run", "--db", loaded, "--on-error", "ignore"}, `onerror="ignore" is not a choice: give stop`},
		{"unknown onerror property", []string{"run", "--db", loaded, "-p", "onerror=skip"}, "give stop"},
		{"reconnect timeout not a duration", []string{"run", "--db", loaded, "--reconnect-timeout", "soon"}, "give a duration such as 30s or 2m"},
		{"negative reconnect timeout", []string{"run", "--db", loaded, "--reconnect-timeout", "-5s"}, "reconnect.timeout=-5s must not be negative"},
		{"sqlite procedures", []string{"run", "--db", loaded, "--op-path", "procedure"}, "SQLite has no stored procedures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := run(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", stdout)
			}
			if !badinput.Is(err) && !cli.IsUsageError(err) {
				t.Fatalf("err %v is not bad input (exit 2)", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q, want one line containing %q", msg, tt.want)
			}
			if strings.Contains(msg+stdout+stderr, "canary-pw") {
				t.Fatalf("the password was shown: %q %q %q", msg, stdout, stderr)
			}
		})
	}
	// Nothing was destroyed: the foreign row is still there.
	db, err := sql.Open(firstSQLiteDriver(), foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT FIELD0 FROM usertable WHERE YCSB_KEY='mine'").Scan(&v); err != nil || v != "precious" {
		t.Fatalf("foreign row: %q, %v", v, err)
	}
}

func firstSQLiteDriver() string {
	for _, d := range sql.Drivers() {
		if d == "sqlite3" || d == "sqlite" {
			return d
		}
	}
	return ""
}

func TestPostgresBadInput(t *testing.T) {
	base := testdb.FreshPostgresDatabase(t)
	u := strings.Replace(base, "://dbprobe:", "://dbprobe:", 1)
	wrong := wrongPassword(t, u)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE usertable (ycsb_key varchar(255) primary key, field0 varchar(100)); INSERT INTO usertable VALUES ('theirs', 'data')"); err != nil {
		t.Fatal(err)
	}
	theirs := "CREATE TABLE theirs_kv (ycsb_key varchar(255) primary key"
	for i := range 10 {
		theirs += fmt.Sprintf(", field%d varchar(100)", i)
	}
	if _, err := conn.Exec(ctx, theirs+")"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong password", []string{"run", "--db", wrong}, "password"},
		{"foreign table", []string{"load", "--db", base}, "holds rows dbprobe did not write"},
		{"foreign drop", []string{"load", "--db", base, "--drop-existing"}, "was not created by dbprobe"},
		{"missing table", []string{"run", "--db", base, "-p", "table=nothere"}, "does not exist"},
		{"memory table", []string{"load", "--db", base, "-p", "table=inmemory", "--table-type", "memory"}, "PostgreSQL has no in-memory table"},
		{"procedures beside their table", []string{"run", "--db", base, "-p", "table=theirs_kv", "--op-path", "procedure"}, "was not created by dbprobe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want bad input containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "canary-pw") {
				t.Fatalf("password shown: %v", err)
			}
		})
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&n); err != nil || n != 1 {
		t.Fatalf("their table: %d rows, %v", n, err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'dbprobe_theirs_kv_%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d functions created beside their table, %v", n, err)
	}
}

// wrongPassword returns the URL with its password replaced by a canary.
func wrongPassword(t *testing.T, raw string) string {
	t.Helper()
	target, err := driver.ParseTarget(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	u := *target.URL
	u.User = nil
	s := u.String()
	return strings.Replace(s, "://", "://dbprobe:canary-pw@", 1)
}

// The diagnosis moves with reality: with synchronous_commit on the
// sessions wait on the WAL flush; with it off they do not; and a client
// starved of CPU is named as the limit.
func TestDiagnosisOnPostgres(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	if _, stderr, err := run(t, "load", "--db", url, "-p", "recordcount=5000", "--threads", "4"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	postmaster := postmasterPID(t, url)
	// bottleneck runs the workload and returns the verdict, and how many
	// cores other processes than dbprobe and the server used meanwhile
	// (-1 when /proc cannot tell).
	bottleneck := func(t *testing.T, args ...string) (string, float64) {
		t.Helper()
		args = append([]string{"run", "--db", url, "-p", "recordcount=5000", "-p", "operationcount=0", "--duration", "3s", "--threads", "8"}, args...)
		neighbours, followed := followNeighbours(postmaster)
		stdout, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		m := regexp.MustCompile(`(?m)^# bottleneck: (.*)$`).FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no bottleneck line:\n%s", stdout)
		}
		others := -1.0
		if followed {
			if c, err := neighbours.cores(); err == nil {
				others = c
			}
		}
		return m[1], others
	}
	// The diagnosis judges a 3 s run from the host's CPU, which the test
	// shares: when other processes take it (other packages' tests, a
	// benchmark), a run comes out CPU-bound or starved whatever the
	// database did. So a case gets up to four runs and must be diagnosed
	// right in one of them; a wrong verdict counts only from a run in
	// which the other processes used less than spoiledCores. A case whose
	// every run was spoiled is not judged, and the test says so (skips);
	// where /proc cannot tell, every run counts.
	const spoiledCores = 0.5
	var unjudged []string
	diagnosed := func(t *testing.T, want func(string) bool, args ...string) []string {
		t.Helper()
		var got []string
		spoiled := 0
		for range 4 {
			b, others := bottleneck(t, args...)
			if want(b) {
				return nil
			}
			if others >= spoiledCores {
				t.Logf("%v: %q beside other processes using %.2f cores: not judged", args, b, others)
				spoiled++
				continue
			}
			got = append(got, b)
		}
		if got == nil && spoiled > 0 {
			unjudged = append(unjudged, strings.Join(args, " "))
		}
		return got
	}
	isFlush := func(b string) bool { return strings.HasPrefix(b, "commit flush") }
	if got := diagnosed(t, isFlush, "--durability", "full"); got != nil {
		t.Errorf("synchronous_commit on: %q, want commit flush", got)
	}
	if got := diagnosed(t, func(b string) bool { return !isFlush(b) }, "--durability", "delayed"); got != nil {
		t.Errorf("synchronous_commit off: %q, want anything but commit flush", got)
	}

	// One core for all of dbprobe, and a busy loop beside the workers.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	if got := diagnosed(t, func(b string) bool { return strings.HasPrefix(b, "dbprobe itself") }, "--durability", "delayed"); got != nil {
		t.Errorf("client starved of CPU: %q, want dbprobe itself", got)
	}
	if unjudged != nil && !t.Failed() {
		t.Skipf("other processes took %.1f cores or more in every run of %q: the diagnosis was not judged there", spoiledCores, unjudged)
	}
}

// postmasterPID returns the process ID of the PostgreSQL server at url,
// which runs on this host: the parent of a backend.
func postmasterPID(t *testing.T, url string) int {
	t.Helper()
	// The backend is read while its connection is open: it exits with it.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	f, err := statFields(strconv.Itoa(backend))
	if err != nil {
		return -1 // not on this host, or no /proc: followNeighbours says so
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("backend %d's parent %q: %v", backend, f[1], err)
	}
	return pid
}

// A --metrics-addr that cannot be served, or an output file in no
// directory, is refused before anything is made: one line, not after a
// line announcing a new SQLite database.
func TestBadMetricsAddrBeforeAnything(t *testing.T) {
	for _, args := range [][]string{
		{"ycsb", "--metrics-addr", "nonsense"},
		{"ycsb", "--metrics-addr", "0.0.0.0:9464"},
		{"stress", "--mix", "oltp", "--metrics-addr", "nonsense"},
		{"storage", "scan", "--metrics-addr", "nonsense"},
		{"ycsb", "--out", "/nonexistent-dbprobe-dir/r.jsonl"},
		{"stress", "--mix", "oltp", "--hlog", "/nonexistent-dbprobe-dir/h.hlog"},
		{"storage", "scan", "--influx-out", "/nonexistent-dbprobe-dir/x.lp"},
	} {
		out, stderr, err := run(t, args...)
		if !badinput.Is(err) || !strings.Contains(err.Error(), args[len(args)-2]) {
			t.Errorf("%v: %v, want bad input naming %s", args, err, args[len(args)-2])
		}
		if out != "" || stderr != "" {
			t.Errorf("%v: printed %q on stdout and %q on stderr before refusing", args, out, stderr)
		}
	}
}
