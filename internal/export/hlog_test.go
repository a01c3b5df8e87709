package export

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// series returns a summary of the values, with their histogram encoded as
// the runner encodes it.
func series(t *testing.T, name string, values ...int64) measure.Summary {
	t.Helper()
	h := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	s := measure.Summary{Name: name, Count: h.TotalCount(), MaxMicros: h.Max()}
	if s.Count > 0 {
		b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		s.Histogram = string(b)
	}
	return s
}

// readHlog reads every interval histogram of a log with HdrHistogram's own
// reader.
func readHlog(t *testing.T, r io.Reader) []*hdr.Histogram {
	t.Helper()
	lr := hdr.NewHistogramLogReader(r)
	var out []*hdr.Histogram
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the .hlog: %v", err)
		}
		if h == nil {
			return out
		}
		out = append(out, h)
	}
}

func TestHlogReadsBackWithHdrHistogramsReader(t *testing.T) {
	// The phase starts mid-second: the base time is the whole second
	// before it, and the intervals keep their millisecond times.
	start := time.Date(2026, 3, 1, 12, 0, 0, 400*1e6, time.UTC)
	var buf bytes.Buffer
	h := NewHlog(&buf)
	steps := []error{
		h.Header(result.Header{Phase: "load", StartedAt: start}),
		h.Interval(result.Interval{Phase: "load", Start: start.Add(5 * time.Millisecond), End: start.Add(600 * time.Millisecond),
			Series: []measure.Summary{series(t, "INSERT", 100, 200, 300), series(t, "INSERT-FAILED")}}),
		h.Header(result.Header{Phase: "run", StartedAt: start.Add(time.Second)}),
		h.Interval(result.Interval{Phase: "run", Warmup: true, Start: start.Add(time.Second), End: start.Add(1600 * time.Millisecond),
			Series: []measure.Summary{series(t, "READ", 7, 8)}}),
		h.Interval(result.Interval{Phase: "run", Start: start.Add(1600 * time.Millisecond), End: start.Add(2600 * time.Millisecond),
			Series: []measure.Summary{series(t, "READ", 10, 20, 30, 40), series(t, "UPDATE", 5000)}}),
		h.Close(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "values are latencies in microseconds", "#[BaseTime: 1772366400 (seconds since epoch)]",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`,
		// 5000 µs (5003, the top of its bucket, as every max dbprobe
		// reports) over the unit ratio of a million.
		"Tag=run/UPDATE,2.000000,1.000000,0.005003,"} {
		if !strings.Contains(text, want) {
			t.Errorf("the log lacks %q:\n%s", want, text)
		}
	}
	got := readHlog(t, strings.NewReader(text))
	want := []struct {
		tag     string
		count   int64
		startMs int64
		endMs   int64
		max     int64
	}{
		{"load/INSERT", 3, start.Add(5 * time.Millisecond).UnixMilli(), start.Add(600 * time.Millisecond).UnixMilli(), 300},
		{"run-warmup/READ", 2, start.Add(time.Second).UnixMilli(), start.Add(1600 * time.Millisecond).UnixMilli(), 8},
		{"run/READ", 4, start.Add(1600 * time.Millisecond).UnixMilli(), start.Add(2600 * time.Millisecond).UnixMilli(), 40},
		{"run/UPDATE", 1, start.Add(1600 * time.Millisecond).UnixMilli(), start.Add(2600 * time.Millisecond).UnixMilli(), 5000},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d histograms, want %d (a series with nothing recorded has no line):\n%s", len(got), len(want), text)
	}
	for i, w := range want {
		g := got[i]
		if g.Tag() != w.tag || g.TotalCount() != w.count || g.StartTimeMs() != w.startMs || g.EndTimeMs() != w.endMs {
			t.Errorf("histogram %d: tag %s count %d, %d–%d ms; want %s %d, %d–%d", i, g.Tag(), g.TotalCount(), g.StartTimeMs(), g.EndTimeMs(), w.tag, w.count, w.startMs, w.endMs)
		}
		if !g.ValuesAreEquivalent(g.Max(), w.max) {
			t.Errorf("histogram %s: max %d, want %d µs", w.tag, g.Max(), w.max)
		}
	}
}

func TestCreateHlogKeepsAnExistingFileUntilAPhaseStarts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.hlog")
	if err := os.WriteFile(path, []byte("an earlier run's log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := CreateHlog(path)
	if err != nil {
		t.Fatal(err)
	}
	// A run refused before its first phase closes its outputs.
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "an earlier run's log\n" {
		t.Fatalf("the existing file was changed: %q", b)
	}
	// Once a phase starts, the earlier content is gone, not left after
	// the new lines.
	h, err = CreateHlog(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Header(result.Header{Phase: "run", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "earlier") || !strings.HasPrefix(string(b), "#[Histogram log format version") {
		t.Fatalf("the log after a phase started:\n%s", b)
	}
	// A file that did not exist and never got a phase is not left behind.
	fresh := filepath.Join(dir, "fresh.hlog")
	h, err = CreateHlog(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("an unused new .hlog was left behind: %v", err)
	}
}

func TestCreateHlogRefusesAPathItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "no-such-dir", "x.hlog"), dir} {
		if h, err := CreateHlog(path); err == nil {
			h.Close()
			t.Errorf("CreateHlog(%s) succeeded", path)
		}
	}
}

func TestHlogIntervalWithoutHistogramIsAnError(t *testing.T) {
	var buf bytes.Buffer
	h := NewHlog(&buf)
	if err := h.Header(result.Header{Phase: "run", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	err := h.Interval(result.Interval{Phase: "run", Start: time.Now(), End: time.Now(), Series: []measure.Summary{{Name: "READ", Count: 3}}})
	if err == nil || !strings.Contains(err.Error(), "carries no histogram") {
		t.Fatalf("an interval whose series has no histogram: %v", err)
	}
}
