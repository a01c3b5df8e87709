package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// fioJob is one fio run and what it stands for.
type fioJob struct {
	name, what string
	args       []string
}

// diskLimits measures the disk under --dir with fio and pg_test_fsync.
func diskLimits(c config) {
	if _, err := exec.LookPath("fio"); err != nil {
		fatalf("fio is missing: apt-get install -y fio (Debian's package)")
	}
	file := filepath.Join(c.work, "fio.dat")
	defer os.Remove(file)
	secs := strconv.Itoa(int(c.fioTime.Seconds()))
	common := []string{"--filename=" + file, "--size=4G", "--output-format=json"}
	timed := []string{"--time_based", "--runtime=" + secs, "--ramp_time=1"}
	jobs := []fioJob{
		// fio lays the file out (writes it) before the first read job.
		{"seqread-direct-qd32", "sequential read, 1 MB O_DIRECT, libaio, queue depth 32: the device's ceiling",
			append([]string{"--rw=read", "--bs=1M", "--direct=1", "--ioengine=libaio", "--iodepth=32"}, timed...)},
		{"seqread-direct-qd1", "sequential read, 1 MB O_DIRECT, one request at a time",
			append([]string{"--rw=read", "--bs=1M", "--direct=1", "--ioengine=psync", "--iodepth=1"}, timed...)},
		// Once through the file, from an emptied page cache (invalidate):
		// PostgreSQL's own access pattern, 8 kB reads the kernel reads ahead.
		{"seqread-buffered-8k", "sequential read, 8 kB buffered reads, page cache emptied first, once through 4 GiB: PostgreSQL's pattern",
			[]string{"--rw=read", "--bs=8k", "--direct=0", "--ioengine=psync", "--invalidate=1"}},
		{"seqwrite-direct-qd32", "sequential write, 1 MB O_DIRECT, libaio, queue depth 32",
			append([]string{"--rw=write", "--bs=1M", "--direct=1", "--ioengine=libaio", "--iodepth=32"}, timed...)},
	}
	fmt.Printf("## The disk's limits (fio %s; pg_test_fsync of PostgreSQL 15), on %s\n\n", strings.TrimSpace(output("fio", "--version")), c.dir)
	fmt.Println("| test | MB/s | IO/s | command |")
	fmt.Println("|---|---|---|---|")
	for _, j := range jobs {
		args := append(append([]string{"--name=" + j.name}, common...), j.args...)
		out := output("fio", args...)
		var res struct {
			Jobs []struct {
				Read  fioSide `json:"read"`
				Write fioSide `json:"write"`
			} `json:"jobs"`
		}
		// fio prints notes before its JSON when it lays out the file.
		if i := strings.Index(out, "{"); i >= 0 {
			out = out[i:]
		}
		check(json.Unmarshal([]byte(out), &res))
		if len(res.Jobs) == 0 {
			fatalf("fio %s: no job in its output", j.name)
		}
		side := res.Jobs[0].Read
		if strings.Contains(j.name, "write") {
			side = res.Jobs[0].Write
		}
		if j.name == "seqread-direct-qd32" {
			diskReadBps = side.BwBytes
		}
		show := strings.ReplaceAll(strings.Join(args, " "), file, "$DIR/fio.dat")
		fmt.Printf("| %s | %.0f | %.0f | `fio %s` |\n", j.what, mb(side.BwBytes), side.IOPS, show)
	}
	fsyncs(c)
	fmt.Println()
}

// fioSide is one direction of a fio job's results.
type fioSide struct {
	BwBytes float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
}

var syncLine = regexp.MustCompile(`^\s+(open_datasync|fdatasync|fsync|fsync_writethrough|open_sync)\s+([\d.]+) ops/sec`)

// fsyncs runs pg_test_fsync on a file under --dir and prints its first
// comparison: one 8 kB write and its flush, by each method.
func fsyncs(c config) {
	bin := "/usr/lib/postgresql/15/bin/pg_test_fsync"
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("pg_test_fsync"); err != nil {
			fatalf("pg_test_fsync is missing: install the Debian package postgresql-15")
		}
	}
	file := filepath.Join(c.work, "pg_test_fsync.out")
	defer os.Remove(file)
	secs := max(2, int(c.fioTime/time.Second)/5)
	out := output(bin, "-f", file, "-s", strconv.Itoa(secs))
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		m := syncLine.FindStringSubmatch(line)
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		v, _ := strconv.ParseFloat(m[2], 64)
		fmt.Printf("| one 8 kB write + %s, one at a time | | %.0f | `pg_test_fsync -f $DIR/pg_test_fsync.out -s %d` |\n", m[1], v, secs)
	}
	if len(seen) == 0 {
		fatalf("pg_test_fsync printed no rate:\n%s", out)
	}
}
