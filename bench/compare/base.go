package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// build is a dbprobe binary and the name its rows carry.
type build struct{ bin, name string }

// buildBase builds dbprobe from the git revision rev (--base) into work.
// The source comes from git's objects alone (git archive), so neither the
// working tree nor the repository's list of worktrees changes, and it is
// removed once built; the binary goes with work.
func buildBase(work, rev string) build {
	commit := strings.TrimSpace(output("git", "rev-parse", "--verify", "--quiet", rev+"^{commit}"))
	short := strings.TrimSpace(output("git", "rev-parse", "--short", commit))
	src, err := os.MkdirTemp(work, "base-src-")
	check(err)
	defer os.RemoveAll(src)
	tarball := filepath.Join(work, "base.tar")
	run("git", "archive", "--format=tar", "-o", tarball, commit)
	defer os.Remove(tarball)
	run("tar", "-x", "-f", tarball, "-C", src)
	bin := filepath.Join(work, "dbprobe-base")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dbprobe")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		fatalf("go build of %s: %v\n%s", rev, err, out)
	}
	return build{bin: bin, name: "dbprobe (base " + short + ")"}
}

// pairRatios gives the median and the range of num[i]/den[i] over the
// repetitions: each ratio is of two runs of the same repetition, so the
// machine's drift from one repetition to the next cancels out.
func pairRatios(num, den []measurement, figure func(measurement) float64) string {
	var rs []float64
	for i := range min(len(num), len(den)) {
		rs = append(rs, figure(num[i])/figure(den[i]))
	}
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×)", medianOf(rs), slices.Min(rs), slices.Max(rs))
}

func opsPerSec(m measurement) float64 { return m.opsPerSec }
func cpuPerOp(m measurement) float64  { return m.cpuPerOp }

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func output(name string, args ...string) string {
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// tool is one contender of an interleaved comparison: its name in the
// order column and one run of it in repetition rep.
type tool struct {
	name string
	run  func(rep int)
}

// interleave runs reps repetitions of every slot's tools, rotating which
// slot goes first so that the machine's drift over time is shared; within
// a slot (a build and its base) the tools run back to back and take turns.
// It returns each repetition's order.
func interleave(reps int, slots [][]tool) []string {
	var orders []string
	for rep := range reps {
		var order []string
		for i := range slots {
			slot := slots[(rep+i)%len(slots)]
			for j := range slot {
				t := slot[j]
				if rep%2 == 1 {
					t = slot[len(slot)-1-j]
				}
				order = append(order, t.name)
				t.run(rep)
			}
		}
		orders = append(orders, strings.Join(order, ", "))
	}
	return orders
}
