//go:build unix

package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// DeviceOf returns the name in /proc/diskstats of the block device whose
// file system holds path. A file system without a block device of its own
// (tmpfs, overlay, btrfs's virtual device numbers, NFS) is an error
// saying so.
func DeviceOf(path string) (string, error) {
	return deviceOf("", path)
}

func deviceOf(root, path string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", err
	}
	major, minor := uint64(unix.Major(uint64(st.Dev))), uint64(unix.Minor(uint64(st.Dev)))
	data, err := os.ReadFile(filepath.Join(root, "/proc/diskstats"))
	if err != nil {
		return "", err
	}
	disks := map[string]diskStats{}
	if err := parseDiskstats(data, disks); err != nil {
		return "", err
	}
	for name, d := range disks {
		if d.major == major && d.minor == minor {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s is on device %d:%d, which /proc/diskstats does not list: its file system has no block device of its own (tmpfs, overlay, a network file system)", path, major, minor)
}
