package faults

import (
	"context"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
)

// postgresInNetns starts PostgreSQL in a network namespace of its own,
// listening on the namespace's end of the veth pair.
func postgresInNetns(t *testing.T) (*netNS, *instance.Server) {
	t.Helper()
	ns := newNetNS(t)
	srv := startServer(t, instance.Postgres, instance.Options{Addr: ns.Addr, Netns: ns.Name})
	return ns, srv
}

// viaRelay returns the server's URL with the relay's address in place of
// the server's.
func viaRelay(t *testing.T, srv *instance.Server, r *relay) string {
	t.Helper()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Host = r.Addr()
	return u.String()
}

// TestNetworkCut drops every packet between dbprobe and PostgreSQL for
// 5 s in the middle of a 13 s run with --op-timeout 1s: operations time
// out, the sessions reconnect once the network is back, the run goes on
// to its end, and the outage is reported within 1.5 s of the cut.
func TestNetworkCut(t *testing.T) {
	ns, srv := postgresInNetns(t)
	// The namespace's address is not loopback: dbprobe wants TLS there
	// unless told otherwise.
	common := []string{"--db", srv.URL(), "--allow-insecure-tls", "-p", "recordcount=1000"}
	if o := dbprobe(t, time.Minute, append([]string{"load", "--threads", "2"}, common...)...); o.code != 0 {
		t.Fatalf("load: status %d\n%s", o.code, o.all())
	}
	out := filepath.Join(t.TempDir(), "run.jsonl")
	wait := dbprobeAsync(t, 40*time.Second, append([]string{"run", "--operations", "0", "--threads", "4",
		"--duration", "13s", "--op-timeout", "1s", "--out", out}, common...)...)

	// The cut comes 2.5 s in, once the workers serve; the run's 13 s
	// leave it 5.5 s after the network is back, for the reconnections
	// (1.5 s at most, as the outage is checked) and seconds served after.
	time.Sleep(2500 * time.Millisecond)
	cutAt := time.Now()
	ns.drop(t, 100)
	time.Sleep(time.Until(cutAt.Add(5 * time.Second)))
	ns.heal(t)
	cut := time.Since(cutAt)

	o := wait()
	t.Logf("run ended with status %d after %v; the network was cut for %v", o.code, o.elapsed.Round(time.Millisecond), cut.Round(time.Millisecond))
	if o.code != 0 {
		t.Errorf("exit status %d, want 0: a run with a duration keeps trying until its end\n%s", o.code, o.all())
	}
	if o.elapsed > 23*time.Second {
		t.Errorf("a 13 s run took %v", o.elapsed)
	}
	sum := summaryOf(t, readResult(t, out), "run")
	// Operations that timed out are counted once, in the interval they
	// ended in, as the others are.
	checkIntervalsAddUp(t, readResult(t, out), "run", "READ", "UPDATE", "READ-FAILED", "UPDATE-FAILED")
	a := sum.Availability
	if a == nil || len(a.Outages) != 1 {
		t.Fatalf("availability %+v, want one outage\n%s", a, o.all())
	}
	out0 := a.Outages[0]
	t.Logf("outage %v (%d operations failed), %d reconnections, errors %s", out0.Duration().Round(time.Millisecond), out0.Failed, a.Reconnects, errorKeys(sum))
	if diff := out0.Duration() - cut; math.Abs(diff.Seconds()) > 1.5 || out0.Ongoing {
		t.Errorf("outage %v (%+v), the network was cut for %v", out0.Duration(), out0, cut)
	}
	if out0.Failed < 1 || sum.Errors["ERROR(timeout)"] < 1 {
		t.Errorf("outage %+v, errors %s: want operations that timed out", out0, errorKeys(sum))
	}
	if a.Reconnects < 4 {
		t.Errorf("%d reconnections: want every one of the 4 workers back", a.Reconnects)
	}
	// Operations succeeded after the cut: the run went on.
	var after int64
	for _, p := range readResult(t, out).Phases {
		for _, iv := range p.Intervals {
			if p.Header.Phase == "run" && iv.Start.After(cutAt.Add(cut+2*time.Second)) {
				after += iv.Ops
			}
		}
	}
	if after == 0 {
		t.Errorf("no operation finished in the seconds after the network came back")
	}
	checkVerdict(t, o, sum, "unavailable", "outage")
}

// TestLossySlowNetwork loads and runs through a path that loses 5 % of
// the packets each way (nftables in the namespace) and adds 20 ms each way
// (the relay): both finish, the latencies show the delay and the
// retransmissions, and the counts are exact — the table holds exactly the
// rows loaded, and the updates counted are the updates PostgreSQL made.
func TestLossySlowNetwork(t *testing.T) {
	ns, srv := postgresInNetns(t)
	r := newRelay(t, net.JoinHostPort(srv.Addr(), strconv.Itoa(srv.Port())), 20*time.Millisecond)
	dbURL := viaRelay(t, srv, r)
	ns.drop(t, 5)

	const records, operations = 1000, 200
	loadOut := filepath.Join(t.TempDir(), "load.jsonl")
	o := dbprobe(t, time.Minute, "load", "--db", dbURL, "-p", "recordcount="+strconv.Itoa(records), "--threads", "2", "--out", loadOut)
	t.Logf("load ended with status %d after %v", o.code, o.elapsed.Round(time.Millisecond))
	if o.code != 0 {
		t.Fatalf("load: status %d\n%s", o.code, o.all())
	}
	load := summaryOf(t, readResult(t, loadOut), "load")
	if n := statusCount(load, "INSERT", "OK"); n != records || seriesCount(load, "INSERT") != records || len(load.Errors) != 0 {
		t.Errorf("the load counted %d rows OK of %d (errors %s), want %d", n, seriesCount(load, "INSERT"), errorKeys(load), records)
	}
	checkIntervalsAddUp(t, readResult(t, loadOut), "load", "INSERT")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.URL())
	if err != nil {
		t.Fatalf("connecting to check the table: %s", srv.Scrub(err))
	}
	defer conn.Close(context.Background())
	var rows int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != records {
		t.Errorf("the table holds %d rows after a load of %d", rows, records)
	}
	updatesBefore := tupUpdated(ctx, t, conn)

	runOut := filepath.Join(t.TempDir(), "run.jsonl")
	o = dbprobe(t, time.Minute, "run", "--db", dbURL, "-p", "recordcount="+strconv.Itoa(records),
		"--operations", strconv.Itoa(operations), "--threads", "10", "--out", runOut)
	t.Logf("run ended with status %d after %v", o.code, o.elapsed.Round(time.Millisecond))
	if o.code != 0 {
		t.Fatalf("run: status %d\n%s", o.code, o.all())
	}
	run := summaryOf(t, readResult(t, runOut), "run")
	checkIntervalsAddUp(t, readResult(t, runOut), "run", "READ", "UPDATE")
	reads, updates := statusCount(run, "READ", "OK"), statusCount(run, "UPDATE", "OK")
	if reads+updates != operations || seriesCount(run, "READ")+seriesCount(run, "UPDATE") != operations || len(run.Errors) != 0 {
		t.Errorf("the run counted %d reads and %d updates OK (errors %s), want %d operations", reads, updates, errorKeys(run), operations)
	}
	if run.Diagnosis != nil {
		t.Logf("verdict: %s", run.Diagnosis.Verdict)
	}
	p50, p99 := percentile(run, "READ", 50), percentile(run, "READ", 99)
	t.Logf("READ p50 %d µs, p99 %d µs; UPDATE p50 %d µs, p99 %d µs", p50, p99, percentile(run, "UPDATE", 50), percentile(run, "UPDATE", 99))
	// 20 ms each way: no operation takes less than a 40 ms round trip.
	if p50 < 40000 || percentile(run, "UPDATE", 50) < 40000 {
		t.Errorf("p50 %d µs: the 40 ms round trip does not show", p50)
	}
	// A lost packet waits for a retransmission: at least a tail-loss
	// probe, two round trips, and often the 200 ms minimum timeout.
	if p99 < 2*p50 {
		t.Errorf("READ p99 %d µs, p50 %d µs: the retransmissions do not show", p99, p50)
	}
	// Each update counted is one PostgreSQL made: none counted twice
	// (a repeat), none lost.
	var made int64
	deadline := time.Now().Add(10 * time.Second)
	for {
		made = tupUpdated(ctx, t, conn) - updatesBefore
		if made >= updates || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // the backends' statistics come when they exit
	}
	if made != updates {
		t.Errorf("PostgreSQL updated %d rows, dbprobe counted %d updates", made, updates)
	}
}

// checkIntervalsAddUp fails the test when the per-second series of the
// phase do not add up to its summary, series by series: an operation
// counted in two intervals, or in none.
func checkIntervalsAddUp(t *testing.T, f *result.File, phase string, series ...string) {
	t.Helper()
	sum := summaryOf(t, f, phase)
	for _, name := range series {
		var n int64
		for _, p := range f.Phases {
			if p.Header.Phase != phase {
				continue
			}
			for _, iv := range p.Intervals {
				for _, m := range iv.Series {
					if m.Name == name {
						n += m.Count
					}
				}
			}
		}
		if want := seriesCount(sum, name); n != want {
			t.Errorf("%s: the intervals count %d %s operations, the summary %d", phase, n, name, want)
		}
	}
}

// tupUpdated returns how many rows of usertable PostgreSQL updated, from
// its statistics.
func tupUpdated(ctx context.Context, t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'usertable'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
