package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

// TestMain runs the tests with one dbprobe binary for them all.
func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m))
}

// The binary itself: exit codes and what reaches the terminal.
func TestExitCodes(t *testing.T) {
	bin := testbin.ForTest(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"null run", []string{"run", "--db", "null", "-p", "operationcount=1000", "--threads", "2"}, 0, ""},
		{"malformed URL", []string{"run", "--db", "postgres://u:canary-pw@[::1"}, 2, "dbprobe: --db"},
		{"wrong scheme", []string{"ycsb", "--db", "mongodb://h/x"}, 2, "unknown database"},
		{"bad property", []string{"run", "--db", "null", "-p", "recordcount=0"}, 2, "recordcount=0"},
		{"unknown flag", []string{"run", "--nope"}, 2, "unknown flag"},
		{"unknown command", []string{"lod"}, 2, "unknown command"},
		{"YCSB-style flags", []string{"run", "--db", "null", "-threads", "3", "-target", "100000", "-p", "operationcount=300"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			if tt.code == 2 {
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], tt.stderr) {
					t.Fatalf("stderr %q, want one line containing %q", stderr.String(), tt.stderr)
				}
			}
			if all := stdout.String() + stderr.String(); strings.Contains(all, "canary-pw") || strings.Contains(all, "goroutine ") {
				t.Fatalf("password or stack trace in the output:\n%s", all)
			}
			if tt.code == 0 && !strings.Contains(stdout.String(), "[OVERALL], Throughput(ops/sec)") {
				t.Fatalf("no YCSB output:\n%s", stdout.String())
			}
		})
	}
}

// Ctrl-C drains, prints the summary and marks the JSON result interrupted.
func TestInterruptKeepsTheResult(t *testing.T) {
	dir := t.TempDir()
	bin := testbin.ForTest(t)
	out := filepath.Join(dir, "result.jsonl")
	cmd := exec.Command(bin, "run", "--db", "null", "--duration", "60s", "-p", "operationcount=0", "--target", "20000", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// 130, as a shell reports Ctrl-C, so that a script stops here.
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit after Ctrl-C: %v, want status 130\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "[OVERALL], Throughput(ops/sec)") || !strings.Contains(stdout.String(), "# interrupted") {
		t.Fatalf("no summary after Ctrl-C:\n%s", stdout.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 1 || res.Phases[0].Summary == nil || !res.Phases[0].Summary.Interrupted || len(res.Phases[0].Intervals) < 2 {
		t.Fatalf("result after Ctrl-C: %+v", res)
	}
}
