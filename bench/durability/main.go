// Command durability runs the experiment of
// docs/experiments/durability-and-table-type.md: YCSB workload A on
// PostgreSQL and MariaDB with each table type, durability mode and
// operation path the database has, and prints the recap table (database,
// table type, durability, path, rows, threads, ops/s, average read and
// write latency) with the command of every run.
//
//	scripts/with-databases go run ./bench/durability
//
// Each table type is loaded once; the runs on it differ only in durability
// and path. With --reps above 1 the variants run round-robin, so that a
// noisy neighbour hurts them alike, and the medians are printed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/bench/internal/benchtext"
)

type database struct {
	name       string
	url        string
	tableTypes []string
}

type variant struct {
	db                     database
	tableType, durability  string
	path                   string
	opsPerSec, read, write []float64
}

func main() {
	pg := flag.String("pg", os.Getenv("DBPROBE_POSTGRES_URL"), "PostgreSQL URL")
	my := flag.String("mysql", os.Getenv("DBPROBE_MYSQL_URL"), "MySQL/MariaDB URL")
	records := flag.Int("records", 100000, "rows per table")
	threads := flag.Int("threads", 16, "worker threads")
	duration := flag.Duration("duration", 20*time.Second, "length of each run, after the warm-up")
	warmup := flag.Duration("warmup", 5*time.Second, "warm-up excluded from each run's figures")
	reps := flag.Int("reps", 1, "repetitions of every variant (medians are printed)")
	flag.Parse()

	var dbs []database
	if *pg != "" {
		dbs = append(dbs, database{"PostgreSQL", *pg, []string{"disk", "nondurable"}})
	}
	if *my != "" {
		dbs = append(dbs, database{"MariaDB", *my, []string{"disk", "memory"}})
	}
	if len(dbs) == 0 {
		fatalf("no database: set --pg and/or --mysql, or run through scripts/with-databases")
	}
	work, err := os.MkdirTemp("", "dbprobe-durability-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "dbprobe")
	run("go", "build", "-o", bin, "./cmd/dbprobe")

	var variants []*variant
	for _, db := range dbs {
		for _, tt := range db.tableTypes {
			args := []string{"load", "--db", "$URL", "--workload", "a", "-p", "recordcount=" + strconv.Itoa(*records),
				"-p", "table=kv_" + tt, "--table-type", tt, "--threads", "4", "--drop-existing"}
			fmt.Fprintf(os.Stderr, "durability: %s %s: dbprobe %s\n", db.name, tt, strings.Join(args, " "))
			run(bin, withURL(args, db.url)...)
			for _, d := range []string{"full", "delayed"} {
				for _, p := range []string{"statement", "procedure"} {
					variants = append(variants, &variant{db: db, tableType: tt, durability: d, path: p})
				}
			}
		}
	}
	runArgs := func(v *variant) []string {
		return []string{"run", "--db", "$URL", "--workload", "a", "-p", "recordcount=" + strconv.Itoa(*records),
			"-p", "table=kv_" + v.tableType, "-p", "operationcount=0", "--duration", duration.String(), "--warmup", warmup.String(),
			"--threads", strconv.Itoa(*threads), "--durability", v.durability, "--op-path", v.path}
	}
	for rep := range *reps {
		for _, v := range variants {
			args := runArgs(v)
			fmt.Fprintf(os.Stderr, "durability: rep %d: %s %s %s %s\n", rep+1, v.db.name, v.tableType, v.durability, v.path)
			// The warm-up runs inside the duration: give it its share.
			out := output(bin, withURL(replace(args, "--duration", (*duration+*warmup).String()), v.db.url)...)
			figs := benchtext.Parse(out)
			v.opsPerSec = append(v.opsPerSec, figs["OVERALL"]["Throughput(ops/sec)"])
			v.read = append(v.read, figs["READ"]["AverageLatency(us)"]/1000)
			v.write = append(v.write, figs["UPDATE"]["AverageLatency(us)"]/1000)
		}
	}

	fmt.Printf("Measured %s on %s/%s, %d CPUs; %d s runs after a %s warm-up, median of %d.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), int(duration.Seconds()), warmup, *reps)
	fmt.Println("| database | table type | durability | path | rows | threads | ops/s | avg read ms | avg write ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, v := range variants {
		fmt.Printf("| %s | %s | %s | %s | %d | %d | %.0f | %.3f | %.3f |\n", v.db.name, v.tableType, v.durability, v.path,
			*records, *threads, median(v.opsPerSec), median(v.read), median(v.write))
	}
	fmt.Println()
	fmt.Println("Commands ($URL is the database's URL):")
	fmt.Println()
	fmt.Println("```")
	for _, db := range dbs {
		for _, tt := range db.tableTypes {
			fmt.Printf("dbprobe load --db $URL --workload a -p recordcount=%d -p table=kv_%s --table-type %s --threads 4 --drop-existing\n", *records, tt, tt)
		}
	}
	fmt.Printf("dbprobe %s\n", strings.Join(replace(runArgs(&variant{tableType: "TYPE", durability: "full|delayed", path: "statement|procedure"}), "--duration", (*duration+*warmup).String()), " "))
	fmt.Println("```")
}

func withURL(args []string, url string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "$URL" {
			out[i] = url
		}
	}
	return out
}

func replace(args []string, flag, value string) []string {
	out := slices.Clone(args)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[len(s)/2]
}

func output(name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		fatalf("%s: %v\n%s", name, err, errOut.String())
	}
	return out.Bytes()
}

func run(name string, args ...string) { output(name, args...) }

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	// The commands hold database URLs and passwords: never print those.
	fmt.Fprintln(os.Stderr, "durability: "+benchtext.Redact(fmt.Sprintf(format, args...)))
	os.Exit(1)
}
