package faults

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fsDirPrefix starts the name of the directory that holds a test's file
// system image and mount point; the test process's PID follows, so that
// removeStale can tell those of dead processes.
const fsDirPrefix = "dbprobe-faults-fs-"

// loopFS makes an ext4 file system of sizeMB in a file, mounts it through
// a loop device of its own and returns the mount point; it is unmounted
// and its loop device detached when the test ends, failed or not. The
// root directory is given to owner (uid, gid) when owner is not nil.
func loopFS(t *testing.T, sizeMB int, owner *[2]int) string {
	t.Helper()
	needRoot(t, "losetup", "mkfs.ext4", "mount", "umount")
	// Not t.TempDir, which others may not enter: PostgreSQL runs as the
	// postgres user.
	dir, err := os.MkdirTemp("", fsDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	image := filepath.Join(dir, "disk.img")
	f, err := os.Create(image)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(sizeMB) << 20); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Close()
	// No reserved blocks for root (-m 0): the database, run as root or
	// not, sees the whole file system fill. No lazy init: nothing writes
	// behind the test's back once it is mounted.
	sh(t, "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", image)
	out, err := exec.Command("losetup", "--find", "--show", image).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "ext4", dev, mnt).CombinedOutput(); err != nil {
		exec.Command("losetup", "-d", dev).Run()
		t.Fatalf("mount %s: %v: %s", dev, err, out)
	}
	// Registered after the directory's removal, so it runs before it: the
	// file system is gone before its directory is removed.
	t.Cleanup(func() {
		var err error
		for i := 0; i < 50; i++ {
			if err = exec.Command("umount", mnt).Run(); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond) // a server still closing its files
		}
		if err != nil {
			t.Errorf("umount %s: %v", mnt, err)
			exec.Command("umount", "-l", mnt).Run()
		}
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	if owner != nil {
		if err := os.Chown(mnt, owner[0], owner[1]); err != nil {
			t.Fatal(err)
		}
	}
	return mnt
}

// fill writes a file of n bytes at path, to be removed later to free
// space on a full file system.
func fill(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), left)]); err != nil {
			f.Close()
			t.Fatalf("writing the filler %s: %v", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// freeBytes returns the bytes free on the file system that holds path.
func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// mib formats bytes as MiB for messages.
func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }
