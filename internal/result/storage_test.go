package result

import (
	"bufio"
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// storageFixture is a logcopy summary with every part a storage summary
// has.
func storageFixture() *StorageSummary {
	return &StorageSummary{
		Experiment: "logcopy",
		Table:      StorageTable{Name: "dbprobe_storage_logcopy_src", Bytes: 2_040_000_000, How: "pg_total_relation_size", Rows: 1_984_126, PayloadBytes: 1000, File: "/pg/base/5/16392"},
		BytesAre:   "the source table's size on disk, once per copy",
		Bytes:      6_120_000_000, Seconds: 127.5, Rate: 48e6, Rows: 5_952_378, RowsPerSec: 46685,
		PerSecond:         []RatePoint{{Elapsed: 1, Seconds: 1, Bytes: 48e6, Rate: 48e6}, {Elapsed: 2, Seconds: 1, Bytes: 30e6, Rate: 30e6, Fell: true}},
		PerMinute:         []RatePoint{{Elapsed: 60, Seconds: 60, Bytes: 2_880_000_000, Rate: 48e6}, {Elapsed: 120, Seconds: 60, Bytes: 2_820_000_000, Rate: 47e6}},
		Consistency:       &Consistency{Points: 127, Median: 48e6, Min: 30e6, Max: 51e6, CV: 0.04, BelowShare: 0.02},
		MinuteConsistency: &Consistency{Points: 2, Median: 47.5e6, Min: 47e6, Max: 48e6, CV: 0.01},
		Steps: []StorageStep{
			{Label: "DOP 1", Seconds: 42.5, Bytes: 2_040_000_000, Rate: 48e6, Rows: 1_984_126, LogBytes: 2_100_000_000, LogRate: 49.4e6, PhysicalBytes: -1, DeviceReadBytes: 0, DeviceWriteBytes: 2_200_000_000, HostCores: 0.4, ClientCPU: 1, Degree: 1, How: "CREATE TABLE … AS SELECT, serial"},
			{Label: "DOP 2", Seconds: 42.5, Bytes: 2_040_000_000, Rate: 48e6, Rows: 1_984_126, LogBytes: 2_100_000_000, LogRate: 49.4e6, PhysicalBytes: -1, DeviceReadBytes: -1, DeviceWriteBytes: -1, Degree: 2},
		},
		Amplification: &WriteAmplification{TableBytes: 4_080_000_000, LogBytes: 4_200_000_000, LogPerByte: 1.029, DeviceBytes: -1, Device: "loop0", Checkpoints: 3, CheckpointsHow: "the database's checkpoints counter"},
		CheckpointAge: &CheckpointAge{PeakBytes: 80_500_000, MaxBytes: 87_000_000, Share: 0.925, PeakAt: 61, Point: "DOP 2", Samples: 85, Metric: "db.checkpoint_age", Full: true, Setting: "innodb_log_file_size"},
		Proof:         &StorageProof{Bytes: 6_120_000_000, DatabaseBytes: 6_300_000_000, Counter: "log_bytes", DeviceBytes: 6_600_000_000, Device: "loop0"},
		Device: &DeviceFigures{Name: "loop0", WriteBytes: 6_600_000_000, IOPS: 60, AvgRequestBytes: 860_000, AwaitMs: 12.5, UtilPct: 4,
			Bursts: &DeviceBursts{Seconds: 85, MedianRate: 51e6, MaxRate: 160e6, MaxAt: 3, MedianIOPS: 60, MaxIOPS: 190, MedianAwaitMs: 12, MaxAwaitMs: 40, SaturatedShare: 0.96}},
		Verdict: "log-bound: 48.0 MB/s at DOP 1 and 2; more cores do not copy faster",
		Expect:  []ExpectCheck{{Key: "log", Promised: 48e6, PromisedText: "48MB/s", Measured: 49.4e6, Ratio: 1.029, Held: true, Verdict: "held"}},
		Cost:    &RunCost{PerHour: 2.4, Given: "2.40/hour", Run: 0.085, PerGB: 0.0139},
	}
}

// A storage summary: its rates in YCSB's shape after the series, then
// its table, series, steps, proof, device, promises, cost and verdict as
// comments. Pinned, as parsers read it.
func TestWriteTextStorageGolden(t *testing.T) {
	s := Summary{
		Phase: "logcopy", RunTime: 85 * time.Second, Ops: 2, Throughput: 2.0 / 85,
		Series: []measure.Summary{{Name: "COPY", Count: 2, MeanMicros: 42.5e6, MinMicros: 42e6, MaxMicros: 43e6, Percentiles: pcts(42e6, 43e6, 43e6, 43e6),
			Statuses: []measure.StatusCount{{Status: "OK", Count: 2}}}},
		Storage: storageFixture(),
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_storage.golden", buf.Bytes())
}

// At several points the [KIND] lines' rate is the fastest point's, and
// the bytes, seconds and rows beside it are that point's, so that they
// recompute to it; every point's together are AllPoints lines.
func TestStorageLinesAtSeveralPointsRecompute(t *testing.T) {
	st := &StorageSummary{Experiment: "read", Bytes: 5_816_194_000, Seconds: 8.011, Rows: 5_816_194, Rate: 772.8e6, RowsPerSec: 772_800, Headline: "threads 2",
		Steps: []StorageStep{
			{Label: "threads 1", Seconds: 4.0, Bytes: 2_725_000_000, Rate: 681.25e6, Rows: 2_725_000, LogBytes: -1},
			{Label: "threads 2", Seconds: 4.0, Bytes: 3_091_200_000, Rate: 772.8e6, Rows: 3_091_200, LogBytes: -1},
		}}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	writeStorageLines(bw, st)
	bw.Flush()
	got := map[string]string{}
	for _, l := range strings.Split(buf.String(), "\n") {
		if f := strings.Split(l, ", "); len(f) == 3 && f[0] == "[READ]" {
			got[f[1]] = f[2]
		}
	}
	num := func(k string) float64 { v, _ := strconv.ParseFloat(got[k], 64); return v }
	if rate := num("Bytes") / num("Seconds") * 60 / 1e9; math.Abs(rate-num("Rate(GB/min)")) > 0.01 {
		t.Errorf("Bytes / Seconds = %.3f GB/min, Rate(GB/min) %s\n%s", rate, got["Rate(GB/min)"], buf.String())
	}
	if got["Rows"] != "3091200" || got["AllPointsBytes"] != "5816194000" || got["AllPointsSeconds"] != "8.011" || got["AllPointsRows"] != "5816194" {
		t.Errorf("lines %v", got)
	}
	st.Headline, st.Steps = "", st.Steps[:1]
	buf.Reset()
	bw.Reset(&buf)
	writeStorageLines(bw, st)
	bw.Flush()
	if strings.Contains(buf.String(), "AllPoints") || !strings.Contains(buf.String(), "[READ], Bytes, 5816194000") {
		t.Errorf("one point:\n%s", buf.String())
	}
}

// A bulk load's amplification is per byte loaded, not "of table
// written": its bytes are the rows sent, smaller than the table on disk.
func TestBulkAmplificationIsPerByteLoaded(t *testing.T) {
	st := storageFixture()
	st.Experiment = "bulk"
	var buf bytes.Buffer
	if err := WriteText(&buf, Summary{Phase: "bulk", RunTime: time.Minute, Storage: st}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "# write amplification: per byte loaded (ids and payloads sent) (4.08 GB), 1.03 bytes of log") || strings.Contains(out, "of table written") {
		t.Errorf("bulk:\n%s", out)
	}
}

// The amplification line's ratios come from the bytes, as the verdict's
// do, not from the JSON's 3-decimal ratio rounded again: 6,064,600 bytes
// of log per 1,000,000 is 6.06, where round3's 6.065 printed 6.07.
func TestAmplificationRoundsOnce(t *testing.T) {
	st := &StorageSummary{Experiment: "write", Amplification: &WriteAmplification{TableBytes: 1_000_000, LogBytes: 6_064_600, LogPerByte: 6.065, DeviceBytes: -1, Checkpoints: -1}}
	var buf bytes.Buffer
	if err := WriteText(&buf, Summary{Phase: "write", RunTime: time.Second, Storage: st}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "6.06 bytes of log") {
		t.Errorf("amplification:\n%s", buf.String())
	}
}

// A storage run's result reads back with every figure.
func TestStorageSummaryRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Header(Header{Experiment: ExperimentStorage, Phase: "logcopy"}); err != nil {
		t.Fatal(err)
	}
	want := storageFixture()
	if err := w.Summary(Summary{Phase: "logcopy", Ops: 2, Storage: want}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Phases[0].Summary.Storage; !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

func TestRateText(t *testing.T) {
	for _, tt := range []struct {
		kind string
		rate float64
		want string
	}{{"scan", 14e9 / 60, "14.00 GB/min"}, {"write", 250e6 / 60, "250 MB/min"}, {"log", 48e6, "48.0 MB/s"}, {"bulk", 1.25e6, "1.2 MB/s"}} {
		if got := RateText(tt.kind, tt.rate); got != tt.want {
			t.Errorf("RateText(%s, %g) = %q, want %q", tt.kind, tt.rate, got, tt.want)
		}
	}
}

// A step's time is printed precisely enough that its bytes over it give
// the rate printed beside it: a 9.28 ms pass is not "0.01 s".
func TestStepSeconds(t *testing.T) {
	for s, want := range map[float64]string{0.00928: "9.3 ms", 0.0995: "99.5 ms", 0.1: "0.10 s", 0.93: "0.93 s", 9.302: "9.30 s"} {
		if got := stepSeconds(s); got != want {
			t.Errorf("stepSeconds(%v) = %q, want %q", s, got, want)
		}
	}
}
