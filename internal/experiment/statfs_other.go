//go:build !unix

package experiment

import "errors"

func statfs(string) (free, size uint64, err error) {
	return 0, 0, errors.New("free space is read on Unix systems only")
}

func fileLimit() (soft, hard uint64, ok bool) { return 0, 0, false }

// outputGone reports false: only unix systems raise SIGPIPE.
func outputGone() bool { return false }
