//go:build unix

package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Every command that runs threads on SQLite, which holds its files in
// dbprobe's own process, refuses more threads than its open-file limit
// allows up front: one line naming the limit and ulimit -n, exit 2, and
// no database file made — instead of minutes of opening sessions and
// "too many open files".
func TestEveryThreadedCommandChecksOpenFiles(t *testing.T) {
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Skip(err)
	}
	low := was
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
	dir := t.TempDir()
	sql := filepath.Join(dir, "one.sql")
	if err := os.WriteFile(sql, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"ycsb":   {"ycsb", "--db", "sqlite://" + filepath.Join(dir, "y.db"), "--threads", "300", "-p", "recordcount=10"},
		"load":   {"load", "--db", "sqlite://" + filepath.Join(dir, "l.db"), "--threads", "300", "-p", "recordcount=10"},
		"stress": {"stress", "--db", "sqlite://" + filepath.Join(dir, "s.db"), "--sql", sql, "--threads", "300", "--iterations", "1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, args...)
			if !badinput.Is(err) {
				t.Fatalf("%v, want bad input", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "--threads 300 needs about ") || !strings.Contains(msg, "its limit is 256 (RLIMIT_NOFILE soft") || !strings.Contains(msg, "ulimit -n") {
				t.Errorf("the refusal: %s", msg)
			}
			if _, err := os.Stat(args[2][len("sqlite://"):]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database file was made: %v", err)
			}
		})
	}
	// A count the limit allows runs.
	if _, stderr, err := run(t, "stress", "--db", "sqlite://"+filepath.Join(dir, "ok.db"), "--sql", sql, "--threads", "4", "--iterations", "1", "--no-monitor"); err != nil {
		t.Errorf("--threads 4: %v\n%s", err, stderr)
	}
}

// dbprobe stress refuses a database without SQL by its scheme, before
// connecting: nothing listens at the address, and the refusal is still
// the missing SQL, not an unreachable server.
func TestStressRefusesRedisByScheme(t *testing.T) {
	sql := filepath.Join(t.TempDir(), "one.sql")
	if err := os.WriteFile(sql, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "stress", "--db", "redis://127.0.0.1:1", "--sql", sql, "--iterations", "1")
	if !badinput.Is(err) || !strings.HasPrefix(err.Error(), "Redis has no SQL text") {
		t.Errorf("stress on Redis: %v", err)
	}
}
