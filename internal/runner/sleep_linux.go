package runner

import (
	"syscall"
	"time"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK (linux/prctl.h), which the
// syscall package does not name.
const prSetTimerSlack = 29

// kernelSleep sleeps d in the kernel (nanosleep), which wakes within tens
// of microseconds of the time asked, where Go's timers can wake a whole
// millisecond late (see waitUntil). The kernel may also defer the wake-up
// by the thread's timer slack, 50 µs by default, to group it with others;
// the slack is set to 1 ns first, on whichever thread the goroutine runs.
func kernelSleep(d time.Duration) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	// EINTR only cuts the sleep short; waitUntil sleeps again for the rest.
	_ = syscall.Nanosleep(&ts, nil)
}
