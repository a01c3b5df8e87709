// Command mergebench measures dbprobe merge: the time and memory it takes
// to combine the results of many clients of one long run (by default 64
// clients of one hour each, the size issue 22 asks about), and prints
// Markdown for bench/RESULTS.md.
//
//	go run ./bench/mergebench --clients 64 --seconds 3600 --dir /var/tmp/mergebench
//
// The results are written as a run writes them (result.Writer), each
// interval with the HDR histograms of a workload A run: READ and UPDATE,
// a few thousand operations a second per client with a long tail. To
// write 64 hours of them in minutes rather than hours (encoding a
// histogram costs about a millisecond), every second is drawn from a pool
// of distinct seconds made with the runner's own measure.Set; the merge
// has to decode and add every one of them all the same, so its cost is
// that of real files of this size. Each client's summary is the exact sum
// of the seconds it drew.
//
// The merge runs as the dbprobe binary, built here, in a process of its
// own: its wall time, CPU time and peak resident memory come from wait4.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

func main() {
	clients := flag.Int("clients", 64, "clients of the run")
	seconds := flag.Int("seconds", 3600, "seconds each client ran")
	opsPerSec := flag.Int("ops", 4000, "operations per second per client (workload A: half reads, half updates)")
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

// writeClients writes the clients' results and returns their paths and
// their size in all.
func writeClients(dir string, clients, seconds, opsPerSec, poolSize int) ([]string, int64) {
	names := []string{"READ", "UPDATE"}
	percentiles := []float64{50, 95, 99, 99.9}
	t0 := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)

	// The pool: seconds of a workload A run as the runner summarizes
	// them, and each one's histograms decoded, to total the clients'.
	type second struct {
		ops    int64
		series []measure.Summary
		hists  []*hdr.Histogram
	}
	rng := rand.New(rand.NewPCG(1, 2))
	set := measure.NewSet(names, []bool{true, true}, t0)
	set.MarkRetryable(0)
	set.MarkRetryable(1)
	rec := set.NewRecorder()
	pool := make([]second, poolSize)
	for i := range pool {
		for range opsPerSec {
			op := rng.IntN(2)
			// Log-normal around 300 µs for reads, 900 µs for updates,
			// and one in a thousand a stall of up to 200 ms.
			v := math.Exp(rng.NormFloat64()*0.6) * float64(300+600*op)
			if rng.IntN(1000) == 0 {
				v = float64(rng.Int64N(200_000))
			}
			rec.Record(op, int64(v))
			rec.Done(1)
		}
		iv := set.Tick(t0.Add(time.Duration(i+1)*time.Second), true)
		s := second{ops: iv.Ops, series: set.SummarizeEncoded(iv.View, percentiles)}
		for _, ser := range s.series {
			h, err := hdr.Decode([]byte(ser.Histogram))
			check(err)
			s.hists = append(s.hists, h)
		}
		pool[i] = s
	}

	var paths []string
	var total int64
	for c := range clients {
		path := filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", c))
		w, err := result.Create(path)
		check(err)
		h := result.Header{
			Experiment: result.ExperimentYCSB, Phase: "run", StartedAt: t0.Add(-5 * time.Second),
			Command:  fmt.Sprintf("dbprobe run --client-count %d --client-index %d --duration 1h --out run-%d.jsonl", clients, c, c),
			Target:   "postgres://bench@db:5432/ycsb",
			Settings: []result.Setting{{Key: "workload", Value: "a"}, {Key: "threadcount", Value: "32"}, {Key: "client-count", Value: fmt.Sprint(clients)}, {Key: "seed", Value: fmt.Sprint(c)}},
			Environment: result.Environment{Dbprobe: "bench", Go: runtime.Version(), OS: "linux", Arch: "amd64", CPUs: 16, GOMAXPROCS: 16,
				Hostname: fmt.Sprintf("client-%d", c)},
			Database: result.Database{Driver: "postgres", ServerVersion: "16.4"},
			Client: &result.Client{Index: c, Count: clients, Monitors: c == 0,
				Clock: &result.ClockOffset{OffsetMicros: int64(rng.IntN(2000) - 1000), RTTMicros: 400, Query: "SELECT clock_timestamp()"}},
		}
		check(w.Header(h))
		uses := make([]int64, poolSize)
		var ops int64
		for s := range seconds {
			k := rng.IntN(poolSize)
			uses[k]++
			p := pool[k]
			ops += p.ops
			check(w.Interval(result.Interval{
				Phase: "run", Start: t0.Add(time.Duration(s) * time.Second), End: t0.Add(time.Duration(s+1) * time.Second),
				Elapsed: time.Duration(s+1) * time.Second, Ops: p.ops, OpsPerSec: float64(p.ops), Series: p.series,
			}))
			if c == 0 {
				check(w.Monitor(result.MonitorSample{Phase: "run", Start: t0.Add(time.Duration(s) * time.Second), End: t0.Add(time.Duration(s+1) * time.Second),
					Metrics: map[string]float64{"db.xact_commit/s": float64(p.ops), "host.cpu%": 55, "client.cpu%": 12, "db.wait.IO:WALSync": 0.4}}))
			}
		}
		// The client's own summary: its seconds' histograms added up, each
		// pool second as many times as the client drew it.
		var series []measure.Summary
		for i, name := range names {
			tot := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
			for k, n := range uses {
				if n == 0 {
					continue
				}
				for _, b := range pool[k].hists[i].Distribution() {
					if b.Count > 0 {
						check(tot.RecordValues(b.From, b.Count*n))
					}
				}
			}
			var m measure.Merger
			enc, err := tot.Encode(hdr.V2CompressedEncodingCookieBase)
			check(err)
			s := measure.Summary{Name: name, Count: tot.TotalCount(), Histogram: string(enc)}
			check(m.Add(s))
			m.Describe(&s, percentiles)
			s.Statuses = []measure.StatusCount{{Status: "OK", Count: s.Count}}
			series = append(series, s)
		}
		check(w.Summary(result.Summary{Phase: "run", RunTime: time.Duration(seconds) * time.Second, Ops: ops,
			Throughput: float64(ops) / float64(seconds), Series: series, Errors: map[string]int64{}}))
		check(w.Close())
		st, err := os.Stat(path)
		check(err)
		total += st.Size()
		paths = append(paths, path)
	}
	return paths, total
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mergebench:", err)
		os.Exit(1)
	}
}
