package main

import (
	"bytes"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// compareMySQL measures client CPU per operation of dbprobe on MariaDB
// (workload A, and workload C for reads alone) against sysbench
// oltp_point_select, the stock client for point reads, at the same number
// of threads, repetitions interleaved.
func compareMySQL(bin, mysqlURL string, records, ops, threads, reps int) {
	u, err := url.Parse(mysqlURL)
	check(err)
	pw, _ := u.User.Password()
	sb := []string{"--db-driver=mysql", "--mysql-host=" + u.Hostname(), "--mysql-port=" + u.Port(),
		"--mysql-user=" + u.User.Username(), "--mysql-password=" + pw, "--mysql-db=" + strings.TrimPrefix(u.Path, "/"),
		"--tables=1", "--table-size=" + strconv.Itoa(records)}
	run("sysbench", append(append([]string{"oltp_point_select"}, sb...), "cleanup")...)
	run("sysbench", append(append([]string{"oltp_point_select"}, sb...), "prepare")...)
	defer run("sysbench", append(append([]string{"oltp_point_select"}, sb...), "cleanup")...)
	loadKV(bin, mysqlURL, records)

	var a, c, s []measurement
	for range reps {
		a = append(a, dbprobe(bin, kvArgs(mysqlURL, "a", records, ops, threads), ops))
		c = append(c, dbprobe(bin, kvArgs(mysqlURL, "c", records, ops, threads), ops))
		s = append(s, sysbench(sb, threads, ops))
	}
	fmt.Printf("## MariaDB, %d records, %d threads, %d operations per run, median of %d\n\n", records, threads, ops, reps)
	fmt.Println("Client CPU per operation: the client process's user+system time over its operations.")
	fmt.Println()
	fmt.Println("| client | workload | ops/s | client CPU µs/op |")
	fmt.Println("|---|---|---|---|")
	ma, mc, ms := median(a), median(c), median(s)
	fmt.Printf("| dbprobe | A (50%% read, 50%% update, uniform) | %.0f | %.1f |\n", ma.opsPerSec, ma.cpuPerOp)
	fmt.Printf("| dbprobe | C (100%% read, uniform) | %.0f | %.1f |\n", mc.opsPerSec, mc.cpuPerOp)
	fmt.Printf("| sysbench 1.0 | oltp_point_select, autocommit | %.0f | %.1f |\n", ms.opsPerSec, ms.cpuPerOp)
	fmt.Printf("\nRatios: dbprobe workload C / sysbench = %.2f×; workload A / sysbench = %.2f×.\n\n", mc.cpuPerOp/ms.cpuPerOp, ma.cpuPerOp/ms.cpuPerOp)
}

var sysbenchQueries = regexp.MustCompile(`queries:\s+(\d+)\s+\(([\d.]+) per sec`)

// sysbench runs oltp_point_select for ops events in autocommit mode.
func sysbench(common []string, threads, ops int) measurement {
	args := append([]string{"oltp_point_select"}, common...)
	args = append(args, "--threads="+strconv.Itoa(threads), "--events="+strconv.Itoa(ops), "--time=0", "--skip_trx=on", "run")
	cmd := exec.Command("sysbench", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fatalf("sysbench: %v\n%s", err, out.String())
	}
	m := sysbenchQueries.FindStringSubmatch(out.String())
	if m == nil {
		fatalf("sysbench printed no query count:\n%s", out.String())
	}
	queries, _ := strconv.ParseFloat(m[1], 64)
	rate, _ := strconv.ParseFloat(m[2], 64)
	return measurement{opsPerSec: rate, cpuPerOp: cpuMicros(cmd) / queries, p: map[string][3]float64{}}
}

// compareRedis measures client CPU per operation of dbprobe on Redis
// against redis-benchmark's GET and HSET at the same number of clients.
func compareRedis(bin string, base *build, redisURL string, records, ops, threads, reps int) {
	u, err := url.Parse(redisURL)
	check(err)
	pw, _ := u.User.Password()
	rb := []string{"-h", u.Hostname(), "-p", u.Port(), "-c", strconv.Itoa(threads), "-n", strconv.Itoa(ops),
		"-r", strconv.Itoa(records), "-d", "100", "-q"}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		rb = append(rb, "--dbnum", db)
	}
	if pw != "" {
		rb = append(rb, "-a", pw)
	}
	loadKV(bin, redisURL, records)
	// Hashes shaped like dbprobe's records (ten 100-byte fields) under
	// redis-benchmark's own key names, so that its HMGET does the work a
	// dbprobe read does; random keys, three times over, leave few missing.
	value := strings.Repeat("v", 100)
	hmset := []string{"HSET", "bench:rec:__rand_int__"}
	hmget := []string{"HMGET", "bench:rec:__rand_int__"}
	for f := range 10 {
		hmset = append(hmset, fmt.Sprintf("FIELD%d", f), value)
		hmget = append(hmget, fmt.Sprintf("FIELD%d", f))
	}
	redisBenchmarkCommand(rb, 3*records, hmset)
	var a, c, get, hset, hm, oldA, oldC []measurement
	for rep := range reps {
		// The base build, when given, takes turns going first.
		runBase := func() {
			oldA = append(oldA, dbprobe(base.bin, kvArgs(redisURL, "a", records, ops, threads), ops))
			oldC = append(oldC, dbprobe(base.bin, kvArgs(redisURL, "c", records, ops, threads), ops))
		}
		if base != nil && rep%2 == 1 {
			runBase()
		}
		a = append(a, dbprobe(bin, kvArgs(redisURL, "a", records, ops, threads), ops))
		c = append(c, dbprobe(bin, kvArgs(redisURL, "c", records, ops, threads), ops))
		if base != nil && rep%2 == 0 {
			runBase()
		}
		get = append(get, redisBenchmark(rb, "get", ops))
		hset = append(hset, redisBenchmark(rb, "hset", ops))
		hm = append(hm, redisBenchmarkCommand(rb, ops, hmget))
	}
	fmt.Printf("## Redis, %d records, %d clients, %d operations per run, median of %d\n\n", records, threads, ops, reps)
	fmt.Println("| client | workload | ops/s | client CPU µs/op |")
	fmt.Println("|---|---|---|---|")
	ma, mc, mg, mh, mm := median(a), median(c), median(get), median(hset), median(hm)
	fmt.Printf("| dbprobe | A (50%% HMGET of 10 fields, 50%% update script, uniform) | %.0f | %.1f |\n", ma.opsPerSec, ma.cpuPerOp)
	fmt.Printf("| dbprobe | C (100%% HMGET of 10 fields, uniform) | %.0f | %.1f |\n", mc.opsPerSec, mc.cpuPerOp)
	if base != nil {
		ba, bc := median(oldA), median(oldC)
		fmt.Printf("| %s | A | %.0f | %.1f |\n", base.name, ba.opsPerSec, ba.cpuPerOp)
		fmt.Printf("| %s | C | %.0f | %.1f |\n", base.name, bc.opsPerSec, bc.cpuPerOp)
		fmt.Printf("| dbprobe / base (median of %d pairs, range) | A | %s | %s |\n", reps, pairRatios(a, oldA, opsPerSec), pairRatios(a, oldA, cpuPerOp))
		fmt.Printf("| dbprobe / base (median of %d pairs, range) | C | %s | %s |\n", reps, pairRatios(c, oldC, opsPerSec), pairRatios(c, oldC, cpuPerOp))
	}
	fmt.Printf("| redis-benchmark | GET, 100-byte values | %.0f | %.1f |\n", mg.opsPerSec, mg.cpuPerOp)
	fmt.Printf("| redis-benchmark | HSET, 100-byte values | %.0f | %.1f |\n", mh.opsPerSec, mh.cpuPerOp)
	fmt.Printf("| redis-benchmark | HMGET of 10 × 100-byte fields (a dbprobe read's work) | %.0f | %.1f |\n", mm.opsPerSec, mm.cpuPerOp)
	both := (mg.cpuPerOp + mh.cpuPerOp) / 2
	fmt.Printf("\nRatios: dbprobe workload C / GET = %.2f×; workload C / HMGET = %.2f×; workload A / mean of GET and HSET = %.2f×.\n\n",
		mc.cpuPerOp/mg.cpuPerOp, mc.cpuPerOp/mm.cpuPerOp, ma.cpuPerOp/both)
}

// redisBenchmarkCommand runs redis-benchmark for ops requests with the
// extra arguments given: "-t get" for a built-in test, or a command of its
// own. -q prints progress lines separated by carriage returns; the last
// rate is the final one.
func redisBenchmarkCommand(common []string, ops int, command []string) measurement {
	args := append([]string{}, common...)
	for i, a := range args {
		if a == "-n" {
			args[i+1] = strconv.Itoa(ops)
		}
	}
	cmd := exec.Command("redis-benchmark", append(args, command...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fatalf("redis-benchmark %s: %v\n%s", command[0], err, out.String())
	}
	all := redisRate.FindAllStringSubmatch(out.String(), -1)
	if all == nil {
		fatalf("redis-benchmark printed no rate:\n%s", out.String())
	}
	rate, _ := strconv.ParseFloat(all[len(all)-1][1], 64)
	return measurement{opsPerSec: rate, cpuPerOp: cpuMicros(cmd) / float64(ops), p: map[string][3]float64{}}
}

var redisRate = regexp.MustCompile(`([\d.]+) requests per second`)

func redisBenchmark(common []string, test string, ops int) measurement {
	return redisBenchmarkCommand(common, ops, []string{"-t", test})
}

func loadKV(bin, dbURL string, records int) {
	run(bin, "load", "--db", dbURL, "--workload", "a", "-p", "recordcount="+strconv.Itoa(records), "--threads", "4", "--drop-existing")
}

func kvArgs(dbURL, workload string, records, ops, threads int) []string {
	return []string{"run", "--db", dbURL, "--workload", workload, "-p", "recordcount=" + strconv.Itoa(records),
		"-p", "operationcount=" + strconv.Itoa(ops), "-p", "requestdistribution=uniform", "--threads", strconv.Itoa(threads)}
}

type bulkTarget struct{ name, url string }

// bulkLoad compares each database's bulk load path with its plain
// multi-row INSERT path (--no-copy), in rows per second.
func bulkLoad(bin string, targets []bulkTarget, records, reps int) {
	fmt.Printf("## Bulk load, %d rows of 10 × 100 bytes, 4 threads, db.batchsize 1000, median of %d\n\n", records, reps)
	fmt.Println("| database | bulk path rows/s | multi-row INSERT rows/s | bulk / INSERT |")
	fmt.Println("|---|---|---|---|")
	for _, t := range targets {
		var bulk, plain []measurement
		for range reps {
			for _, noCopy := range []bool{false, true} {
				args := []string{"load", "--db", t.url, "--workload", "a", "-p", "recordcount=" + strconv.Itoa(records),
					"-p", "table=bulktest", "--threads", "4", "--drop-existing"}
				if noCopy {
					args = append(args, "--no-copy")
				}
				m := dbprobe(bin, args, records)
				if noCopy {
					plain = append(plain, m)
				} else {
					bulk = append(bulk, m)
				}
			}
		}
		b, p := median(bulk), median(plain)
		fmt.Printf("| %s | %.0f | %.0f | %.2f× |\n", t.name, b.opsPerSec, p.opsPerSec, b.opsPerSec/p.opsPerSec)
	}
	fmt.Println()
}
