// Package testbin builds the dbprobe binary for tests that run it as a
// user does: under a terminal, interrupted, in a cgroup, scraped.
package testbin

import (
	"fmt"
	"os/exec"
	"path/filepath"
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

// ForTest builds the binary into a temporary directory of t, and fails t
// when it does not build.
func ForTest(t testing.TB) string {
	t.Helper()
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
