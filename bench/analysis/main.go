// Command analysis measures dbprobe's commands that read results rather
// than run a database (compare today; report and merge are to join it)
// on a realistic load: 100 results of one-hour runs, written by
// internal/report/synth through internal/result's Writer, so they are the
// very format runs write, with per-second intervals that carry their HDR
// histograms, several operations and the monitor's samples.
//
//	go run ./bench/analysis                 # 100 files of 1 h, compare
//	go run ./bench/analysis --only compare --files 100 --duration 1h --reps 3
//
// It prints the wall time and peak RSS of each command (the median and
// the largest of --reps runs), for bench/RESULTS.md.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/internal/report/synth"
)

// config is the run's flags.
type config struct {
	files    int
	duration time.Duration
	reps     int
	dir      string
	keep     bool
}

// known are the commands --only may name.
var known = []string{"compare"}

func main() {
	var c config
	only := flag.String("only", "compare", "comma-separated commands to measure: "+strings.Join(known, ", "))
	flag.IntVar(&c.files, "files", 100, "result files to generate (half per side for compare)")
	flag.DurationVar(&c.duration, "duration", time.Hour, "the length of each generated run (one interval per second)")
	flag.IntVar(&c.reps, "reps", 3, "runs of each command; the median time and the largest RSS are reported")
	flag.StringVar(&c.dir, "dir", os.TempDir(), "where to write the generated results")
	flag.BoolVar(&c.keep, "keep", false, "keep the generated results (their directory is printed)")
	flag.Parse()
	parts := strings.Split(*only, ",")
	for _, p := range parts {
		if !slices.Contains(known, p) {
			fail("--only %s: this benchmark measures %s", p, strings.Join(known, ", "))
		}
	}
	if c.files < 2 || c.files%2 != 0 {
		fail("--files %d: give an even number, 2 or more (half per side)", c.files)
	}
	work, err := os.MkdirTemp(c.dir, "dbprobe-analysisbench-")
	check(err)
	if !c.keep {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "dbprobe")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/dbprobe").CombinedOutput()
	if err != nil {
		fail("go build: %v\n%s", err, out)
	}

	t0 := time.Now()
	a, b := generate(work, c)
	var bytesOnDisk int64
	for _, p := range append(slices.Clone(a), b...) {
		st, err := os.Stat(p)
		check(err)
		bytesOnDisk += st.Size()
	}
	fmt.Printf("generated %d results of %s each (%s, %.0f MB on disk) in %s in %s\n",
		c.files, c.duration, "per-second intervals of READ, UPDATE, INSERT and SCAN with histograms, monitor samples",
		float64(bytesOnDisk)/1e6, time.Since(t0).Round(time.Second), work)

	for _, p := range parts {
		switch p {
		case "compare":
			args := append(append(append([]string{"compare"}, a...), "--"), b...)
			measureCommand("compare", bin, args, c.reps, func(stdout []byte) error {
				if !bytes.Contains(stdout, []byte("\nthroughput ")) {
					return fmt.Errorf("no throughput line in the output:\n%s", stdout)
				}
				return nil
			})
		}
	}
}

// measureCommand runs dbprobe reps times with the page cache warm (a
// first, unmeasured run reads the files in) and prints the median wall
// time and the largest peak RSS.
func measureCommand(name, bin string, args []string, reps int, ok func([]byte) error) {
	var times []time.Duration
	var maxRSS int64
	for i := 0; i <= reps; i++ {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if err != nil {
			fail("%s: %v\n%s", name, err, stderr.Bytes())
		}
		if err := ok(stdout.Bytes()); err != nil {
			fail("%s: %v", name, err)
		}
		if i == 0 {
			continue // the warm-up
		}
		times = append(times, took)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss<<10) // Linux gives kilobytes
		}
		if i == 1 {
			lines := strings.SplitN(stdout.String(), "\n", 14)
			fmt.Printf("%s output (head):\n%s\n", name, strings.Join(lines[:min(len(lines), 13)], "\n"))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	fmt.Printf("%s: median %.2f s of %d runs (min %.2f, max %.2f), peak RSS %.0f MB; %d CPUs, GOMAXPROCS %d\n",
		name, times[len(times)/2].Seconds(), len(times), times[0].Seconds(), times[len(times)-1].Seconds(), float64(maxRSS)/1e6, runtime.NumCPU(), runtime.GOMAXPROCS(0))
}

// distinct is how many distinct seconds each result's histograms are
// drawn from (synth.Options.Distinct): encoding costs about a
// millisecond a histogram, and a file's size and shape are the same
// whether its seconds repeat or not.
const distinct = 24

// generate writes c.files results with internal/report/synth, half per
// side (B 5% faster, its latencies 5% lower, durability delayed), on
// every core, and returns the paths of each side.
func generate(dir string, c config) (a, b []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	errs := make(chan error, c.files)
	for i := range c.files {
		side, speed, durability := "a", 1.0, "full"
		if i%2 == 1 {
			side, speed, durability = "b", 1.05, "delayed"
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%03d.jsonl", side, i/2+1))
		if side == "a" {
			a = append(a, path)
		} else {
			b = append(b, path)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs <- writeResult(path, synth.Options{Duration: c.duration, Threads: 64, OpsPerSec: 20000 * speed, LatencyScale: 1 / speed,
				Seed: uint64(i), Durability: durability, Distinct: distinct})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		check(err)
	}
	return a, b
}

func writeResult(path string, o synth.Options) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := synth.Write(w, o); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "analysis bench: "+format+"\n", args...)
	os.Exit(1)
}
