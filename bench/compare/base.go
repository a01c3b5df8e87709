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
