// Command reportrender measures dbprobe report on a long run: how big the
// page of a 1-hour result at 64 threads is, and how long headless
// Chromium takes to draw it.
//
//	go run ./bench/reportrender                      # 1 h, 64 threads, 5 opens
//	go run ./bench/reportrender --duration 10m --reps 3 --keep /tmp/rr
//	go run ./bench/reportrender --results 10 --reps 3  # ten 1-hour results overlaid
//
// The result is written as a run writes one, through result.Writer and
// measure.Set (internal/report/synth): one interval a second, each with
// the encoded HDR histograms of four operations (READ, UPDATE, INSERT,
// SCAN, about 500 distinct latencies each per second, with a tail), a
// monitor sample a second with ten wait events and the host's and the
// client's CPU, a warm-up, failures, retries and a 10 s outage. A real
// run of an hour would write the same records; synth writes them in
// seconds. The page is then rendered from the file as dbprobe report
// does (read, build, write), and opened --reps times, each in a fresh
// headless Chromium with its own profile, offline; each open reports the
// time from the start of the navigation to the last chart drawn, in the
// page's own clock (performance.now()), and checks that the console is
// clean, no request was made and every chart holds its lines.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dbprobe/dbprobe/internal/report"
	"github.com/dbprobe/dbprobe/internal/report/browser"
	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
)

func main() {
	duration := flag.Duration("duration", time.Hour, "the run's length")
	threads := flag.Int("threads", 64, "the run's threads (the monitor's active sessions)")
	reps := flag.Int("reps", 5, "how many times to open the page")
	keep := flag.String("keep", "", "keep the result and the page in this directory")
	results := flag.Int("results", 1, "how many results to draw on one page (each its own seed and durability), overlaid")
	flag.Parse()
	if err := run(*duration, *threads, *reps, *results, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "reportrender:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, threads, reps, results int, keep string) error {
	dir := keep
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "reportrender-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	chromium, err := browser.Find()
	if err != nil {
		return err
	}

	t0 := time.Now()
	var inputs []report.Input
	var total int64
	var files [][]byte
	for i := range results {
		resPath := filepath.Join(dir, fmt.Sprintf("run%d.jsonl", i+1))
		var res bytes.Buffer
		if err := synth.Write(&res, synth.Options{Duration: duration, Threads: threads, OpsPerSec: 40000 + 1000*float64(i),
			Warmup: time.Minute, Outage: 10 * time.Second, Seed: 64 + uint64(i), Durability: []string{"full", "delayed"}[i%2]}); err != nil {
			return err
		}
		if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
			return err
		}
		total += int64(res.Len())
		files = append(files, res.Bytes())
		inputs = append(inputs, report.Input{Name: resPath})
	}
	fmt.Printf("results: %d in %s, %s written in %.1f s\n", results, dir, result.BytesText(total), time.Since(t0).Seconds())

	t1 := time.Now()
	for i, data := range files {
		f, err := result.Read(bytes.NewReader(data))
		if err != nil {
			return err
		}
		inputs[i].File = f
	}
	files = nil
	var page bytes.Buffer
	if err := report.Build(inputs).WriteHTML(&page); err != nil {
		return err
	}
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, page.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("page:   %s, %s (%d bytes), read and rendered in %.2f s\n", htmlPath, result.BytesText(int64(page.Len())), page.Len(), time.Since(t1).Seconds())

	var render, first, wall []float64
	for i := range reps {
		start := time.Now()
		p, err := browser.Open(context.Background(), chromium, htmlPath, browser.Options{Timeout: 2 * time.Minute, OpenDetails: true})
		if err != nil {
			return err
		}
		w := time.Since(start).Seconds()
		undrawn := 0
		for _, c := range p.Charts {
			if c.Coloured == 0 {
				undrawn++
			}
		}
		if len(p.Console) > 0 || len(p.Requests) > 0 || undrawn > 0 || p.Drawn != p.Plots {
			return fmt.Errorf("open %d: %d console messages %q, %d requests %q, %d of %d charts undrawn", i+1, len(p.Console), p.Console, len(p.Requests), p.Requests, undrawn, p.Plots)
		}
		fmt.Printf("open %d: charts shown drawn %.0f ms after the navigation started (the first slice %.0f ms); all %d, folded sections opened, at %.0f ms; %.2f s with the browser's start and exit\n",
			i+1, p.RenderMillis, p.FirstMillis, p.Drawn, p.OpenedMillis, w)
		render = append(render, p.RenderMillis)
		first = append(first, p.FirstMillis)
		wall = append(wall, w)
	}
	fmt.Printf("median: %.0f ms to the last chart drawn (min %.0f, max %.0f), %.0f ms to the first slice; %.2f s with the browser's start\n",
		median(render), slices.Min(render), slices.Max(render), median(first), median(wall))
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
