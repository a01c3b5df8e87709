package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/report/browser"
	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/sweep"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// synthRuns writes n short synthetic results at about ops a second, each
// 1% apart, named prefix-1.jsonl…, and returns their paths.
func synthRuns(t *testing.T, dir, prefix, durability string, ops float64, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", prefix, i+1))
		var buf bytes.Buffer
		if err := synth.Write(&buf, synth.Options{Duration: 5 * time.Second, OpsPerSec: ops * (1 + 0.01*float64(i)), Seed: uint64(i), Durability: durability}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestReportCompare draws compare's verdicts at the top of the page:
// side B 20% faster over eight runs a side (enough for Holm over nine metrics) is shown as such, the setting
// that differs is named, and the runs follow, overlaid. Flags may follow
// B's files, as compare takes them.
func TestReportCompare(t *testing.T) {
	dir := t.TempDir()
	a := synthRuns(t, dir, "full", "full", 20000, 8)
	b := synthRuns(t, dir, "delayed", "delayed", 24000, 8)
	out := filepath.Join(dir, "c.html")
	args := append(append(append([]string{"report", "--compare"}, a...), "--"), b...)
	if _, stderr, err := run(t, append(args, "-o", out)...); err != nil {
		t.Fatalf("report --compare: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	for _, want := range []string{
		"Comparison: 8 runs of A against 8 of B",
		"B is 20.0% faster (95% CI",
		"Settings that differ between the sides",
		"durability",
		"Overlay: the run phase of 16 results",
		"The comparison as dbprobe compare prints it",
		// The table's figures as compare prints them: grouped medians
		// and the change, not raw floats.
		`<th class="num">change</th>`,
		`<td class="num">15,830</td>`,
		`<td class="num">+20.0%</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if i, j := strings.Index(page, "Comparison: 8 runs"), strings.Index(page, "Overlay: the run"); i < 0 || j < i {
		t.Errorf("the comparison is not first (at %d, the overlay at %d)", i, j)
	}

	for _, bad := range [][]string{
		append([]string{"report", "--compare", "-o", out}, a...),
		{"report", "--compare", "-o", out, "--", b[0]},
		append([]string{"report", "--compare", "-o", out, a[0], "--"}, filepath.Join(dir, "nothing.jsonl")),
		{"report", "--force", "-o", out, a[0]},
	} {
		if _, _, err := run(t, bad...); err == nil || !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line of bad input", bad, err)
		}
	}
}

// threeVariantSweep runs a real sweep (sweep.Run) over threads=1,2,4,
// five runs each, whose runs write synthetic results instead of running
// a database: the summary and results a sweep writes, in milliseconds.
func threeVariantSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vy := sweep.Vary{Key: "threads", Values: []string{"1", "2", "4"}, As: "flag", Concurrency: true}
	var mu sync.Mutex
	reps := map[int]int{}
	fake := func(_ context.Context, _ <-chan struct{}, args []string, _, _ io.Writer) error {
		out, threads := "", 1
		for i, a := range args {
			if a == "--out" {
				out = args[i+1]
			}
			if v, ok := strings.CutPrefix(a, "--threads="); ok {
				threads, _ = strconv.Atoi(v)
			}
		}
		mu.Lock()
		reps[threads]++
		rep := reps[threads]
		mu.Unlock()
		var buf bytes.Buffer
		// 10,000 ops/s a thread up to 2, then barely more: a knee.
		ops := map[int]float64{1: 10000, 2: 19000, 4: 20000}[threads] * (1 + 0.01*float64(rep%3))
		if err := synth.Write(&buf, synth.Options{Duration: 5 * time.Second, Threads: threads, OpsPerSec: ops, Seed: uint64(rep)}); err != nil {
			return err
		}
		return os.WriteFile(out, buf.Bytes(), 0o644)
	}
	c := &sweep.Config{
		Experiment: "run", Command: "dbprobe sweep --vary threads=1,2,4 --reps 5 -- run", Vary: []sweep.Vary{vy},
		Shapes: []sweep.Shape{{}}, Reps: 5, Seed: 3, Out: filepath.Join(dir, "sw3.json"), Exec: fake,
		Stdout: io.Discard, Stderr: io.Discard,
	}
	for i, v := range vy.Values {
		c.Variants = append(c.Variants, sweep.Variant{ID: i + 1, Settings: []sweep.Setting{{Key: "threads", Value: v}}, Args: []string{"run", "--threads=" + v}})
	}
	if err := sweep.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c.Out
}

// TestReportOfASweepInChromium draws a sweep of three variants: its
// recap, its curves with the fit, and each variant held against the
// baseline; then opens it in headless Chromium, offline, and checks that
// every chart of the sweep is drawn with no console error and no
// request.
func TestReportOfASweepInChromium(t *testing.T) {
	sum := threeVariantSweep(t)
	out := filepath.Join(filepath.Dir(sum), "sweep.html")
	if _, stderr, err := run(t, "report", sum, "-o", out); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	for _, want := range []string{
		"Recap: the median of each variant",
		"ops/s over threads",
		"Comparison of " + sum + "'s variants",
		"against the baseline threads=1 (variant 1), throughput as dbprobe compare judges it, the Holm correction over the 2 comparisons",
		"threads=2 is 9",
		"p = 0.02, 5 runs each", // Holm over two: 0.0079 × 2
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	chromium, err := browser.Find()
	switch {
	case err != nil && testdb.InCI():
		t.Fatalf("%v; CI=true, so the browser check must run (.ci/run installs chromium)", err)
	case err != nil:
		t.Skipf("not opened in a browser: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := browser.Open(ctx, chromium, out, browser.Options{OpenDetails: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Console) > 0 || len(p.Requests) > 0 {
		t.Errorf("console %q, requests %q", p.Console, p.Requests)
	}
	// The sweep's curve of ops/s over threads, with its fit.
	if p.Plots < 1 || p.Drawn != p.Plots || len(p.Charts) != p.Plots {
		t.Fatalf("%d of %d charts made, %d canvases read", p.Drawn, p.Plots, len(p.Charts))
	}
	for _, c := range p.Charts {
		if c.Width == 0 || c.Height == 0 || c.Coloured == 0 {
			t.Errorf("chart %d (%d×%d) holds no line", c.Index, c.Width, c.Height)
		}
	}
}

// TestReportPoints: a small page is drawn second by second; --points N
// summarises every chart over time and the page says so; a bad value is
// one line of bad input.
func TestReportPoints(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "long.jsonl")
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Duration: 300 * time.Second, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	page := func(args ...string) string {
		t.Helper()
		out := filepath.Join(dir, "p.html")
		if _, stderr, err := run(t, append([]string{"report", res, "-o", out}, args...)...); err != nil {
			t.Fatalf("report %q: %v\n%s", args, err, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(string(data))
	}
	if p := page(); strings.Contains(p, "Summary mode") || strings.Contains(p, "Summarised:") {
		t.Errorf("a 300 s result is summarised by default")
	}
	p := page("--points", "100")
	if !strings.Contains(p, "Summary mode: ") || !strings.Contains(p, "Summarised: 300 intervals drawn as spans of 6 s") {
		t.Errorf("--points 100: the page does not say it is summarised")
	}
	if p := page("--points", "all"); strings.Contains(p, "Summary mode") {
		t.Errorf("--points all summarised")
	}
	for _, bad := range []string{"10", "lots", "-5"} {
		if _, _, err := run(t, "report", res, "-o", filepath.Join(dir, "bad.html"), "--points", bad); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "--points") {
			t.Errorf("--points %s: %v, want bad input naming --points", bad, err)
		}
	}
}
