package runner

import (
	"syscall"
	"time"
)

// kernelSleep sleeps d in the kernel (nanosleep), which wakes within tens
// of microseconds of the time asked, where Go's timers can wake a whole
// millisecond late (see waitUntil).
func kernelSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	// EINTR only cuts the sleep short; waitUntil sleeps again for the rest.
	_ = syscall.Nanosleep(&ts, nil)
}
