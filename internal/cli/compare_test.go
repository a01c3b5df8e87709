package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/result"
)

// realRuns runs dbprobe ycsb on SQLite n times per durability, in turn
// (full, delayed, full, …), and returns the result files of each side.
func realRuns(t *testing.T, dir string, n int) (full, delayed []string) {
	t.Helper()
	for i := range n {
		for _, d := range []string{"full", "delayed"} {
			out := filepath.Join(dir, d+"-"+string(rune('1'+i))+".jsonl")
			_, stderr, err := run(t, "ycsb", "--db", "sqlite://"+filepath.Join(dir, d+".db"), "--durability", d,
				"-p", "recordcount=300", "-p", "operationcount=600", "--drop-existing", "--no-monitor", "--quiet", "--out", out)
			if err != nil {
				t.Fatalf("ycsb %s: %v\n%s", d, err, stderr)
			}
			if d == "full" {
				full = append(full, out)
			} else {
				delayed = append(delayed, out)
			}
		}
	}
	return full, delayed
}

// TestCompareRealRuns compares results of real short runs: SQLite with
// synchronous=FULL against OFF, whose commits skip the sync.
func TestCompareRealRuns(t *testing.T) {
	dir := t.TempDir()
	full, delayed := realRuns(t, dir, 5)
	args := append(append(append([]string{"compare"}, full...), "--"), delayed...)

	stdout, stderr, err := run(t, append(args, "--metrics", "throughput,p50.update")...)
	if err != nil {
		t.Fatalf("compare: %v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{
		"dbprobe compare: ycsb results, phase run",
		"  A: 5 runs: full-1.jsonl full-2.jsonl full-3.jsonl full-4.jsonl full-5.jsonl\n",
		"Settings that differ:\n  durability",
		"database synchronous",
		"throughput  ops/s",
		"\n    B is ",
		"5 runs each)",
		"B is better: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	if !strings.Contains(stdout, "% faster (95% CI ") && !strings.Contains(stdout, "× as fast (95% CI ") {
		t.Errorf("no throughput verdict that B is faster:\n%s", stdout)
	}

	// JSON on stdout and in --out, the same comparison.
	out := filepath.Join(dir, "cmp.json")
	stdout, _, err = run(t, append(args, "--json", "--out", out)...)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Experiment string `json:"experiment"`
		Metrics    []struct {
			Name    string    `json:"name"`
			A       []float64 `json:"a"`
			Outcome string    `json:"outcome"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Experiment != "ycsb" || len(got.Metrics) < 5 || len(got.Metrics[0].A) != 5 {
		t.Errorf("JSON %v: %+v", err, got)
	}
	file, _ := os.ReadFile(out)
	if string(file) != stdout {
		t.Errorf("--out differs from --json")
	}

	// A condition B meets: exit 1 (not bad input), after the output.
	stdout, _, err = run(t, append(args, "--metrics", "throughput", "--fail-if", "throughput>+5%")...)
	if err == nil || badinput.Is(err) || !strings.Contains(err.Error(), "--fail-if throughput>+5%: tripped") {
		t.Errorf("fail-if: %v", err)
	}
	if !strings.Contains(stdout, "fail-if throughput>+5%: FAILED: B is ") {
		t.Errorf("no FAILED line:\n%s", stdout)
	}
	// The other way round it passes.
	if _, _, err := run(t, append(args, "--metrics", "throughput", "--fail-if", "throughput<-5%")...); err != nil {
		t.Errorf("fail-if that does not hold: %v", err)
	}
}

// TestCompareBadInput: every refusal is one line and bad input (exit 2),
// and no result is changed.
func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	full, delayed := realRuns(t, dir, 1)
	a, b := full[0], delayed[0]
	scan := filepath.Join(dir, "scan.jsonl")
	w, err := result.Create(scan)
	if err != nil {
		t.Fatal(err)
	}
	w.Header(result.Header{Experiment: result.ExperimentStorage, Phase: "scan"})
	w.Summary(result.Summary{Phase: "scan", Storage: &result.StorageSummary{Experiment: "scan", Rate: 1e8}})
	w.Close()
	read95 := filepath.Join(dir, "read95.jsonl")
	if _, stderr, err := run(t, "ycsb", "--db", "sqlite://"+filepath.Join(dir, "r.db"), "--workload", "b", "-p", "recordcount=100", "-p", "operationcount=100", "--no-monitor", "--quiet", "--out", read95); err != nil {
		t.Fatal(err, stderr)
	}
	cut := filepath.Join(dir, "cut.jsonl")
	data, _ := os.ReadFile(b)
	lines := strings.SplitAfter(string(data), "\n")
	// Drop the run phase's summary and cut the line before it in two.
	kept := strings.Join(lines[:len(lines)-3], "") + lines[len(lines)-3][:20]
	os.WriteFile(cut, []byte(kept), 0o644)
	out := filepath.Join(dir, "never.json")

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no dash", []string{"compare", a, b}, "compare needs side A's result files, then --, then side B's"},
		{"no files", []string{"compare", "--"}, "compare got no result files"},
		{"empty A", []string{"compare", "--", b}, "side A has no result files (nothing before --)"},
		{"empty B", []string{"compare", a, "--"}, "side B has no result files (nothing after --)"},
		{"missing file", []string{"compare", a, "--", filepath.Join(dir, "nope.jsonl")}, "nope.jsonl: no such file or directory"},
		{"not a result", []string{"compare", a, "--", filepath.Join(dir, "full.db")}, "full.db is not a dbprobe result"},
		{"experiments", []string{"compare", a, "--", scan}, "compare refuses different experiments (--force compares them anyway)"},
		{"workloads", []string{"compare", a, "--", read95}, "the workload differs: readproportion is 0.5 in"},
		{"fail-if", []string{"compare", a, "--", b, "--fail-if", "throughput<5"}, `--fail-if "throughput<5": the threshold must be a percentage ending in %`},
		{"fail-if metric", []string{"compare", a, "--", b, "--fail-if", "p99.scan>5%"}, `names the metric "p99.scan", which these results do not have`},
		{"min-effect", []string{"compare", a, "--", b, "--min-effect", "two"}, `--min-effect "two": give a percentage`},
		{"flag after B", []string{"compare", a, "--", b, "--nope"}, "unknown flag: --nope"},
		{"out is an input", []string{"compare", a, "--", b, "--out", b}, "--out " + b + " is one of the results compared: give the comparison another name"},
		{"out in no directory", []string{"compare", a, "--", b, "--out", filepath.Join(dir, "no", "c.json")}, "cannot write --out " + filepath.Join(dir, "no", "c.json") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{"same file both sides", []string{"compare", a, "--", a}, "is given on both sides"},
		{"same file twice", []string{"compare", a, filepath.Dir(a) + "/./" + filepath.Base(a), "--", b}, "is given twice on side A"},
		{"cut short", []string{"compare", a, "--", cut, "--out", out}, "cut.jsonl cut short (a killed run, or one still going): compared as far as complete"},
	}
	before, _ := os.ReadFile(b)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, c.args...)
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line of bad input with %q", err, c.want)
			}
		})
	}
	if after, _ := os.ReadFile(b); string(after) != string(before) {
		t.Errorf("%s was changed", b)
	}
	// --force compares different workloads, with a note.
	stdout, _, err := run(t, "compare", a, "--", read95, "--force")
	if err != nil || !strings.Contains(stdout, "forced: the workload differs") {
		t.Errorf("--force: %v\n%s", err, stdout)
	}
}
