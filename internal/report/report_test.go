package report_test

import (
	"bytes"
	"flag"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %.300s\nwant %.300s\n(go test -update rewrites it)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d (go test -update rewrites it)", path, len(gl), len(wl))
	}
}

// page renders a report with uPlot's script and style sheet (checked by
// TestChartLibraryMatchesLock, and 50 kB) cut out, so that the golden
// file holds only what dbprobe writes.
func page(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	cut := func(start, marker, end, with string) {
		m := strings.Index(html, marker)
		if m < 0 {
			t.Fatalf("the page lacks %q", marker)
		}
		a := strings.LastIndex(html[:m], start)
		b := m + strings.Index(html[m:], end) + len(end)
		html = html[:a] + with + html[b:]
	}
	cut("<script>", "var uPlot=", "</script>", "<script>[uPlot's script]</script>")
	cut("<style>", ".uplot", "</style>", "<style>[uPlot's style sheet]</style>")
	cut("<details>", "<summary>uPlot's licence", "</details>", "<details>[uPlot's licence]</details>")
	return []byte(html)
}

// TestGoldenReports pins the page of each kind of result, and of two
// overlaid: its text, tables, chart data and the policy that lets it
// load nothing. A change to the page shows in review as a diff here.
func TestGoldenReports(t *testing.T) {
	short := func(o synth.Options) *result.File {
		if o.Duration == 0 {
			o.Duration = 12 * time.Second
		}
		return synthetic(t, o)
	}
	for _, c := range []struct {
		name   string
		inputs []report.Input
	}{
		{"ycsb.html", []report.Input{{Name: "run.jsonl", File: short(synth.Options{Warmup: 2 * time.Second, Outage: 3 * time.Second, Seed: 1})}}},
		{"stress.html", []report.Input{{Name: "stress.jsonl", File: short(synth.Options{Kind: result.ExperimentStress, Seed: 2})}}},
		{"storage.html", []report.Input{{Name: "bulk.jsonl", File: short(synth.Options{Kind: result.ExperimentStorage, Seed: 3})}}},
		{"overlay.html", []report.Input{
			{Name: "full.jsonl", File: short(synth.Options{Seed: 4})},
			{Name: "delayed.jsonl", File: short(synth.Options{Durability: "delayed", OpsPerSec: 30000, Seed: 5})},
		}},
		{"cut.html", []report.Input{{Name: "killed.jsonl", File: short(synth.Options{Cut: true, Seed: 6})}}},
		{"durability.html", []report.Input{{Name: "durability.jsonl", File: durabilityResult(t)}}},
		{"cache.html", []report.Input{{Name: "cache.jsonl", File: withCache(short(synth.Options{Kind: result.ExperimentStorage, Seed: 7}))}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			golden(t, c.name, page(t, report.Build(c.inputs)))
		})
	}
}

// durabilityResult is a durability check of three cycles, the second of
// which lost its last acknowledged commits.
func durabilityResult(t *testing.T) *result.File {
	t.Helper()
	var buf bytes.Buffer
	w := result.NewWriter(&buf)
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	h := result.Header{Experiment: result.ExperimentDurability, Phase: "durability", StartedAt: start,
		Command:  "dbprobe durability --db postgres --durability delayed --cycles 3",
		Settings: []result.Setting{{Key: "durability", Value: "delayed", Source: "--durability"}, {Key: "cycles", Value: "3", Source: "--cycles"}},
		Database: result.Database{Driver: "postgres", ServerVersion: "15.14"}}
	if err := w.Header(h); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		c := result.Cycle{Phase: "durability", Number: i, Start: start.Add(time.Duration(i) * 10 * time.Second), End: start.Add(time.Duration(i)*10*time.Second + 8*time.Second),
			CrashAfter: 3 * time.Second, Acknowledged: 1000 * i, Pattern: result.PatternNone, Recovery: 2 * time.Second}
		if i == 2 {
			c.Lost, c.Pattern, c.LostWindow, c.FirstLostPosition = 12, result.PatternTail, 4*time.Millisecond, 1989
		}
		if err := w.Cycle(c); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Summary(result.Summary{Phase: "durability", RunTime: 40 * time.Second, Durability: &result.DurabilitySummary{
		Cycles: 3, Acknowledged: 6000, Lost: 12, TailCycles: 1, Passed: true,
		Verdict: "12 acknowledged commits lost in 1 of 3 cycles, each the tail of a writer's: what asynchronous commit allows",
		Caveat:  "a process kill does not lose what the operating system's cache holds; a power loss could lose more"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPolicyAllowsOnlyWhatIsInThePage checks the Content-Security-Policy:
// no source but the hashes of the page's own scripts and styles, and
// each hash that of a script or style the page holds.
func TestPolicyAllowsOnlyWhatIsInThePage(t *testing.T) {
	var buf bytes.Buffer
	r := report.Build([]report.Input{{Name: "run.jsonl", File: synthetic(t, synth.Options{Duration: 5 * time.Second})}})
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	const marker = `http-equiv="Content-Security-Policy" content="`
	i := strings.Index(html, marker)
	if i < 0 {
		t.Fatal("no Content-Security-Policy")
	}
	policy := html[i+len(marker):]
	policy = policy[:strings.IndexByte(policy, '"')]
	for _, d := range strings.Split(policy, ";") {
		f := strings.Fields(d)
		switch f[0] {
		case "default-src", "base-uri", "form-action":
			if len(f) != 2 || f[1] != "'none'" {
				t.Errorf("%q: want 'none'", d)
			}
		case "img-src":
			if len(f) != 2 || f[1] != "data:" {
				t.Errorf("%q: want data: only (the empty icon)", d)
			}
		case "script-src", "style-src":
			if len(f) != 3 {
				t.Errorf("%q: want two hashes", d)
			}
			for _, h := range f[1:] {
				if !strings.HasPrefix(h, "'sha256-") {
					t.Errorf("%q: %s is not a hash", d, h)
				}
			}
		default:
			t.Errorf("unexpected directive %q", d)
		}
	}
	if n := strings.Count(html, "<script>"); n != 2 {
		t.Errorf("%d executable scripts, want 2 (uPlot and the page's)", n)
	}
	if strings.Contains(html, " style=\"") || strings.Contains(html, " on") && strings.Contains(html, "onclick=") {
		t.Errorf("the page has inline style attributes or event handlers, which its policy blocks")
	}
}

// TestImports keeps the report free of database code, as result is: it
// renders result files on machines with no database and no driver.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/dbprobe/dbprobe/internal/measure": true,
		"github.com/dbprobe/dbprobe/internal/result":  true,
		"github.com/HdrHistogram/hdrhistogram-go":     true,
	}
	for _, dir := range []string{".", "synth"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(path, "/")
				if strings.Contains(first, ".") && !allowed[path] {
					t.Errorf("%s imports %s: only the standard library, measure, result and hdrhistogram-go", name, path)
				}
			}
		}
	}
}

// withCache gives a storage result's last phase the figures of dbprobe
// storage cache: five working sets, the hit share falling past 256 MB.
func withCache(f *result.File) *result.File {
	st := f.Phases[len(f.Phases)-1].Summary.Storage
	c := &result.CacheFigures{Threshold: 0.95, Configured: 256 << 20, ConfiguredHow: "shared_buffers", HostMemory: -1,
		Counters: "pg_statio_user_tables", PerTable: true, OSCache: "through the OS page cache", Settle: "two windows within 1%"}
	for i, share := range []float64{0.999, 0.998, 0.99, 0.71, 0.42} {
		size := int64(64<<20) << i
		c.Points = append(c.Points, result.CachePoint{Bytes: size, Rows: size / 200, Order: i + 1, Stage: "doubling",
			HitShare: share, Settled: true, Seconds: 10, P50Micros: int64(40 + 300*(1-share)), P99Micros: int64(120 + 2000*(1-share)),
			DeviceReadBytes: -1, OSShare: -1})
	}
	c.Estimate = result.CacheEstimate{Low: 256 << 20, High: 512 << 20, LowShare: 0.99, HighShare: 0.71, Text: "cache ≈ 256–512 MB: 99% hits at 256 MB, 71% at 512 MB"}
	st.Cache = c
	return f
}
