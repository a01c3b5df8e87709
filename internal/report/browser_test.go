package report_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/browser"
	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

var keepHTML = flag.String("keep-html", "", "write the browser test's report to this file too, to look at it")

// chromium returns the browser to test with, or skips (fails under
// CI=true, where .ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	p, err := browser.Find()
	if err != nil {
		if testdb.InCI() {
			t.Fatalf("%v; CI=true, so the browser test must run (.ci/run installs chromium)", err)
		}
		t.Skipf("skipping the browser test: %v", err)
	}
	return p
}

// synthetic writes a result with synth and reads it back, as dbprobe
// report does.
func synthetic(t testing.TB, o synth.Options) *result.File {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReportInChromium opens a report of every kind of section (two
// YCSB runs overlaid, one with a warm-up, an outage, failures and
// retries; a stress run; a storage run; a run cut short) in headless
// Chromium, offline, and checks what a reader would see: no console
// error or warning (a Content-Security-Policy violation is one), no
// request for anything, and every chart drawn with its lines.
func TestReportInChromium(t *testing.T) {
	exe := chromium(t)
	inputs := []report.Input{
		{Name: "full.jsonl", File: synthetic(t, synth.Options{Duration: 3 * time.Minute, Warmup: 20 * time.Second, Outage: 8 * time.Second, Seed: 1})},
		{Name: "delayed.jsonl", File: synthetic(t, synth.Options{Duration: 3 * time.Minute, Durability: "delayed", OpsPerSec: 35000, Seed: 2})},
		{Name: "stress.jsonl", File: synthetic(t, synth.Options{Kind: result.ExperimentStress, Duration: time.Minute, Seed: 3})},
		{Name: "bulk.jsonl", File: withCache(synthetic(t, synth.Options{Kind: result.ExperimentStorage, Duration: time.Minute, Seed: 4}))},
		{Name: "killed.jsonl", File: synthetic(t, synth.Options{Duration: 30 * time.Second, Cut: true, Seed: 5})},
	}
	r := report.Build(inputs)
	// A section of another command's (a sweep's), drawn with the same
	// blocks: numeric, logarithmic x; points and a dashed fit.
	r.Add(scalingSection())
	path := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if *keepHTML != "" {
		if err := os.WriteFile(*keepHTML, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := browser.Open(ctx, exe, path, browser.Options{OpenDetails: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d charts drawn in %.0f ms, %d console messages, %d requests", p.Drawn, p.RenderMillis, len(p.Console), len(p.Requests))
	if len(p.Console) > 0 {
		t.Errorf("the console has %d errors or warnings:\n%s", len(p.Console), strings.Join(p.Console, "\n"))
	}
	if len(p.Requests) > 0 {
		t.Errorf("the page made %d requests, want none:\n%s", len(p.Requests), strings.Join(p.Requests, "\n"))
	}
	// Overlays (throughput, p99 and spectrum per operation), and per run
	// throughput, latencies, spectrum, failures, waits, CPU: dozens.
	if p.Plots < 30 {
		t.Errorf("the page has %d charts, want 30 or more: a section lost its charts", p.Plots)
	}
	if p.Drawn != p.Plots || len(p.Charts) != p.Plots {
		t.Fatalf("the script made %d charts and %d canvases were read, for %d chart containers", p.Drawn, len(p.Charts), p.Plots)
	}
	for _, c := range p.Charts {
		if c.Width == 0 || c.Height == 0 || c.Coloured == 0 {
			t.Errorf("chart %d: canvas %d×%d with %d coloured pixels: not drawn", c.Index, c.Width, c.Height, c.Coloured)
		}
	}
}

// TestBrowserSeesRequestsAndErrors checks the checker: a page that asks
// for a script elsewhere and throws must be caught, or the test above
// proves nothing.
func TestBrowserSeesRequestsAndErrors(t *testing.T) {
	exe := chromium(t)
	path := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
<div class="plot"></div>
<img src="http://example.invalid/pixel.png">
<script>document.documentElement.setAttribute("data-charts-drawn", "0"); null.boom;</script>
</body></html>`
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := browser.Open(ctx, exe, path, browser.Options{})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if len(p.Requests) == 0 {
		t.Errorf("the request for http://example.invalid/pixel.png was not seen")
	}
	if len(p.Console) == 0 {
		t.Errorf("the exception was not seen")
	}
	if len(p.Charts) != 1 || p.Charts[0].Coloured != 0 {
		t.Errorf("charts %+v, want one undrawn", p.Charts)
	}
}
