// Command analysis measures dbprobe's commands that read results rather
// than run a database (compare today; report and merge are to join it)
// on a realistic load: 100 results of one-hour runs, written with
// internal/result's Writer so they are the very format runs write, with
// per-second intervals that carry their HDR histograms, several
// operations and the monitor's samples.
//
//	go run ./bench/analysis                 # 100 files of 1 h, compare
//	go run ./bench/analysis --only compare --files 100 --duration 1h --reps 3
//
// It prints the wall time and peak RSS of each command (the median and
// the largest of --reps runs), for bench/RESULTS.md.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
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

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
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
		c.files, c.duration, "per-second intervals of READ, UPDATE and READ-MODIFY-WRITE with histograms, monitor samples",
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

// generate writes c.files results, half per side, two at a time, and
// returns the paths of each side.
func generate(dir string, c config) (a, b []string) {
	hist := newHistograms()
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	errs := make(chan error, c.files)
	for i := range c.files {
		side, speed := "a", 1.0
		if i%2 == 1 {
			side, speed = "b", 1.05 // B 5% faster, its latencies 5% lower
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
			errs <- writeResult(path, uint64(i), speed, c.duration, hist)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		check(err)
	}
	return a, b
}

// ops are the series of the generated runs (YCSB's workload F: reads and
// read-modify-writes, which record their read and update too), with the
// median latency and the ops per second of each.
var ops = []struct {
	name   string
	median float64 // µs
	share  float64
}{{"READ", 180, 0.5}, {"UPDATE", 420, 0.5}, {"READ-MODIFY-WRITE", 650, 0.5}}

// variants is how many distinct one-second histograms each operation
// cycles through: encoding costs about a millisecond, and a file's size
// and shape are the same whether its seconds repeat or not.
const variants = 24

// histograms are the generated seconds' histograms per operation, at
// speed 1 and at 1.05 (B), each encoded as a result carries it.
type histograms struct {
	byOp map[string][][2]encoded // [variant][side]
}

type encoded struct {
	summary measure.Summary // count, percentiles and the encoded histogram
	h       *hdr.Histogram
}

func newHistograms() *histograms {
	hs := &histograms{byOp: map[string][][2]encoded{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, op := range ops {
		for range variants {
			var pair [2]encoded
			seed := rng.Uint64()
			for s, speed := range []float64{1, 1.05} {
				r := rand.New(rand.NewPCG(seed, 3))
				h := hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
				n := int(20000 * op.share * speed * (0.97 + 0.06*r.Float64()))
				for range n {
					// Log-normal service times with a long tail.
					v := op.median / speed * math.Exp(0.6*r.NormFloat64())
					if r.IntN(1000) == 0 {
						v *= 20
					}
					h.RecordValue(int64(v) + 1)
				}
				pair[s] = encoded{summary: summarize(op.name, h), h: h}
			}
			hs.byOp[op.name] = append(hs.byOp[op.name], pair)
		}
	}
	return hs
}

// summarize is a series' summary as a run writes it, through measure's
// own Merger, so counts, percentiles and the encoding are a run's.
func summarize(name string, h *hdr.Histogram) measure.Summary {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	check(err)
	var m measure.Merger
	s := measure.Summary{Name: name, Count: h.TotalCount(), Histogram: string(b)}
	check(m.Add(s))
	out := measure.Summary{Name: name, Statuses: []measure.StatusCount{{Status: "OK", Count: h.TotalCount()}}}
	m.Describe(&out, []float64{50, 95, 99, 99.9})
	return out
}

// writeResult writes one run: its header, an interval and a monitor
// sample per second, and the summary.
func writeResult(path string, seed uint64, speed float64, d time.Duration, hs *histograms) error {
	w, err := result.Create(path)
	if err != nil {
		return err
	}
	side := 0
	durability := "full"
	if speed != 1 {
		side, durability = 1, "delayed"
	}
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).Add(time.Duration(seed) * 2 * d)
	h := result.Header{
		Experiment: result.ExperimentYCSB, Phase: "run", StartedAt: start,
		Command: "dbprobe run --db postgres://bench@db:5432/bench --workload f --threads 64 --duration 1h --durability " + durability,
		RunID:   fmt.Sprintf("bench-%03d", seed), Target: "postgres://bench@db:5432/bench",
		Environment: result.Environment{Dbprobe: "bench", Go: runtime.Version(), OS: "linux", Arch: "amd64", CPUs: 16, GOMAXPROCS: 16, Hostname: "client-1"},
		Database:    result.Database{Driver: "postgres", Library: "pgx v5.12.0", ServerVersion: "15.8", Placement: "server", Settings: []result.Setting{{Key: "synchronous_commit", Value: map[int]string{0: "on", 1: "off"}[side]}, {Key: "shared_buffers", Value: "8GB"}}},
	}
	for _, kv := range [][2]string{
		{"workload", "site.ycsb.workloads.CoreWorkload"}, {"recordcount", "10000000"}, {"operationcount", "0"},
		{"readproportion", "0.5"}, {"updateproportion", "0"}, {"insertproportion", "0"}, {"scanproportion", "0"},
		{"readmodifywriteproportion", "0.5"}, {"requestdistribution", "zipfian"}, {"threadcount", "64"},
		{"maxexecutiontime", "1h"}, {"durability", durability}, {"tabletype", "disk"}, {"seed", fmt.Sprint(seed)},
	} {
		h.Settings = append(h.Settings, result.Setting{Key: kv[0], Value: kv[1], Source: "bench"})
	}
	if err := w.Header(h); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	seconds := int(d / time.Second)
	totals := map[string]*hdr.Histogram{}
	var ops64 int64
	for i := range seconds {
		iv := result.Interval{Phase: "run", Start: start.Add(time.Duration(i) * time.Second), End: start.Add(time.Duration(i+1) * time.Second), Elapsed: time.Duration(i+1) * time.Second}
		v := (i + int(seed)) % variants
		for _, op := range ops {
			e := hs.byOp[op.name][v][side]
			iv.Series = append(iv.Series, e.summary)
			if i < variants {
				// The summary's histogram: each variant counted as often as
				// it occurs in the file.
				if totals[op.name] == nil {
					totals[op.name] = hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
				}
				times := int64(seconds / variants)
				if v < seconds%variants {
					times++
				}
				for _, bar := range e.h.Distribution() {
					if bar.Count > 0 {
						totals[op.name].RecordValues(bar.To, bar.Count*times)
					}
				}
			}
			if op.name != "UPDATE" {
				iv.Ops += e.summary.Count
			}
		}
		iv.OpsPerSec = float64(iv.Ops)
		ops64 += iv.Ops
		if err := w.Interval(iv); err != nil {
			return err
		}
		if err := w.Monitor(monitorSample(rng, iv, speed)); err != nil {
			return err
		}
	}
	s := result.Summary{Phase: "run", RunTime: d, Ops: ops64, Throughput: float64(ops64) / d.Seconds(), Ending: &result.Ending{By: "time", Text: "maxexecutiontime=1h ran out"},
		Diagnosis: &result.Diagnosis{Limit: "commit flush", Verdict: "commit flush bound: 62% of sampled backend time waiting on WAL sync; CPU 31%"}}
	for _, op := range ops {
		s.Series = append(s.Series, summarize(op.name, totals[op.name]))
	}
	if err := w.Summary(s); err != nil {
		return err
	}
	return w.Close()
}

// monitorSample is a second's monitor sample with the figures a
// PostgreSQL run's monitor takes.
func monitorSample(rng *rand.Rand, iv result.Interval, speed float64) result.MonitorSample {
	m := map[string]float64{}
	jitter := func(v float64) float64 { return v * (0.9 + 0.2*rng.Float64()) }
	for _, k := range []string{"db.xact_commit/s", "db.tup_fetched/s", "db.tup_updated/s", "db.blks_hit/s", "db.blks_read/s", "db.wal_bytes/s", "db.wal_sync/s", "db.checkpoints/s"} {
		m[k] = jitter(10000 * speed)
	}
	for _, k := range []string{"db.wait.IO:WALSync", "db.wait.LWLock:WALWrite", "db.wait.Client:ClientRead", "db.wait.CPU", "db.wait.Lock:transactionid"} {
		m[k] = jitter(0.2)
	}
	for _, k := range []string{"host.cpu.user%", "host.cpu.system%", "host.cpu.iowait%", "host.cpu.idle%", "host.disk.vda.util%", "host.disk.vda.write_bytes/s", "host.disk.vda.writes/s", "host.mem.used%"} {
		m[k] = jitter(30)
	}
	for _, k := range []string{"client.cpu%", "client.goroutines", "client.gc.pause_ms", "client.sched.latency_p99_ms"} {
		m[k] = jitter(5)
	}
	return result.MonitorSample{Phase: "run", Start: iv.Start, End: iv.End, Metrics: m}
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
