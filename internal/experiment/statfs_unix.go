//go:build unix

package experiment

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// statfs returns the bytes an unprivileged writer may still use on the
// file system that holds path, and its size.
func statfs(path string) (free, size uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	bs := uint64(st.Bsize)
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil
}

// fileLimit returns dbprobe's limit on open files (RLIMIT_NOFILE), soft
// and hard.
func fileLimit() (soft, hard uint64, ok bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0, false
	}
	return uint64(r.Cur), uint64(r.Max), true
}

// outputGone reports whether the reader of stdout or stderr went away (a
// pipe's read end closed, a terminal hung up): a SIGPIPE is raised by a
// write to any broken pipe or socket, a database's connection included,
// and only a broken stdout or stderr is an interrupt.
func outputGone() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
