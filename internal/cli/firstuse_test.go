package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/testbin"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// bottlenecks returns the text of every "# bottleneck:" line, phase by phase.
func bottlenecks(stdout string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^# bottleneck: (.*)$`).FindAllStringSubmatch(stdout, -1) {
		out = append(out, m[1])
	}
	return out
}

// The README offers --db null to measure dbprobe itself: load, run and
// ycsb all work on it as they come, as often as they are run.
func TestNullTargetOnFirstUse(t *testing.T) {
	for _, args := range [][]string{
		{"load", "--db", "null"},
		{"load", "--db", "null"},
		{"run", "--db", "null"},
		{"ycsb", "--db", "null"},
		{"ycsb", "--db", "null", "-p", "recordcount=5000"},
	} {
		stdout, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if !strings.Contains(stdout, "[OVERALL], Throughput(ops/sec)") || !strings.Contains(stdout, "# note: table usertable: none: the null driver keeps nothing") {
			t.Errorf("%v: no result or no table note:\n%s", args, stdout)
		}
		if strings.Contains(stdout, "the database's counters") {
			t.Errorf("%v: the monitor note speaks of a database:\n%s", args, stdout)
		}
	}
	// A knob that the null driver would ignore is refused in one line.
	_, _, err := run(t, "ycsb", "--db", "null", "--durability", "delayed")
	if !badinput.Is(err) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--durability delayed") {
		t.Errorf("--durability delayed on null: %v, want one line of bad input naming it", err)
	}
}

// The README's first command has phases of milliseconds: their verdict is
// not a guess but says why there is none, and the header does not point at
// a JSON result that is not written.
func TestShortPhaseIsNotJudged(t *testing.T) {
	stdout, stderr, err := run(t, "ycsb", "--seed", "1")
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	b := bottlenecks(stdout)
	if len(b) != 2 {
		t.Fatalf("want a bottleneck line per phase, got %q", b)
	}
	for _, v := range b {
		if !regexp.MustCompile(`^not judged — phase too short to judge: [0-9.]+ (ms|s); run for 3 s or more$`).MatchString(v) {
			t.Errorf("verdict %q, want the phase too short to judge", v)
		}
	}
	if !strings.Contains(stdout, "the samples are not kept: --out FILE keeps them") || strings.Contains(stdout, "the samples are in the JSON result") {
		t.Errorf("the header promises samples in a JSON result that is not written:\n%s", stdout)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	stdout, stderr, err = run(t, "ycsb", "--out", out)
	if err != nil {
		t.Fatalf("ycsb --out: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "the samples are in the JSON result (--out)") {
		t.Errorf("with --out the header does not say where the samples are:\n%s", stdout)
	}
}

// --duration outlasts the operation count of a built-in workload file,
// which would end the run in milliseconds; a count the user set stands,
// and the run says which bound ended it.
func TestDurationOutlastsTheBuiltinCount(t *testing.T) {
	stdout, stderr, err := run(t, "run", "--db", "null", "--duration", "3s", "--threads", "2")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"its 1000 gives way to maxexecutiontime=3s (--duration): the run is bounded by time",
		"#   ends                      = after 3s (maxexecutiontime)",
		"# ended: maxexecutiontime=3s ran out after ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rt := regexp.MustCompile(`\[OVERALL\], RunTime\(ms\), (\d+)`).FindStringSubmatch(stdout)
	if ms, _ := strconv.Atoi(rt[1]); ms < 3000 {
		t.Errorf("RunTime %d ms, want the 3 s asked for", ms)
	}

	stdout, stderr, err = run(t, "run", "--db", "null", "--duration", "30s", "-p", "operationcount=500")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"#   operationcount            = 500 ",
		"after 500 operations (operationcount) or 30s (maxexecutiontime), whichever comes first",
		"# ended: all 500 operations of operationcount done before maxexecutiontime=30s",
		"[READ], Operations, ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("a count the user set: stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// A client starved of CPU by other work on the machine is the limit,
// though GOMAXPROCS is left as it comes (unpinned) and dbprobe's CPU is
// far below its cores: two busy processes share the cores with it.
func TestStarvedClientWithoutADatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs busy processes for seconds")
	}
	for range 2 {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	stdout, stderr, err := run(t, "run", "--db", "null", "--duration", "3s", "--threads", "4")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	b := bottlenecks(stdout)
	if len(b) != 1 || !strings.HasPrefix(b[0], "dbprobe itself") {
		t.Errorf("verdict %q, want dbprobe itself", b)
	}
}

// A client held to a fraction of a core by its cgroup's CPU quota is the
// limit at a CPU share that GOMAXPROCS alone would call idle: the verdict
// names the quota's cores.
func TestClientUnderACgroupQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	cg := filepath.Join("/sys/fs/cgroup/cpu", "dbprobe-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		testdb.Unavailable(t, "cgroup v1 cpu controller not writable here (run as root on a machine with /sys/fs/cgroup/cpu): "+err.Error())
		return
	}
	t.Cleanup(func() {
		// The cgroup goes once its last process has exited.
		for range 50 {
			if os.Remove(cg) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s left behind", cg)
	})
	for name, value := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "30000"} {
		if err := os.WriteFile(filepath.Join(cg, name), []byte(value), 0o644); err != nil {
			t.Fatalf("setting %s: %v", name, err)
		}
	}
	bin := testbin.ForTest(t)
	// The shell moves itself into the cgroup, then becomes dbprobe.
	cmd := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, bin, "run", "--db", "null", "--duration", "4s", "--threads", "2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	b := bottlenecks(string(out))
	if len(b) != 1 || !strings.HasPrefix(b[0], "dbprobe itself") || !strings.Contains(b[0], "of its 0.3 cores") {
		t.Errorf("verdict %q, want dbprobe itself on its 0.3 cores", b)
	}
}

// What the flag parser or the URL parser complains about never shows the
// password of a URL given on the command line or in DBPROBE_DB, however
// it is misspelt.
func TestBadCommandLinesHideThePassword(t *testing.T) {
	for _, args := range [][]string{
		{"load", "-db=postgres://u:Zq9sec@127.0.0.1/x"},
		{"load", "--db=", "postgres://u:Zq9sec@127.0.0.1/x"},
		{"load", "--db", "postgres:/o:Zq9sec@127.0.0.1/x"},
		{"load", "--db", "postgres:o:Zq9sec@127.0.0.1/x"},
		{"load", "--db", "redis::Zq9sec@127.0.0.1/0"},
		{"load", "--db", "postgres://u:Zq9sec@127.0.0.1/x#frag"},
	} {
		_, _, err := run(t, args...)
		if err == nil || !badinput.Is(err) || strings.Contains(err.Error(), "Zq9sec") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line of bad input without the password", args, err)
		}
	}
	t.Setenv("DBPROBE_DB", "postgres:/o:Zq9sec@127.0.0.1/x")
	_, _, err := run(t, "load")
	if err == nil || !strings.HasPrefix(err.Error(), "DBPROBE_DB ") || strings.Contains(err.Error(), "Zq9sec") {
		t.Errorf("DBPROBE_DB: %v; want a message naming DBPROBE_DB, without the password", err)
	}
}

// A warm-up that lasts the whole run would leave nothing measured.
func TestWarmupNotShorterThanTheRun(t *testing.T) {
	_, _, err := run(t, "run", "--db", "null", "--warmup", "5s", "--duration", "3s")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "--warmup 5s is not shorter than maxexecutiontime=3s") {
		t.Errorf("run = %v, want bad input", err)
	}
}
