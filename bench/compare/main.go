// Command compare measures dbprobe side by side with the stock tools on the
// same machine in one run, interleaving repetitions so that a noisy
// neighbour hurts both alike, and prints medians as Markdown for
// bench/RESULTS.md.
//
//	go run ./bench/compare --pg "$DBPROBE_POSTGRES_URL"
//
// It builds dbprobe, loads a PostgreSQL usertable of --records rows with
// ordered keys (user0, user1, … so pgbench can name them too), then for
// each thread count runs pgbench -M prepared with a custom script (SELECT
// of a whole row by key, UPDATE of one field by key, 50/50) and dbprobe
// workload A with a uniform distribution. Client CPU per operation is the
// client process's user+system time (from wait4's rusage, the figures
// /proc/PID/stat holds) divided by its operations. It also measures the
// harness ceiling (--db null) and SQLite workload A. The stress part
// (stress.go) runs `dbprobe stress` beside `pgbench -f` with the same
// point-select and update scripts, and the built-in OLTP mix at several
// thread counts with its server-side reads.
//
// With --base REV it also builds dbprobe from that git revision and runs
// it beside the current build in the PostgreSQL, --db null and Redis parts, the
// two back to back in each repetition and taking turns going first, with
// the ratios of current to base: whether a change kept the speed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
)

type measurement struct {
	opsPerSec  float64
	runSeconds float64
	cpuPerOp   float64 // µs of client CPU per operation
	p          map[string][3]float64
}

func main() {
	pg := flag.String("pg", os.Getenv("DBPROBE_POSTGRES_URL"), "PostgreSQL URL (a throwaway server on 127.0.0.1)")
	records := flag.Int("records", 100000, "rows in usertable")
	ops := flag.Int("ops", 200000, "operations per PostgreSQL run")
	threadList := flag.String("threads", "8,32", "thread counts to compare")
	reps := flag.Int("reps", 3, "repetitions of each run (medians are reported)")
	nullOps := flag.Int("null-ops", 40000000, "operations of the --db null run")
	sqliteOps := flag.Int("sqlite-ops", 400000, "operations of the SQLite run")
	mysqlURL := flag.String("mysql", os.Getenv("DBPROBE_MYSQL_URL"), "MySQL/MariaDB URL (a throwaway server on 127.0.0.1)")
	redisURL := flag.String("redis", os.Getenv("DBPROBE_REDIS_URL"), "Redis URL (a throwaway server on 127.0.0.1)")
	kvOps := flag.Int("kv-ops", 200000, "operations per MariaDB and Redis run")
	kvThreads := flag.Int("kv-threads", 32, "threads (clients) of the MariaDB and Redis comparisons")
	bulkRecords := flag.Int("bulk-records", 100000, "rows per bulk-load run")
	monitorReps := flag.Int("monitor-reps", 5, "runs with and without the monitor in the monitoring-cost part (medians)")
	monitorDuration := flag.Duration("monitor-duration", 10*time.Second, "length of each run of the monitoring-cost part")
	monitorDurability := flag.String("monitor-durability", "server", "--durability of the monitoring-cost runs: server (commit flush bound here) or delayed (CPU bound)")
	monitorSamples := flag.String("monitor-wait-samples", "10,1", "the --monitor-wait-samples values the monitoring-cost part compares with --no-monitor")
	stressScale := flag.Int("stress-scale", 1, "pgbench -i scale of the stress part's pgbench_accounts (100,000 rows per unit)")
	stressOps := flag.Int("stress-ops", 200000, "statements per run of the stress part's pgbench comparison")
	stressThreads := flag.Int("stress-threads", 32, "threads (clients) of the stress part's pgbench comparison")
	stressScriptList := flag.String("stress-scripts", "select,update", "the stress part's scripts run by both tools, each on its own: select, update (\"\" skips the pgbench comparison)")
	stressSampling := flag.Float64("stress-sampling", 0.05, "pgbench's --sampling-rate of its per-transaction log in the stress part (1 logs every transaction)")
	oltpRows := flag.Int("oltp-rows", 1000000, "--rows of the stress part's OLTP mix")
	oltpIterations := flag.Int("oltp-iterations", 100000, "iterations in all of each OLTP mix run, split evenly among its threads")
	oltpThreads := flag.String("oltp-threads", "1,4,16", "thread counts of the stress part's OLTP mix (\"\" skips it)")
	skip := flag.String("skip", "", "comma-separated parts to skip: pg, null, sqlite, mysql, redis, bulk, monitor, stress")
	only := flag.String("only", "", "comma-separated parts to run (default: all)")
	baseRev := flag.String("base", "", "a git revision to build as a second dbprobe and run beside the current one in the pg, null and redis parts (rows \"dbprobe (base REV)\", ratios current/base)")
	flag.Parse()
	want := func(part string) bool {
		if *only != "" {
			return slices.Contains(strings.Split(*only, ","), part)
		}
		return !slices.Contains(strings.Split(*skip, ","), part)
	}

	work, err := os.MkdirTemp("", "dbprobe-bench-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "dbprobe")
	run("go", "build", "-o", bin, "./cmd/dbprobe")
	var base *build
	if *baseRev != "" {
		b := buildBase(work, *baseRev)
		base = &b
	}

	fmt.Printf("Measured %s on %s/%s, %d CPUs, %s, load average %s at the start.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAverage())
	if want("pg") {
		if *pg == "" {
			fmt.Fprintln(os.Stderr, "no --pg URL: skipping the PostgreSQL comparison (run through scripts/with-databases)")
		} else {
			comparePostgres(bin, base, work, *pg, *records, *ops, *threadList, *reps)
		}
	}
	if want("null") {
		ceiling(bin, base, *nullOps, *reps)
	}
	if want("sqlite") {
		sqliteRun(bin, work, *records, *sqliteOps, *reps)
	}
	if want("mysql") {
		if *mysqlURL == "" {
			fmt.Fprintln(os.Stderr, "no --mysql URL: skipping the MariaDB comparison (run through scripts/with-databases)")
		} else {
			compareMySQL(bin, *mysqlURL, *records, *kvOps, *kvThreads, *reps)
		}
	}
	if want("redis") {
		if *redisURL == "" {
			fmt.Fprintln(os.Stderr, "no --redis URL: skipping the Redis comparison (run through scripts/with-databases)")
		} else {
			compareRedis(bin, base, *redisURL, *records, *kvOps, *kvThreads, *reps)
		}
	}
	if want("monitor") {
		if *pg == "" {
			fmt.Fprintln(os.Stderr, "no --pg URL: skipping the monitoring cost (run through scripts/with-databases)")
		} else {
			monitorCost(bin, *pg, *records, *monitorReps, *monitorDuration, *monitorDurability, strings.Split(*monitorSamples, ","))
		}
	}
	if want("stress") {
		if *pg == "" {
			fmt.Fprintln(os.Stderr, "no --pg URL: skipping the stress comparison (run through scripts/with-databases)")
		} else {
			var scripts []string
			for _, s := range strings.Split(*stressScriptList, ",") {
				if s = strings.TrimSpace(s); s != "" {
					scripts = append(scripts, s)
				}
			}
			compareStress(bin, work, *pg, stressConfig{scale: *stressScale, ops: *stressOps, threads: *stressThreads,
				scripts: scripts, sampling: *stressSampling, oltpRows: *oltpRows, oltpIterations: *oltpIterations,
				oltpThreads: parseInts("--oltp-threads", *oltpThreads)}, *reps)
		}
	}
	if want("bulk") {
		targets := []bulkTarget{{"SQLite", "sqlite://" + filepath.Join(work, "bulk.db")}}
		for _, t := range []bulkTarget{{"PostgreSQL", *pg}, {"MariaDB", *mysqlURL}, {"Redis", *redisURL}, {"SQL Server", os.Getenv("DBPROBE_SQLSERVER_URL")}} {
			if t.url != "" {
				targets = append(targets, t)
			}
		}
		bulkLoad(bin, targets, *bulkRecords, *reps)
	}
}

// comparePostgres runs pgbench, dbprobe, dbprobe --no-monitor and, with
// base, the base build, rotating which goes first; the base build runs
// right before or after the current one, the two taking turns.
func comparePostgres(bin string, base *build, work, pg string, records, ops int, threadList string, reps int) {
	common := []string{"--db", pg, "-P", "workloads/workloada", "-p", "recordcount=" + strconv.Itoa(records),
		"-p", "insertorder=ordered", "-p", "requestdistribution=uniform"}
	run(bin, append([]string{"load", "--drop-existing", "--threads", "4"}, common...)...)
	run("psql", pg, "-X", "-q", "-c", "VACUUM ANALYZE usertable")
	scripts := writePgbenchScripts(work, records)

	fmt.Printf("## PostgreSQL workload A (uniform), %d records, %d operations, median of %d\n\n", records, ops, reps)
	fmt.Println("| threads | tool | ops/s | READ p50/p95/p99 µs | UPDATE p50/p95/p99 µs | client CPU µs/op |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, ts := range strings.Split(threadList, ",") {
		threads, err := strconv.Atoi(ts)
		check(err)
		var pgb, dbp, quiet, old []measurement
		runArgs := append([]string{"run", "--threads", ts, "-p", "operationcount=" + strconv.Itoa(ops)}, common...)
		// dbprobe runs as users run it (its monitor on) and with --no-monitor,
		// the load path alone, as pgbench is. The base build shares the
		// current one's slot in the rotation, so each pair runs back to back.
		current := []tool{{"dbprobe", func(int) { dbp = append(dbp, dbprobe(bin, runArgs, ops)) }}}
		if base != nil {
			current = append(current, tool{"base", func(int) { old = append(old, dbprobe(base.bin, runArgs, ops)) }})
		}
		orders := interleave(reps, [][]tool{
			{{"pgbench", func(int) { pgb = append(pgb, pgbench(work, pg, scripts, readUpdate, 0, threads, ops)) }}},
			current,
			{{"--no-monitor", func(int) {
				quiet = append(quiet, dbprobe(bin, append(runArgs[:len(runArgs):len(runArgs)], "--no-monitor"), ops))
			}}},
		})
		mp, md, mq := median(pgb), median(dbp), median(quiet)
		row(threads, "pgbench -M prepared", mp)
		row(threads, "dbprobe", md)
		row(threads, "dbprobe --no-monitor", mq)
		if base != nil {
			row(threads, base.name, median(old))
		}
		ratio := func(name string, num, den []measurement) {
			fmt.Printf("| %d | %s | %s | | | %s |\n", threads, name, pairRatios(num, den, opsPerSec), pairRatios(num, den, cpuPerOp))
		}
		ratio("dbprobe / pgbench", dbp, pgb)
		ratio("dbprobe --no-monitor / pgbench", quiet, pgb)
		if base != nil {
			ratio("base / pgbench", old, pgb)
			ratio("dbprobe / base", dbp, old)
		}
		fmt.Printf("\nRatios are the median (and range) over the %d repetitions of the ratio of two runs in the same repetition.\n\n", reps)
		cols := "pgbench, dbprobe, --no-monitor"
		if base != nil {
			cols += ", base"
		}
		fmt.Printf("| rep | order | ops/s: %s | CPU µs/op: %s |\n", cols, cols)
		fmt.Println("|---|---|---|---|")
		for r := range reps {
			var o, c []string
			for _, ms := range [][]measurement{pgb, dbp, quiet, old} {
				if r < len(ms) {
					o = append(o, fmt.Sprintf("%.0f", ms[r].opsPerSec))
					c = append(c, fmt.Sprintf("%.1f", ms[r].cpuPerOp))
				}
			}
			fmt.Printf("| %d | %s | %s | %s |\n", r+1, orders[r], strings.Join(o, ", "), strings.Join(c, ", "))
		}
		fmt.Println()
	}
	fmt.Println()
}

// monitorCost runs PostgreSQL workload A at 32 threads without the
// monitor, with it, and with it looking at the sessions' waits once per
// interval instead of ten times, in rotation, and compares each with the
// run without it from the same round: the median of those ratios, so that
// the machine's drift between rounds cancels out.
func monitorCost(bin, pg string, records, reps int, d time.Duration, durability string, samples []string) {
	common := []string{"--db", pg, "--workload", "a", "-p", "recordcount=" + strconv.Itoa(records), "-p", "table=monitorcost"}
	run(bin, append([]string{"load", "--drop-existing", "--threads", "4"}, common...)...)
	args := append([]string{"run", "--threads", "32", "-p", "operationcount=0", "--duration", d.String(), "--durability", durability}, common...)
	type variant struct {
		name  string
		extra []string
	}
	variants := []variant{{"off (--no-monitor)", []string{"--no-monitor"}}}
	for _, n := range samples {
		variants = append(variants, variant{"on (1 s interval, " + n + " wait samples per interval)", []string{"--monitor-wait-samples", n}})
	}
	got := make([][]measurement, len(variants))
	shares := make([][]cpuShare, len(variants))
	for rep := range reps {
		for i := range variants {
			v := (rep + i) % len(variants) // each variant goes first, second and third in turn
			var watch <-chan cpuShare
			if v > 0 {
				watch = watchMonitorBackend(pg, d)
			}
			got[v] = append(got[v], dbprobeFor(bin, append(slices.Clone(args), variants[v].extra...)))
			if watch != nil {
				if sh, ok := <-watch; ok {
					shares[v] = append(shares[v], sh)
				}
			}
		}
	}
	fmt.Printf("## Monitoring cost: PostgreSQL workload A, 32 threads, --durability %s, %s runs, %d rounds of each variant in rotation\n\n", durability, d, reps)
	fmt.Println("| monitor | ops/s (median) | ops/s (min–max) | client CPU µs/op | throughput vs off, same round (median) |")
	fmt.Println("|---|---|---|---|---|")
	for v, ms := range got {
		lo, hi := ms[0].opsPerSec, ms[0].opsPerSec
		var ratios []float64
		for r, m := range ms {
			lo, hi = min(lo, m.opsPerSec), max(hi, m.opsPerSec)
			ratios = append(ratios, m.opsPerSec/got[0][r].opsPerSec)
		}
		mid := medianOf(ratios)
		m := median(ms)
		fmt.Printf("| %s | %.0f | %.0f–%.0f | %.2f | %+.1f%% |\n", variants[v].name, m.opsPerSec, lo, hi, m.cpuPerOp, 100*(mid-1))
	}
	fmt.Println()
	fmt.Println("The monitor's own CPU, against the CPU the whole machine spent in the same runs (both cores):")
	fmt.Println()
	fmt.Println("| monitor | its PostgreSQL backend | its client side (idle run, on − off) | machine busy | monitor share of the busy CPU |")
	fmt.Println("|---|---|---|---|---|")
	for v := 1; v < len(variants); v++ {
		var backend, busy, window float64
		for _, sh := range shares[v] {
			backend += sh.monitorBackend
			busy += sh.busy
			window += sh.window
		}
		if window == 0 {
			continue
		}
		client := idleMonitorCPU(bin, common, variants[v].extra[1], 10*time.Second, 3)
		share := (backend/window + client) / (busy / window)
		fmt.Printf("| %s | %.1f ms/s | %.1f ms/s | %.2f s/s | %.2f%% |\n", variants[v].name, 1000*backend/window, 1000*client, busy/window, 100*share)
	}
	fmt.Println()
}

// dbprobeFor runs a time-bounded dbprobe run; its operation count comes
// from its own output.
func dbprobeFor(bin string, args []string) measurement {
	m := dbprobe(bin, args, 1)
	ops := m.opsPerSec * m.runSeconds
	if ops > 0 {
		m.cpuPerOp /= ops
	}
	return m
}

func row(threads int, tool string, m measurement) {
	f := func(k string) string {
		p := m.p[k]
		return fmt.Sprintf("%.0f / %.0f / %.0f", p[0], p[1], p[2])
	}
	fmt.Printf("| %d | %s | %.0f | %s | %s | %.1f |\n", threads, tool, m.opsPerSec, f("READ"), f("UPDATE"), m.cpuPerOp)
}

// writePgbenchScripts writes a read script and one update script per field:
// pgbench cannot choose a column at random, so the ten update scripts
// share the update half of the mix.
func writePgbenchScripts(work string, records int) []string {
	value := strings.Repeat("x", 100)
	read := fmt.Sprintf("\\set k random(0, %d)\nSELECT ycsb_key, field0, field1, field2, field3, field4, field5, field6, field7, field8, field9 FROM usertable WHERE ycsb_key = 'user' || :k;\n", records-1)
	path := filepath.Join(work, "read.sql")
	check(os.WriteFile(path, []byte(read), 0o644))
	args := []string{"-f", path + "@50"}
	for f := range 10 {
		p := filepath.Join(work, fmt.Sprintf("update%d.sql", f))
		s := fmt.Sprintf("\\set k random(0, %d)\nUPDATE usertable SET field%d = '%s' WHERE ycsb_key = 'user' || :k;\n", records-1, f, value)
		check(os.WriteFile(p, []byte(s), 0o644))
		args = append(args, "-f", p+"@5")
	}
	return args
}

// readUpdate names the latencies of writePgbenchScripts' scripts: the
// first reads, the others update.
var readUpdate = []string{"READ", "UPDATE"}

// pgbench runs pgbench -M prepared with the -f arguments scripts, each
// client running ops/threads transactions. Script i's latencies go under
// labels[i] (later scripts under the last label). With 0 < sampling < 1
// only that share of the transactions is logged (--sampling-rate), so
// that the log's writes cost the client next to nothing.
func pgbench(work, pg string, scripts, labels []string, sampling float64, threads, ops int) measurement {
	logDir, err := os.MkdirTemp(work, fmt.Sprintf("pgbench-%d-", threads))
	check(err)
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(threads), "-j", strconv.Itoa(min(threads, runtime.NumCPU())),
		"-t", strconv.Itoa(ops / threads), "-l", "--log-prefix", filepath.Join(logDir, "log")}
	if sampling > 0 && sampling < 1 {
		args = append(args, "--sampling-rate", strconv.FormatFloat(sampling, 'f', -1, 64))
	}
	args = append(args, scripts...)
	cmd := exec.Command("pgbench", args...)
	cmd.Env = pgEnv(pg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fatalf("pgbench: %v\n%s", err, out.String())
	}
	m := measurement{p: map[string][3]float64{}}
	done := (ops / threads) * threads
	m.cpuPerOp = cpuMicros(cmd) / float64(done)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "tps = ") {
			m.opsPerSec, _ = strconv.ParseFloat(strings.Fields(line)[2], 64)
		}
	}
	// Per-transaction log: client, transaction, latency µs, script, epoch, µs.
	lat := map[string][]float64{}
	files, _ := filepath.Glob(filepath.Join(logDir, "log*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		check(err)
		for _, line := range strings.Split(string(data), "\n") {
			fs := strings.Fields(line)
			if len(fs) < 4 {
				continue
			}
			v, _ := strconv.ParseFloat(fs[2], 64)
			script, _ := strconv.Atoi(fs[3])
			op := labels[min(script, len(labels)-1)]
			lat[op] = append(lat[op], v)
		}
	}
	for op, vs := range lat {
		m.p[op] = percentiles(vs)
	}
	return m
}

// pgEnv is the environment that points libpq's tools (pgbench, psql) at
// the server of URL pg, its password passed in PGPASSWORD rather than on a
// command line.
func pgEnv(pg string) []string {
	u, err := url.Parse(pg)
	check(err)
	pw, _ := u.User.Password()
	return append(os.Environ(), "PGHOST="+u.Hostname(), "PGPORT="+u.Port(), "PGUSER="+u.User.Username(),
		"PGPASSWORD="+pw, "PGDATABASE="+strings.TrimPrefix(u.Path, "/"))
}

// dbprobe runs dbprobe with args and reads its text result: the overall
// rate, the 50th, 95th and 99th percentiles of every series that has
// them, and the client CPU per operation over ops operations.
func dbprobe(bin string, args []string, ops int) measurement {
	out, cmd := dbprobeText(bin, args)
	m := measurement{p: map[string][3]float64{}}
	vals := benchtext.Parse(out)
	m.opsPerSec = vals["OVERALL"]["Throughput(ops/sec)"]
	m.runSeconds = vals["OVERALL"]["RunTime(ms)"] / 1000
	for op, s := range vals {
		if p50, ok := s["50thPercentileLatency(us)"]; ok {
			m.p[op] = [3]float64{p50, s["95thPercentileLatency(us)"], s["99thPercentileLatency(us)"]}
		}
	}
	m.cpuPerOp = cpuMicros(cmd) / float64(ops)
	return m
}

// dbprobeText runs dbprobe with args and returns its standard output and
// the finished command (for its rusage); a failure ends the comparison.
func dbprobeText(bin string, args []string) ([]byte, *exec.Cmd) {
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		fatalf("dbprobe %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.Bytes(), cmd
}

// ceiling measures the harness alone (--db null); with base, the two builds
// take turns going first.
func ceiling(bin string, base *build, ops, reps int) {
	args := []string{"run", "--db", "null", "--workload", "a", "--threads", "4",
		"-p", "recordcount=100000", "-p", "operationcount=" + strconv.Itoa(ops)}
	var cur, old []measurement
	for rep := range reps {
		if base != nil && rep%2 == 1 {
			old = append(old, dbprobe(base.bin, args, ops))
		}
		cur = append(cur, dbprobe(bin, args, ops))
		if base != nil && rep%2 == 0 {
			old = append(old, dbprobe(base.bin, args, ops))
		}
	}
	fmt.Printf("## Harness ceiling: --db null, workload A, 4 threads, histograms on, %d operations, median of %d\n\n", ops, reps)
	fmt.Println("| build | ops/s | client CPU µs/op |\n|---|---|---|")
	m := median(cur)
	fmt.Printf("| dbprobe | %.0f | %.3f |\n", m.opsPerSec, m.cpuPerOp)
	if base != nil {
		b := median(old)
		fmt.Printf("| %s | %.0f | %.3f |\n", base.name, b.opsPerSec, b.cpuPerOp)
		fmt.Printf("| dbprobe / base (median of %d pairs, range) | %s | %s |\n", reps, pairRatios(cur, old, opsPerSec), pairRatios(cur, old, cpuPerOp))
		fmt.Println("\nPer pair (current, base): ops/s and client CPU µs/op:")
		fmt.Println()
		for r := range reps {
			fmt.Printf("- %d: %.0f, %.0f; %.3f, %.3f\n", r+1, cur[r].opsPerSec, old[r].opsPerSec, cur[r].cpuPerOp, old[r].cpuPerOp)
		}
	}
	fmt.Println()
}

// median takes the median of each figure separately.
func median(ms []measurement) measurement {
	pick := func(get func(measurement) float64) float64 {
		vs := make([]float64, len(ms))
		for i, m := range ms {
			vs[i] = get(m)
		}
		sort.Float64s(vs)
		return vs[len(vs)/2]
	}
	out := measurement{p: map[string][3]float64{}}
	out.opsPerSec = pick(func(m measurement) float64 { return m.opsPerSec })
	out.cpuPerOp = pick(func(m measurement) float64 { return m.cpuPerOp })
	for op := range ms[0].p {
		var p [3]float64
		for i := range p {
			p[i] = pick(func(m measurement) float64 { return m.p[op][i] })
		}
		out.p[op] = p
	}
	return out
}

func percentiles(vs []float64) [3]float64 {
	sort.Float64s(vs)
	at := func(q float64) float64 { return vs[min(len(vs)-1, int(q*float64(len(vs))))] }
	return [3]float64{at(0.50), at(0.95), at(0.99)}
}

// cpuMicros is the finished process's user+system CPU time in µs.
func cpuMicros(cmd *exec.Cmd) float64 {
	return float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Microseconds())
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	// The commands hold database URLs and passwords: never print those.
	fmt.Fprintln(os.Stderr, "compare: "+benchtext.Redact(fmt.Sprintf(format, args...)))
	os.Exit(1)
}
