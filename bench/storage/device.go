package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The capped copies put the database's log on a block device of their
// own, an ext4 file system in a file mounted through a loop device, and
// cap the writes of the database's processes to that device with cgroup
// v1 blkio throttling (as internal/storage's tests do): the study's log
// wall, made on purpose.

// loopDev is a loop-mounted file system.
type loopDev struct {
	mnt, loop, name, num string
}

// newLoopDev makes an ext4 file system of sizeMB in a file under dir,
// mounts it, and gives its root to owner ("" keeps root's).
func newLoopDev(dir string, sizeMB int, owner string) *loopDev {
	img := filepath.Join(dir, "log-fs.img")
	f, err := os.Create(img)
	check(err)
	check(f.Truncate(int64(sizeMB) << 20))
	check(f.Close())
	run("mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", img)
	d := &loopDev{mnt: filepath.Join(dir, "logmnt")}
	d.loop = strings.TrimSpace(output("losetup", "--find", "--show", img))
	check(os.MkdirAll(d.mnt, 0o755))
	run("mount", d.loop, d.mnt)
	if owner != "" {
		u, err := user.Lookup(owner)
		check(err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		check(os.Chown(d.mnt, uid, gid))
	}
	var st syscall.Stat_t
	check(syscall.Stat(d.loop, &st))
	d.name = filepath.Base(d.loop)
	d.num = fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
	atExit(d.close)
	return d
}

// close unmounts the file system and detaches the loop device.
func (d *loopDev) close() {
	if d.loop == "" {
		return
	}
	for i := 0; i < 50 && exec.Command("umount", d.mnt).Run() != nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	exec.Command("losetup", "-d", d.loop).Run()
	d.loop = ""
}

// blkioRoot is cgroup v1's blkio hierarchy.
const blkioRoot = "/sys/fs/cgroup/blkio"

// cgroup is a blkio group of the harness's.
type cgroup struct{ dir string }

// newCapGroup makes a blkio group that caps writes to d at bps.
func newCapGroup(d *loopDev, bps int64) *cgroup {
	if _, err := os.Stat(filepath.Join(blkioRoot, "blkio.throttle.write_bps_device")); err != nil {
		fatalf("no cgroup v1 blkio controller at %s: the capped copies need one (and root)", blkioRoot)
	}
	g := &cgroup{dir: filepath.Join(blkioRoot, fmt.Sprintf("dbprobe-storagebench-%d-%d", os.Getpid(), time.Now().UnixNano()))}
	check(os.Mkdir(g.dir, 0o755))
	atExit(g.close)
	check(os.WriteFile(filepath.Join(g.dir, "blkio.throttle.write_bps_device"), []byte(fmt.Sprintf("%s %d", d.num, bps)), 0))
	return g
}

// add moves pid and every process descended from it into the group;
// processes they start later are born in it.
func (g *cgroup) add(pid int) {
	for _, p := range processTree(pid) {
		// A process that ended meanwhile is no matter.
		os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(p)), 0)
	}
}

// close moves the group's processes back to the root group and removes it.
func (g *cgroup) close() {
	if _, err := os.Stat(g.dir); err != nil {
		return
	}
	if data, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs")); err == nil {
		for _, p := range strings.Fields(string(data)) {
			os.WriteFile(filepath.Join(blkioRoot, "cgroup.procs"), []byte(p), 0)
		}
	}
	os.Remove(g.dir)
}

// processTree is pid and every process descended from it.
func processTree(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		for p, pp := range parent {
			if pp == out[i] {
				out = append(out, p)
			}
		}
	}
	return out
}

// pidFile reads the first line of a server's PID file.
func pidFile(path string) int {
	data, err := os.ReadFile(path)
	check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]))
	check(err)
	return pid
}
