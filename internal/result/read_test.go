package result

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func twoPhaseBytes(t *testing.T) ([]byte, *File) {
	t.Helper()
	var buf bytes.Buffer
	want := writeTwoPhases(t, NewWriter(&buf))
	return buf.Bytes(), want
}

func TestReadTruncated(t *testing.T) {
	data, full := twoPhaseBytes(t)
	lines := bytes.SplitAfter(data, []byte("\n"))
	// Cut the run phase's second interval (line 8) in the middle, as a kill
	// during that write leaves it.
	var cut []byte
	for _, l := range lines[:7] {
		cut = append(cut, l...)
	}
	cut = append(cut, lines[7][:len(lines[7])/2]...)

	got, err := Read(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated {
		t.Error("Truncated = false")
	}
	want := &File{Truncated: true, Phases: []Phase{
		full.Phases[0],
		{Header: full.Phases[1].Header, Intervals: full.Phases[1].Intervals[:1]},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}

	// Any cut keeps every complete line before it. Cut around every line
	// boundary and in the middle of every line (every byte would be
	// quadratic for nothing).
	var cuts []int
	off := 0
	for _, l := range lines {
		cuts = append(cuts, off, off+1, off+len(l)/2, off+len(l)-2, off+len(l)-1)
		off += len(l)
	}
	cuts = append(cuts, len(data))
	for _, n := range cuts {
		if n < 0 || n > len(data) {
			continue
		}
		f, err := Read(bytes.NewReader(data[:n]))
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		complete := bytes.Count(data[:n], []byte("\n"))
		atBoundary := n == 0 || data[n-1] == '\n'
		if n < len(data) && data[n] == '\n' {
			// Only the newline is missing: the record itself is whole.
			complete++
			atBoundary = true
		}
		if f.Truncated == atBoundary {
			t.Fatalf("cut at %d: Truncated = %v", n, f.Truncated)
		}
		if got := countRecords(f); got != complete {
			t.Fatalf("cut at %d: %d records, want %d", n, got, complete)
		}
	}
}

func countRecords(f *File) int {
	n := 0
	for _, p := range f.Phases {
		n++ // header
		n += len(p.Intervals)
		n += len(p.Cycles)
		if p.Summary != nil {
			n++
		}
	}
	return n
}

func TestReadLastLineWithoutNewline(t *testing.T) {
	// A complete record whose newline did not make it is still complete.
	data, want := twoPhaseBytes(t)
	got, err := Read(bytes.NewReader(bytes.TrimSuffix(data, []byte("\n"))))
	if err != nil {
		t.Fatal(err)
	}
	if got.Truncated || !reflect.DeepEqual(got, want) {
		t.Errorf("got Truncated=%v, equal=%v", got.Truncated, reflect.DeepEqual(got, want))
	}
}

func TestReadEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "  \n\n"} {
		f, err := Read(strings.NewReader(in))
		if err != nil || len(f.Phases) != 0 || f.Truncated {
			t.Errorf("Read(%q) = %+v, %v", in, f, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	hdr := `{"type":"header","schema_version":2,"experiment":"ycsb","phase":"run","started_at":"2024-01-01T12:00:00Z"}` + "\n"
	v3 := strings.Replace(hdr, `"schema_version":2`, `"schema_version":3`, 1)
	iv := `{"type":"interval","phase":"run","start":"2024-01-01T12:00:00Z","end":"2024-01-01T12:00:01Z","elapsed_ms":1000,"ops":5,"ops_per_sec":5,"warmup":false,"series":null}` + "\n"
	sum := `{"type":"summary","phase":"run","runtime_ms":1000,"ops":5,"throughput_ops_per_sec":5,"interrupted":false,"warmup_ms":0,"retry_limit":0,"series":null}` + "\n"
	tests := []struct {
		name, in, want string
	}{
		{"newer schema", v3, "line 1: schema version 3: this dbprobe reads versions 1 and 2; use a newer dbprobe"},
		{"no schema", strings.Replace(hdr, `"schema_version":2,`, ``, 1), "line 1: header without schema_version"},
		{"no experiment", strings.Replace(hdr, `"experiment":"ycsb",`, ``, 1), `line 1: header of schema version 2 without "experiment"`},
		{"empty experiment", strings.Replace(hdr, `"experiment":"ycsb"`, `"experiment":""`, 1), `line 1: header of schema version 2 without "experiment"`},
		{"newer schema in a later phase", hdr + sum + v3, "line 3: schema version 3"},
		{"bad cycle", strings.Replace(hdr, "ycsb", "durability", 1) + `{"type":"cycle","phase":"check","cycle":"one"}` + "\n", "line 2: bad cycle record"},
		{"cycle first", `{"type":"cycle","phase":"check","cycle":1}` + "\n", "line 1: record out of place: cycle before any header"},
		{"cycle after summary", hdr + sum + `{"type":"cycle","phase":"check","cycle":1}` + "\n", `line 3: record out of place: cycle after the summary of phase "run"`},
		{"not JSON", hdr + "garbage\n" + iv, "line 2: not a JSON record"},
		{"cut line in the middle", hdr + iv[:40] + "\n" + iv, "line 2: not a JSON record"},
		{"no type", hdr + `{"phase":"run"}` + "\n", `line 2: record without a "type"`},
		{"interval first", iv + hdr, "line 1: record out of place: interval before any header"},
		{"summary first", sum, "line 1: record out of place: summary before any header"},
		{"two summaries", hdr + sum + sum, `line 3: record out of place: second summary for phase "run"`},
		{"interval after summary", hdr + sum + iv, `line 3: record out of place: interval after the summary of phase "run"`},
		{"bad field", hdr + strings.Replace(iv, `"ops":5`, `"ops":"five"`, 1), "line 2: bad interval record"},
		{"bad time", hdr + strings.Replace(iv, `"2024-01-01T12:00:01Z"`, `"yesterday"`, 1), "line 2: bad interval record"},
		{"bad duration", hdr + strings.Replace(sum, `"runtime_ms":1000`, `"runtime_ms":1e300`, 1), "line 2: bad summary record"},
		{"newer schema, cut", strings.TrimSuffix(v3, "\n"), "line 1: schema version 3: this dbprobe reads versions 1 and 2"},
		{"misplaced, last line", strings.TrimSuffix(iv, "\n"), "line 1: record out of place"},
		{"garbage last line", hdr + iv + "garbage", "line 3: not a JSON record"},
		{"bad field, last line", hdr + strings.TrimSuffix(strings.Replace(iv, `"ops":5`, `"ops":"five"`, 1), "\n"), "line 2: bad interval record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error; read %+v", f)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	_, err := Read(strings.NewReader(v3))
	if !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("errors.Is(%v, ErrUnsupportedSchema) = false", err)
	}
	// An older version than any dbprobe wrote is damage: a newer dbprobe
	// would not read it either.
	_, err = Read(strings.NewReader(strings.Replace(hdr, `"schema_version":2`, `"schema_version":0`, 1)))
	if !errors.Is(err, ErrUnsupportedSchema) || !strings.Contains(err.Error(), "schema version 0: this dbprobe reads versions 1 and 2") || strings.Contains(err.Error(), "newer") {
		t.Errorf("version 0: %v", err)
	}
}

// TestReadVersions reads a header of each version this dbprobe reads: a
// version 1 header, written before experiments had kinds, is a YCSB
// phase; a version 2 header names its kind, one this dbprobe does not
// know included.
func TestReadVersions(t *testing.T) {
	for _, tt := range []struct {
		name, header, want string
	}{
		{"v1", `{"type":"header","schema_version":1,"phase":"run"}`, ExperimentYCSB},
		{"v2 ycsb", `{"type":"header","schema_version":2,"experiment":"ycsb","phase":"run"}`, ExperimentYCSB},
		{"v2 durability", `{"type":"header","schema_version":2,"experiment":"durability","phase":"check"}`, ExperimentDurability},
		{"v2 a kind from a newer dbprobe", `{"type":"header","schema_version":2,"experiment":"storage","phase":"scan"}` + "\n" + `{"type":"chunk","gb":1.5}`, "storage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tt.header + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Phases) != 1 || f.Phases[0].Header.Experiment != tt.want {
				t.Errorf("read %+v, want one phase of experiment %q", f.Phases, tt.want)
			}
		})
	}
}

// TestReadV1Fixture reads a result written by dbprobe before schema
// version 2 (testdata/v1_run.jsonl: dbprobe run --db null --duration
// 3500ms --target 2000 --threads 2 --warmup 1s --out v1.jsonl, at commit
// 7f8afc6), and the same file with its summary line cut in half, as a
// kill leaves it.
func TestReadV1Fixture(t *testing.T) {
	whole := readFixture(t, "v1_run.jsonl")
	if whole.Truncated || len(whole.Phases) != 1 {
		t.Fatalf("truncated %v, %d phases", whole.Truncated, len(whole.Phases))
	}
	p := whole.Phases[0]
	if p.Header.Experiment != ExperimentYCSB || p.Header.Phase != "run" || p.Header.SettingInt("threadcount") != 2 || p.Header.Database.Driver != "null" {
		t.Errorf("header %+v", p.Header)
	}
	if len(p.Intervals) != 6 || len(p.Monitor) != 6 || p.Summary == nil || p.Summary.Ops != 5000 || p.Summary.Warmup != time.Second {
		t.Fatalf("%d intervals, %d monitor samples, summary %+v", len(p.Intervals), len(p.Monitor), p.Summary)
	}
	killed := readFixture(t, "v1_killed.jsonl")
	if !killed.Truncated || len(killed.Phases) != 1 || killed.Phases[0].Summary != nil {
		t.Fatalf("killed: truncated %v, phases %+v", killed.Truncated, killed.Phases)
	}
	want := whole
	want.Phases[0].Summary = nil
	want.Truncated = true
	if !reflect.DeepEqual(killed, want) {
		t.Error("the killed file does not read as the whole one without its summary")
	}
}

func readFixture(t *testing.T, name string) *File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func TestReadSkipsUnknownRecordTypes(t *testing.T) {
	data, want := twoPhaseBytes(t)
	extra := []byte(`{"type":"diagnosis","cpu":0.31,"wal_bytes":1234}` + "\n")
	i := bytes.IndexByte(data, '\n') + 1
	in := append(append(append([]byte{}, data[:i]...), extra...), data[i:]...)
	got, err := Read(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("an unknown record changed what was read")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadReaderError(t *testing.T) {
	if _, err := Read(errReader{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("got %v", err)
	}
}

func TestReadZeroTail(t *testing.T) {
	// A crash can leave a block of zeros where the last write was going.
	data, want := twoPhaseBytes(t)
	got, err := Read(bytes.NewReader(append(data, make([]byte, 4096)...)))
	if err != nil {
		t.Fatal(err)
	}
	want.Truncated = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got Truncated=%v, %d phases", got.Truncated, len(got.Phases))
	}
}
