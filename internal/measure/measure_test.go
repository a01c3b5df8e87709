package measure

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func newTestSet() *Set {
	return NewSet([]string{"READ", "READ-FAILED"}, []bool{true, false}, time.Unix(0, 0))
}

// The cumulative view must equal what was recorded, whatever the ticks:
// merging is exact, nothing is lost between a record and a tick.
func TestTicksMergeExactlyUnderConcurrency(t *testing.T) {
	s := newTestSet()
	const workers, perWorker = 8, 20000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var intervalOps int64
	var tickWG sync.WaitGroup
	tickWG.Add(1)
	go func() {
		defer tickWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
				iv := s.Tick(time.Now(), true)
				intervalOps += iv.Ops
			}
		}
	}()
	for w := range workers {
		r := s.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				r.Record(0, int64(1+(i+w)%1000))
				r.Done(1)
			}
			r.Status(0, "NOT_FOUND")
			r.Record(1, 5)
		}()
	}
	wg.Wait()
	close(stop)
	tickWG.Wait()
	intervalOps += s.Tick(time.Now(), true).Ops
	total := s.Total()
	if total.Ops != workers*perWorker || intervalOps != total.Ops {
		t.Fatalf("ops: total %d, sum of intervals %d, want %d", total.Ops, intervalOps, workers*perWorker)
	}
	if got := total.Histograms[0].TotalCount(); got != workers*perWorker {
		t.Fatalf("READ count %d, want %d", got, workers*perWorker)
	}
	sums := s.Summarize(total.View, DefaultPercentiles)
	if len(sums) != 2 {
		t.Fatalf("got %d summaries, want READ and READ-FAILED: %+v", len(sums), sums)
	}
	read := sums[0]
	wantStatuses := []StatusCount{{"OK", workers * perWorker}, {"NOT_FOUND", workers}}
	if len(read.Statuses) != 2 || read.Statuses[0] != wantStatuses[0] || read.Statuses[1] != wantStatuses[1] {
		t.Fatalf("READ statuses %+v, want %+v", read.Statuses, wantStatuses)
	}
	if read.MinMicros != 1 || read.MaxMicros < 999 || read.MaxMicros > 1000 {
		t.Fatalf("READ min %d max %d, want 1 and 1000 within precision", read.MinMicros, read.MaxMicros)
	}
	failed := sums[1]
	if failed.Count != workers || len(failed.Statuses) != 0 {
		t.Fatalf("READ-FAILED %+v: its count is not an OK count", failed)
	}
}

func TestOverflowIsCountedAndKept(t *testing.T) {
	s := newTestSet()
	r := s.NewRecorder()
	r.Record(0, HighestMicros+1)
	r.RecordN(0, 2*HighestMicros, 3)
	r.Record(0, 10)
	s.Tick(time.Now(), true)
	total := s.Total()
	if total.Overflow[0] != 4 {
		t.Fatalf("overflow %d, want 4", total.Overflow[0])
	}
	sum := s.Summarize(total.View, []float64{50})[0]
	if sum.Count != 5 || sum.Overflow != 4 {
		t.Fatalf("summary %+v: overflowed values must be counted, not dropped", sum)
	}
	if !total.Histograms[0].ValuesAreEquivalent(sum.MaxMicros, HighestMicros) {
		t.Fatalf("max %d, want the top of the range %d", sum.MaxMicros, HighestMicros)
	}
}

func TestWarmupIntervalsAreNotKept(t *testing.T) {
	s := newTestSet()
	r := s.NewRecorder()
	r.Record(0, 100)
	r.Done(1)
	t1 := time.Unix(10, 0)
	iv := s.Tick(t1, false)
	if iv.Ops != 1 {
		t.Fatalf("warm-up interval ops %d, want 1", iv.Ops)
	}
	r.Record(0, 200)
	r.Done(1)
	s.Tick(time.Unix(11, 0), true)
	total := s.Total()
	if total.Ops != 1 || total.Histograms[0].TotalCount() != 1 || !total.Start.Equal(t1) {
		t.Fatalf("total after warm-up: ops %d, count %d, start %v; want 1, 1, %v", total.Ops, total.Histograms[0].TotalCount(), total.Start, t1)
	}
}

func TestPercentilesToThreeSignificantDigits(t *testing.T) {
	s := newTestSet()
	r := s.NewRecorder()
	for v := int64(1); v <= 100000; v++ {
		r.Record(0, v)
	}
	s.Tick(time.Now(), true)
	total := s.Total()
	sum := s.Summarize(View{Histograms: total.Histograms, Statuses: total.Statuses}, []float64{50, 99.9})[0]
	for _, p := range sum.Percentiles {
		want := p.Percentile / 100 * 100000
		if rel := (float64(p.Micros) - want) / want; rel < -0.001 || rel > 0.001 {
			t.Errorf("p%g = %d, want %g within 0.1%%", p.Percentile, p.Micros, want)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	s := newTestSet()
	r := s.NewRecorder()
	for i := 0; b.Loop(); i++ {
		r.Record(0, int64(i&4095))
	}
}

// A worker's values reach the interval's histogram the same whether they
// waited in its short list or went into its own histogram (past
// maxPending of them, or a batch's n values at once): the interval equals
// a histogram that recorded every value directly.
func TestIntervalEqualsDirectRecording(t *testing.T) {
	s := newTestSet()
	r := s.NewRecorder()
	want := newHistogram()
	for round, count := range []int{10, maxPending + 500, 3 * maxPending} {
		want.Reset()
		for i := range count {
			v := int64(1 + (i*7919+round)%50000)
			r.Record(0, v)
			_ = want.RecordValue(v)
		}
		r.RecordN(0, 1234, 40)
		_ = want.RecordValues(1234, 40)
		iv := s.Tick(time.Now(), true)
		got := iv.Histograms[0]
		if !got.Equals(want) {
			t.Fatalf("round %d (%d values): interval count %d max %d p99 %d, want count %d max %d p99 %d",
				round, count, got.TotalCount(), got.Max(), got.ValueAtPercentile(99),
				want.TotalCount(), want.Max(), want.ValueAtPercentile(99))
		}
	}
	if got, wantN := s.Total().Histograms[0].TotalCount(), int64(10+maxPending+500+3*maxPending+3*40); got != wantN {
		t.Fatalf("cumulative count %d, want %d", got, wantN)
	}
	if iv := s.Tick(time.Now(), true); iv.Histograms[0] != nil {
		t.Fatalf("an interval with nothing recorded has a histogram of %d values", iv.Histograms[0].TotalCount())
	}
}

// BenchmarkTick is one second of 32 workers doing 250 reads and 250
// updates each (16,000 operations a second) then the tick that merges
// them: the harness's cost per second beside the operations.
func BenchmarkTick(b *testing.B) {
	s := NewSet([]string{"READ", "UPDATE"}, []bool{true, true}, time.Now())
	recs := make([]*Recorder, 32)
	for i := range recs {
		recs[i] = s.NewRecorder()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		b.StopTimer()
		for _, r := range recs {
			for j := range 500 {
				// Log-normal around 1 ms, as a database's latencies are.
				r.Record(j%2, int64(math.Exp(rng.NormFloat64()*0.8+7)))
			}
		}
		b.StartTimer()
		s.Tick(time.Now(), true)
	}
}

// Retries are split by code in intervals and in the total, per series;
// the warm-up's are left out of the total like everything else.
func TestRetriesByCode(t *testing.T) {
	s := newTestSet()
	s.MarkRetryable(0)
	r := s.NewRecorder()
	r.Record(0, 10)
	r.Retry(0, "40001")
	s.Tick(time.Unix(1, 0), false) // warm-up
	r.Record(0, 10)
	r.Retry(0, "40001")
	r.Retry(0, "40001")
	r.Retry(0, "40P01")
	iv := s.Tick(time.Unix(2, 0), true)
	sums := s.Summarize(iv.View, nil)
	if len(sums) != 1 || *sums[0].Retries != 3 || len(sums[0].RetriesByCode) != 2 ||
		sums[0].RetriesByCode["40001"] != 2 || sums[0].RetriesByCode["40P01"] != 1 {
		t.Fatalf("interval summary %+v, want 3 retries: 40001×2, 40P01×1", sums)
	}
	r.Record(0, 10)
	r.Retry(0, "40P01")
	s.Tick(time.Unix(3, 0), true)
	total := s.Summarize(s.Total().View, nil)[0]
	if *total.Retries != 4 || total.RetriesByCode["40001"] != 2 || total.RetriesByCode["40P01"] != 2 {
		t.Fatalf("total retries %d by code %v, want 4: 40001×2, 40P01×2 (the warm-up's left out)", *total.Retries, total.RetriesByCode)
	}
	quiet := s.Summarize(s.Tick(time.Unix(4, 0), true).View, nil)
	if len(quiet) != 0 {
		t.Fatalf("an empty interval summarised as %+v", quiet)
	}
	r.Record(0, 10)
	none := s.Summarize(s.Tick(time.Unix(5, 0), true).View, nil)[0]
	if *none.Retries != 0 || none.RetriesByCode != nil {
		t.Fatalf("no retries: %d by code %v, want 0 and no map", *none.Retries, none.RetriesByCode)
	}
}
