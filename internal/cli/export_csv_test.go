package cli_test

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/export"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// csvTable reads a CSV and indexes its rows by column name.
func csvTable(t *testing.T, text string) []map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not read: %v\n%.2000s", err, text)
	}
	if len(rows) == 0 {
		t.Fatal("the CSV is empty")
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, name := range rows[0] {
			m[name] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// near checks that a cell holds v to the CSV's four decimals.
func near(t *testing.T, where, cell string, v float64) {
	t.Helper()
	got, err := strconv.ParseFloat(cell, 64)
	if err != nil || math.Abs(got-v) > 0.00005+1e-9*math.Abs(v) {
		t.Errorf("%s: cell %q, the JSON says %v", where, cell, v)
	}
}

// shortRun runs a real short ycsb on SQLite with a warm-up and returns its
// JSON result's path.
func shortRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.jsonl")
	if _, stderr, err := run(t, "ycsb", "--db", "sqlite://"+filepath.Join(dir, "csv.db"), "-p", "recordcount=500", "-p", "operationcount=0",
		"--duration", "1500ms", "--warmup", "300ms", "--monitor-interval", "500ms", "--out", out); err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	return out
}

func TestExportCSVAgainstTheJSON(t *testing.T) {
	out := shortRun(t)
	f := readResult(t, out)
	stdout, stderr, err := run(t, "export", "--csv", out, "-o", "-")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	rows := csvTable(t, stdout)
	var ivs []result.Interval
	for _, p := range f.Phases {
		ivs = append(ivs, p.Intervals...)
	}
	if len(rows) != len(ivs) || len(ivs) < 3 {
		t.Fatalf("%d rows for %d intervals", len(rows), len(ivs))
	}
	warm := 0
	for i, iv := range ivs {
		row, where := rows[i], "row "+strconv.Itoa(i+1)
		if row["time_utc"] != iv.End.UTC().Format(export.CSVTimeLayout) || row["phase"] != iv.Phase ||
			row["warmup"] != strconv.FormatBool(iv.Warmup) || row["ops"] != strconv.FormatInt(iv.Ops, 10) {
			t.Errorf("%s: %v; the interval: %s %s warmup=%v ops=%d", where, row, iv.End, iv.Phase, iv.Warmup, iv.Ops)
		}
		if iv.Warmup {
			warm++
		}
		near(t, where+" elapsed_s", row["elapsed_s"], math.Round(iv.Elapsed.Seconds()*1000)/1000)
		near(t, where+" ops_per_s", row["ops_per_s"], iv.OpsPerSec)
		var opsInSeries int64
		for _, s := range iv.Series {
			opsInSeries += s.Count
			if row[s.Name+" count"] != strconv.FormatInt(s.Count, 10) {
				t.Errorf("%s %s count: %q, the JSON says %d", where, s.Name, row[s.Name+" count"], s.Count)
			}
			if s.Count == 0 {
				continue
			}
			near(t, where+" "+s.Name+" mean_us", row[s.Name+" mean_us"], s.MeanMicros)
			checkCells(t, where, row, s)
		}
		if opsInSeries == 0 {
			t.Errorf("%s: no series counted anything", where)
		}
	}
	if warm == 0 {
		t.Error("no row is marked as warm-up")
	}

	// --monitor to a file: the monitor's samples, one column per figure.
	csvPath := filepath.Join(t.TempDir(), "monitor.csv")
	if _, stderr, err := run(t, "export", "--csv", "--monitor", out, "-o", csvPath); err != nil {
		t.Fatalf("export --monitor: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	mrows := csvTable(t, string(data))
	var samples []result.MonitorSample
	for _, p := range f.Phases {
		samples = append(samples, p.Monitor...)
	}
	if len(mrows) != len(samples) || len(samples) == 0 {
		t.Fatalf("%d monitor rows for %d samples", len(mrows), len(samples))
	}
	for i, m := range samples {
		if mrows[i]["phase"] != m.Phase || mrows[i]["time_utc"] != m.End.UTC().Format(export.CSVTimeLayout) {
			t.Errorf("monitor row %d: %s %s, the sample: %s %s", i+1, mrows[i]["phase"], mrows[i]["time_utc"], m.Phase, m.End)
		}
		for k, v := range m.Metrics {
			near(t, "monitor row "+strconv.Itoa(i+1)+" "+k, mrows[i][k], v)
		}
	}
}

// checkCells checks a series' max and percentile cells against its
// summary.
func checkCells(t *testing.T, where string, row map[string]string, s measure.Summary) {
	t.Helper()
	if row[s.Name+" max_us"] != strconv.FormatInt(s.MaxMicros, 10) {
		t.Errorf("%s %s max_us: %q, the JSON says %d", where, s.Name, row[s.Name+" max_us"], s.MaxMicros)
	}
	if len(s.Percentiles) == 0 {
		t.Errorf("%s %s: no percentiles in the JSON", where, s.Name)
	}
	for _, p := range s.Percentiles {
		col := s.Name + " " + export.PercentileColumn(p.Percentile)
		if row[col] != strconv.FormatInt(p.Micros, 10) {
			t.Errorf("%s %s: %q, the JSON says %d", where, col, row[col], p.Micros)
		}
	}
}

func TestExportBadInput(t *testing.T) {
	good := shortRun(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notResult := write("data.csv", "a,b\n1,2\n")
	empty := write("empty.jsonl", "")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	headerOnly := write("header.jsonl", strings.SplitAfter(string(data), "\n")[0])
	kept := write("kept.csv", "a spreadsheet the user keeps\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no format", []string{"export", good}, "export needs a format: --csv"},
		{"no file", []string{"export", "--csv"}, "export takes one result file"},
		{"missing file", []string{"export", "--csv", filepath.Join(dir, "nope.jsonl")}, "cannot read"},
		{"a directory", []string{"export", "--csv", dir}, "cannot read"},
		{"not a result", []string{"export", "--csv", notResult, "-o", kept}, "is not a dbprobe result"},
		{"empty", []string{"export", "--csv", empty, "-o", kept}, "holds no phase"},
		{"no intervals", []string{"export", "--csv", headerOnly, "-o", kept}, "holds no intervals"},
		{"-o in no directory", []string{"export", "--csv", good, "-o", filepath.Join(dir, "nope", "x.csv")}, "directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"-o is a directory", []string{"export", "--csv", good, "-o", dir}, "it is a directory"},
		{"-o under a file", []string{"export", "--csv", good, "-o", filepath.Join(kept, "x.csv")}, "is not a directory"},
		{"-o is the result", []string{"export", "--csv", good, "-o", good}, "is the result being exported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := run(t, tt.args...)
			if !badinput.Is(err) {
				t.Fatalf("err %v, want bad input (exit 2)", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q, want one line containing %q", msg, tt.want)
			}
			if stdout != "" {
				t.Fatalf("something was written on stdout:\n%s", stdout)
			}
		})
	}
	if b, _ := os.ReadFile(kept); string(b) != "a spreadsheet the user keeps\n" {
		t.Fatalf("a refused export changed -o's file: %q", b)
	}
	if b, _ := os.ReadFile(good); string(b) != string(data) {
		t.Fatal("a refused export changed the result")
	}
}

// A result cut short is exported as far as it is complete, and export
// says so and exits 2; once recovered it exports cleanly.
func TestExportCutShort(t *testing.T) {
	good := shortRun(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// What a kill during the run leaves: no run summary, and half a line.
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	var kept []string
	for _, l := range lines {
		if strings.Contains(l, `"type":"summary"`) && strings.Contains(l, `"phase":"run"`) {
			continue
		}
		kept = append(kept, l)
	}
	last := kept[len(kept)-1]
	cutText := strings.Join(kept[:len(kept)-1], "") + last[:len(last)/2]
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, []byte(cutText), 0o644); err != nil {
		t.Fatal(err)
	}
	f := readResult(t, cut)
	complete := 0
	for _, p := range f.Phases {
		complete += len(p.Intervals)
	}
	if !f.Truncated || complete == 0 {
		t.Fatalf("the cut file: truncated %v, %d intervals", f.Truncated, complete)
	}

	stdout, _, err := run(t, "export", "--csv", cut)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "phase run has no summary") ||
		!strings.Contains(err.Error(), "exported the "+strconv.Itoa(complete)+" complete intervals") || !strings.Contains(err.Error(), "dbprobe recover") {
		t.Fatalf("export of a cut result: %v, want bad input saying what was exported and what to do", err)
	}
	if rows := csvTable(t, stdout); len(rows) != complete {
		t.Fatalf("%d rows exported, the cut result has %d complete intervals", len(rows), complete)
	}

	if _, stderr, err := run(t, "recover", cut); err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	stdout, _, err = run(t, "export", "--csv", cut)
	if err != nil {
		t.Fatalf("export of the recovered result: %v", err)
	}
	if rows := csvTable(t, stdout); len(rows) != complete {
		t.Fatalf("%d rows exported after recover, want %d", len(rows), complete)
	}
}

// TestExportStorageCSV: a storage result exports its per-second rate with
// elapsed seconds from the start (not each interval's length), each
// second's --threads point, its bytes and its rate.
func TestExportStorageCSV(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "storage.jsonl")
	if _, stderr, err := run(t, "storage", "read", "--db", "sqlite://"+filepath.Join(dir, "st.db"), "--size", "8MB",
		"--duration", "1200ms", "--threads", "1,2", "--out", out); err != nil {
		t.Fatalf("storage read: %v\n%s", err, stderr)
	}
	st := readResult(t, out).Phases[0].Summary.Storage
	stdout, stderr, err := run(t, "export", "--csv", out)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	rows := csvTable(t, stdout)
	if len(rows) != len(st.PerSecond) || len(rows) < 2 {
		t.Fatalf("%d rows for %d seconds", len(rows), len(st.PerSecond))
	}
	last := -1.0
	points := map[string]bool{}
	for i, p := range st.PerSecond {
		row, where := rows[i], "row "+strconv.Itoa(i+1)
		el, _ := strconv.ParseFloat(row["elapsed_s"], 64)
		if el <= last {
			t.Errorf("%s: elapsed_s %v after %v: not seconds from the start", where, el, last)
		}
		last = el
		near(t, where+" elapsed_s", row["elapsed_s"], p.Elapsed)
		near(t, where+" rate_bytes_per_s", row["rate_bytes_per_s"], p.Rate)
		if row["bytes"] != strconv.FormatInt(p.Bytes, 10) || row["point"] != p.Point || row["rate_unit"] != "GB/min" || row["experiment"] != "read" {
			t.Errorf("%s: %v, the JSON says %+v", where, row, p)
		}
		points[row["point"]] = true
	}
	if !points["threads 1"] || !points["threads 2"] {
		t.Errorf("points %v, want threads 1 and threads 2", points)
	}
}
