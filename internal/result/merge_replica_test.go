package result

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// withReplica gives a client's result replica figures: lags heartbeats'
// lags, and per second (from the wall-clock second from) checked and
// stale reads and the longest lag, as a client of a run with --read-db
// writes them.
func withReplica(f *File, from time.Time, lags []float64, secs []ReplicaSecond) {
	r := &ReplicaSummary{
		Target: "postgres://ycsb:xxxxx@standby/bench", SecondsFrom: from, Seconds: secs,
		KeysTracked: 100, TrackedBytes: 3800,
		Lag: ReplicaLag{Table: "dbprobe_heartbeat_" + f.Phases[0].Header.Environment.Hostname, Start: from.Add(300 * time.Millisecond),
			IntervalMS: 1000, PollMS: 10, FinePollMS: 1, FineForMS: 20, Written: int64(len(lags)), Seen: int64(len(lags)) - 1, LagsMS: lags},
	}
	for _, s := range secs {
		r.Reads += 2 * s.Checked
		r.ReadsChecked += s.Checked
		r.StaleReads += s.Stale
		r.StaleMissing += s.Stale / 3
	}
	r.Lag.SetLagFigures()
	f.Phases[0].Summary.Replica = r
}

func TestMergeReplicaIsExact(t *testing.T) {
	files, _ := threeClients(t)
	rng := rand.New(rand.NewPCG(3, 5))
	var allLags []float64
	want := map[int64]ReplicaSecond{} // by Unix second
	var checked, stale, missing int64
	for k, f := range files {
		// The clients' heartbeats start in different seconds: client k's
		// first second is mergeStart+k s.
		from := mergeStart.Add(time.Duration(k) * time.Second)
		var lags []float64
		for range 5 + k {
			lags = append(lags, math.Round(rng.Float64()*40000)/1000)
		}
		var secs []ReplicaSecond
		for s := range 6 {
			sec := ReplicaSecond{Second: s, LagMS: float64(rng.IntN(500)), Checked: int64(100 + rng.IntN(100)), Stale: int64(rng.IntN(50))}
			secs = append(secs, sec)
			u := from.Unix() + int64(s)
			w := want[u]
			w.LagMS = max(w.LagMS, sec.LagMS)
			w.Checked += sec.Checked
			w.Stale += sec.Stale
			want[u] = w
		}
		withReplica(f, from, lags, secs)
		r := f.Phases[0].Summary.Replica
		checked, stale, missing = checked+r.ReadsChecked, stale+r.StaleReads, missing+r.StaleMissing
		allLags = append(allLags, lags...)
	}
	phases, _, err := Merge(inputs(t, files...), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	r := phases[0].Summary.Replica
	if r == nil {
		t.Fatal("no replica figures in the merged summary")
	}
	if r.ReadsChecked != checked || r.StaleReads != stale || r.StaleMissing != missing || r.Reads != 2*checked || r.Clients != 3 || r.KeysTracked != 300 {
		t.Errorf("merged counts %+v; want checked %d, stale %d, missing %d", r, checked, stale, missing)
	}
	// The lag figures from every heartbeat together, computed here
	// independently by sorting.
	slices.Sort(allLags)
	n := len(allLags)
	var sum float64
	for _, v := range allLags {
		sum += v
	}
	l := r.Lag
	if l.Written != int64(n) || l.Seen != int64(n-3) || l.MaxMS != allLags[n-1] || l.P50MS != allLags[(n+1)/2-1] ||
		l.P99MS != allLags[int(math.Ceil(0.99*float64(n)))-1] || math.Abs(l.MeanMS-sum/float64(n)) > 1e-9 {
		t.Errorf("merged lag %+v; want %d heartbeats, max %v, p50 %v, mean %v", l, n, allLags[n-1], allLags[(n+1)/2-1], sum/float64(n))
	}
	if !l.Start.Equal(mergeStart.Add(300*time.Millisecond)) || strings.Count(l.Table, "dbprobe_heartbeat_") != 3 {
		t.Errorf("merged lag start %v, tables %q", l.Start, l.Table)
	}
	// By wall clock: the merged seconds start at the earliest client's.
	if !r.SecondsFrom.Equal(mergeStart) || len(r.Seconds) != 8 {
		t.Fatalf("merged seconds from %v, %d of them; want from %v, 8", r.SecondsFrom, len(r.Seconds), mergeStart)
	}
	for _, s := range r.Seconds {
		if w := want[mergeStart.Unix()+int64(s.Second)]; s.LagMS != w.LagMS || s.Checked != w.Checked || s.Stale != w.Stale {
			t.Errorf("merged second %d: %+v, want %+v", s.Second, s, w)
		}
	}
	var text strings.Builder
	if err := WriteText(&text, *phases[0].Summary); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"[REPLICA], StaleReads, " + itoa(stale) + "\n", "[REPLICA], Heartbeats, " + itoa(int64(n)) + "\n", "the figures of 3 clients added up"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("merged text lacks %q:\n%s", line, text.String())
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestMergeReplicaRefuses(t *testing.T) {
	files := func() []*File {
		fs, _ := threeClients(t)
		for _, f := range fs {
			withReplica(f, mergeStart, []float64{1, 2}, []ReplicaSecond{{Second: 0, Checked: 1}})
		}
		return fs
	}
	tests := []struct {
		name string
		edit func(fs []*File)
		want string
	}{
		{"one without", func(fs []*File) { fs[1].Phases[0].Summary.Replica = nil }, "has replica figures (--read-db) and r0.jsonl none"},
		{"no lags", func(fs []*File) { fs[0].Phases[0].Summary.Replica.Lag.LagsMS = nil }, "r2.jsonl: its replica figures carry neither"},
		{"no origin", func(fs []*File) { fs[2].Phases[0].Summary.Replica.SecondsFrom = time.Time{} }, "r1.jsonl: its replica figures carry neither"},
		{"other replica", func(fs []*File) { fs[2].Phases[0].Summary.Replica.Target = "postgres://other/bench" }, "the replica is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := files()
			tt.edit(fs)
			_, _, err := Merge(inputs(t, fs...), "dbprobe merge")
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line containing %q", err, tt.want)
			}
		})
	}
}

// shardCalls is a shard's summary whose calls are values, its histogram
// encoded as a run encodes it.
func shardCalls(t *testing.T, shard int, values []int64, reads int64) ShardSummary {
	t.Helper()
	h := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
	var busy int64
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		busy += v * 1000
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	s := ShardSummary{Shard: shard, Target: "postgres://ycsb@db" + itoa(int64(shard)) + "/bench", Range: "0-99",
		Reads: reads, Updates: 2 * reads, Scans: 1, Requests: int64(len(values)), Errors: 1, BusyNanos: busy}
	if err := DescribeShardCalls(&s, string(b), int64(len(values))); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMergeShardsIsExact(t *testing.T) {
	files, _ := threeClients(t)
	rng := rand.New(rand.NewPCG(9, 9))
	raw := []*hdr.Histogram{hdr.New(1, measure.HighestMicros, measure.SignificantFigures), hdr.New(1, measure.HighestMicros, measure.SignificantFigures)}
	var reqs, reads [2]int64
	for _, f := range files {
		var shards []ShardSummary
		for k := range 2 {
			var vals []int64
			for range 200 + rng.IntN(300) {
				v := 50 + rng.Int64N(int64(5000*(k+1)))
				vals = append(vals, v)
				raw[k].RecordValue(v)
			}
			r := int64(rng.IntN(1000))
			shards = append(shards, shardCalls(t, k+1, vals, r))
			reqs[k] += int64(len(vals))
			reads[k] += r
		}
		f.Phases[0].Summary.Shards = shards
	}
	phases, _, err := Merge(inputs(t, files...), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	got := phases[0].Summary.Shards
	if len(got) != 2 {
		t.Fatalf("%d merged shards, want 2", len(got))
	}
	for k, s := range got {
		h := raw[k]
		p := s.Calls.Percentiles
		if s.Requests != reqs[k] || s.Reads != reads[k] || s.Updates != 2*reads[k] || s.Scans != 3 || s.Errors != 3 || s.Calls.Count != reqs[k] ||
			len(p) != 2 || p[0].Micros != h.ValueAtPercentile(50) || p[1].Micros != h.ValueAtPercentile(99) || s.Calls.MaxMicros != h.Max() {
			t.Errorf("shard %d merged %+v; want %d requests, %d reads, p50 %d, p99 %d, max %d", k+1, s, reqs[k], reads[k], h.ValueAtPercentile(50), h.ValueAtPercentile(99), h.Max())
		}
		note := ShardNote(s)
		if !slices.Contains(phases[0].Summary.Notes, note) {
			t.Errorf("the merged notes lack %q: %q", note, phases[0].Summary.Notes)
		}
	}
	// A client whose shard 2 is another database is another experiment.
	files, _ = threeClients(t)
	for i, f := range files {
		f.Phases[0].Summary.Shards = []ShardSummary{shardCalls(t, 1, []int64{5}, 1), shardCalls(t, 2, []int64{7}, 1)}
		if i == 1 {
			f.Phases[0].Summary.Shards[1].Range = "100-"
		}
	}
	if _, _, err := Merge(inputs(t, files...), "dbprobe merge"); err == nil || !strings.Contains(err.Error(), "their shard 2 is") {
		t.Errorf("merge of different shards: %v", err)
	}
}

// A sharded run's replicas: the tracker's counts in the first shard's
// figures, each shard's heartbeats its own; combined, the lag is every
// shard's heartbeats together and each shard's lag stays apart. Two
// clients of such runs merge shard by shard.
func TestCombineShardReplicas(t *testing.T) {
	shardFig := func(target string, from time.Time, lags []float64, secs []ReplicaSecond, checked int64) *ReplicaSummary {
		r := &ReplicaSummary{Target: target, SecondsFrom: from, Seconds: secs, ReadsChecked: checked, Reads: checked,
			Lag: ReplicaLag{Table: "dbprobe_heartbeat_x", Start: from.Add(time.Millisecond), Written: int64(len(lags)), Seen: int64(len(lags)), LagsMS: lags}}
		r.Lag.SetLagFigures()
		return r
	}
	combined := func(off int) *ReplicaSummary {
		from := mergeStart.Add(time.Duration(off) * time.Second)
		return CombineShardReplicas("r1@0-499,r2@500-", []*ReplicaSummary{
			shardFig("r1", from, []float64{1, 2, 30}, []ReplicaSecond{{Second: 0, LagMS: 2, Checked: 5, Stale: 1}, {Second: 1, LagMS: 30, Checked: 7, Stale: 2}}, 12),
			// The second shard's heartbeat started in the next second.
			shardFig("r2", from.Add(time.Second), []float64{4, 5}, []ReplicaSecond{{Second: 0, LagMS: 40}, {Second: 1, LagMS: 5}}, 0),
		})
	}
	c := combined(0)
	if c.Target != "r1@0-499,r2@500-" || c.ReadsChecked != 12 || c.Lag.Written != 5 || c.Lag.MaxMS != 30 || c.Lag.P50MS != 4 || c.Lag.Table != "dbprobe_heartbeat_x" {
		t.Errorf("combined %+v", c)
	}
	want := []ReplicaSecond{{Second: 0, LagMS: 2, Checked: 5, Stale: 1}, {Second: 1, LagMS: 40, Checked: 7, Stale: 2}, {Second: 2, LagMS: 5}}
	if !slices.Equal(c.Seconds, want) || !c.SecondsFrom.Equal(mergeStart) {
		t.Errorf("combined seconds from %v: %+v, want %+v", c.SecondsFrom, c.Seconds, want)
	}
	if len(c.Shards) != 2 || c.Shards[1].Shard != 2 || c.Shards[1].Target != "r2" || c.Shards[1].Lag.MaxMS != 5 || c.Shards[0].Lag.Written != 3 {
		t.Errorf("per shard %+v", c.Shards)
	}
	var text strings.Builder
	if err := WriteText(&text, Summary{Phase: "run", Replica: c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "# replica lag of shard 2 (r2): 2 written, 2 seen; max 5 ms, p50 4 ms, p99 5 ms\n") {
		t.Errorf("text:\n%s", text.String())
	}

	// Two clients, the second a second later: each shard's lag merged
	// over both.
	files, _ := threeClients(t)
	for k, f := range files {
		f.Phases[0].Summary.Replica = combined(k)
		for i := range 2 {
			a := shardCalls(t, i+1, []int64{int64(100 * (k + 1)), 7}, int64(10*(i+1)))
			f.Phases[0].Summary.Replica.Shards[i].Answered = &a
		}
	}
	phases, _, err := Merge(inputs(t, files...), "dbprobe merge")
	if err != nil {
		t.Fatal(err)
	}
	m := phases[0].Summary.Replica
	if a := m.Shards[1].Answered; a == nil || a.Reads != 60 || a.Requests != 6 || a.Calls.MaxMicros != 300 {
		t.Errorf("shard 2's replica answered, merged: %+v", a)
	}
	if len(m.Shards) != 2 || m.Shards[0].Lag.Written != 9 || m.Shards[1].Lag.Written != 6 || m.Lag.Written != 15 || m.ReadsChecked != 36 || len(m.Seconds) != 5 {
		t.Errorf("merged %+v, shards %+v", m, m.Shards)
	}
	files[1].Phases[0].Summary.Replica.Shards = files[1].Phases[0].Summary.Replica.Shards[:1]
	if _, _, err := Merge(inputs(t, files...), "dbprobe merge"); err == nil || !strings.Contains(err.Error(), "shards' replicas") {
		t.Errorf("merge of different shard replicas: %v", err)
	}
}

func TestShardNoteGroupsTheMeanAsThePercentiles(t *testing.T) {
	s := ShardSummary{Shard: 2, Target: "postgres://h/db", Range: "5000-", Reads: 3, Requests: 3, BusyNanos: 191_382_600}
	s.Calls.MaxMicros = 70_001
	got := ShardNote(s)
	if !strings.Contains(got, "3 calls: mean 63,794 µs, p50 0 µs, p99 0 µs, max 70,001 µs") {
		t.Errorf("note: %s", got)
	}
}
