//go:build !unix

package monitor

import "errors"

// DeviceOf returns the name in /proc/diskstats of the block device whose
// file system holds path; there is none off Unix.
func DeviceOf(path string) (string, error) {
	return "", errors.New("block devices are found on Linux only")
}
