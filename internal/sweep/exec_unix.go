//go:build unix

package sweep

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the child in a process group of its own, so that
// the terminal's Ctrl-C reaches only the sweep, which passes it on once.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
