// Command scrape measures what serving Prometheus costs dbprobe: a
// PostgreSQL workload A run at 32 threads scraped every second, as
// Prometheus would (gzip), and prints Markdown for bench/RESULTS.md.
//
//	scripts/with-databases go run ./bench/scrape --reps 5 --duration 15s
//
// Two parts. The direct one runs dbprobe once with --metrics-addr and
// --out, scraping it every second, and takes its CPU time from wait4's
// rusage. It then hands the run's own intervals (with their HDR
// histograms) and monitor samples, read back from --out, to the exporter
// in this process, and measures with getrusage the process CPU of each
// piece of work --metrics-addr adds to dbprobe: the exporter's Interval
// calls (which turn the runner's HDR histograms into fixed buckets) and
// Monitor calls, and serving a scrape of the final state (the largest),
// many times over.
// Their sum per second of run, against dbprobe's CPU per second, is the
// share. The interleaved part alternates runs without --metrics-addr and
// with it (scraped every second), taking turns going first, and reports
// the throughput ratio with its 95% interval and the smallest effect the
// repetitions could detect.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
	"github.com/dbprobe/dbprobe/internal/export"
	"github.com/dbprobe/dbprobe/internal/result"
)

func main() {
	pg := flag.String("pg", os.Getenv("DBPROBE_POSTGRES_URL"), "PostgreSQL URL (a throwaway server on 127.0.0.1)")
	records := flag.Int("records", 100000, "rows in usertable")
	threads := flag.Int("threads", 32, "worker threads")
	duration := flag.Duration("duration", 15*time.Second, "length of each run")
	reps := flag.Int("reps", 5, "pairs of runs (without and with scraping) in the interleaved part")
	scrapes := flag.Int("scrapes", 300, "scrapes of the final state timed in process")
	flag.Parse()
	if *pg == "" {
		fail("no PostgreSQL: give --pg or run under scripts/with-databases")
	}
	work, err := os.MkdirTemp("", "dbprobe-bench-scrape-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "dbprobe")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/dbprobe").CombinedOutput()
	if err != nil {
		fail("build: %v\n%s", err, out)
	}
	common := []string{"--db", *pg, "--workload", "a", "-p", "recordcount=" + strconv.Itoa(*records)}
	runCmd(bin, append([]string{"load", "--drop-existing", "--threads", "4"}, common...)...)
	runArgs := append([]string{"run", "--threads", strconv.Itoa(*threads), "-p", "operationcount=0", "--duration", duration.String()}, common...)

	// The direct part.
	resultFile := filepath.Join(work, "run.jsonl")
	direct := dbprobe(bin, runArgs, true, resultFile)
	costs := replay(resultFile, *scrapes)
	secs := direct.runSeconds
	perSecond := map[string]float64{
		"exporter: Interval and Monitor calls": costs.feed / secs,
		"serving one scrape a second":          costs.scrape,
	}
	var exporter float64
	for _, v := range perSecond {
		exporter += v
	}
	dbprobeCPU := direct.cpu / secs

	// The interleaved part.
	var on, off []run
	for i := range *reps {
		first, second := false, true
		if i%2 == 1 {
			first, second = true, false
		}
		a := dbprobe(bin, runArgs, first, "")
		b := dbprobe(bin, runArgs, second, "")
		if first {
			a, b = b, a
		}
		off, on = append(off, a), append(on, b)
		fmt.Fprintf(os.Stderr, "pair %d: off %.0f ops/s, on %.0f ops/s (%d scrapes)\n", i+1, a.opsPerSec, b.opsPerSec, b.scrapes)
	}

	host, _ := os.Hostname()
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Printf("Date %s, commit %s, host %s, %d CPUs (GOMAXPROCS %d), PostgreSQL workload A, %d threads, %d records, %s runs.\n\n",
		time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(commit)), host, runtime.NumCPU(), runtime.GOMAXPROCS(0), *threads, *records, duration)
	fmt.Printf("| direct part | CPU per second of run |\n|---|---|\n")
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range perSecond {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Printf("| %s | %.3f ms |\n", k, perSecond[k]*1000)
	}
	fmt.Printf("| **all that --metrics-addr adds** | **%.3f ms** |\n", exporter*1000)
	fmt.Printf("| dbprobe's CPU (wait4 rusage, user+system) | %.0f ms (%.0f%% of a core) |\n", dbprobeCPU*1000, dbprobeCPU*100)
	fmt.Printf("| **share of dbprobe's CPU** | **%.3f%%** |\n\n", 100*exporter/dbprobeCPU)
	fmt.Printf("One scrape: %.0f series lines, %d bytes of text, %d bytes sent to a scraper asking for gzip; %.3f ms of CPU each (the larger of the median of %d scrapes, process rusage around each, and their mean with the garbage collection they caused). The run: %.0f ops/s, %d scrapes answered.\n\n",
		costs.lines, costs.bytes, costs.sent, costs.scrape*1000, *scrapes, direct.opsPerSec, direct.scrapes)

	ratios := make([]float64, len(on))
	for i := range on {
		ratios[i] = on[i].opsPerSec / off[i].opsPerSec
	}
	mean, sd := meanSD(logs(ratios))
	n := float64(len(ratios))
	half := tQuantile(0.975, len(ratios)-1) * sd / math.Sqrt(n)
	mde := (tQuantile(0.975, len(ratios)-1) + tQuantile(0.80, len(ratios)-1)) * sd / math.Sqrt(n)
	fmt.Printf("| interleaved part (%d pairs) | without scraping | with --metrics-addr, scraped every 1 s |\n|---|---|---|\n", len(on))
	fmt.Printf("| throughput, median | %.0f ops/s | %.0f ops/s |\n", median(opsOf(off)), median(opsOf(on)))
	fmt.Printf("| client CPU per op, median | %.2f µs | %.2f µs |\n", median(cpuPerOp(off)), median(cpuPerOp(on)))
	fmt.Printf("| ratio with/without (geometric mean of pairs) | | **%.3f×** (95%% interval %.3f–%.3f) |\n", math.Exp(mean), math.Exp(mean-half), math.Exp(mean+half))
	fmt.Printf("| smallest difference these pairs detect (paired t, 5%% two-sided, 80%% power) | | ±%.1f%% |\n", 100*(math.Exp(mde)-1))
	fmt.Printf("\nPairs (on/off): %s\n", joinRatios(ratios))
}

type run struct {
	opsPerSec, runSeconds, cpu, ops float64
	scrapes                         int
}

// dbprobe runs one dbprobe run; with scrape it serves --metrics-addr and
// is scraped every second as Prometheus would, until it exits.
func dbprobe(bin string, args []string, scrape bool, out string) run {
	var addr string
	if scrape {
		addr = freeAddr()
		args = append(slices.Clone(args), "--metrics-addr", addr)
	}
	if out != "" {
		args = append(slices.Clone(args), "--out", out)
	}
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	check(cmd.Start())
	ctx, stop := context.WithCancel(context.Background())
	scraped := make(chan int, 1)
	if scrape {
		go func() { scraped <- scraper(ctx, "http://"+addr+"/metrics") }()
	} else {
		scraped <- 0
	}
	err := cmd.Wait()
	stop()
	if err != nil {
		fail("dbprobe %s: %v\n%s", benchtext.Redact(strings.Join(args, " ")), err, benchtext.Redact(stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	t := benchtext.Parse(stdout.Bytes())["OVERALL"]
	ops := t["Throughput(ops/sec)"] * t["RunTime(ms)"] / 1000
	return run{opsPerSec: t["Throughput(ops/sec)"], runSeconds: t["RunTime(ms)"] / 1000, cpu: cpu, ops: ops, scrapes: <-scraped}
}

// scraper GETs url every second with Prometheus's Accept-Encoding until
// ctx ends, and returns how many scrapes were answered.
func scraper(ctx context.Context, url string) int {
	n := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			n++
		}
	}
}

type replayCosts struct {
	feed, scrape float64 // seconds of CPU: all calls, one scrape
	lines        float64
	bytes, sent  int
}

// replay feeds the run's intervals and samples to an exporter in this
// process and measures the CPU of each part.
func replay(path string, scrapes int) replayCosts {
	f, err := os.Open(path)
	check(err)
	res, err := result.Read(f)
	f.Close()
	check(err)
	var intervals []result.Interval
	var samples []result.MonitorSample
	for _, ph := range res.Phases {
		if ph.Header.Phase == "run" {
			intervals, samples = ph.Intervals, ph.Monitor
		}
	}
	if len(intervals) == 0 {
		fail("no run intervals in %s", path)
	}
	var c replayCosts

	// The runner hands the exporter each interval's histograms as they
	// are (measure.Summary.HDR): decode them here, outside the
	// measurement, and drop the encoding, which --metrics-addr alone does
	// not ask for.
	for _, iv := range intervals {
		for k, s := range iv.Series {
			if s.Histogram != "" {
				h, err := hdr.Decode([]byte(s.Histogram))
				check(err)
				iv.Series[k].HDR, iv.Series[k].Histogram = h, ""
			}
		}
	}

	p := export.NewPrometheus(map[string]string{"driver": "postgres", "run_id": "20261125T000000Z-0000"})
	c.feed = cpuOf(func() {
		for i, iv := range intervals {
			check(p.Interval(iv))
			if i < len(samples) {
				check(p.Monitor(samples[i]))
			}
		}
	})

	h := p.Handler()
	serve := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		h.ServeHTTP(rec, req)
		return rec
	}
	first := serve()
	c.sent = first.Body.Len()
	var text []byte
	if first.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(first.Body)
		check(err)
		text, err = io.ReadAll(zr)
		check(err)
	} else {
		text = first.Body.Bytes()
	}
	c.bytes = len(text)
	for _, l := range strings.Split(string(text), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			c.lines++
		}
	}
	each := make([]float64, scrapes)
	for i := range each {
		each[i] = cpuOf(func() { serve() })
	}
	// The median of single scrapes, and the mean of them all with the
	// garbage collection they caused (runtime.GC inside the last timing).
	total := cpuOf(func() {
		for range scrapes {
			serve()
		}
		runtime.GC()
	})
	c.scrape = math.Max(median(each), total/float64(scrapes))
	return c
}

// cpuOf returns the process CPU time fn took (user+system, getrusage).
func cpuOf(fn func()) float64 {
	before := processCPU()
	fn()
	return processCPU() - before
}

func processCPU() float64 {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func runCmd(name string, args ...string) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		fail("%s %s: %v\n%s", name, benchtext.Redact(strings.Join(args, " ")), err, benchtext.Redact(string(out)))
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}

func opsOf(rs []run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.opsPerSec
	}
	return out
}

func cpuPerOp(rs []run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.cpu / r.ops * 1e6
	}
	return out
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

func meanSD(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		v /= float64(len(xs) - 1)
	}
	return m, math.Sqrt(v)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// tQuantile is Student's t quantile for df degrees of freedom (1–10, then
// the normal's), at 0.975 or 0.80: all this benchmark asks.
func tQuantile(p float64, df int) float64 {
	t975 := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228}
	t80 := []float64{1.376, 1.061, 0.978, 0.941, 0.920, 0.906, 0.896, 0.889, 0.883, 0.879}
	table, normal := t975, 1.960
	if p == 0.80 {
		table, normal = t80, 0.842
	}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	return normal
}

func joinRatios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.3f", r)
	}
	return strings.Join(parts, ", ")
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scrape: "+format+"\n", args...)
	os.Exit(1)
}
