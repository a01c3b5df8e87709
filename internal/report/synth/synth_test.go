package synth_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
)

// TestDistinctIsExact: with Distinct, later seconds repeat earlier ones,
// and the summary still counts exactly what the intervals hold (a
// reader that adds up the seconds, as merge and recover do, gets the
// summary's figures); a client's slice says so and has no monitor.
func TestDistinctIsExact(t *testing.T) {
	var buf bytes.Buffer
	client := &result.Client{Index: 3, Count: 8}
	if err := synth.Write(&buf, synth.Options{Duration: 90 * time.Second, Distinct: 20, Seed: 5, LatencyScale: 0.5, Client: client, NoMonitor: true}); err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Phases[0]
	if p.Header.Client == nil || p.Header.Client.Index != 3 || len(p.Monitor) != 0 {
		t.Errorf("client %+v, %d monitor samples; want client 3 and none", p.Header.Client, len(p.Monitor))
	}
	counts := map[string]int64{}
	var ops int64
	for i, iv := range p.Intervals {
		ops += iv.Ops
		for _, s := range iv.Series {
			counts[s.Name] += s.Count
		}
		if i >= 20 && iv.Series[0].Histogram != p.Intervals[i%20].Series[0].Histogram {
			t.Fatalf("second %d does not repeat second %d", i+1, i%20+1)
		}
	}
	if ops != p.Summary.Ops {
		t.Errorf("intervals hold %d operations, the summary %d", ops, p.Summary.Ops)
	}
	for _, s := range p.Summary.Series {
		if counts[s.Name] != s.Count {
			t.Errorf("%s: intervals count %d, the summary %d", s.Name, counts[s.Name], s.Count)
		}
	}
	// READ's median is 180 µs; halved, about 90.
	for _, s := range p.Summary.Series {
		if s.Name == "READ" {
			for _, pc := range s.Percentiles {
				if pc.Percentile == 50 && (pc.Micros < 70 || pc.Micros > 110) {
					t.Errorf("READ p50 %d µs at LatencyScale 0.5, want about 90", pc.Micros)
				}
			}
		}
	}
}
