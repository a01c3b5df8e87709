package result

import (
	"bufio"
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestWriteTextGolden(t *testing.T) {
	minimal := Summary{
		Phase: "load", RunTime: 2500 * time.Millisecond, Ops: 1000, Throughput: 400,
		Series: []measure.Summary{{
			Name: "INSERT", Count: 1000, MeanMicros: 2487.125, MinMicros: 890, MaxMicros: 41023,
			Percentiles: pcts(2203, 4011, 8007, 40991),
			Statuses:    []measure.StatusCount{{Status: "OK", Count: 1000}},
		}},
	}
	zero := Summary{Phase: "run", RunTime: 0, Ops: 0, Throughput: math.NaN()}
	retried := Summary{
		Phase: "run", RunTime: 10 * time.Second, Ops: 1000, Throughput: 100, RetryLimit: 3,
		Series: []measure.Summary{
			{
				Name: "READ", Count: 500, MeanMicros: 120.5, MinMicros: 40, MaxMicros: 900,
				Percentiles: pcts(100, 300, 700, 900), Retries: new(int64(0)),
				Statuses: []measure.StatusCount{{Status: "OK", Count: 500}},
			},
			{
				Name: "UPDATE", Count: 495, MeanMicros: 2210.25, MinMicros: 800, MaxMicros: 90000,
				Percentiles: pcts(1500, 6000, 30000, 90000), Retries: new(int64(39)),
				// Not in code order, as a map gives them: the lines are sorted.
				// A code the driver names shows its name after it.
				RetriesByCode: map[string]int64{"41305": 3, "41302": 30, "1205": 4, "40001 serialization_failure": 2},
				Statuses: []measure.StatusCount{{Status: "OK", Count: 495}, {Status: "ERROR", Count: 6},
					{Status: "ERROR(41302)", Count: 4}, {Status: "ERROR(41305)", Count: 1}, {Status: "ERROR(53100 disk_full)", Count: 1}},
			},
			{Name: "UPDATE-FAILED", Count: 6, MeanMicros: 50000, MinMicros: 30000, MaxMicros: 70000, Percentiles: pcts(50000, 70000, 70000, 70000)},
		},
		Errors: map[string]int64{"ERROR(41302)": 4, "ERROR(41305)": 1, "ERROR(53100 disk_full)": 1},
	}
	for _, tt := range []struct {
		name string
		s    Summary
	}{
		{"text_run.golden", sampleSummary("run")},
		{"text_load.golden", minimal},
		{"text_zero.golden", zero},
		{"text_retries.golden", retried},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteText(&buf, tt.s); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

func TestWriteHeaderGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHeader(&buf, sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	golden(t, "header_run.golden", buf.Bytes())

	// A bare header: nothing but the phase; no empty lines.
	buf.Reset()
	if err := WriteHeader(&buf, Header{Phase: "load"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "header_bare.golden", buf.Bytes())
}

func TestHeaderLinesAreComments(t *testing.T) {
	h := sampleHeader("run")
	// A newline in any value must not start a line YCSB parsers would read.
	h.Notes = append(h.Notes, "two\nlines\r\n[READ], Operations, 5")
	h.Settings = append(h.Settings, Setting{Key: "sql", Value: "SELECT 1\nFROM t", Source: "-p"})
	h.Command = "dbprobe run\n[OVERALL], RunTime(ms), 1"
	var buf bytes.Buffer
	if err := WriteHeader(&buf, h); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") {
			t.Errorf("line %d does not start with %q: %q", i+1, "# ", l)
		}
	}
	s := sampleSummary("run")
	s.Notes = []string{"a\nb"}
	s.Series[0].Statuses = append(s.Series[0].Statuses, measure.StatusCount{Status: "ERROR(bad, really\nbad)", Count: 1})
	buf.Reset()
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "# ") {
			t.Errorf("line %d is neither a YCSB line nor a comment: %q", i+1, l)
		}
	}
	ycsbParse(t, buf.String()) // fails on a line that does not split in three
}

func TestHeaderAlignment(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHeader(&buf, sampleHeader("run")); err != nil {
		t.Fatal(err)
	}
	// Within the settings block every "=" and every "(" line up.
	eq, paren := -1, -1
	in := false
	for _, l := range strings.Split(buf.String(), "\n") {
		if l == "# settings:" {
			in = true
			continue
		}
		if !in || !strings.HasPrefix(l, "#   ") {
			in = false
			continue
		}
		e, p := strings.Index(l, " = "), strings.Index(l, "  (")
		if eq == -1 {
			eq, paren = e, p
		}
		if e != eq || p != paren {
			t.Errorf("misaligned setting line %q: = at %d, ( at %d; want %d, %d", l, e, p, eq, paren)
		}
	}
	if eq == -1 {
		t.Fatal("no settings block")
	}
}

// ycsbParse reads text output the way the usual YCSB result scripts do:
// every line starting with "[" is split on ", " into metric, measurement
// and a number parsed as a float; everything else is skipped.
func ycsbParse(t *testing.T, text string) map[string]map[string]float64 {
	t.Helper()
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "[") {
			continue
		}
		parts := strings.Split(l, ", ")
		if len(parts) != 3 {
			t.Fatalf("line %q splits into %d parts, want 3", l, len(parts))
		}
		metric := strings.TrimSuffix(strings.TrimPrefix(parts[0], "["), "]")
		v, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			t.Fatalf("line %q: value: %v", l, err)
		}
		if out[metric] == nil {
			out[metric] = map[string]float64{}
		}
		if _, dup := out[metric][parts[1]]; dup {
			t.Fatalf("line %q: %s repeated", l, parts[1])
		}
		out[metric][parts[1]] = v
	}
	return out
}

func TestWriteTextParsesBack(t *testing.T) {
	s := sampleSummary("run")
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	got := ycsbParse(t, buf.String())

	want := map[string]map[string]float64{
		"OVERALL": {"RunTime(ms)": 10110, "Throughput(ops/sec)": s.Throughput},
	}
	for _, ser := range s.Series {
		m := map[string]float64{
			"Operations":         float64(ser.Count),
			"AverageLatency(us)": ser.MeanMicros,
			"MinLatency(us)":     float64(ser.MinMicros),
			"MaxLatency(us)":     float64(ser.MaxMicros),
		}
		for _, p := range ser.Percentiles {
			m[ordinal(p.Percentile)+"PercentileLatency(us)"] = float64(p.Micros)
		}
		if ser.Count == 0 {
			// As YCSB: zeros in the shape of the other series.
			for _, p := range []string{"50th", "95th", "99th", "99.9"} {
				m[p+"PercentileLatency(us)"] = 0
			}
		}
		for _, st := range ser.Statuses {
			m["Return="+st.Status] = float64(st.Count)
		}
		want[ser.Name] = m
	}
	if len(got) != len(want) {
		t.Errorf("got metrics %v, want %v", keys(got), keys(want))
	}
	for metric, wm := range want {
		gm := got[metric]
		if len(gm) != len(wm) {
			t.Errorf("[%s]: got %d measurements %v, want %d %v", metric, len(gm), gm, len(wm), wm)
		}
		for k, v := range wm {
			if gv, ok := gm[k]; !ok || gv != v {
				t.Errorf("[%s], %s = %v (present %v), want %v", metric, k, gv, ok, v)
			}
		}
	}
	// The exact labels YCSB uses.
	for _, l := range []string{
		"[READ], 95thPercentileLatency(us), 617\n",
		"[READ], 99.9PercentileLatency(us), 9007\n",
		"[READ], Return=NOT_FOUND, 3\n",
		"[INSERT], Operations, 0\n",
		"[INSERT], AverageLatency(us), 0.0\n",
		"[INSERT], Return=ERROR(23505), 2\n",
		"# overflow: [UPDATE] 1 value above 1h, counted as 3600000000 us",
	} {
		if !strings.Contains(buf.String(), l) {
			t.Errorf("output lacks %q", l)
		}
	}
}

func TestWriteTextZeroRunTimeParses(t *testing.T) {
	for _, tp := range []float64{math.NaN(), math.Inf(1)} {
		var buf bytes.Buffer
		if err := WriteText(&buf, Summary{Ops: 5, Throughput: tp}); err != nil {
			t.Fatal(err)
		}
		got := ycsbParse(t, buf.String())["OVERALL"]["Throughput(ops/sec)"]
		if !(math.IsNaN(tp) && math.IsNaN(got)) && got != tp {
			t.Errorf("throughput %v parsed back as %v", tp, got)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteErrors(t *testing.T) {
	if err := WriteText(failWriter{}, sampleSummary("run")); err == nil {
		t.Error("WriteText to a failing writer: no error")
	}
	if err := WriteHeader(failWriter{}, sampleHeader("run")); err == nil {
		t.Error("WriteHeader to a failing writer: no error")
	}
}
