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
