package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture Go builds for.
const clockTicks = 100

// neighbourCPU follows the CPU that processes other than this test binary
// and one database server use on the host, so that a test that judges a
// diagnosis from the host's CPU can tell a run spoiled by a neighbour (the
// other helpers' tests, a benchmark) from a wrong verdict. server is the
// server's main process (PostgreSQL's postmaster): its CPU and that of
// its children, exited ones included, are the server's.
type neighbourCPU struct {
	server      int
	start       time.Time
	host, mine  float64 // ticks at the start
	serverTicks float64
}

// followNeighbours starts following the CPU of the host's other processes;
// ok is false where /proc cannot tell (not Linux, no such process).
func followNeighbours(server int) (n *neighbourCPU, ok bool) {
	n = &neighbourCPU{server: server, start: time.Now()}
	var err error
	if n.host, err = hostBusyTicks(); err != nil {
		return nil, false
	}
	if n.mine, err = processTicks("self", false); err != nil {
		return nil, false
	}
	if n.serverTicks, err = serverTicks(server); err != nil {
		return nil, false
	}
	return n, true
}

// cores returns how many cores, on average since followNeighbours, the
// other processes used: the host's busy time less this process's and the
// server's. The kernel's own threads count as neighbours; the time it
// spends in interrupts does not count at all, since it is charged to no
// process (loopback traffic is most of it here).
func (n *neighbourCPU) cores() (float64, error) {
	host, err := hostBusyTicks()
	if err != nil {
		return 0, err
	}
	mine, err := processTicks("self", false)
	if err != nil {
		return 0, err
	}
	server, err := serverTicks(n.server)
	if err != nil {
		return 0, err
	}
	others := (host - n.host) - (mine - n.mine) - (server - n.serverTicks)
	return max(0, others) / clockTicks / time.Since(n.start).Seconds(), nil
}

// hostBusyTicks is the time all CPUs spent running processes (user, nice,
// system) and lost to the hypervisor (steal), from /proc/stat.
func hostBusyTicks() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var sum float64
	for _, i := range []int{1, 2, 3, 8} { // user nice system steal
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		sum += v
	}
	return sum, nil
}

// statFields are the fields of /proc/PID/stat after the command's name:
// [0] is the state, [1] the parent's PID, [11] and [12] the process's user
// and system time, [13] and [14] those of its children it waited for.
func statFields(pid string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(f))
	}
	return f, nil
}

// processTicks is a process's CPU time, with that of the children it
// reaped when children is set.
func processTicks(pid string, children bool) (float64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	last := 12
	if children {
		last = 14
	}
	var sum float64
	for _, s := range f[11 : last+1] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// serverTicks is the CPU time of a server's main process, of the children
// it reaped (the backends that exited) and of those still running.
func serverTicks(server int) (float64, error) {
	pid := strconv.Itoa(server)
	total, err := processTicks(pid, true)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		f, err := statFields(e.Name())
		if err != nil || f[1] != pid {
			continue // gone meanwhile, or not the server's
		}
		if v, err := processTicks(e.Name(), false); err == nil {
			total += v
		}
	}
	return total, nil
}
