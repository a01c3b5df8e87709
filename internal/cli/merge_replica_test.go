package cli_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// runClients runs the same command as n clients of one run at once, each
// with its own --client-index and --out, started together by --start-at,
// and returns the result files.
func runClients(t *testing.T, n int, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	// Whole seconds: two seconds ahead leaves the clients time to connect.
	start := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second).UTC().Format(time.RFC3339)
	paths := make([]string, n)
	errs := make([]error, n)
	stderrs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", i))
		all := append([]string{"run", "-q", "--client-count", fmt.Sprint(n), "--client-index", fmt.Sprint(i), "--start-at", start, "--out", paths[i]}, args...)
		wg.Go(func() { _, stderrs[i], errs[i] = run(t, all...) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v\n%s", i, err, stderrs[i])
		}
	}
	return paths
}

// mergeFiles merges the clients' results and returns the merged summary
// and the text merge printed.
func mergeFiles(t *testing.T, paths []string) (*result.Summary, string) {
	t.Helper()
	merged := filepath.Join(filepath.Dir(paths[0]), "merged.jsonl")
	stdout, stderr, err := run(t, append(append([]string{"merge"}, paths...), "-o", merged)...)
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr)
	}
	return readSummary(t, merged), stdout
}

// Two clients of one run read from a streaming standby; the merge adds up
// their stale reads exactly, computes the lag figures from every
// heartbeat of both, and lines their seconds up by the wall clock.
func TestMergeReplicaFiguresOnPostgres(t *testing.T) {
	primary, replica := testdb.PostgresReplicaPair(t)
	work := []string{"-p", "recordcount=1000", "--threads", "2"}
	if _, stderr, err := run(t, append([]string{"load", "--db", primary, "-q"}, work...)...); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	paths := runClients(t, 2, append(work, "--db", primary, "--read-db", replica, "-p", "operationcount=0", "--duration", "2s")...)
	m, text := mergeFiles(t, paths)

	var clients []*result.ReplicaSummary
	want := result.ReplicaSummary{}
	var lags []float64
	perSecond := map[int64]result.ReplicaSecond{}
	for _, p := range paths {
		r := readSummary(t, p).Replica
		if r == nil || r.Lag.Written == 0 || r.ReadsChecked == 0 || len(r.Lag.LagsMS) != int(r.Lag.Written) || r.SecondsFrom.IsZero() {
			t.Fatalf("%s: replica figures %+v", p, r)
		}
		if !r.SecondsFrom.Equal(r.SecondsFrom.Truncate(time.Second)) {
			t.Errorf("%s: seconds from %v, not a whole second", p, r.SecondsFrom)
		}
		clients = append(clients, r)
		want.Reads += r.Reads
		want.ReadsChecked += r.ReadsChecked
		want.StaleReads += r.StaleReads
		want.StaleMissing += r.StaleMissing
		want.Lag.Written += r.Lag.Written
		want.Lag.Seen += r.Lag.Seen
		lags = append(lags, r.Lag.LagsMS...)
		for _, s := range r.Seconds {
			u := r.SecondsFrom.Unix() + int64(s.Second)
			w := perSecond[u]
			w.LagMS = max(w.LagMS, s.LagMS)
			w.Checked += s.Checked
			w.Stale += s.Stale
			perSecond[u] = w
		}
	}
	r := m.Replica
	if r == nil {
		t.Fatalf("the merged result has no replica figures:\n%s", text)
	}
	t.Logf("merged: %d of %d checked reads stale, %d reads; heartbeats %d/%d seen, p50 %.3f ms, max %.3f ms",
		r.StaleReads, r.ReadsChecked, r.Reads, r.Lag.Seen, r.Lag.Written, r.Lag.P50MS, r.Lag.MaxMS)
	if r.Reads != want.Reads || r.ReadsChecked != want.ReadsChecked || r.StaleReads != want.StaleReads || r.StaleMissing != want.StaleMissing ||
		r.Lag.Written != want.Lag.Written || r.Lag.Seen != want.Lag.Seen || r.Clients != 2 {
		t.Errorf("merged %+v; want the clients' sums %+v", r, want)
	}
	slices.Sort(lags)
	n := len(lags)
	if r.Lag.MaxMS != lags[n-1] || r.Lag.P50MS != lags[(n+1)/2-1] || r.Lag.P99MS != lags[int(math.Ceil(0.99*float64(n)))-1] {
		t.Errorf("merged lag max %v p50 %v p99 %v; the heartbeats' %v", r.Lag.MaxMS, r.Lag.P50MS, r.Lag.P99MS, lags)
	}
	earliest := clients[0].SecondsFrom
	if clients[1].SecondsFrom.Before(earliest) {
		earliest = clients[1].SecondsFrom
	}
	if !r.SecondsFrom.Equal(earliest) {
		t.Errorf("merged seconds from %v; the clients' %v, %v", r.SecondsFrom, clients[0].SecondsFrom, clients[1].SecondsFrom)
	}
	if len(r.Seconds) != len(perSecond) {
		t.Errorf("%d merged seconds, the clients cover %d", len(r.Seconds), len(perSecond))
	}
	for _, s := range r.Seconds {
		if w := perSecond[r.SecondsFrom.Unix()+int64(s.Second)]; s.LagMS != w.LagMS || s.Checked != w.Checked || s.Stale != w.Stale {
			t.Errorf("merged second %d: %+v; the clients' %+v", s.Second, s, w)
		}
	}
	if !strings.Contains(text, fmt.Sprintf("[REPLICA], StaleReads, %d\n", want.StaleReads)) || !strings.Contains(text, "the figures of 2 clients added up") {
		t.Errorf("the merge's text lacks the replica figures:\n%s", text)
	}
}

// Two clients of one run over two shards: the merge adds up each
// shard's calls, and its percentiles are those of both clients' calls.
func TestMergeShardFiguresOnPostgres(t *testing.T) {
	a, b := testdb.FreshPostgresDatabase(t), testdb.FreshPostgresDatabase(t)
	shards := []string{"--shard", a, "--shard", b, "-p", "recordcount=600", "--threads", "2"}
	if _, stderr, err := run(t, append([]string{"load", "-q"}, shards...)...); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	paths := runClients(t, 2, append(shards, "-p", "operationcount=0", "--duration", "1s")...)
	m, text := mergeFiles(t, paths)
	if len(m.Shards) != 2 {
		t.Fatalf("merged shards %+v:\n%s", m.Shards, text)
	}
	for k, s := range m.Shards {
		var reads, requests int64
		for _, p := range paths {
			c := readSummary(t, p).Shards[k]
			reads += c.Reads
			requests += c.Requests
		}
		if s.Reads != reads || s.Requests != requests || s.Calls.Count != requests || requests == 0 {
			t.Errorf("shard %d merged: %d reads, %d calls (histogram %d); the clients' %d, %d", k+1, s.Reads, s.Requests, s.Calls.Count, reads, requests)
		}
		if !strings.Contains(text, "# note: "+result.ShardNote(s)+"\n") {
			t.Errorf("the merge's text lacks shard %d's line %q:\n%s", k+1, result.ShardNote(s), text)
		}
	}
}
