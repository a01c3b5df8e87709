// Command reportrender measures dbprobe report on a long run: how big the
// page of a 1-hour result at 64 threads is, and how long headless
// Chromium takes to draw it.
//
//	go run ./bench/reportrender                      # 1 h, 64 threads, 5 opens
//	go run ./bench/reportrender --duration 10m --reps 3 --keep /tmp/rr
//	go run ./bench/reportrender --results 10 --reps 3  # ten 1-hour results overlaid
//	go run ./bench/reportrender --results 100 --reps 3 --keep /tmp/rr100 --cli
//
// With --cli the page is made by the dbprobe binary itself (built into
// the directory unless --dbprobe names one), as a user runs dbprobe
// report, and its wall time and peak RSS are those of that process: the
// issue's benchmark, 100 one-hour results in under 60 s. Results already
// in --keep are used again, not written anew (100 hours take minutes to
// write, on every core).
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
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
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
	cli := flag.Bool("cli", false, "make the page with the dbprobe binary (dbprobe report), timing that process")
	dbprobe := flag.String("dbprobe", "", "with --cli, the dbprobe binary to run (default: go build ./cmd/dbprobe into the directory)")
	points := flag.String("points", "auto", "with --cli, dbprobe report's --points")
	flag.Parse()
	bin := ""
	if *cli {
		bin = *dbprobe
		if bin == "" {
			bin = "build"
		}
	}
	if err := run(*duration, *threads, *reps, *results, *keep, bin, *points); err != nil {
		fmt.Fprintln(os.Stderr, "reportrender:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, threads, reps, results int, keep, bin, points string) error {
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
	paths, total, written, err := writeResults(dir, results, duration, threads)
	if err != nil {
		return err
	}
	fmt.Printf("results: %d in %s, %s (%d written now, in %.1f s)\n", results, dir, result.BytesText(total), written, time.Since(t0).Seconds())

	htmlPath := filepath.Join(dir, "report.html")
	if bin != "" {
		if err := cliReport(dir, bin, points, paths, htmlPath); err != nil {
			return err
		}
	} else {
		t1 := time.Now()
		var inputs []report.Input
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f, err := result.Read(bytes.NewReader(data))
			if err != nil {
				return err
			}
			inputs = append(inputs, report.Input{Name: p, File: f})
		}
		var page bytes.Buffer
		if err := report.Build(inputs).WriteHTML(&page); err != nil {
			return err
		}
		if err := os.WriteFile(htmlPath, page.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Printf("page:   %s, %s (%d bytes), read and rendered in %.2f s\n", htmlPath, result.BytesText(int64(page.Len())), page.Len(), time.Since(t1).Seconds())
	}

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

// writeResults writes the synthetic results, on every core, each its own
// seed and durability, and keeps a file already there from an earlier
// run with the same --keep (synth writes the same bytes for the same
// options).
func writeResults(dir string, results int, duration time.Duration, threads int) (paths []string, total int64, written int, err error) {
	paths = make([]string, results)
	errs := make([]error, results)
	fresh := make([]bool, results)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := paths[i]
				if st, err := os.Stat(p); err == nil && st.Size() > 0 {
					continue
				}
				var res bytes.Buffer
				err := synth.Write(&res, synth.Options{Duration: duration, Threads: threads, OpsPerSec: 40000 + 1000*float64(i),
					Warmup: time.Minute, Outage: 10 * time.Second, Seed: 64 + uint64(i), Durability: []string{"full", "delayed"}[i%2]})
				if err == nil {
					err = os.WriteFile(p, res.Bytes(), 0o644)
				}
				errs[i], fresh[i] = err, true
			}
		}()
	}
	for i := range results {
		paths[i] = filepath.Join(dir, fmt.Sprintf("run%d.jsonl", i+1))
	}
	for i := range results {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, p := range paths {
		if errs[i] != nil {
			return nil, 0, 0, errs[i]
		}
		if fresh[i] {
			written++
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, 0, 0, err
		}
		total += st.Size()
	}
	return paths, total, written, nil
}

// cliReport makes the page with dbprobe report and says its wall time,
// peak RSS and size.
func cliReport(dir, bin, points string, paths []string, htmlPath string) error {
	if bin == "build" {
		bin = filepath.Join(dir, "dbprobe")
		b := exec.Command("go", "build", "-o", bin, "./cmd/dbprobe")
		b.Stdout, b.Stderr = os.Stdout, os.Stderr
		if err := b.Run(); err != nil {
			return fmt.Errorf("building dbprobe: %w", err)
		}
	}
	args := append([]string{"report", "--points", points, "-o", htmlPath}, paths...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("dbprobe report: %w: %s", err, stderr.String())
	}
	rss := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	st, err := os.Stat(htmlPath)
	if err != nil {
		return err
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		return err
	}
	fmt.Printf("page:   %s, %s (%d bytes), by dbprobe report --points %s in %.1f s wall, %.1f s CPU, peak RSS %s\n",
		htmlPath, result.BytesText(st.Size()), st.Size(), points, wall.Seconds(),
		(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), result.BytesText(rss))
	if i := bytes.Index(page, []byte("Summary mode: ")); i >= 0 {
		end := bytes.Index(page[i:], []byte("</p>"))
		fmt.Printf("        %s\n", page[i:i+end])
	}
	return nil
}
