package instance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` keeps its named network namespaces.
const netnsDir = "/var/run/netns"

// startIn starts cmd in the named network namespace, or in this process's
// when ns is "".
//
// The child inherits the namespace of the thread that forks it, so the
// start runs on a thread locked to this goroutine and moved into the
// namespace (setns), then moved back. Going back matters twice: the thread
// then serves other goroutines in this process's namespace, and it lives
// on, so the server's Pdeathsig (sent when the thread that started it
// ends) is not sent early. A thread that cannot go back stays locked and
// ends with the goroutine, which kills the server: Start then fails
// rather than leave a thread in the wrong namespace.
//
// Not `ip netns exec` or nsenter: as root the server runs as the postgres
// user, and a change of user after the Pdeathsig was set clears it, where
// Go's own fork sets it after the change of user.
func startIn(ns string, cmd *exec.Cmd) error {
	if ns == "" {
		return cmd.Start()
	}
	target, err := os.Open(filepath.Join(netnsDir, ns))
	if err != nil {
		return fmt.Errorf("instance: network namespace %s: %w", ns, err)
	}
	defer target.Close()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("instance: this thread's network namespace: %w", err)
			return
		}
		defer own.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("instance: enter network namespace %s: %w", ns, err)
			return
		}
		startErr := cmd.Start()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			// Left locked: the thread ends with this goroutine.
			if startErr == nil {
				cmd.Process.Kill()
			}
			done <- fmt.Errorf("instance: leave network namespace %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		done <- startErr
	}()
	return <-done
}
