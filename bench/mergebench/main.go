// Command mergebench measures dbprobe merge: the time and memory it takes
// to combine the results of many clients of one long run (by default 64
// clients of one hour each, the size issue 22 asks about), and prints
// Markdown for bench/RESULTS.md.
//
//	go run ./bench/mergebench --clients 64 --seconds 3600 --dir /var/tmp/mergebench
//
// The results are written by internal/report/synth as a run writes them
// (result.Writer, measure.Set), each interval with the HDR histograms of
// a YCSB run (READ, UPDATE, INSERT, SCAN), a few thousand operations a
// second per client with a long tail; only client 0 monitors. To write
// 64 hours of them in minutes rather than hours (encoding a histogram
// costs about a millisecond), each client's seconds repeat a pool of
// --pool distinct ones (synth.Options.Distinct); the merge has to decode
// and add every one of them all the same, so its cost is that of real
// files of this size. Each client's summary is the exact sum of its
// seconds.
//
// The merge runs as the dbprobe binary, built here, in a process of its
// own: its wall time, CPU time and peak resident memory come from wait4.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

func main() {
	clients := flag.Int("clients", 64, "clients of the run")
	seconds := flag.Int("seconds", 3600, "seconds each client ran")
	opsPerSec := flag.Int("ops", 4000, "operations per second per client (60% reads, 30% updates, 5% inserts, 5% scans)")
	pool := flag.Int("pool", 256, "distinct seconds the clients' seconds are drawn from")
	dir := flag.String("dir", "", "where to write the results (default: a temporary directory, removed at the end)")
	reps := flag.Int("reps", 3, "times the merge is run")
	keep := flag.Bool("keep", false, "keep the results and the merged file")
	flag.Parse()

	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "mergebench-")
		check(err)
		work = d
	}
	check(os.MkdirAll(work, 0o755))
	if !*keep {
		defer os.RemoveAll(work)
	}
	bin, err := testbin.Build(work)
	check(err)

	start := time.Now()
	paths, bytes := writeClients(work, *clients, *seconds, *opsPerSec, *pool)
	fmt.Fprintf(os.Stderr, "wrote %d results, %.0f MB in all, in %s\n", len(paths), float64(bytes)/1e6, time.Since(start).Round(time.Second))

	fmt.Printf("| clients × seconds | input | run | wall time | CPU time | peak RSS | merged file |\n|---|---|---|---|---|---|---|\n")
	for r := range *reps {
		out := filepath.Join(work, "merged.jsonl")
		os.Remove(out)
		cmd := exec.Command(bin, append(append([]string{"merge"}, paths...), "-o", out)...)
		cmd.Stdout, cmd.Stderr = nil, os.Stderr
		t0 := time.Now()
		check(cmd.Run())
		wall := time.Since(t0)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		st, err := os.Stat(out)
		check(err)
		fmt.Printf("| %d × %d | %.0f MB | %d | %.1f s | %.1f s | %.0f MB | %.1f MB |\n",
			*clients, *seconds, float64(bytes)/1e6, r+1, wall.Seconds(), cpu.Seconds(), float64(ru.Maxrss)/1024, float64(st.Size())/1e6)
	}
	fmt.Printf("\n%d CPUs, GOMAXPROCS %d, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
}

// writeClients writes the clients' results with internal/report/synth,
// on every core, and returns their paths and their size in all.
func writeClients(dir string, clients, seconds, opsPerSec, poolSize int) ([]string, int64) {
	paths := make([]string, clients)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	for c := range clients {
		paths[c] = filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", c))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rng := rand.New(rand.NewPCG(uint64(c), 2))
			f, err := os.Create(paths[c])
			check(err)
			w := bufio.NewWriterSize(f, 1<<20)
			check(synth.Write(w, synth.Options{
				Duration: time.Duration(seconds) * time.Second, Threads: 32, OpsPerSec: float64(opsPerSec), Seed: uint64(c),
				Distinct: poolSize, NoMonitor: c != 0,
				Client: &result.Client{Index: c, Count: clients, Monitors: c == 0,
					Clock: &result.ClockOffset{OffsetMicros: int64(rng.IntN(2000) - 1000), RTTMicros: 400, Query: "SELECT clock_timestamp()"}},
			}))
			check(w.Flush())
			check(f.Close())
		}()
	}
	wg.Wait()
	var total int64
	for _, p := range paths {
		st, err := os.Stat(p)
		check(err)
		total += st.Size()
	}
	return paths, total
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mergebench:", err)
		os.Exit(1)
	}
}
