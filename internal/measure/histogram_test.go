package measure

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// Merging the histograms the interval summaries carry gives the summary of
// the cumulative view exactly: what recovering a killed run relies on.
func TestMergerMatchesTheTotal(t *testing.T) {
	s := newTestSet()
	r := s.NewRecorder()
	var merged Merger
	for tick := range 4 {
		for i := range 1000 * (tick + 1) {
			r.Record(0, int64(1+(i*7919)%200000))
		}
		iv := s.Tick(time.Unix(int64(tick+1), 0), true)
		for _, sum := range s.SummarizeEncoded(iv.View, DefaultPercentiles) {
			if sum.Name == "READ" {
				if err := merged.Add(sum); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want := s.SummarizeEncoded(s.Total().View, DefaultPercentiles)[0]
	got := Summary{Name: "READ", Statuses: want.Statuses}
	merged.Describe(&got, DefaultPercentiles)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %+v\nwant   %+v", got, want)
	}
}

func TestMergerRefusesWhatItCannotMerge(t *testing.T) {
	var m Merger
	if err := m.Add(Summary{Name: "READ", Statuses: []StatusCount{{"NOT_FOUND", 3}}}); err != nil || m.Count() != 0 {
		t.Fatalf("a status-only summary: err %v, count %d", err, m.Count())
	}
	if err := m.Add(Summary{Name: "READ", Count: 5}); !errors.Is(err, ErrNoHistogram) {
		t.Fatalf("no histogram: err %v", err)
	}
	s := newTestSet()
	s.NewRecorder().Record(0, 10)
	sum := s.SummarizeEncoded(s.Tick(time.Unix(1, 0), true).View, nil)[0]
	sum.Count = 2
	if err := m.Add(sum); err == nil {
		t.Fatal("a count that disagrees with the histogram was merged")
	}
	sum.Histogram = sum.Histogram[:len(sum.Histogram)/2]
	if err := m.Add(sum); err == nil {
		t.Fatal("a cut histogram was merged")
	}
}

// BenchmarkEncodeInterval is the cost the ticker pays per series and
// interval for the histogram an interval record carries.
func BenchmarkEncodeInterval(b *testing.B) {
	h := newHistogram()
	for i := range 1_000_000 {
		h.RecordValue(int64(20 + (i*7919)%50000))
	}
	b.ResetTimer()
	for b.Loop() {
		_ = encodeHistogram(h)
	}
	b.ReportMetric(float64(len(encodeHistogram(h))), "bytes")
}

// TestOnlySummarizeEncodedEncodes: the plain summaries (status lines,
// ticks of a run without a result file) carry no histogram, and are
// otherwise the same.
func TestOnlySummarizeEncodedEncodes(t *testing.T) {
	s := NewSet([]string{"READ"}, []bool{true}, time.Unix(0, 0))
	r := s.NewRecorder()
	for v := range int64(100) {
		r.Record(0, v+1)
	}
	r.Done(100)
	view := s.Tick(time.Unix(1, 0), true).View
	plain, encoded := s.Summarize(view, DefaultPercentiles)[0], s.SummarizeEncoded(view, DefaultPercentiles)[0]
	if plain.Histogram != "" || encoded.Histogram == "" {
		t.Fatalf("plain histogram %q, encoded %q: want none, then one", plain.Histogram, encoded.Histogram)
	}
	encoded.Histogram = ""
	if !reflect.DeepEqual(plain, encoded) {
		t.Fatalf("plain %+v differs from encoded %+v", plain, encoded)
	}
}
