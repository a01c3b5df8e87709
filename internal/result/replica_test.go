package result

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

func replicaSummary() Summary {
	return Summary{
		Phase: "run", RunTime: 10 * time.Second, Ops: 1000, Throughput: 100,
		Replica: &ReplicaSummary{
			Target: "postgres://u:xxxxx@127.0.0.1:5433/bench", Reads: 500, ReadsChecked: 200, StaleReads: 50, StaleMissing: 3,
			KeysTracked: 1234, TrackedBytes: 1234 * 38,
			Lag: ReplicaLag{
				Table: "dbprobe_heartbeat_0zsiqvh728", Start: time.Date(2026, 11, 27, 19, 0, 0, 0, time.UTC),
				IntervalMS: 1000, PollMS: 10, FinePollMS: 1, FineForMS: 20,
				Written: 10, Seen: 8, MaxMS: 2001.5, P50MS: 3.25, P99MS: 2001.5, MeanMS: 402.1234, Errors: 1,
			},
			Seconds: []ReplicaSecond{{Second: 0, LagMS: 1.5, Checked: 20, Stale: 1}, {Second: 1, LagMS: 2001.5, Checked: 180, Stale: 49}},
		},
	}
}

// The replica's lines in YCSB's shape and its notes.
func TestWriteTextReplica(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, replicaSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "replica.txt", buf.Bytes())
}

// The replica summary survives the JSON result and Read.
func TestReplicaJSONRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	h := Header{Experiment: ExperimentYCSB, Phase: "run", StartedAt: time.Now()}
	if err := w.Header(h); err != nil {
		t.Fatal(err)
	}
	s := replicaSummary()
	if err := w.Summary(s); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Phases[0].Summary.Replica
	if !reflect.DeepEqual(got, s.Replica) {
		t.Fatalf("read back %+v, want %+v", got, s.Replica)
	}
}
