//go:build !unix

package monitor

import (
	"fmt"
	"runtime"
	"time"
)

// processCPU has no implementation outside Unix yet.
func processCPU() (time.Duration, error) {
	return 0, fmt.Errorf("no getrusage on %s", runtime.GOOS)
}
