//go:build unix

package monitor

import (
	"fmt"
	"syscall"
	"time"
)

// processCPU returns the CPU time this process has used, user and system,
// over all its threads.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
