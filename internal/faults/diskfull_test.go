package faults

import (
	"context"
	"database/sql"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// batchSize is db.batchsize's default: the rows of one load transaction.
const batchSize = 1000

// stopLine returns the first line dbprobe wrote that holds one of
// phrases (compared without case): stderr first, then stdout, leaving out
// the header lines that repeat the command, the target and the settings;
// log lines (time=…) only when no other line has it. "" when none does.
func stopLine(o outcome, phrases ...string) string {
	var logged []string
	for _, text := range []string{o.stderr, o.stdout} {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "# command:") || strings.HasPrefix(line, "# target:") || strings.HasPrefix(line, "#   ") {
				continue
			}
			if strings.HasPrefix(line, "time=") {
				logged = append(logged, line)
				continue
			}
			if holdsAny(line, phrases) {
				return line
			}
		}
	}
	for _, line := range logged {
		if holdsAny(line, phrases) {
			return line
		}
	}
	return ""
}

// holdsAny reports whether line holds one of phrases, compared without
// case.
func holdsAny(line string, phrases []string) bool {
	lower := strings.ToLower(line)
	for _, p := range phrases {
		if strings.Contains(lower, strings.ToLower(p)) {
			return true
		}
	}
	return false
}

// hasCount reports whether text holds n as a number, plain (9000) or with
// thousands separators (9,000).
func hasCount(text string, n int64) bool {
	plain := strconv.FormatInt(n, 10)
	grouped := plain
	for i := len(plain) - 3; i > 0; i -= 3 {
		grouped = grouped[:i] + "," + grouped[i:]
	}
	re := regexp.MustCompile(`(^|[^0-9,])(` + regexp.QuoteMeta(plain) + `|` + regexp.QuoteMeta(grouped) + `)([^0-9,]|,[^0-9]|,?$)`)
	return re.MatchString(text)
}

// checkNamesFS fails the test unless the stop line says what to do about
// a full local disk: the file system that filled (its mount point) and
// its free space now.
func checkNamesFS(t *testing.T, line, mnt string) {
	t.Helper()
	if !strings.Contains(line, mnt) || !strings.Contains(line, "free") {
		t.Errorf("the stop line does not name the file system that filled (%s) and its free space: %s", mnt, line)
	}
}

// bareCode matches an error key whose code has no name beside it:
// "ERROR(53100)" where "ERROR(53100 disk_full)" is due.
var bareCode = regexp.MustCompile(`^ERROR\([0-9A-Z]{1,5}\)$`)

// checkNamedErrors fails the test for an error code counted without its
// meaning, in the JSON or the text.
func checkNamedErrors(t *testing.T, o outcome, s *result.Summary) {
	t.Helper()
	for k := range s.Errors {
		if bareCode.MatchString(k) {
			t.Errorf("error %s is counted without its meaning (errors: %s)", k, errorKeys(s))
		}
	}
	for _, line := range strings.Split(o.stdout+"\n"+o.stderr, "\n") {
		if m := regexp.MustCompile(`ERROR\([0-9A-Z]{1,5}\)`).FindString(line); m != "" {
			t.Errorf("error %s is printed without its meaning: %s", m, line)
		}
	}
}

// totalErrors adds up the result's error counts.
func totalErrors(s *result.Summary) int64 {
	var n int64
	for _, c := range s.Errors {
		n += c
	}
	return n
}

// TestSQLiteDiskFull loads 100,000 rows into SQLite on a 24 MB file
// system: the load stops at the first batch the full disk refused, with
// one line that says so in words, the rows loaded and where the space
// went; the error is counted as ERROR(13 SQLITE_FULL), the verdict blames
// the disk, and once space is freed the database is intact and holds
// exactly the rows acknowledged.
func TestSQLiteDiskFull(t *testing.T) {
	mnt := loopFS(t, 24, nil)
	// The filler is what the test frees afterwards.
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, 4<<20)
	dbFile := filepath.Join(mnt, "t.db")
	out := filepath.Join(t.TempDir(), "load.jsonl")

	o := dbprobe(t, 45*time.Second, "load", "--db", "sqlite://"+dbFile, "-p", "recordcount=100000", "--out", out)
	t.Logf("load ended with status %d after %v; %s free", o.code, o.elapsed.Round(time.Millisecond), mib(freeBytes(t, mnt)))
	if o.code != 1 {
		t.Errorf("exit status %d, want 1\n%s", o.code, o.all())
	}
	sum := summaryOf(t, readResult(t, out), "load")
	loaded := statusCount(sum, "INSERT", "OK")
	if loaded == 0 || loaded >= 100000 {
		t.Fatalf("%d rows loaded: the disk did not fill as planned\n%s", loaded, o.all())
	}
	if n := sum.Errors["ERROR(13 SQLITE_FULL)"]; n == 0 {
		t.Errorf("no ERROR(13 SQLITE_FULL) in the result's errors: %s", errorKeys(sum))
	}
	checkStopped(t, sum, result.StopFatal, "13 SQLITE_FULL")
	// Stopped at the first refused batch: not the 91 that followed.
	if n := totalErrors(sum); n > batchSize {
		t.Errorf("%d rows failed (%s): the load went on after the disk was full", n, errorKeys(sum))
	}
	checkNamedErrors(t, o, sum)
	stop := stopLine(o, "SQLITE_FULL", "disk is full", "disk full")
	switch {
	case stop == "":
		t.Errorf("no line names the full disk\n%s", o.all())
	case !hasCount(stop, loaded):
		t.Errorf("the stop line does not give the %d rows loaded: %s", loaded, stop)
	default:
		t.Logf("stopped: %s", stop)
		checkNamesFS(t, stop, mnt)
	}
	if stopLine(o, "incomplete") == "" {
		t.Errorf("nothing says the table is incomplete\n%s", o.all())
	}
	checkVerdict(t, o, sum, "disk full", "SQLITE_FULL")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+dbFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("PRAGMA integrity_check once space was freed: %q, %v", check, err)
	}
	var rows int64
	if err := db.QueryRow("SELECT count(*) FROM usertable").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != loaded {
		t.Errorf("the table holds %d rows, dbprobe acknowledged %d", rows, loaded)
	}
}

// TestSQLiteDiskFullContinue loads SQLite onto a full disk with
// --on-error continue, for a user who measures the failure itself: every
// row is tried, each refused one counted under its named code.
func TestSQLiteDiskFullContinue(t *testing.T) {
	mnt := loopFS(t, 24, nil)
	fill(t, filepath.Join(mnt, "filler"), 4<<20)
	out := filepath.Join(t.TempDir(), "load.jsonl")
	const records = 30000
	o := dbprobe(t, 45*time.Second, "load", "--db", "sqlite://"+filepath.Join(mnt, "t.db"),
		"-p", "recordcount="+strconv.Itoa(records), "--on-error", "continue", "--out", out)
	t.Logf("load ended with status %d after %v", o.code, o.elapsed.Round(time.Millisecond))
	if o.code == 0 || o.code == 2 {
		t.Errorf("exit status %d, want 1: rows failed\n%s", o.code, o.all())
	}
	sum := summaryOf(t, readResult(t, out), "load")
	loaded, full := statusCount(sum, "INSERT", "OK"), sum.Errors["ERROR(13 SQLITE_FULL)"]
	if loaded == 0 || full == 0 || loaded+full != records || totalErrors(sum) != full {
		t.Errorf("%d rows loaded, errors %s: want every one of the %d rows tried, the refused ones as ERROR(13 SQLITE_FULL)", loaded, errorKeys(sum), records)
	}
	checkNamedErrors(t, o, sum)
}

// postgresOwner returns the uid and gid PostgreSQL's files belong to: the
// postgres OS user's, as root.
func postgresOwner(t *testing.T) *[2]int {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		testdb.Unavailable(t, "no postgres OS user to run PostgreSQL as: install the Debian package postgresql")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &[2]int{uid, gid}
}

// TestPostgresDiskFull loads PostgreSQL until its 80 MB file system is
// full, in the two ways it fills:
//
//   - table: with a small WAL (16 MB, checkpoints recycle it) the table's
//     file cannot grow, mostly: PostgreSQL refuses with 53100 disk_full
//     and goes on serving, and the load must stop at once on that fatal
//     error. Now and then a WAL segment is what could not be written,
//     and the server PANICs (with 53100 too) as in the next case.
//   - wal: with the default WAL (up to 1 GB) the WAL fills the disk;
//     PostgreSQL PANICs, and its crash recovery fails for want of space,
//     so it stays down — what issue 25 met. The load must stop either on
//     the 53100 the PANIC sent, or after --reconnect-timeout (5 s) with
//     the has-not-answered line and an outage open at the end.
//
// Either way the exit status is 1, the result file is complete, the
// verdict names the fault, and once space is freed the server, killed,
// starts again through crash recovery with every acknowledged row.
func TestPostgresDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]string
		// crash: the server may crash and stay down rather than refuse.
		crash bool
	}{
		{"table", map[string]string{"min_wal_size": "4MB", "max_wal_size": "16MB"}, false},
		{"wal", map[string]string{"min_wal_size": "4MB"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testPostgresDiskFull(t, tc.settings, tc.crash)
		})
	}
}

func testPostgresDiskFull(t *testing.T, settings map[string]string, crash bool) {
	mnt := loopFS(t, 80, postgresOwner(t))
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, 8<<20)
	srv := startServer(t, instance.Postgres, instance.Options{
		DataDir: filepath.Join(mnt, "pgdata"),
		// 1 MB WAL segments: 16 MB ones would not leave the table room
		// to fill the disk.
		InitArgs: []string{"--wal-segsize=1"},
		Settings: settings,
	})
	t.Logf("PostgreSQL started: %s free", mib(freeBytes(t, mnt)))
	out := filepath.Join(t.TempDir(), "load.jsonl")

	// Filling 40 MB takes seconds; then at most 5 s of waiting.
	o := dbprobe(t, 45*time.Second, "load", "--db", srv.URL(), "-p", "recordcount=100000", "--threads", "2",
		"--reconnect-timeout", "5s", "--out", out)
	t.Logf("load ended with status %d after %v; %s free", o.code, o.elapsed.Round(time.Millisecond), mib(freeBytes(t, mnt)))
	if strings.Contains(o.stdout+o.stderr, srv.Password()) {
		t.Errorf("the password appears in dbprobe's output")
	}
	if o.code != 1 {
		t.Errorf("exit status %d, want 1\n%s", o.code, o.all())
	}
	sum := summaryOf(t, readResult(t, out), "load")
	loaded := statusCount(sum, "INSERT", "OK")
	fatal := stopLine(o, "53100 disk_full")
	lost := stopLine(o, "has not answered")
	switch {
	case fatal != "" && lost == "":
		// Refused: the load stops at the first refused batch of each thread.
		t.Logf("stopped by the error: %s", fatal)
		if n := sum.Errors["ERROR(53100 disk_full)"]; n == 0 {
			t.Errorf("no ERROR(53100 disk_full) in the result's errors: %s", errorKeys(sum))
		}
		checkStopped(t, sum, result.StopFatal, "53100 disk_full")
		if n := totalErrors(sum); n > 2*batchSize {
			t.Errorf("%d rows failed (%s): the load went on after the disk was full", n, errorKeys(sum))
		}
		if !hasCount(fatal, loaded) {
			t.Errorf("the stop line does not give the %d rows loaded: %s", loaded, fatal)
		}
		checkNamesFS(t, fatal, mnt)
	case lost != "" && crash:
		// Crashed and stayed down: the load waited 5 s for it, then stopped.
		t.Logf("stopped by the outage: %s", lost)
		a := sum.Availability
		if a == nil || len(a.Outages) == 0 || !a.Outages[len(a.Outages)-1].Ongoing {
			t.Fatalf("availability %+v: want an outage still going on at the end", a)
		}
		d := a.Outages[len(a.Outages)-1].Duration()
		if d < 4*time.Second || d > 9*time.Second {
			t.Errorf("the load waited %v for the server, want 5 s (--reconnect-timeout) and a little", d)
		}
		if !strings.Contains(lost, "incomplete") {
			t.Errorf("the stop line does not say the table is incomplete: %s", lost)
		}
		checkStopped(t, sum, result.StopUnreachable, "")
	case crash:
		t.Errorf("neither a 53100 disk_full stop nor a server that has not answered (%d rows loaded, errors %s)\n%s", loaded, errorKeys(sum), o.all())
	default:
		t.Errorf("no 53100 disk_full stop (%d rows loaded, errors %s)\n%s", loaded, errorKeys(sum), o.all())
	}
	checkNamedErrors(t, o, sum)
	checkVerdict(t, o, sum, "disk full", "disk_full", "unavailable", "not answered")

	// Free space, then the server must start again through crash
	// recovery with every acknowledged row. Killed, not stopped: after a
	// PANIC the server is in crash recovery, and a fast shutdown asked
	// then waits for it (a minute here, until Stop kills it anyway);
	// recovery from a kill is the stricter check of its files.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatalf("killing PostgreSQL after the load: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("PostgreSQL does not start again once space is freed: %v", err)
	}
	conn, err := pgx.Connect(ctx, srv.URL())
	if err != nil {
		t.Fatalf("connecting after the restart: %s", srv.Scrub(err))
	}
	defer conn.Close(context.Background())
	var rows int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&rows); err != nil {
		t.Fatalf("SELECT after the restart: %s", srv.Scrub(err))
	}
	// A batch whose connection broke may have committed unacknowledged.
	if rows < loaded || rows > loaded+2*batchSize {
		t.Errorf("the table holds %d rows, dbprobe acknowledged %d", rows, loaded)
	}
	t.Logf("%d rows acknowledged, %d in the table after the restart", loaded, rows)
}

// TestMariaDBDiskFull loads MariaDB until its small file system is full:
// InnoDB refuses with 1114 ER_RECORD_FILE_FULL (the table is full), which
// stops the load at once with one line; the exit status is 1, and once
// space is freed the server starts cleanly with every acknowledged row.
func TestMariaDBDiskFull(t *testing.T) {
	mnt := loopFS(t, 64, nil)
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, 8<<20)
	srv := startServer(t, instance.MariaDB, instance.Options{
		DataDir: filepath.Join(mnt, "mariadb"),
		// MariaDB's own files take about 100 MB by default: a small redo
		// log, system tablespace and temporary tablespace, no undo
		// tablespaces of their own.
		Settings: map[string]string{
			"innodb_log_file_size":       "8M",
			"innodb_data_file_path":      "ibdata1:10M:autoextend",
			"innodb_temp_data_file_path": "ibtmp1:4M:autoextend",
			"innodb_undo_tablespaces":    "0",
			"aria_log_file_size":         "8M",
		},
	})
	t.Logf("MariaDB started: %s free", mib(freeBytes(t, mnt)))
	out := filepath.Join(t.TempDir(), "load.jsonl")

	o := dbprobe(t, 45*time.Second, "load", "--db", srv.URL(), "-p", "recordcount=100000", "--threads", "2",
		"--reconnect-timeout", "5s", "--out", out)
	t.Logf("load ended with status %d after %v; %s free", o.code, o.elapsed.Round(time.Millisecond), mib(freeBytes(t, mnt)))
	if strings.Contains(o.stdout+o.stderr, srv.Password()) {
		t.Errorf("the password appears in dbprobe's output")
	}
	if o.code != 1 {
		t.Errorf("exit status %d, want 1\n%s", o.code, o.all())
	}
	sum := summaryOf(t, readResult(t, out), "load")
	loaded := statusCount(sum, "INSERT", "OK")
	if loaded == 0 || loaded >= 100000 {
		t.Fatalf("%d rows loaded: the disk did not fill as planned\n%s", loaded, o.all())
	}
	full := ""
	for k := range sum.Errors {
		if strings.HasPrefix(k, "ERROR(1114 ") || strings.HasPrefix(k, "ERROR(1021 ") {
			full = k
		}
	}
	if full == "" {
		t.Errorf("no ERROR(1114 ER_RECORD_FILE_FULL) (or 1021 disk full) in the result's errors: %s", errorKeys(sum))
	}
	checkStopped(t, sum, result.StopFatal, "")
	if n := totalErrors(sum); n > 2*batchSize {
		t.Errorf("%d rows failed (%s): the load went on after the disk was full", n, errorKeys(sum))
	}
	stop := stopLine(o, "ER_RECORD_FILE_FULL", "disk full", "disk is full", "is full")
	switch {
	case stop == "":
		t.Errorf("no line says the load stopped on a full disk\n%s", o.all())
	case !hasCount(stop, loaded):
		t.Errorf("the stop line does not give the %d rows loaded: %s", loaded, stop)
	default:
		t.Logf("stopped: %s", stop)
		checkNamesFS(t, stop, mnt)
	}
	checkNamedErrors(t, o, sum)
	checkVerdict(t, o, sum, "disk full", "is full", "ER_RECORD_FILE_FULL")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Logf("stopping MariaDB after the load: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("MariaDB does not start again once space is freed: %v", err)
	}
	db := testdb.OpenMySQL(t, srv.URL())
	var rows int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM usertable").Scan(&rows); err != nil {
		t.Fatalf("SELECT after the restart: %s", srv.Scrub(err))
	}
	if rows < loaded || rows > loaded+2*batchSize {
		t.Errorf("the table holds %d rows, dbprobe acknowledged %d", rows, loaded)
	}
	var table, check string
	var msgType string
	r, err := db.QueryContext(ctx, "CHECK TABLE usertable")
	if err != nil {
		t.Fatalf("CHECK TABLE: %v", err)
	}
	defer r.Close()
	for r.Next() {
		var op string
		if err := r.Scan(&table, &op, &msgType, &check); err != nil {
			t.Fatal(err)
		}
		if msgType == "status" && check != "OK" {
			t.Errorf("CHECK TABLE usertable after the restart: %s", check)
		}
	}
	t.Logf("%d rows acknowledged, %d in the table after the restart", loaded, rows)
}
