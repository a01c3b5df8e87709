package cli_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// replicaRun runs the YCSB run phase with --read-db and returns its
// replica summary from the JSON result.
func replicaRun(t *testing.T, primary, replica string, args ...string) *result.ReplicaSummary {
	t.Helper()
	out := t.TempDir() + "/run.json"
	all := append([]string{"run", "--db", primary, "--read-db", replica, "--out", out, "-q"}, args...)
	stdout, stderr, err := run(t, all...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	res := readResult(t, out)
	s := res.Phases[len(res.Phases)-1].Summary
	if s == nil || s.Replica == nil {
		t.Fatalf("no replica summary in the result; stdout:\n%s", stdout)
	}
	text := parseYCSB(t, stdout)
	if got := text[0]["REPLICA"]["StaleReads"]; int64(got) != s.Replica.StaleReads {
		t.Fatalf("text says %v stale reads, JSON %d", got, s.Replica.StaleReads)
	}
	return s.Replica
}

// On a streaming standby: a healthy run and one with replay paused. The
// paused one finds most checked reads stale and sees no heartbeat; the
// healthy one sees the heartbeats, and far fewer stale reads (an
// asynchronous standby may show some).
func TestReadDBPostgresHealthyAndPaused(t *testing.T) {
	primary, replica := testdb.PostgresReplicaPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, replica)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "SELECT pg_wal_replay_resume()")
		admin.Close(context.Background())
	})

	// A table for each run: a run judges the values another run stamped
	// less than a minute before it began as possibly newer than its own,
	// so the second run on one table would judge fewer reads.
	work := []string{"-p", "recordcount=2000", "--threads", "4"}
	for _, table := range []string{"healthy", "paused"} {
		if _, stderr, err := run(t, append([]string{"load", "--db", primary, "-q", "-p", "table=" + table}, work...)...); err != nil {
			t.Fatalf("load: %v\n%s", err, stderr)
		}
	}
	waitReplayed(ctx, t, primary, admin)
	runArgs := append(work, "-p", "operationcount=0", "--duration", "4s")

	healthy := replicaRun(t, primary, replica, append(runArgs, "-p", "table=healthy")...)
	waitReplayed(ctx, t, primary, admin)
	if _, err := admin.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	paused := replicaRun(t, primary, replica, append(runArgs, "-p", "table=paused")...)
	if _, err := admin.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}

	t.Logf("healthy: %d of %d checked reads stale; heartbeats %d/%d seen, max lag %.1f ms, p99 %.1f ms",
		healthy.StaleReads, healthy.ReadsChecked, healthy.Lag.Seen, healthy.Lag.Written, healthy.Lag.MaxMS, healthy.Lag.P99MS)
	t.Logf("paused:  %d of %d checked reads stale; heartbeats %d/%d seen, max lag %.1f ms, p99 %.1f ms",
		paused.StaleReads, paused.ReadsChecked, paused.Lag.Seen, paused.Lag.Written, paused.Lag.MaxMS, paused.Lag.P99MS)
	for _, s := range []*result.ReplicaSummary{healthy, paused} {
		if s.ReadsChecked == 0 || s.Lag.Written == 0 || len(s.Seconds) == 0 || s.KeysTracked == 0 {
			t.Fatalf("nothing measured: %+v", s)
		}
	}
	if healthy.Lag.Seen == 0 {
		t.Errorf("the healthy standby showed none of %d heartbeats", healthy.Lag.Written)
	}
	if paused.Lag.Seen != 0 {
		t.Errorf("the paused standby showed %d heartbeats", paused.Lag.Seen)
	}
	// Paused, every checked read is of a key updated during the run, which
	// the standby has not replayed: all stale.
	if paused.StaleReads != paused.ReadsChecked {
		t.Errorf("paused: %d of %d checked reads stale, want all", paused.StaleReads, paused.ReadsChecked)
	}
	// Far more stale reads in share, not in count: a run on a loaded
	// machine checks fewer reads (one saw 1,628 paused against 4,189
	// healthy, of which 190 stale: a tenth of the count, 22 times the
	// share).
	share := func(s *result.ReplicaSummary) float64 { return float64(s.StaleReads) / float64(s.ReadsChecked) }
	if share(paused) < 10*max(share(healthy), 1/float64(healthy.ReadsChecked)) {
		t.Errorf("paused: %d of %d reads stale, not far more than the healthy run's %d of %d", paused.StaleReads, paused.ReadsChecked, healthy.StaleReads, healthy.ReadsChecked)
	}
	// The heartbeat tables are gone; the YCSB table stays.
	var left int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname LIKE 'dbprobe_heartbeat_%'").Scan(&left); err != nil {
		t.Fatal(err)
	}
	waitReplayed(ctx, t, primary, admin)
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname LIKE 'dbprobe_heartbeat_%'").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d heartbeat tables left (%v)", left, err)
	}
}

// waitReplayed waits until the standby has replayed everything the
// primary has written so far.
func waitReplayed(ctx context.Context, t *testing.T, primary string, standby *pgx.Conn) {
	t.Helper()
	p, err := pgx.Connect(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	var lsn string
	if err := p.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	for {
		var done bool
		if err := standby.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the standby did not replay up to %s", lsn)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// --read-db that is the primary itself, or not a replica: one line of bad
// input, and nothing written to either database.
func TestReadDBRefusals(t *testing.T) {
	primary, replica := testdb.PostgresReplicaPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tables := func() int {
		c, err := pgx.Connect(ctx, primary)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := tables()
	for _, c := range []struct {
		name, db, readDB, want string
	}{
		{"the primary itself", primary, primary, "is the primary itself"},
		{"a replica as --db", replica, replica, "is the primary itself"},
		{"the standby as --db and the primary as --read-db", replica, primary, "is itself a replica (pg_is_in_recovery() is true)"},
		{"another kind of database", primary, "sqlite:///" + t.TempDir() + "/x.db", "is a sqlite database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, "ycsb", "--db", c.db, "--read-db", c.readDB, "-p", "recordcount=10", "-q")
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line of bad input with %q", err, c.want)
			}
			if u, perr := url.Parse(c.db); perr == nil {
				if pw, ok := u.User.Password(); ok && strings.Contains(err.Error(), pw) {
					t.Fatalf("the message shows the password: %v", err)
				}
			}
		})
	}
	if after := tables(); after != before {
		t.Fatalf("the refused runs left %d relations in the primary's schema, %d before", after, before)
	}
	if _, _, err := run(t, "run", "--db", primary, "--read-db", replica, "-p", "dataintegrity=true", "-q"); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "dataintegrity") {
		t.Fatalf("--read-db with dataintegrity: %v", err)
	}
	if _, _, err := run(t, "run", "--db", primary, "--read-db", replica, "-p", "fieldlength=8", "-q"); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "at least 21 bytes") {
		t.Fatalf("--read-db with 8-byte fields: %v", err)
	}
}

// On the MariaDB replica pair scripts/test starts: a run with the
// replica applying, and one with its SQL thread stopped, and the
// refusals.
func TestReadDBMariaDB(t *testing.T) {
	primary, replica := testdb.MySQLReplicaPair(t)
	admin, err := sql.Open("mysql", mysqlDSN(t, replica))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("START SLAVE SQL_THREAD")
		admin.Close()
	})
	work := []string{"-p", "recordcount=2000", "--threads", "4"}
	for _, table := range []string{"applying", "stopped"} {
		if _, stderr, err := run(t, append([]string{"load", "--db", primary, "-q", "-p", "table=" + table}, work...)...); err != nil {
			t.Fatalf("load: %v\n%s", err, stderr)
		}
	}
	runArgs := append(work, "-p", "operationcount=0", "--duration", "4s")
	applying := replicaRun(t, primary, replica, append(runArgs, "-p", "table=applying")...)
	if _, err := admin.Exec("STOP SLAVE SQL_THREAD"); err != nil {
		t.Fatal(err)
	}
	stopped := replicaRun(t, primary, replica, append(runArgs, "-p", "table=stopped")...)
	if _, err := admin.Exec("START SLAVE SQL_THREAD"); err != nil {
		t.Fatal(err)
	}
	t.Logf("applying: %d of %d checked reads stale; heartbeats %d/%d seen, max lag %.1f ms",
		applying.StaleReads, applying.ReadsChecked, applying.Lag.Seen, applying.Lag.Written, applying.Lag.MaxMS)
	t.Logf("stopped:  %d of %d checked reads stale; heartbeats %d/%d seen, max lag %.1f ms",
		stopped.StaleReads, stopped.ReadsChecked, stopped.Lag.Seen, stopped.Lag.Written, stopped.Lag.MaxMS)
	if stopped.ReadsChecked == 0 || stopped.StaleReads != stopped.ReadsChecked || stopped.Lag.Seen != 0 || applying.Lag.Written == 0 {
		t.Errorf("stopped: %+v; applying: %+v", stopped, applying)
	}
	for _, c := range []struct{ db, readDB, want string }{
		{primary, primary, "is the primary itself"},
		{replica, primary, "is itself a replica (replicating from"},
	} {
		_, _, err := run(t, "run", "--db", c.db, "--read-db", c.readDB, "-p", "table=applying", "-q")
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want bad input with %q", err, c.want)
		}
	}
}

// mysqlDSN turns a mysql:// URL into go-sql-driver's DSN.
func mysqlDSN(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	return u.User.Username() + ":" + pw + "@tcp(" + u.Host + ")" + u.Path
}

// Two shards, two databases of the streaming pair's primary, each with
// its replica on the standby (--shard 'URL read=REPLICA'): reads go to
// the replicas, routed by record as the writes are; each shard's replica
// has its own heartbeat; with replay paused every judged read is stale
// and no shard's heartbeat is seen.
func TestShardReplicasOnPostgres(t *testing.T) {
	p1, r1 := testdb.PostgresReplicaPair(t)
	p2, r2 := testdb.PostgresReplicaPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "SELECT pg_wal_replay_resume()")
		admin.Close(context.Background())
	})
	work := []string{"-p", "recordcount=1000", "--threads", "2"}
	for _, table := range []string{"healthy", "paused"} {
		if _, stderr, err := run(t, append([]string{"load", "-q", "--shard", p1, "--shard", p2 + " read=" + r2, "-p", "table=" + table}, work...)...); err == nil || !badinput.Is(err) {
			t.Fatalf("load with read= on one shard only: %v\n%s", err, stderr)
		}
		// load ignores read=: it writes to the shards only.
		if _, stderr, err := run(t, append([]string{"load", "-q", "--shard", p1 + " read=" + r1, "--shard", p2 + " read=" + r2, "-p", "table=" + table}, work...)...); err != nil {
			t.Fatalf("load: %v\n%s", err, stderr)
		}
	}
	waitReplayed(ctx, t, p1, admin)
	waitReplayed(ctx, t, p2, admin)
	for _, c := range []struct{ s1, s2, want string }{
		{p1 + " read=" + p1, p2 + " read=" + r2, "shard 1: --read-db"},
		{p1 + " read=" + r1, p2 + " read=" + r1, "read=: shards 1 and 2 are the same database"},
		{p1 + " read=" + r1, r2 + " read=" + p2, "shard 2: --db"},
	} {
		_, _, err := run(t, "run", "-q", "--shard", c.s1, "--shard", c.s2, "-p", "table=healthy", "-p", "operationcount=10")
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want one line of bad input with %q", err, c.want)
		}
	}
	shardRun := func(table string) *result.Summary {
		out := filepath.Join(t.TempDir(), "run.jsonl")
		args := append([]string{"run", "-q", "--out", out, "--shard", p1 + " read=" + r1, "--shard", p2 + " read=" + r2,
			"-p", "table=" + table, "-p", "operationcount=0", "--duration", "2s"}, work...)
		stdout, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
		}
		if !strings.Contains(stdout, "# replica lag of shard 2 (") || !strings.Contains(stdout, "# replica of shard 2 (") {
			t.Errorf("the text has no lag line for shard 2:\n%s", stdout)
		}
		u, _ := url.Parse(r1)
		if pw, _ := u.User.Password(); pw == "" || strings.Contains(stdout+stderr, pw) {
			t.Errorf("the replica's password shows (or it has none):\n%s\n%s", stdout, stderr)
		}
		return readSummary(t, out)
	}
	healthy := shardRun("healthy")
	waitReplayed(ctx, t, p1, admin)
	if _, err := admin.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	paused := shardRun("paused")
	if _, err := admin.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*result.Summary{"healthy": healthy, "paused": paused} {
		r := s.Replica
		if r == nil || len(r.Shards) != 2 || r.ReadsChecked == 0 || len(s.Shards) != 2 {
			t.Fatalf("%s: replica %+v, shards %+v", name, r, s.Shards)
		}
		t.Logf("%s: %d of %d checked reads stale; shard 1 heartbeats %d/%d seen, shard 2 %d/%d", name, r.StaleReads, r.ReadsChecked,
			r.Shards[0].Lag.Seen, r.Shards[0].Lag.Written, r.Shards[1].Lag.Seen, r.Shards[1].Lag.Written)
		if r.Lag.Written != r.Shards[0].Lag.Written+r.Shards[1].Lag.Written || r.Shards[0].Lag.Written == 0 || r.Shards[1].Lag.Written == 0 {
			t.Errorf("%s: heartbeats %d in all, %d and %d per shard", name, r.Lag.Written, r.Shards[0].Lag.Written, r.Shards[1].Lag.Written)
		}
		// Workload A reads and updates: the reads went to the replicas,
		// none to the shards themselves, and both shards took updates.
		var replicaReads int64
		for k, sh := range s.Shards {
			if sh.Reads != 0 || sh.Updates == 0 {
				t.Errorf("%s: shard %d answered %d reads and %d updates; want no read, some updates", name, sh.Shard, sh.Reads, sh.Updates)
			}
			a := r.Shards[k].Answered
			if a == nil || a.Reads == 0 || a.Updates != 0 || a.Calls.Count != a.Requests {
				t.Fatalf("%s: shard %d's replica answered %+v; want reads, no update", name, sh.Shard, a)
			}
			replicaReads += a.Reads
		}
		if replicaReads != r.Reads {
			t.Errorf("%s: the shards' replicas answered %d reads, and %d were sent to them", name, replicaReads, r.Reads)
		}
	}
	if healthy.Replica.Shards[0].Lag.Seen == 0 || healthy.Replica.Shards[1].Lag.Seen == 0 {
		t.Errorf("healthy: a shard's replica showed none of its heartbeats: %+v", healthy.Replica.Shards)
	}
	pr := paused.Replica
	if pr.StaleReads != pr.ReadsChecked || pr.Lag.Seen != 0 {
		t.Errorf("paused: %d of %d checked reads stale, %d heartbeats seen; want all stale, none seen", pr.StaleReads, pr.ReadsChecked, pr.Lag.Seen)
	}
	waitReplayed(ctx, t, p1, admin)
	for _, u := range []string{p1, p2} {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var left int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname LIKE 'dbprobe_heartbeat_%'").Scan(&left); err != nil || left != 0 {
			t.Errorf("%d heartbeat tables left in a shard (%v)", left, err)
		}
		c.Close(ctx)
	}
}
