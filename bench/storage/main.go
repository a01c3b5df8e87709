package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
	"github.com/dbprobe/dbprobe/internal/instance"
)

// config is the run's flags.
type config struct {
	bin       string
	work      string
	dir       string
	size      string // the table of scan, read and rss, dbprobe's --size
	bulkSize  string // the rows of the bulk pairs
	reps      int
	fioTime   time.Duration
	studySize string
	copySize  string
	logCap    int64
	// studyParts are the study's parts to run (--study).
	studyParts []string
	// cacheMax and cachePG are the cache part's timed run: its
	// --max-size and its PostgreSQL's shared_buffers.
	cacheMax, cachePG string
}

// cleanups undo what the run set up (servers, loop devices, blkio
// groups, the work directory), newest first, also when it fails.
var cleanups []func()

// atExit registers f to run at the end, or before a failure's exit.
func atExit(f func()) { cleanups = append(cleanups, f) }

// runAtExit runs the registered cleanups, newest first, once.
func runAtExit() {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func main() {
	var c config
	flag.StringVar(&c.dir, "dir", os.TempDir(), "the file system to measure and to put the servers, files and fio's file on (the throwaway servers' is /tmp)")
	flag.StringVar(&c.size, "size", "2GB", "the table of the scan and read pairs and of the RSS runs (dbprobe's --size)")
	flag.StringVar(&c.bulkSize, "bulk-size", "1GB", "the rows loaded by each run of the bulk pairs (dbprobe's --size; the file for psql and LOAD DATA holds the same rows)")
	flag.IntVar(&c.reps, "reps", 5, "pairs of runs in each comparison (medians are reported)")
	flag.DurationVar(&c.fioTime, "fio-time", 15*time.Second, "length of each fio run")
	flag.StringVar(&c.studySize, "study-size", "1GB", "--size of the study's scan, read, write and bulk runs")
	flag.StringVar(&c.copySize, "copy-size", "500MB", "--size of the study's table copies")
	flag.Int64Var(&c.logCap, "log-cap", 48_000_000, "bytes per second the log's device is capped at in the study's capped copies (the study's 48 MB/s)")
	studyParts := flag.String("study", "postgres,mariadb,sqlite,capped", "the study's parts to run: postgres, mariadb, sqlite, capped")
	flag.StringVar(&c.cacheMax, "cache-max", "4GB", "--max-size of the cache part's timed PostgreSQL run")
	flag.StringVar(&c.cachePG, "cache-pg", "1GB", "shared_buffers of the cache part's timed PostgreSQL run")
	only := flag.String("only", "disk,scan,bulk,mybulk,read,rss,study,cache", "comma-separated parts to run: disk, scan, bulk, mybulk, read, rss, study, cache")
	flag.Parse()
	parts := strings.Split(*only, ",")
	want := func(p string) bool { return slices.Contains(parts, p) }

	var err error
	c.work, err = os.MkdirTemp(c.dir, "dbprobe-storagebench-")
	check(err)
	atExit(func() { os.RemoveAll(c.work) })
	defer runAtExit()
	c.studyParts = strings.Split(*studyParts, ",")
	os.Chmod(c.work, 0o755)
	c.bin = filepath.Join(c.work, "dbprobe")
	run("go", "build", "-o", c.bin, "./cmd/dbprobe")

	fmt.Printf("Measured %s · commit %s · %s/%s, %d CPUs, %s · load average %s at the start · data under %s (%s)\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.TrimSpace(output("git", "rev-parse", "--short", "HEAD")),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAverage(), c.dir, deviceOf(c.dir))

	if want("disk") {
		diskLimits(c)
	}
	ctx := context.Background()
	if want("scan") || want("bulk") || want("read") || want("rss") {
		pg := startServer(ctx, c, instance.Postgres, map[string]string{"shared_buffers": "16MB"})
		if want("scan") {
			scanPairs(c, pg)
		}
		if want("read") {
			readPairs(c, pg)
		}
		if want("bulk") {
			bulkPairs(c, pg)
		}
		if want("rss") {
			rssRuns(c, pg)
		}
		pg.Close()
	}
	if want("mybulk") {
		my := startServer(ctx, c, instance.MariaDB, mariaSettings)
		myBulkPairs(c, my)
		my.Close()
	}
	if want("study") {
		study(ctx, c)
	}
	if want("cache") {
		cacheRuns(ctx, c)
	}
	fmt.Printf("Load average %s at the end, %s.\n", loadAverage(), time.Now().UTC().Format("15:04 UTC"))
}

// mariaSettings are the MariaDB server's: the buffer pool and LOAD DATA
// LOCAL of scripts/with-databases' server.
var mariaSettings = map[string]string{"innodb_buffer_pool_size": "256M", "local_infile": "ON"}

// startServer starts a throwaway server with its data under --dir.
func startServer(ctx context.Context, c config, kind instance.Kind, settings map[string]string) *instance.Server {
	data, err := os.MkdirTemp(c.work, kind.String()+"-")
	check(err)
	os.Chmod(data, 0o755)
	s, err := instance.Start(ctx, kind, instance.Options{Settings: settings, DataDir: filepath.Join(data, "data")})
	check(err)
	atExit(func() { s.Close() })
	return s
}

// proc is what a finished process cost: wall time, CPU and peak RSS.
type proc struct {
	out     []byte
	wall    time.Duration
	cpu     time.Duration
	maxRSS  int64 // bytes
	command string
}

// runProc runs a command to its end and takes its rusage; env is added to
// the process's environment.
func runProc(env []string, name string, args ...string) proc {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	p := proc{out: out.Bytes(), wall: time.Since(t0), command: name + " " + strings.Join(args, " ")}
	if err != nil {
		fatalf("%s: %v\n%s\n%s", p.command, err, out.String(), errOut.String())
	}
	p.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.maxRSS = ru.Maxrss << 10 // Linux gives kilobytes
	}
	return p
}

// storageSummary is the part of dbprobe's JSON result the harness reads.
type storageSummary struct {
	Table struct {
		Name  string `json:"name"`
		Bytes int64  `json:"bytes"`
		Rows  int64  `json:"rows"`
		File  string `json:"file"`
	} `json:"table"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	Rate      float64 `json:"rate_bytes_per_s"`
	Rows      int64   `json:"rows"`
	PerSecond []struct {
		Elapsed float64 `json:"elapsed_s"`
		Seconds float64 `json:"seconds"`
		Bytes   int64   `json:"bytes"`
	} `json:"per_second"`
	Steps []struct {
		Label       string  `json:"label"`
		Seconds     float64 `json:"seconds"`
		Bytes       int64   `json:"bytes"`
		Rate        float64 `json:"rate_bytes_per_s"`
		Rows        int64   `json:"rows"`
		DeviceRead  int64   `json:"device_read_bytes"`
		DeviceWrite int64   `json:"device_write_bytes"`
	} `json:"steps"`
	Proof *struct {
		DatabaseBytes int64 `json:"database_bytes"`
		DeviceBytes   int64 `json:"device_bytes"`
	} `json:"proof"`
	Verdict string        `json:"verdict"`
	Cache   *cacheFigures `json:"cache"`
}

// dbprobeRun is one dbprobe storage run: its process and its summary.
type dbprobeRun struct {
	proc
	sum storageSummary
}

// dbprobeStorage runs `dbprobe storage ARGS --out FILE -q` and reads the
// summary from the JSON result.
func dbprobeStorage(c config, args ...string) dbprobeRun {
	out := filepath.Join(c.work, "result.jsonl")
	os.Remove(out)
	p := runProc(nil, c.bin, append(append([]string{"storage"}, args...), "--out", out, "-q")...)
	data, err := os.ReadFile(out)
	check(err)
	var r dbprobeRun
	r.proc = p
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Type    string          `json:"type"`
			Storage json.RawMessage `json:"storage"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "summary" {
			check(json.Unmarshal(rec.Storage, &r.sum))
		}
	}
	if r.sum.Seconds == 0 {
		fatalf("dbprobe %s: no storage summary in its result", strings.Join(args, " "))
	}
	return r
}

// medianOf is the median of vs (the upper one of an even count).
func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// ratios prints the median and range of num[i]/den[i]: each is of two
// runs of the same pair, so the machine's drift between pairs cancels.
func ratios(num, den []float64) string {
	var rs []float64
	for i := range min(len(num), len(den)) {
		// A pair without the figure (NaN) is left out.
		if r := num[i] / den[i]; !math.IsNaN(r) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×)", medianOf(rs), slices.Min(rs), slices.Max(rs))
}

// deviceOf names the block device of dir's file system, from
// /proc/self/mountinfo's longest matching mount point.
func deviceOf(dir string) string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "unknown device"
	}
	best, dev := "", "unknown device"
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		mnt := f[4]
		i := slices.Index(f, "-")
		if i < 0 || i+2 >= len(f) {
			continue
		}
		if (dir == mnt || strings.HasPrefix(dir, strings.TrimSuffix(mnt, "/")+"/")) && len(mnt) >= len(best) {
			best, dev = mnt, f[i+2]+" "+f[i+1]
		}
	}
	return dev
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func run(name string, args ...string) { output(name, args...) }

func output(name string, args ...string) string {
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	// The commands hold database URLs and passwords: never print those.
	fmt.Fprintln(os.Stderr, "storagebench: "+benchtext.Redact(fmt.Sprintf(format, args...)))
	runAtExit()
	os.Exit(1)
}

// mb is bytes in decimal megabytes; gb in gigabytes.
func mb(n float64) float64 { return n / 1e6 }

// sizeBytes reads a decimal size as dbprobe's flags take it: 2GB, 500MB.
func sizeBytes(s string) int64 {
	units := []struct {
		suffix string
		mult   float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suffix), 64)
			check(err)
			return int64(v * u.mult)
		}
	}
	fatalf("size %q: give it as 2GB or 500MB", s)
	return 0
}
