package compare

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// TestReadSummariesSkipsTheSeconds: the summary-only reader returns the
// headers and summaries result.Read returns, without the intervals and
// monitor samples.
func TestReadSummariesSkipsTheSeconds(t *testing.T) {
	t.Chdir(t.TempDir())
	w, err := result.Create("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"load", "run"} {
		w.Header(result.Header{Experiment: result.ExperimentYCSB, Phase: phase, StartedAt: start, Settings: []result.Setting{{Key: "threadcount", Value: "4"}}})
		for i := range 5 {
			w.Interval(result.Interval{Phase: phase, Start: start, End: start.Add(time.Second), Ops: int64(i), Series: []measure.Summary{{Name: "READ", Count: 1}}})
			w.Monitor(result.MonitorSample{Phase: phase, Start: start, End: start, Metrics: map[string]float64{"x": 1}})
		}
		w.Summary(result.Summary{Phase: phase, Throughput: 123, Series: []measure.Summary{{Name: "READ", Count: 5, Percentiles: []measure.Percentile{{Percentile: 99, Micros: 7}}}}})
	}
	w.Close()
	got, err := readSummaries("r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open("r.jsonl")
	defer fh.Close()
	full, err := result.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Phases) != 2 || got.Truncated {
		t.Fatalf("phases %d, truncated %v", len(got.Phases), got.Truncated)
	}
	for i, p := range got.Phases {
		if len(p.Intervals) != 0 || len(p.Monitor) != 0 {
			t.Errorf("phase %s kept %d intervals and %d samples", p.Header.Phase, len(p.Intervals), len(p.Monitor))
		}
		if !reflect.DeepEqual(p.Header, full.Phases[i].Header) || !reflect.DeepEqual(p.Summary, full.Phases[i].Summary) {
			t.Errorf("phase %s differs from result.Read's", p.Header.Phase)
		}
	}
}
