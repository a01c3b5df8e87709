//go:build unix

package stress

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// ownerOf names the OS user that owns path, "" when it cannot be read.
func ownerOf(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	uid := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}
