package experiment

import (
	"os"
	"runtime"

	"github.com/dbprobe/dbprobe/internal/result"
)

// Version is dbprobe's version, printed in every header and result.
var Version = "0.1.0-dev"

// Environment describes this client machine and dbprobe, for a header.
func Environment() result.Environment {
	e := result.Environment{
		Dbprobe: Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	e.Hostname, _ = os.Hostname()
	return e
}
