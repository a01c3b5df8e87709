package faults

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// removeStale removes what earlier runs of these tests left when they
// were killed before their cleanups ran (go test -timeout ends a test
// binary without them): network namespaces, and mounted file systems
// with their loop devices and directories, whose names carry the PID of
// a process that no longer runs. The servers on them died with their
// test process (instance starts them with Pdeathsig). Only as root, and
// only names these tests make.
func removeStale() {
	if os.Geteuid() != 0 {
		return
	}
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if pid, ok := stalePID(e.Name(), netnsPrefix); ok && !running(pid) {
			exec.Command("ip", "netns", "del", e.Name()).Run()
		}
	}
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return
	}
	defer f.Close()
	tmp := filepath.Clean(os.TempDir()) + "/"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasPrefix(fields[1], tmp+fsDirPrefix) {
			continue
		}
		dev, mnt := fields[0], fields[1]
		dir := filepath.Dir(mnt)
		if pid, ok := stalePID(filepath.Base(dir), fsDirPrefix); !ok || running(pid) {
			continue
		}
		if exec.Command("umount", mnt).Run() != nil {
			continue
		}
		if strings.HasPrefix(dev, "/dev/loop") {
			exec.Command("losetup", "-d", dev).Run()
		}
		os.RemoveAll(dir)
	}
}

// netnsDir is where ip netns keeps its named namespaces.
const netnsDir = "/var/run/netns"

// stalePID reads the PID that follows prefix in name ("prefix1234-…").
func stalePID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// running reports whether a process with that PID exists.
func running(pid int) bool {
	return pid == os.Getpid() || syscall.Kill(pid, 0) == nil || syscall.Kill(pid, 0) == syscall.EPERM
}
