package export

import (
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// benchInterval is one second of PostgreSQL workload A at 32 threads: about
// 7,000 reads and 7,000 updates, log-normal latencies around 2 ms.
func benchInterval() result.Interval {
	rng := rand.New(rand.NewPCG(3, 4))
	series := func(name string) measure.Summary {
		h := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
		for range 7000 {
			h.RecordValue(int64(math.Exp(rng.NormFloat64()*0.8+7.6)) + 1)
		}
		return measure.Summary{Name: name, Count: h.TotalCount(), MeanMicros: h.Mean(), HDR: h, Retries: new(int64),
			Statuses: []measure.StatusCount{{Status: "OK", Count: h.TotalCount()}}}
	}
	return result.Interval{Phase: "run", Start: t0, End: t1, Ops: 14000, Series: []measure.Summary{series("READ"), series("UPDATE")}}
}

// BenchmarkPrometheusInterval is the exporter's work for each second of
// the runner's series: bucketing the HDR histograms and adding the counts.
func BenchmarkPrometheusInterval(b *testing.B) {
	p := NewPrometheus(map[string]string{"run_id": "r1", "driver": "postgres"})
	iv := benchInterval()
	b.ReportAllocs()
	for b.Loop() {
		p.Interval(iv)
	}
}

// BenchmarkPrometheusMonitor is its work for each monitor sample.
func BenchmarkPrometheusMonitor(b *testing.B) {
	p := NewPrometheus(map[string]string{"run_id": "r1", "driver": "postgres"})
	m := withPhase("run", sampleInterval())
	b.ReportAllocs()
	for b.Loop() {
		p.Monitor(m)
	}
}

// BenchmarkPrometheusScrape serves one gzipped scrape of a run phase
// after a load phase, as Prometheus asks for it.
func BenchmarkPrometheusScrape(b *testing.B) {
	p := NewPrometheus(map[string]string{"run_id": "r1", "driver": "postgres"})
	iv := benchInterval()
	load := iv
	load.Phase = "load"
	load.Series = []measure.Summary{iv.Series[0]}
	load.Series[0].Name = "INSERT"
	p.Interval(load)
	p.Interval(iv)
	m := withPhase("run", sampleInterval())
	m.End = m.Start.Add(time.Second)
	p.Monitor(m)
	h := p.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		h.ServeHTTP(rec, req)
	}
}
