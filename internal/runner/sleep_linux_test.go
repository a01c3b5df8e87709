package runner

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestKernelSleepDropsTimerSlack: the kernel defers a sleeping thread's
// wake-up by up to its timer slack (50 µs unless set), which every
// Intended- latency would count; kernelSleep sets it to 1 ns.
func TestKernelSleepDropsTimerSlack(t *testing.T) {
	const prGetTimerSlack = 30
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 50_000, 0); errno != 0 {
		t.Skipf("prctl(PR_SET_TIMERSLACK): %v", errno)
	}
	kernelSleep(time.Microsecond)
	slack, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		t.Fatalf("prctl(PR_GET_TIMERSLACK): %v", errno)
	}
	if slack != 1 {
		t.Fatalf("timer slack %d ns after kernelSleep, want 1", slack)
	}
}
