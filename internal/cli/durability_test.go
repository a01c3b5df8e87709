package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	"github.com/dbprobe/dbprobe/internal/durability"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

// TestMain lets this test binary be the SQLite writer that dbprobe
// durability re-runs, through the same hidden command as dbprobe itself.
func TestMain(m *testing.M) {
	if durability.IsChild() {
		err := cli.Execute(context.Background(), []string{"durability", "sqlite-writer"}, os.Stdout, os.Stderr)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	// A sweep run in process (TestSweepBadInput) that gets past its checks
	// starts os.Executable, this test binary, as its runs' dbprobe: without
	// this refusal that child would run every test again, each sweeping
	// again, until the test times out. A refusal (exit 2) stops the sweep.
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		os.Stderr.WriteString("cli.test started as dbprobe " + os.Args[1] + " by a sweep in a test: the sweep should have refused its input\n")
		os.Exit(2)
	}
	// One dbprobe binary for the tests that run it, not one per test.
	os.Exit(testbin.Main(m))
}

func TestDurabilityOnSQLite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "durability.json")
	stdout, stderr, err := run(t, "durability", "--database", "sqlite", "--cycles", "2", "--writers", "2",
		"--crash-after", "200ms..300ms", "--seed", "3", "--out", out)
	if err != nil {
		t.Fatalf("durability: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"cycle 1:", "cycle 2:", "total:", "0 lost", "synchronous = FULL", "what a process kill proves here:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// --out is the common JSON result: what the text said, record for
	// record.
	f := readResult(t, out)
	if len(f.Phases) != 1 || f.Truncated {
		t.Fatalf("--out has %d phases, truncated %v", len(f.Phases), f.Truncated)
	}
	p := f.Phases[0]
	h := p.Header
	if h.Experiment != result.ExperimentDurability || h.Phase != "check" || h.Database.Driver != "sqlite" || h.Environment.Dbprobe == "" || !strings.HasPrefix(h.Command, "dbprobe durability") {
		t.Errorf("header %+v", h)
	}
	settings := map[string]string{}
	for _, s := range h.Settings {
		settings[s.Key] = s.Value + " (" + s.Source + ")"
	}
	for key, want := range map[string]string{"database": "sqlite (--database)", "durability": "full (default)", "cycles": "2 (--cycles)",
		"writers": "2 (--writers)", "crash-after": "200ms..300ms (--crash-after)", "seed": "3 (--seed)"} {
		if settings[key] != want {
			t.Errorf("setting %s = %q, want %q", key, settings[key], want)
		}
	}
	cycleLine := regexp.MustCompile(`(?m)^cycle (\d+): killed after [0-9.]+ s; (\d+) acknowledged, (\d+) lost`)
	lines := cycleLine.FindAllStringSubmatch(stdout, -1)
	if len(p.Cycles) != 2 || len(lines) != 2 {
		t.Fatalf("%d cycle records, %d cycle lines", len(p.Cycles), len(lines))
	}
	acked := 0
	for i, c := range p.Cycles {
		if got := fmt.Sprintf("%d %d %d", c.Number, c.Acknowledged, c.Lost); got != strings.Join(lines[i][1:], " ") {
			t.Errorf("cycle record %s, the text says %s", got, strings.Join(lines[i][1:], " "))
		}
		if c.Pattern != result.PatternNone || c.CrashAfter < 200*time.Millisecond || c.CrashAfter > 300*time.Millisecond || c.Recovery <= 0 || !c.End.After(c.Start) {
			t.Errorf("cycle record %+v", c)
		}
		acked += c.Acknowledged
	}
	s := p.Summary
	if s == nil || s.Durability == nil {
		t.Fatalf("no durability summary: %+v", s)
	}
	d := s.Durability
	if d.Cycles != 2 || d.Acknowledged != acked || d.Lost != 0 || !d.Passed || !strings.HasPrefix(d.Verdict, "passed: none of") || d.Caveat == "" || s.Interrupted || s.RunTime <= 0 {
		t.Errorf("summary %+v %+v", *s, *d)
	}
	if !strings.Contains(stdout, fmt.Sprintf("total: %d acknowledged writes over 2 crashes, 0 lost", acked)) {
		t.Errorf("the text's total is not the summary's %d:\n%s", acked, stdout)
	}
}

func TestDurabilityBadInput(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"remote target", []string{"--db", "postgres://u@db.example.com/x"}, "starts itself"},
		{"local target too", []string{"--database", "postgres", "--db", "postgres://u@127.0.0.1/x"}, "starts itself"},
		{"unknown database", []string{"--database", "oracle"}, "known: postgres, mariadb"},
		{"no cycles", []string{"--cycles", "0"}, "--cycles 0"},
		{"no writers", []string{"--writers", "0"}, "--writers 0"},
		{"crash-after", []string{"--crash-after", "soon"}, "--crash-after"},
		{"crash-after reversed", []string{"--crash-after", "3s..1s"}, "--crash-after"},
		{"durability", []string{"--durability", "sometimes"}, "--durability"},
		{"no postgres binaries", []string{"--database", "postgres", "--bindir", empty}, "Debian package postgresql"},
		{"no mariadb binaries", []string{"--database", "mariadb", "--bindir", empty}, "Debian package mariadb-server"},
		{"bindir missing", []string{"--database", "postgres", "--bindir", filepath.Join(empty, "nope")}, "--bindir"},
		{"out unwritable", []string{"--out", filepath.Join(empty, "nope", "r.json")}, "--out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := run(t, append([]string{"durability"}, tc.args...)...)
			if !badinput.Is(err) {
				t.Fatalf("err = %v, want bad input", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("message %q: want one line containing %q", msg, tc.want)
			}
			if stdout != "" {
				t.Errorf("bad input printed a report:\n%s", stdout)
			}
		})
	}
}

func TestDurabilityOutNotLeftOnBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	_, _, err := run(t, "durability", "--database", "postgres", "--bindir", t.TempDir(), "--out", out)
	if !badinput.Is(err) {
		t.Fatalf("err = %v, want bad input", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out %s was left behind (%v)", out, err)
	}
}

func TestDurabilityWriterIsNotForUsers(t *testing.T) {
	t.Setenv(durability.ChildEnv, "")
	_, _, err := run(t, "durability", "sqlite-writer")
	if !badinput.Is(err) {
		t.Errorf("err = %v, want bad input", err)
	}
}

func TestDurabilityHelpTeaches(t *testing.T) {
	stdout, _, err := run(t, "durability", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"starts its own", "SIGKILL", "acknowledged", "innodb_flush_log_at_trx_commit=2",
		"synchronous=OFF", "power loss", "cannot", "--crash-after", "--cycles", "cycle record", "dbprobe recover"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}
