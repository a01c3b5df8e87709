// Command scale measures dbprobe at the sizes of a billion-row key-value
// test (issue 22): how long `dbprobe run` takes to start over 10^6, 10^9
// and 10^12 records for each request distribution, and the throughput and
// peak memory of the null driver at 1, 64, 600 and 2,000 threads.
//
//	go run ./bench/scale --reps 5 --duration 10s
//
// Start-up is the wall time of a whole `dbprobe run --db null` process
// with operationcount=1, from exec to exit, so it bounds the time to the
// first operation from above (it includes the Go runtime's start, the
// configuration, the header and the one-operation summary). The median of
// --reps runs is reported. --bin names the binary (default: build
// ./cmd/dbprobe into a temporary directory), so an older build can be
// measured the same way.
//
// The null-driver runs use workload A (scrambled zipfian over 10^9
// records) for --duration each; ops/s is YCSB's [OVERALL] Throughput and
// peak RSS is the child's maximum resident set from wait4's rusage.
//
// The shard runs measure what the shard layer costs the client: workloads
// A and E (95% scans of up to 100 records) at --shard-threads threads on
// --db null, then on three null shards (--shard null, three times), where
// every operation is routed and every scan asks all three and adds up
// their answers.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
)

func main() {
	bin := flag.String("bin", "", "dbprobe binary to measure (default: build ./cmd/dbprobe)")
	reps := flag.Int("reps", 5, "start-up runs per case (the median is reported)")
	duration := flag.Duration("duration", 10*time.Second, "length of each null-driver run")
	threads := flag.String("threads", "1,64,600,2000", "null-driver thread counts")
	dists := flag.String("dists", "uniform,zipfian,latest,hotspot,sequential,exponential", "request distributions to start")
	counts := flag.String("records", "1000000,1000000000,1000000000000", "record counts to start over")
	skipStartup := flag.Bool("skip-startup", false, "only the null-driver runs")
	skipThreads := flag.Bool("skip-threads", false, "no null-driver thread runs")
	skipShards := flag.Bool("skip-shards", false, "no shard-layer runs")
	shardThreads := flag.String("shard-threads", "4", "threads of the shard-layer runs")
	flag.Parse()

	if *bin == "" {
		dir, err := os.MkdirTemp("", "scale-bench-")
		check(err)
		defer os.RemoveAll(dir)
		*bin = filepath.Join(dir, "dbprobe")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/dbprobe")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}

	if !*skipStartup {
		fmt.Println("| records | distribution | start-up median (ms) | min–max (ms) | peak RSS (MB) |")
		fmt.Println("|---|---|---|---|---|")
		for _, n := range strings.Split(*counts, ",") {
			for _, d := range strings.Split(*dists, ",") {
				var times []time.Duration
				var rss int64
				for range *reps {
					r := run(*bin, "run", "--db", "null", "-p", "recordcount="+n,
						"-p", "requestdistribution="+d, "-p", "operationcount=1", "--threads", "1")
					times = append(times, r.wall)
					rss = max(rss, r.maxRSS)
				}
				slices.Sort(times)
				fmt.Printf("| %s | %s | %.1f | %.1f–%.1f | %.0f |\n", n, d, ms(times[len(times)/2]),
					ms(times[0]), ms(times[len(times)-1]), float64(rss)/1024)
			}
		}
		fmt.Println()
	}

	if !*skipThreads {
		fmt.Println("| threads | ops/s | peak RSS (MB) | client CPU (s) |")
		fmt.Println("|---|---|---|---|")
		for _, th := range strings.Split(*threads, ",") {
			r := run(*bin, "run", "--db", "null", "--workload", "a", "-p", "recordcount=1000000000",
				"-p", "operationcount=0", "--duration", duration.String(), "--threads", th)
			tput := benchtext.Parse(r.out)["OVERALL"]["Throughput(ops/sec)"]
			fmt.Printf("| %s | %s | %.0f | %.1f |\n", th, thousands(tput), float64(r.maxRSS)/1024, r.cpu.Seconds())
		}
		fmt.Println()
	}

	if !*skipShards {
		fmt.Println("| workload | target | ops/s | client CPU µs/op |")
		fmt.Println("|---|---|---|---|")
		for _, w := range []string{"a", "e"} {
			for _, target := range [][]string{{"--db", "null"}, {"--shard", "null", "--shard", "null", "--shard", "null"}} {
				args := append([]string{"run", "--workload", w, "-p", "recordcount=1000000", "-p", "maxscanlength=100",
					"-p", "operationcount=0", "--duration", duration.String(), "--threads", *shardThreads}, target...)
				r := run(*bin, args...)
				tput := benchtext.Parse(r.out)["OVERALL"]["Throughput(ops/sec)"]
				ops := tput * duration.Seconds()
				fmt.Printf("| %s | %s | %s | %.3f |\n", w, strings.Join(target, " "), thousands(tput), r.cpu.Seconds()*1e6/ops)
			}
		}
	}
}

type result struct {
	out    []byte
	wall   time.Duration
	cpu    time.Duration
	maxRSS int64 // KiB
}

// run executes the binary and returns its stdout, wall time and rusage.
func run(bin string, args ...string) result {
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", bin, strings.Join(args, " "), err, benchtext.Redact(stderr.String()))
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return result{out: out, wall: wall, cpu: cpu, maxRSS: ru.Maxrss}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// thousands formats v rounded to an integer with comma separators.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
