package export

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var (
	t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Second)
)

// sampleSeries is one interval of a run: a busy READ, an UPDATE with a
// name that needs escaping, and a series with nothing in the interval.
func sampleSeries() []measure.Summary {
	return []measure.Summary{
		{Name: "READ", Count: 1200, MeanMicros: 250.5, MinMicros: 80, MaxMicros: 9100,
			Percentiles: []measure.Percentile{{Percentile: 9.99, Micros: 3}, {Percentile: 50, Micros: 210}, {Percentile: 95, Micros: 600}, {Percentile: 99, Micros: 1500}, {Percentile: 99.9, Micros: 7000}}},
		{Name: "UPDATE x,y=z", Count: 300, MeanMicros: 900, MinMicros: 400, MaxMicros: 12000,
			Percentiles: []measure.Percentile{{Percentile: 99, Micros: 4000}}},
		{Name: "SCAN", Count: 0},
	}
}

func sampleInterval() result.MonitorSample {
	return result.MonitorSample{Start: t0, End: t1, Metrics: map[string]float64{
		"db.xact_commit/s":                1480,
		"db.wal_bytes/s":                  2.5e6,
		"db.wait.IO:WALSync":              0.4,
		"db.wait.CPU":                     0.35,
		"db.wait.other.Lock:relation":     0.1,
		"db.sessions.active":              7.5,
		"host.cpu.user%":                  41.25,
		"host.cpu.iowait%":                3,
		"host.disk.nvme0n1.util%":         55,
		"host.disk.nvme0n1.write_bytes/s": 3e6,
		"host.disk.dm-0.queue_ms/s":       750,
		"host.mem.used%":                  50,
		"client.gc.pause_ms":              2,
		"client.goroutines":               40,
		"client.cpu%":                     120,
		"client.sched.latency_p99_ms":     0.8,
		"orphan":                          1,
	}}
}

func TestInfluxGolden(t *testing.T) {
	var buf bytes.Buffer
	x := NewInflux(&buf, map[string]string{"driver": "postgres", "run_id": "r=1,a b", "empty": "", "phase": "ignored"})
	x.Interval(result.Interval{Phase: "run", End: t1, Ops: 1500, OpsPerSec: 1500, Series: sampleSeries()})
	x.Monitor(withPhase("run", sampleInterval()))
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "influx.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("line protocol differs from %s (-update to accept):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
	// Every line must parse back into what went in.
	lines := parseLines(t, buf.String())
	if len(lines) != strings.Count(buf.String(), "\n") {
		t.Fatalf("%d lines parsed of\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if l.tags["run_id"] != "r=1,a b" || l.tags["driver"] != "postgres" || l.ts != t1.UnixNano() {
			t.Errorf("line %+v lacks the run id, the driver or the time", l)
		}
	}
	if got := lines[1].fields; got["p99_9_us"] != 7000 || got["p9_99_us"] != 3 || got["p99_us"] != 1500 || got["count"] != 1200 {
		t.Errorf("READ's fields %v", got)
	}
}

func TestInfluxSkipsWhatLineProtocolCannotHold(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]float64
		want    string
	}{
		{"NaN and Inf are dropped", map[string]float64{"db.a": nanValue(), "db.b": infValue(), "db.c": 2}, "dbprobe_db,phase=run c=2 "},
		{"a line with no field is dropped", map[string]float64{"db.a": nanValue()}, ""},
		{"an empty field key is dropped", map[string]float64{"db.": 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			NewInflux(&buf, nil).Monitor(result.MonitorSample{Phase: "run", End: t1, Metrics: tt.metrics})
			got := buf.String()
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want prefix %q", got, tt.want)
			}
		})
	}
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("disk full")
}

func TestInfluxRemembersTheFirstError(t *testing.T) {
	w := &failingWriter{}
	x := NewInflux(w, nil)
	x.Interval(result.Interval{Phase: "run", End: t1, Ops: 1, OpsPerSec: 1, Series: nil})
	x.Monitor(withPhase("run", sampleInterval()))
	if err := x.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err() = %v, want the write error", err)
	}
	if w.calls != 1 {
		t.Errorf("%d writes after an error, want none after the first", w.calls-1)
	}
}

func TestPercentileField(t *testing.T) {
	for p, want := range map[float64]string{50: "p50_us", 99: "p99_us", 99.9: "p99_9_us", 99.99: "p99_99_us", 9.99: "p9_99_us", 99.999: "p99_999_us"} {
		if got := percentileField(p); got != want {
			t.Errorf("percentileField(%v) = %q, want %q", p, got, want)
		}
	}
}

// FuzzInfluxEscaping checks that whatever the names, every line splits
// back into the measurement, tags and fields that went in.
func FuzzInfluxEscaping(f *testing.F) {
	f.Add("driver", "post gres", "READ,x=1", "db.wait.IO:WAL Sync", `a\`)
	f.Add(`\`, `\\`, `\ `, `=,`, "x\ny")
	f.Add("k", "v", "op", "db.", "host.a=b,c")
	f.Fuzz(func(t *testing.T, tagKey, tagValue, op, metric, phase string) {
		if !utf8.ValidString(tagKey + tagValue + op + metric + phase) {
			t.Skip()
		}
		var buf bytes.Buffer
		x := NewInflux(&buf, map[string]string{tagKey: tagValue})
		x.Interval(result.Interval{Phase: phase, End: t1, Ops: 3, OpsPerSec: 3, Series: []measure.Summary{{Name: op, Count: 1, MaxMicros: 5}}})
		x.Monitor(result.MonitorSample{Phase: phase, End: t1, Metrics: map[string]float64{metric: 1.5}})
		clean := func(s string) string {
			var b strings.Builder
			for _, r := range s {
				if r < 0x20 || r == 0x7f {
					r = ' '
				}
				b.WriteRune(r)
			}
			s = b.String()
			if base, ok := strings.CutSuffix(s, `\`); ok {
				s = base + "/"
			}
			return s
		}
		wantTags := map[string]string{}
		if tagKey != "" && tagValue != "" && tagKey != "phase" && tagKey != "op" {
			wantTags[clean(tagKey)] = clean(tagValue)
		}
		if phase != "" {
			wantTags["phase"] = clean(phase)
		}
		for _, p := range parseLines(t, buf.String()) {
			for k, v := range wantTags {
				if p.tags[k] != v {
					t.Errorf("line %+v: tag %q = %q, want %q", p, k, p.tags[k], v)
				}
			}
			if p.ts != 1740830401000000000 {
				t.Errorf("line %+v: timestamp", p)
			}
			switch p.measurement {
			case "dbprobe_latency":
				if op != "" && p.tags["op"] != clean(op) {
					t.Errorf("line %+v: op %q, want %q", p, p.tags["op"], clean(op))
				}
			case "dbprobe_ops":
			default:
				source, key, ok := strings.Cut(metric, ".")
				want := "dbprobe_" + source
				if !ok {
					want, key = "dbprobe", metric
				}
				if p.measurement != clean(want) || p.fields[clean(key)] != 1.5 {
					t.Errorf("line %+v: want measurement %q with %q=1.5", p, clean(want), clean(key))
				}
			}
		}
	})
}

// parsedLine is one line of line protocol as InfluxData's own parser
// reads it.
type parsedLine struct {
	measurement string
	tags        map[string]string
	fields      map[string]float64
	ts          int64
}

// parseLines decodes line protocol with github.com/influxdata/line-protocol,
// the parser InfluxDB's clients use, and fails on anything it refuses.
func parseLines(t testing.TB, data string) []parsedLine {
	t.Helper()
	var out []parsedLine
	dec := lineprotocol.NewDecoderWithBytes([]byte(data))
	for dec.Next() {
		m, err := dec.Measurement()
		if err != nil {
			t.Fatalf("measurement: %v in\n%s", err, data)
		}
		p := parsedLine{measurement: string(m), tags: map[string]string{}, fields: map[string]float64{}}
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatalf("tag: %v in\n%s", err, data)
			}
			if k == nil {
				break
			}
			if _, dup := p.tags[string(k)]; dup {
				t.Errorf("tag %q twice in a line of\n%s", k, data)
			}
			p.tags[string(k)] = string(v)
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatalf("field: %v in\n%s", err, data)
			}
			if k == nil {
				break
			}
			if _, dup := p.fields[string(k)]; dup {
				t.Errorf("field %q twice in a line of\n%s", k, data)
			}
			p.fields[string(k)] = v.FloatV()
		}
		ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
		if err != nil {
			t.Fatalf("time: %v in\n%s", err, data)
		}
		p.ts = ts.UnixNano()
		out = append(out, p)
	}
	if err := dec.Err(); err != nil {
		t.Fatalf("%v in\n%s", err, data)
	}
	return out
}

func nanValue() float64 { var z float64; return z / z }
func infValue() float64 { var z float64; return 1 / z }

// withPhase is m in phase.
func withPhase(phase string, m result.MonitorSample) result.MonitorSample {
	m.Phase = phase
	return m
}
