package monitor

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
)

// clientCores is how many cores of CPU time dbprobe may use per second:
// the fewest of GOMAXPROCS (threads running Go code), the CPUs the process
// may run on (runtime.NumCPU reads the affinity mask) and the CPU quota of
// its cgroup, which is returned too when there is one. A quota of half a
// core still leaves GOMAXPROCS at 2, so judging the client by GOMAXPROCS
// alone calls a client throttled at 48% CPU unsaturated.
func clientCores(root string) (float64, cpuQuota, bool) {
	cores := float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
	q, ok := cgroupCPULimit(root)
	if ok && q.cores < cores {
		cores = q.cores
	}
	return cores, q, ok
}

// cpuQuota is the CPU limit of a cgroup and where its statistics are.
type cpuQuota struct {
	cores float64
	// stat is the cgroup's cpu.stat, which counts the periods in which
	// the quota held its processes back.
	stat string
}

// cgroupCPULimit returns the CPU limit, in cores, of the cgroup this
// process is in and of its ancestors (the smallest applies), for cgroup v2
// (cpu.max) and v1 (cpu.cfs_quota_us over cpu.cfs_period_us). root is "/"
// except in tests. ok is false when no limit is set or none can be read.
func cgroupCPULimit(root string) (q cpuQuota, ok bool) {
	data, err := os.ReadFile(path.Join(root, "proc/self/cgroup"))
	if err != nil {
		return q, false
	}
	q.cores = math.Inf(1)
	take := func(cores float64, dir string) {
		if cores < q.cores {
			q = cpuQuota{cores: cores, stat: path.Join(dir, "cpu.stat")}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		controllers, dir := parts[1], parts[2]
		switch {
		case controllers == "" && parts[0] == "0":
			for _, d := range ancestors(dir) {
				base := path.Join(root, "sys/fs/cgroup", d)
				if c, ok := readCPUMax(path.Join(base, "cpu.max")); ok {
					take(c, base)
				}
			}
		case hasController(controllers, "cpu"):
			for _, mount := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
				for _, d := range ancestors(dir) {
					base := path.Join(root, "sys/fs/cgroup", mount, d)
					if c, ok := readCFSQuota(base); ok {
						take(c, base)
					}
				}
			}
		}
	}
	if math.IsInf(q.cores, 1) {
		return cpuQuota{}, false
	}
	return q, true
}

// throttling is a reading of a cgroup's cpu.stat: the scheduling periods in
// which its processes ran, and those in which the quota stopped them.
type throttling struct {
	periods, throttled uint64
}

// readThrottling reads nr_periods and nr_throttled (cgroup v1 and v2 name
// them alike).
func readThrottling(file string) (throttling, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return throttling{}, false
	}
	var t throttling
	var seen int
	for _, line := range strings.Split(string(data), "\n") {
		name, value, _ := strings.Cut(line, " ")
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "nr_periods":
			t.periods, seen = n, seen+1
		case "nr_throttled":
			t.throttled, seen = n, seen+1
		}
	}
	return t, seen == 2
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// ancestors lists a cgroup path and its parents up to the root: a limit
// set on a parent bounds every child.
func ancestors(dir string) []string {
	dir = path.Clean("/" + dir)
	out := []string{dir}
	for dir != "/" {
		dir = path.Dir(dir)
		out = append(out, dir)
	}
	return out
}

// readCPUMax reads cgroup v2's "QUOTA PERIOD" ("max 100000": no limit).
func readCPUMax(file string) (float64, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return quotaCores(f[0], f[1])
}

// readCFSQuota reads cgroup v1's quota and period (a quota of -1: no limit).
func readCFSQuota(dir string) (float64, bool) {
	quota, err := os.ReadFile(path.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return 0, false
	}
	period, err := os.ReadFile(path.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return 0, false
	}
	return quotaCores(strings.TrimSpace(string(quota)), strings.TrimSpace(string(period)))
}

func quotaCores(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}
