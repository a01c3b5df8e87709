// Package testbin builds the dbprobe binary for tests that run it as a
// user does: under a terminal, interrupted, in a cgroup, scraped.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// Build compiles cmd/dbprobe into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "dbprobe")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dbprobe/dbprobe/cmd/dbprobe").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// ForTest returns the dbprobe binary for t: the one Main built for the
// whole test process when the package's TestMain runs its tests through
// Main, or else one built into a temporary directory of t. It fails t
// when the binary does not build.
func ForTest(t testing.TB) string {
	t.Helper()
	if shared.enabled.Load() {
		shared.once.Do(func() { shared.bin, shared.err = Build(shared.dir) })
		if shared.err != nil {
			t.Fatal(shared.err)
		}
		return shared.bin
	}
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// shared is the binary Main makes ForTest build once for every test of
// the process: linking it takes seconds, and a package's tests used to
// link it once per test.
var shared struct {
	enabled atomic.Bool
	dir     string
	once    sync.Once
	bin     string
	err     error
}

// Main runs a package's tests (m.Run) with one dbprobe binary for them
// all, built on ForTest's first call, and removes it after them. It
// returns m.Run's exit code, for os.Exit.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dbprobe-testbin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	shared.dir = dir
	shared.enabled.Store(true)
	defer shared.enabled.Store(false)
	return m.Run()
}
