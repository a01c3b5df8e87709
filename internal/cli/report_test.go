package cli_test

import (
	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/report/browser"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestReportOfARealRun draws a real short run: the page holds the command
// that reproduces it, the figures as the text output prints them, and a
// chart container for each chart the data asks for.
func TestReportOfARealRun(t *testing.T) {
	res := shortRun(t)
	out := filepath.Join(t.TempDir(), "report.html")
	_, stderr, err := run(t, "report", res, "-o", out)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "wrote the report of "+res+" to "+out) {
		t.Errorf("stderr %q does not say what was written", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := readResult(t, res)
	page := string(data)
	for _, want := range []string{
		"Content-Security-Policy",
		"Phase run of run.jsonl",
		"Throughput over time",
		"Latency over time: READ",
		"Percentile spectrum",
		// SQLite has no wait events: the monitor's CPU chart stands for
		// them.
		"CPU over time, as the monitor sampled it",
		html.EscapeString(f.Phases[0].Header.Command),
		// The run's throughput as [OVERALL], Throughput(ops/sec) prints it.
		result.Double(f.Phases[len(f.Phases)-1].Summary.Throughput) + " ops/s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(page, `class="plot"`) < 6 {
		t.Errorf("the page has %d charts, want 6 or more", strings.Count(page, `class="plot"`))
	}
	// Nothing that would load anything: the browser test proves it in
	// Chromium; this holds without one.
	for _, bad := range []string{` src=`, ` href="http`, `url(`, `@import`, `<iframe`, `<object`, `<embed`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: it must load nothing", bad)
		}
	}

	// In a real browser, offline: a real run's page draws every chart,
	// the load phase's single second included, with no console error and
	// no request.
	chromium, err := browser.Find()
	switch {
	case err != nil && testdb.InCI():
		t.Fatalf("%v; CI=true, so the browser check must run (.ci/run installs chromium)", err)
	case err != nil:
		t.Logf("not opened in a browser: %v", err)
	default:
		p, err := browser.Open(context.Background(), chromium, out, browser.Options{OpenDetails: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Console) > 0 || len(p.Requests) > 0 || p.Drawn != p.Plots || len(p.Charts) != p.Plots {
			t.Errorf("console %q, requests %q, %d of %d charts made", p.Console, p.Requests, p.Drawn, p.Plots)
		}
		for _, c := range p.Charts {
			if c.Coloured == 0 {
				t.Errorf("chart %d (%d×%d) holds no line", c.Index, c.Width, c.Height)
			}
		}
	}

	// - writes the page on stdout.
	stdout, stderr, err := run(t, "report", res, "-o", "-")
	if err != nil || !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
		t.Fatalf("report -o -: %v, stdout starts %.40q\n%s", err, stdout, stderr)
	}
}

// TestReportBadInput checks every refusal: one line, bad input (exit
// status 2), and no page written.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	res := shortRun(t)
	notResult := filepath.Join(dir, "notes.txt")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(notResult, []byte("this is not a result\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no result", []string{"report", "-o", out}, "report needs at least one result file"},
		{"no -o", []string{"report", res}, "report needs -o FILE"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.jsonl"), "-o", out}, "cannot read"},
		{"not a result", []string{"report", notResult, "-o", out}, "is not a dbprobe result"},
		{"empty", []string{"report", empty, "-o", out}, "holds no phase to report: it is empty"},
		{"one good one bad", []string{"report", res, notResult, "-o", out}, "notes.txt is not a dbprobe result"},
		{"-o a directory", []string{"report", res, "-o", dir}, "it is a directory"},
		{"-o in no directory", []string{"report", res, "-o", filepath.Join(dir, "no", "r.html")}, "does not exist"},
		{"-o under a file", []string{"report", res, "-o", filepath.Join(notResult, "r.html")}, "is not a directory"},
		{"-o the result", []string{"report", res, "-o", res}, "is one of the results being reported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadFile(res)
			_, _, err := run(t, c.args...)
			if err == nil {
				t.Fatal("accepted")
			}
			if !badinput.Is(err) {
				t.Errorf("%v: not bad input (exit status 2)", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
				t.Errorf("message %q: want one line with %q", msg, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a page was written")
			}
			if after, _ := os.ReadFile(res); !bytes.Equal(before, after) {
				t.Errorf("the result file changed")
			}
		})
	}
}

// TestReportOfARunCutShort draws what a killed run left, says so at the
// top of the page and in one line, and exits with status 2.
func TestReportOfARunCutShort(t *testing.T) {
	res := shortRun(t)
	data, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the last summary and cut the line before it in half, as a
	// kill during a write leaves it.
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-2]
	cut := strings.Join(lines[:len(lines)-2], "") + last[:len(last)/2]
	killed := filepath.Join(t.TempDir(), "killed.jsonl")
	if err := os.WriteFile(killed, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	_, _, err = run(t, "report", killed, "-o", out)
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "killed.jsonl was cut short") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line of bad input saying it was cut short", err)
	}
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatalf("no page for what was complete: %v", err)
	}
	page := string(data)
	for _, want := range []string{`class="notice"`, "was cut short", "phase run has no summary", "Latency over time: READ"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestReportOfASweep draws a real sweep's summary (dbprobe sweep --vary
// threads=1,2 --reps 4 -- ycsb --duration 2s on SQLite, its runs' results
// beside it): the recap table, the throughput curve, the conclusions, and
// the two variants compared as dbprobe compare does.
func TestReportOfASweep(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("testdata", "sweep", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sweep fixture: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := filepath.Join(dir, "sw.json")
	out := filepath.Join(dir, "report.html")
	_, stderr, err := run(t, "report", sum, "-o", out)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	for _, want := range []string{
		"Sweep " + sum + ": dbprobe ycsb",
		"Recap: the median of each variant",
		"ops/s over threads",
		"throughput still grows at threads=2",
		"Comparison of " + sum + "'s two variants",
		"threads=1 (A) against threads=2 (B)",
		"no difference shown",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
