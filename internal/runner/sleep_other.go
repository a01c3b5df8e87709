//go:build !linux

package runner

import "time"

// kernelSleep is time.Sleep where dbprobe has no nanosleep of its own.
func kernelSleep(d time.Duration) { time.Sleep(d) }
