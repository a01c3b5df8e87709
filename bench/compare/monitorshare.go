package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The throughput of a 2-core machine shared with its database varies by
// ±20% from one 10 s run to the next, far more than a monitor can cost, so
// the monitoring-cost part also measures the monitor's own CPU directly:
// its PostgreSQL backend's CPU time from /proc while a run goes, and its
// client side as the CPU a nearly idle run spends with the monitor on
// beyond what it spends with it off. Against the CPU the whole machine
// spends in a run, that bounds what the monitor can take from throughput.

// cpuShare is what one run with the monitor on spent.
type cpuShare struct {
	monitorBackend float64 // s of CPU of the dbprobe-monitor backend
	busy           float64 // s of CPU of the whole machine (every core)
	window         float64 // s measured
}

// watchMonitorBackend measures the dbprobe-monitor backend's CPU and the
// machine's busy CPU from 2 s into a run of length d until 2 s before its
// end. It runs beside the run and reports on the returned channel.
func watchMonitorBackend(pg string, d time.Duration) <-chan cpuShare {
	ch := make(chan cpuShare, 1)
	go func() {
		defer close(ch)
		time.Sleep(2 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "monitor share:", err)
			return
		}
		var pid int
		err = conn.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = 'dbprobe-monitor' LIMIT 1").Scan(&pid)
		conn.Close(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "monitor share: no dbprobe-monitor backend:", err)
			return
		}
		t0, b0, ok0 := processCPU(pid), machineBusy(), time.Now()
		time.Sleep(d - 4*time.Second)
		t1, b1 := processCPU(pid), machineBusy()
		if t0 < 0 || t1 < 0 || b0 < 0 || b1 < 0 {
			return
		}
		ch <- cpuShare{monitorBackend: t1 - t0, busy: b1 - b0, window: time.Since(ok0).Seconds()}
	}()
	return ch
}

// clockTicks is USER_HZ, the unit of /proc's CPU times on Linux.
const clockTicks = 100.0

// processCPU returns a process's user plus system CPU in seconds, or -1.
func processCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name may hold spaces: the fields start after its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (u + sys) / clockTicks
}

// machineBusy returns the CPU seconds every core spent not idle (nor
// waiting for IO) since boot, or -1.
func machineBusy() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return -1
	}
	var busy float64
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy / clockTicks
}

// idleMonitorCPU is the client CPU the monitor costs per second: a run at
// 5 operations/s for d with the monitor on, minus one with it off, the
// median of reps pairs.
func idleMonitorCPU(bin string, common []string, samples string, d time.Duration, reps int) float64 {
	args := append([]string{"run", "--threads", "1", "--target", "5", "-p", "operationcount=0", "--duration", d.String()}, common...)
	var diffs []float64
	for range reps {
		on := dbprobe(bin, append(append([]string(nil), args...), "--monitor-wait-samples", samples), 1)
		off := dbprobe(bin, append(append([]string(nil), args...), "--no-monitor"), 1)
		diffs = append(diffs, (on.cpuPerOp-off.cpuPerOp)/1e6/d.Seconds())
	}
	return medianOf(diffs)
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
