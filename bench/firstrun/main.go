// Command firstrun measures what a newcomer waits for: the README's first
// command, go run ./cmd/dbprobe ycsb, from a cold build cache to its first
// result, then again warm, and where a cold build's CPU goes, package by
// package.
//
//	go run ./bench/firstrun --cpus 0,1 --reps 3
//
// Each repetition runs go run ./cmd/dbprobe ycsb (pinned with taskset to
// --cpus, unpinned when empty) with GOCACHE set to a new empty directory,
// so the standard library and every dependency compile as on a fresh Go
// install; the module cache is left as it is, so nothing is downloaded.
// It reports the time to the first result line ("[OVERALL]", the load
// phase's results) and to exit, then runs the same command on the now
// filled cache (warm). The load average is read before and after each
// run, as other work on the machine slows a build directly.
//
// With --packages it also builds ./cmd/dbprobe once more into an empty
// cache with itself as -toolexec and as CC, so that every compiler, cgo,
// assembler, linker and C compiler run is timed with its CPU (user+system,
// from wait4's rusage), and prints the packages that took the most.
package main

import (
	"bufio"
	"cmp"
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
)

// logEnv names the file the toolexec and CC modes append their lines to.
const logEnv = "FIRSTRUN_LOG"

func main() {
	if log := os.Getenv(logEnv); log != "" && len(os.Args) > 1 {
		if os.Getenv("FIRSTRUN_CC") != "" {
			os.Exit(timed(log, "gcc", append([]string{"gcc"}, os.Args[1:]...)))
		}
		os.Exit(timed(log, "", os.Args[1:]))
	}
	cpus := flag.String("cpus", "0,1", "CPUs to pin the build and run to with taskset (empty: unpinned)")
	reps := flag.Int("reps", 3, "cold repetitions (medians are reported)")
	cgo := flag.String("cgo", "", "CGO_ENABLED for the builds (empty: Go's default)")
	packages := flag.Bool("packages", false, "also time every compile of a cold build, package by package")
	top := flag.Int("top", 15, "packages listed with --packages")
	flag.Parse()

	var colds, warms []time.Duration
	for i := range *reps {
		cache, err := os.MkdirTemp("", "firstrun-gocache-")
		check(err)
		cold := firstRun(*cpus, *cgo, cache)
		warm := firstRun(*cpus, *cgo, cache)
		os.RemoveAll(cache)
		fmt.Printf("rep %d: cold first result %.1f s, exit %.1f s (load %s → %s); warm first result %.2f s, exit %.2f s\n",
			i+1, cold.first.Seconds(), cold.exit.Seconds(), cold.loadBefore, cold.loadAfter, warm.first.Seconds(), warm.exit.Seconds())
		colds = append(colds, cold.first)
		warms = append(warms, warm.first)
	}
	fmt.Printf("median of %d: cold first result %.1f s, warm %.2f s (cpus %q, CGO_ENABLED=%q)\n",
		*reps, median(colds).Seconds(), median(warms).Seconds(), *cpus, *cgo)
	if *packages {
		perPackage(*cpus, *cgo, *top)
	}
}

type runTimes struct {
	first, exit           time.Duration
	loadBefore, loadAfter string
}

// firstRun runs the README's first command with the given build cache and
// times its first result line and its exit.
func firstRun(cpus, cgo, cache string) runTimes {
	args := []string{"go", "run", "./cmd/dbprobe", "ycsb"}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOCACHE="+cache)
	if cgo != "" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED="+cgo)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	check(err)
	t := runTimes{loadBefore: loadavg()}
	start := time.Now()
	check(cmd.Start())
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if t.first == 0 && strings.HasPrefix(sc.Text(), "[OVERALL]") {
			t.first = time.Since(start)
		}
	}
	check(cmd.Wait())
	t.exit = time.Since(start)
	t.loadAfter = loadavg()
	if t.first == 0 {
		fmt.Fprintln(os.Stderr, "firstrun: no [OVERALL] line in the output")
		os.Exit(1)
	}
	return t
}

// perPackage builds dbprobe into an empty cache with this program timing
// every tool run, and prints the CPU by package and by group.
func perPackage(cpus, cgo string, top int) {
	self, err := os.Executable()
	check(err)
	dir, err := os.MkdirTemp("", "firstrun-packages-")
	check(err)
	defer os.RemoveAll(dir)
	log := filepath.Join(dir, "tools.log")
	args := []string{"go", "build", "-toolexec", self, "-o", filepath.Join(dir, "dbprobe"), "./cmd/dbprobe"}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(dir, "cache"), logEnv+"="+log)
	if cgo != "" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED="+cgo)
	}
	// CC is this program too, in a mode that runs gcc and times it: go
	// build runs the C compiler itself, not through -toolexec.
	ccWrap := filepath.Join(dir, "cc")
	check(os.WriteFile(ccWrap, []byte("#!/bin/sh\nFIRSTRUN_CC=1 exec "+self+" \"$@\"\n"), 0o755))
	cmd.Env = append(cmd.Env, "CC="+ccWrap)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	before := loadavg()
	start := time.Now()
	check(cmd.Run())
	wall := time.Since(start)

	data, err := os.ReadFile(log)
	check(err)
	type row struct {
		what       string
		cpu, wall  float64
		group      string
		groupOrder int
	}
	var rows []row
	groups := map[string]float64{}
	var total float64
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		cpu, _ := strconv.ParseFloat(f[0], 64)
		w, _ := strconv.ParseFloat(f[1], 64)
		what := strings.Join(f[2:], " ")
		rows = append(rows, row{what: what, cpu: cpu, wall: w})
		groups[group(f[2], f[3])] += cpu
		total += cpu
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.cpu, a.cpu) })
	fmt.Printf("\ncold build with timed tools: %.1f s wall, %.1f s CPU in tools (load %s → %s)\n\n", wall.Seconds(), total, before, loadavg())
	fmt.Println("| tool run | CPU s | wall s |")
	fmt.Println("|---|---|---|")
	for _, r := range rows[:min(top, len(rows))] {
		fmt.Printf("| %s | %.1f | %.1f |\n", r.what, r.cpu, r.wall)
	}
	fmt.Println("\n| group | CPU s | share |")
	fmt.Println("|---|---|---|")
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(groups[b], groups[a]) })
	for _, k := range keys {
		if groups[k] >= 0.01*total {
			fmt.Printf("| %s | %.1f | %.0f%% |\n", k, groups[k], 100*groups[k]/total)
		}
	}
}

// group puts a tool run under the module (or standard library) it built.
func group(tool, what string) string {
	switch {
	case tool == "gcc":
		return "C compiler (cgo): " + what
	case tool == "link":
		return "link"
	case !strings.Contains(strings.Split(what, "/")[0], "."):
		return "standard library"
	}
	parts := strings.Split(what, "/")
	n := 3
	if !strings.HasPrefix(what, "github.com/") && !strings.HasPrefix(what, "golang.org/") {
		n = 2
	}
	if strings.HasPrefix(what, "github.com/Azure/") || strings.HasPrefix(what, "github.com/AzureAD/") {
		return "Azure SDK and MSAL (go-mssqldb's Entra ID sign-in)"
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

// timed runs a tool, appends "CPU wall tool package" to the log, and
// returns the tool's exit code.
func timed(log, name string, args []string) int {
	what := ""
	if name == "gcc" {
		for _, a := range args {
			if strings.HasSuffix(a, ".c") {
				what = filepath.Base(a)
			}
		}
	} else {
		name = filepath.Base(args[0])
		for i, a := range args {
			if a == "-p" && i+1 < len(args) {
				what = args[i+1]
			}
		}
		if strings.HasPrefix(name, "link") {
			name, what = "link", "(the binary)"
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	if what == "" || cmd.ProcessState == nil {
		return code
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "%.2f %.2f %s %s\n", cpu.Seconds(), wall.Seconds(), name, what)
		f.Close()
	}
	return code
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "firstrun:", err)
		os.Exit(1)
	}
}
