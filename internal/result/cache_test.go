package result

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// cacheFixture is a cache summary with every part the experiment fills.
func cacheFixture() *StorageSummary {
	return &StorageSummary{
		Experiment: "cache",
		Table:      StorageTable{Name: "dbprobe_storage_cache", Bytes: 317_800_000, How: "pg_total_relation_size", Rows: 266_305, PayloadBytes: 1000},
		BytesAre:   "payload returned by the lookups by key",
		Bytes:      619_587_000, Seconds: 34, Rate: 18.2e6, Rows: 619_587, RowsPerSec: 18223,
		Cache: &CacheFigures{
			Points: []CachePoint{
				{Bytes: 67_108_864, Rows: 56_240, Order: 1, Stage: "doubling", HitShare: 1, Requests: 195_700, Settled: true, Windows: []float64{0.95, 1, 1, 1}, Seconds: 4.1, Lookups: 94_000, LookupsPerSec: 23094, P50Micros: 39, P99Micros: 1208, DeviceReadBytes: 8192, OSShare: -1},
				{Bytes: 167_772_160, Rows: 140_601, Order: 3, Stage: "refinement", HitShare: 0.947, Requests: 164_408, Misses: 8_764, Settled: true, Windows: []float64{0.94, 0.95, 0.95, 0.95}, Seconds: 4.5, Lookups: 60_000, LookupsPerSec: 13376, P50Micros: 32, P99Micros: 3457, MissBytes: 71_794_688, DeviceReadBytes: 237_568, OSShare: 0.997},
				{Bytes: 268_435_456, Rows: 224_962, Order: 2, Stage: "doubling", HitShare: 0.871, Requests: 109_868, Misses: 14_174, Settled: false, Windows: []float64{0.8, 0.85, 0.87, 0.88}, Seconds: 20, Lookups: 230_000, LookupsPerSec: 11643, P50Micros: 48, P99Micros: 3979, MissBytes: 116_113_408, DeviceReadBytes: -1, OSShare: -1},
			},
			Threshold:     0.95,
			Estimate:      CacheEstimate{Low: 67_108_864, High: 167_772_160, LowShare: 1, HighShare: 0.947, Text: "cache ≈ 67.1–167.8 MB: 100% hits at 67.1 MB, 95% at 167.8 MB"},
			Configured:    134_217_728,
			ConfiguredHow: "shared_buffers = 128MB",
			HostMemory:    25_280_000_000,
			Counters:      "pg_statio_all_tables",
			PerTable:      true,
			OSCache:       "through the OS page cache",
			OSCacheHow:    "buffered read()",
			Layers:        "99% came from the OS page cache",
			Settle:        "3 windows within ±1 point",
		},
		Verdict: "cache ≈ 67.1–167.8 MB: …",
		Expect:  []ExpectCheck{{Key: "cache", Promised: 2e9, PromisedText: "2GB", Measured: 117e6, Ratio: 0.0585, Verdict: "below the promise: only 95% hits at 167.8 MB"}},
	}
}

// A cache summary: the estimate, the configured size and each working
// set's hit share, OS page cache share and latency in YCSB's shape, then
// each working set, the estimate, the layers and the verdict as comments.
// Pinned, as parsers read it.
func TestWriteTextCacheGolden(t *testing.T) {
	s := Summary{
		Phase: "cache", RunTime: 34 * time.Second, Ops: 619_587, Throughput: 18223,
		Series: []measure.Summary{{Name: "CACHE-READ", Count: 619_587, MeanMicros: 109, MinMicros: 14, MaxMicros: 184191, Percentiles: pcts(39, 94, 2383, 7759),
			Statuses: []measure.StatusCount{{Status: "OK", Count: 619_587}}}},
		Storage: cacheFixture(),
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_cache.golden", buf.Bytes())
}

// A cache result reads back with every figure: the per-size series a
// chart is drawn from.
func TestCacheSummaryRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(Header{Experiment: ExperimentStorage, Phase: "cache"}); err != nil {
		t.Fatal(err)
	}
	want := cacheFixture()
	if err := w.Summary(Summary{Phase: "cache", Ops: 3, Storage: want}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Phases[0].Summary.Storage; !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got.Cache, want.Cache)
	}
}

// A hit share that never fell has no top to its bracket: no
// EstimateHigh line, as Configured has none when it is not known,
// rather than a 0 a parser would take for a size.
func TestCacheLinesWithoutATop(t *testing.T) {
	st := cacheFixture()
	st.Cache.Estimate = CacheEstimate{Low: 268_435_456, LowShare: 0.99}
	var buf bytes.Buffer
	if err := WriteText(&buf, Summary{Phase: "cache", RunTime: time.Second, Storage: st}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); bytes.Contains(buf.Bytes(), []byte("EstimateHigh")) || !bytes.Contains(buf.Bytes(), []byte("[CACHE], EstimateLow(bytes), 268435456")) {
		t.Errorf("text:\n%s", out)
	}
}
