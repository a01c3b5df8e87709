package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
)

// The stress part measures `dbprobe stress` (issue 20) twice over. First
// beside pgbench -f running the same SQL: a point SELECT by primary key
// and an UPDATE by key on pgbench's own pgbench_accounts, the key drawn
// uniformly per transaction (pgbench's \set aid random(1, N) against
// dbprobe's --param aid=uniform:1:N), both prepared, the same threads
// and the same statements per thread, rotating who goes first. Then the
// built-in OLTP mix at several thread counts, with the server-side reads
// per statement and per iteration that dbprobe reads from
// pg_stat_statements.

// stressConfig is the stress part's flags.
type stressConfig struct {
	scale    int      // pgbench -i scale: 100,000 pgbench_accounts rows per unit
	ops      int      // statements per run, ops/threads per client
	threads  int      // clients of both tools
	scripts  []string // which of stressScripts to run
	sampling float64  // pgbench's --sampling-rate of its per-transaction log

	oltpRows       int   // --rows of the mix
	oltpIterations int   // iterations in all, split among the threads
	oltpThreads    []int // thread counts of the mix
}

// stressScripts are the statements both tools run, by name: a script is
// one statement, so a transaction of pgbench is one statement of dbprobe.
var stressScripts = map[string]string{
	"select": "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
	"update": "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;",
}

// compareStress runs the two halves of the stress part.
func compareStress(bin, work, pg string, c stressConfig, reps int) {
	// dbprobe reads per-statement costs from pg_stat_statements, which
	// scripts/lib/postgres.sh preloads; it must also exist in the database.
	run("psql", pg, "-X", "-q", "-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	if len(c.scripts) > 0 {
		stressBesidePgbench(bin, work, pg, c, reps)
	}
	if len(c.oltpThreads) > 0 {
		oltpMix(bin, pg, c, reps)
	}
}

// stressBesidePgbench runs each script with pgbench, dbprobe stress and
// dbprobe stress --no-monitor in rotation.
func stressBesidePgbench(bin, work, pg string, c stressConfig, reps int) {
	c.ops -= c.ops % c.threads // both tools run ops/threads per client
	rows := 100000 * c.scale
	cmd := exec.Command("pgbench", "-i", "-q", "-s", strconv.Itoa(c.scale))
	cmd.Env = pgEnv(pg)
	if out, err := cmd.CombinedOutput(); err != nil {
		fatalf("pgbench -i: %v\n%s", err, out)
	}

	fmt.Printf("## `dbprobe stress` beside `pgbench -f`: PostgreSQL, the same scripts, %d threads, %d statements per run, median of %d\n\n", c.threads, c.ops, reps)
	fmt.Printf("pgbench_accounts of %d rows (`pgbench -i -s %d`); key uniform over 1…%d. pgbench: `-M prepared -c %d -j %d -t %d`, a script `\\set aid random(1, %d)` and the statement, its per-transaction log sampled at %g for the percentiles. dbprobe: `stress --threads %d --iterations %d --protocol prepared --param aid=uniform:1:%d` and the statement alone. Client CPU: user+system of the whole process (start-up, connections, dbprobe's checks and plans included) over its statements. Load average before each repetition in the last column.\n\n",
		rows, c.scale, rows, c.threads, min(c.threads, 2), c.ops/c.threads, rows, c.sampling, c.threads, c.ops/c.threads, rows)
	for _, name := range c.scripts {
		stmt, ok := stressScripts[name]
		if !ok {
			fatalf("--stress-scripts: unknown script %q (known: select, update)", name)
		}
		pgbFile := filepath.Join(work, "pgbench-"+name+".sql")
		check(os.WriteFile(pgbFile, []byte(fmt.Sprintf("\\set aid random(1, %d)\n%s\n", rows, stmt)), 0o644))
		dbpFile := filepath.Join(work, name+".sql")
		check(os.WriteFile(dbpFile, []byte(stmt+"\n"), 0o644))
		args := []string{"stress", "--db", pg, "--sql", dbpFile, "--param", fmt.Sprintf("aid=uniform:1:%d", rows),
			"--threads", strconv.Itoa(c.threads), "--iterations", strconv.Itoa(c.ops / c.threads), "--protocol", "prepared", "-q"}
		var pgb, dbp, quiet []measurement
		var loads []string
		orders := interleave(reps, [][]tool{
			{{"pgbench", func(rep int) {
				if len(loads) == rep {
					loads = append(loads, loadAverage())
				}
				pgb = append(pgb, pgbench(work, pg, []string{"-f", pgbFile}, []string{"ITERATION"}, c.sampling, c.threads, c.ops))
			}}},
			{{"dbprobe", func(rep int) {
				if len(loads) == rep {
					loads = append(loads, loadAverage())
				}
				dbp = append(dbp, dbprobe(bin, args, c.ops))
			}}},
			{{"--no-monitor", func(rep int) {
				if len(loads) == rep {
					loads = append(loads, loadAverage())
				}
				quiet = append(quiet, dbprobe(bin, append(slices.Clone(args), "--no-monitor"), c.ops))
			}}},
		})
		fmt.Printf("### %s: `%s`\n\n", name, stmt)
		fmt.Println("| tool | statements/s (median, range) | p50 / p95 / p99 µs | client CPU µs/statement (median, range) |")
		fmt.Println("|---|---|---|---|")
		for _, t := range []struct {
			name string
			ms   []measurement
		}{{"pgbench -M prepared", pgb}, {"dbprobe stress", dbp}, {"dbprobe stress --no-monitor", quiet}} {
			m := median(t.ms)
			p := m.p["ITERATION"]
			fmt.Printf("| %s | %.0f (%s) | %.0f / %.0f / %.0f | %.1f (%s) |\n", t.name, m.opsPerSec, spread(t.ms, opsPerSec, "%.0f"),
				p[0], p[1], p[2], m.cpuPerOp, spread(t.ms, cpuPerOp, "%.1f"))
		}
		fmt.Printf("| dbprobe / pgbench | %s | | %s |\n", pairRatios(dbp, pgb, opsPerSec), pairRatios(dbp, pgb, cpuPerOp))
		fmt.Printf("| --no-monitor / pgbench | %s | | %s |\n", pairRatios(quiet, pgb, opsPerSec), pairRatios(quiet, pgb, cpuPerOp))
		fmt.Printf("\nRatios: the median (and range) over the %d repetitions of the ratio of two runs in the same repetition.\n\n", reps)
		fmt.Println("| rep | order | statements/s: pgbench, dbprobe, --no-monitor | CPU µs/statement: pgbench, dbprobe, --no-monitor | load average |")
		fmt.Println("|---|---|---|---|---|")
		for r := range reps {
			fmt.Printf("| %d | %s | %.0f, %.0f, %.0f | %.1f, %.1f, %.1f | %s |\n", r+1, orders[r],
				pgb[r].opsPerSec, dbp[r].opsPerSec, quiet[r].opsPerSec, pgb[r].cpuPerOp, dbp[r].cpuPerOp, quiet[r].cpuPerOp, loads[r])
		}
		fmt.Println()
	}
}

// spread is the range of one figure over the runs, "lo–hi".
func spread(ms []measurement, figure func(measurement) float64, format string) string {
	vs := make([]float64, len(ms))
	for i, m := range ms {
		vs[i] = figure(m)
	}
	return fmt.Sprintf(format+"–"+format, slices.Min(vs), slices.Max(vs))
}

// oltpKinds are the mix's statement series.
var oltpKinds = []string{"OLTP-SELECT", "OLTP-INSERT", "OLTP-UPDATE", "OLTP-DELETE"}

// oltpRun is what one run of the mix printed, and what it cost the client.
type oltpRun struct {
	vals       map[string]map[string]float64
	cpuPerIter float64   // µs of client CPU per iteration
	wall       float64   // s, the whole command: fill, run, drop
	io         []float64 // MB/s read from files, written to data files, written to the log; nil if not printed
	table      string    // the table's size note
	verdict    string    // the monitor's bottleneck line
	load       string    // load average before the run
}

var (
	oltpIO    = regexp.MustCompile(`read from its files ([\d.]+) MB/s.*wrote to its data files ([\d.]+) MB/s.*wrote to its log ([\d.]+) MB/s`)
	oltpTable = regexp.MustCompile(`(?m)^# note: table dbprobe_oltp: (.*)$`)
	verdict   = regexp.MustCompile(`(?m)^# bottleneck: (.*)$`)
)

// oltpMix runs `dbprobe stress --mix oltp` at each thread count, the
// iterations in all the same at every count (so every run executes the
// very same statements on the very same rows, only the threads differ),
// rotating which count goes first.
func oltpMix(bin, pg string, c stressConfig, reps int) {
	runs := make([][]oltpRun, len(c.oltpThreads))
	var slots [][]tool
	for i, n := range c.oltpThreads {
		if c.oltpIterations%n != 0 {
			fatalf("--oltp-iterations %d is not a multiple of %d threads", c.oltpIterations, n)
		}
		args := []string{"stress", "--db", pg, "--mix", "oltp", "--rows", strconv.Itoa(c.oltpRows),
			"--iterations", strconv.Itoa(c.oltpIterations / n), "--threads", strconv.Itoa(n), "-q"}
		slots = append(slots, []tool{{strconv.Itoa(n), func(int) {
			r := oltpRun{load: loadAverage()}
			start := time.Now()
			out, cmd := dbprobeText(bin, args)
			r.wall = time.Since(start).Seconds()
			r.vals = benchtext.Parse(out)
			r.cpuPerIter = cpuMicros(cmd) / float64(c.oltpIterations)
			if m := oltpIO.FindSubmatch(out); m != nil {
				for _, g := range m[1:] {
					v, _ := strconv.ParseFloat(string(g), 64)
					r.io = append(r.io, v)
				}
			}
			if m := oltpTable.FindSubmatch(out); m != nil {
				r.table = string(m[1])
			}
			if m := verdict.FindSubmatch(out); m != nil {
				r.verdict = string(m[1])
			}
			runs[i] = append(runs[i], r)
		}}})
	}
	orders := interleave(reps, slots)

	fmt.Printf("## `dbprobe stress --mix oltp`: PostgreSQL, %d rows, %d iterations in all, threads %s, median of %d\n\n",
		c.oltpRows, c.oltpIterations, joinInts(c.oltpThreads, ", "), reps)
	if t := runs[0][0].table; t != "" {
		fmt.Printf("Table (dbprobe's note): %s. Each thread runs --iterations = %d / threads.\n\n", t, c.oltpIterations)
	}
	// Figures the mix must print on PostgreSQL with pg_stat_statements: a
	// missing one is said, not left as a blank that reads as zero.
	var missing []string
	for _, rs := range runs {
		for _, r := range rs {
			for _, k := range oltpKinds {
				for _, f := range []string{"ServerLogicalReadsPerCall", "ServerPhysicalReadsPerCall", "50thPercentileLatency(us)"} {
					if _, ok := r.vals[k][f]; !ok && !slices.Contains(missing, k+" "+f) {
						missing = append(missing, k+" "+f)
					}
				}
			}
			if _, ok := r.vals["ITERATION"]["ServerLogicalReadsPerIteration"]; !ok && !slices.Contains(missing, "ITERATION ServerLogicalReadsPerIteration") {
				missing = append(missing, "ITERATION ServerLogicalReadsPerIteration")
			}
			if r.io == nil && !slices.Contains(missing, "the MB/s note") {
				missing = append(missing, "the MB/s note")
			}
		}
	}
	if len(missing) > 0 {
		fmt.Printf("**Not printed by dbprobe in some runs:** %s.\n\n", strings.Join(missing, "; "))
	}

	fmt.Println("| threads | iterations/s (median, range) | client CPU µs/iteration | server logical / physical reads per iteration | server time µs/iteration | MB/s read, written, log | whole command s (fill, run, drop) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, n := range c.oltpThreads {
		rs := runs[i]
		fig := func(get func(oltpRun) float64) float64 { return medianOf(mapRuns(rs, get)) }
		val := func(sec, key string) func(oltpRun) float64 {
			return func(r oltpRun) float64 { return r.vals[sec][key] }
		}
		rate := mapRuns(rs, val("OVERALL", "Throughput(ops/sec)"))
		io := "–"
		if rs[0].io != nil {
			io = fmt.Sprintf("%.1f, %.1f, %.1f", fig(func(r oltpRun) float64 { return ioAt(r, 0) }),
				fig(func(r oltpRun) float64 { return ioAt(r, 1) }), fig(func(r oltpRun) float64 { return ioAt(r, 2) }))
		}
		fmt.Printf("| %d | %.0f (%.0f–%.0f) | %.1f | %.2f / %.2f | %.0f | %s | %.0f |\n", n, medianOf(rate), slices.Min(rate), slices.Max(rate),
			fig(func(r oltpRun) float64 { return r.cpuPerIter }),
			fig(val("ITERATION", "ServerLogicalReadsPerIteration")), fig(val("ITERATION", "ServerPhysicalReadsPerIteration")),
			fig(val("ITERATION", "ServerTimePerIteration(us)")), io, fig(func(r oltpRun) float64 { return r.wall }))
	}
	fmt.Println()
	fmt.Println("| threads | statement | p50 µs | p99 µs | server logical / physical reads per call | server time µs/call | rows returned + affected |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, n := range c.oltpThreads {
		rs := runs[i]
		for _, k := range oltpKinds {
			fig := func(key string) float64 {
				return medianOf(mapRuns(rs, func(r oltpRun) float64 { return r.vals[k][key] }))
			}
			fmt.Printf("| %d | %s | %.0f | %.0f | %.2f / %.2f | %.0f | %.0f |\n", n, strings.TrimPrefix(k, "OLTP-"),
				fig("50thPercentileLatency(us)"), fig("99thPercentileLatency(us)"),
				fig("ServerLogicalReadsPerCall"), fig("ServerPhysicalReadsPerCall"), fig("ServerTimePerCall(us)"),
				fig("RowsReturned")+fig("RowsAffected"))
		}
	}
	fmt.Println()
	fmt.Println("| rep | order (threads) | iterations/s by threads | load average before each | the monitor's verdicts |")
	fmt.Println("|---|---|---|---|---|")
	for r := range reps {
		var rates, loads, verdicts []string
		for i := range c.oltpThreads {
			x := runs[i][r]
			rates = append(rates, fmt.Sprintf("%.0f", x.vals["OVERALL"]["Throughput(ops/sec)"]))
			loads = append(loads, x.load)
			verdicts = append(verdicts, fmt.Sprintf("%d: %s", c.oltpThreads[i], x.verdict))
		}
		fmt.Printf("| %d | %s | %s | %s | %s |\n", r+1, orders[r], strings.Join(rates, ", "), strings.Join(loads, "; "), strings.Join(verdicts, "; "))
	}
	fmt.Println()
}

func mapRuns(rs []oltpRun, get func(oltpRun) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = get(r)
	}
	return out
}

func ioAt(r oltpRun, i int) float64 {
	if i < len(r.io) {
		return r.io[i]
	}
	return 0
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// parseInts reads a comma-separated list of positive integers ("" is none).
func parseInts(flagName, list string) []int {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			fatalf("%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, n)
	}
	return out
}
