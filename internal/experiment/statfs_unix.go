//go:build unix

package experiment

import "syscall"

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
