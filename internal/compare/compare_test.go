package compare

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeRun is what a hand-built result holds.
type fakeRun struct {
	experiment string
	phase      string // "run" when empty
	settings   [][2]string
	target     string
	throughput float64
	// series: name → p50, p99 in µs.
	series  [][3]any
	storage *result.StorageSummary
	stress  *result.StressSummary
	// cut leaves the summary out and cuts a last line in two.
	cut bool
}

var start = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// writeRun writes a result file with result.Writer, so the format is the
// one runs write, and returns its name (relative to the test's
// directory).
func writeRun(t *testing.T, name string, r fakeRun) string {
	t.Helper()
	if r.experiment == "" {
		r.experiment = result.ExperimentYCSB
	}
	if r.phase == "" {
		r.phase = "run"
	}
	w, err := result.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	h := result.Header{
		Experiment: r.experiment, Phase: r.phase, StartedAt: start, Target: r.target,
		Command:     "dbprobe run",
		Environment: result.Environment{Dbprobe: "test", Go: "go1.26", OS: "linux", Arch: "amd64", CPUs: 2, GOMAXPROCS: 2, Hostname: "bench"},
		Database:    result.Database{Driver: "sqlite", ServerVersion: "3.54.1"},
	}
	base := [][2]string{{"workload", "site.ycsb.workloads.CoreWorkload"}, {"readproportion", "0.5"}, {"updateproportion", "0.5"}, {"requestdistribution", "zipfian"}, {"threadcount", "4"}}
	for _, s := range append(base, r.settings...) {
		replaced := false
		for i := range h.Settings {
			if h.Settings[i].Key == s[0] {
				h.Settings[i].Value, replaced = s[1], true
			}
		}
		if !replaced {
			h.Settings = append(h.Settings, result.Setting{Key: s[0], Value: s[1], Source: "test"})
		}
	}
	if err := w.Header(h); err != nil {
		t.Fatal(err)
	}
	s := result.Summary{Phase: r.phase, RunTime: 10 * time.Second, Throughput: r.throughput, Ops: int64(r.throughput * 10), Storage: r.storage, Stress: r.stress}
	for _, x := range r.series {
		s.Series = append(s.Series, measure.Summary{Name: x[0].(string), Count: 1000, Percentiles: []measure.Percentile{{Percentile: 50, Micros: int64(x[1].(int))}, {Percentile: 99, Micros: int64(x[2].(int))}}})
	}
	if !r.cut {
		if err := w.Summary(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r.cut {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"interval","phase":"run","sta`)
		f.Close()
	}
	return name
}

// ycsbSides are five runs per side, B about 4% faster and its p99 about
// 10% lower, p50 unchanged.
func ycsbSides(t *testing.T, extraB ...[2]string) (Side, Side) {
	t.Helper()
	tpA := []float64{1000, 1012, 990, 1005, 996}
	tpB := []float64{1045, 1052, 1038, 1049, 1041}
	p50A := []int{400, 410, 395, 405, 402}
	p50B := []int{398, 404, 401, 411, 396}
	p99A := []int{2000, 2100, 1950, 2050, 2020}
	p99B := []int{1800, 1850, 1790, 1820, 1860}
	var a, b []string
	for i := range 5 {
		a = append(a, writeRun(t, "full-"+string(rune('1'+i))+".jsonl", fakeRun{
			settings:   [][2]string{{"durability", "full"}, {"seed", string(rune('a' + i))}},
			target:     "postgres://bench:xxxxx@db1:5432/bench",
			throughput: tpA[i], series: [][3]any{{"READ", p50A[i], p99A[i]}, {"UPDATE", 900, 3000}, {"CLEANUP", 5, 5}},
		}))
		b = append(b, writeRun(t, "delayed-"+string(rune('1'+i))+".jsonl", fakeRun{
			settings:   append([][2]string{{"durability", "delayed"}, {"seed", string(rune('f' + i))}}, extraB...),
			target:     "postgres://bench:xxxxx@db1:5432/bench",
			throughput: tpB[i], series: [][3]any{{"READ", p50B[i], p99B[i]}, {"UPDATE", 700, 2500}, {"CLEANUP", 5, 5}},
		}))
	}
	return load(t, "A", a), load(t, "B", b)
}

func load(t *testing.T, name string, paths []string) Side {
	t.Helper()
	s, err := Load(name, paths)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is meant):\n%s", name, got)
	}
}

// testdataDir is the package's testdata, found before a test changes
// directory.
var testdataDir, _ = filepath.Abs("testdata")

func TestGoldenYCSB(t *testing.T) {
	t.Chdir(t.TempDir())
	a, b := ycsbSides(t)
	c, err := Run(a, b, Options{MinEffect: 0.02, FailIf: mustConditions(t, "throughput<-5%", "p99.read>+10%")})
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "ycsb.txt", text.Bytes())
	golden(t, "ycsb.json", js.Bytes())
	m := metric(t, c, "throughput")
	if m.Outcome != Better || !strings.HasPrefix(m.Verdict, "B is 4.") {
		t.Errorf("throughput: %s", m.Verdict)
	}
	if m := metric(t, c, "p99.read"); m.Outcome != Better || !strings.HasPrefix(m.Verdict, "B is better: ") {
		t.Errorf("p99.read: %s", m.Verdict)
	}
	if m := metric(t, c, "p50.read"); m.Outcome != NoDifference {
		t.Errorf("p50.read: %s", m.Verdict)
	}
	if _, ok := find(c, "p50.cleanup"); ok {
		t.Error("CLEANUP compared")
	}
	if c.Tripped() {
		t.Errorf("a check tripped on a faster B: %+v", c.Checks)
	}
	if len(c.Differences) != 1 || c.Differences[0].Setting != "durability" {
		t.Errorf("differences %+v, want durability alone (seed is the run's own)", c.Differences)
	}
}

func mustConditions(t *testing.T, texts ...string) []Condition {
	t.Helper()
	var out []Condition
	for _, s := range texts {
		c, err := ParseCondition(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func find(c *Comparison, name string) (*Metric, bool) {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return nil, false
}

func metric(t *testing.T, c *Comparison, name string) *Metric {
	t.Helper()
	m, ok := find(c, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	return m
}

// TestSideNames: a caller that names its sides (a sweep's variants)
// gets verdicts in those names.
func TestSideNames(t *testing.T) {
	t.Chdir(t.TempDir())
	a, b := ycsbSides(t)
	a.Name, b.Name = "full", "delayed"
	c, err := Run(a, b, Options{Metrics: []string{"throughput"}, FailIf: mustConditions(t, "throughput>1%")})
	if err != nil {
		t.Fatal(err)
	}
	if m := metric(t, c, "throughput"); !strings.HasPrefix(m.Verdict, "delayed is 4.5% faster") {
		t.Errorf("verdict %q", m.Verdict)
	}
	if !strings.HasPrefix(c.Checks[0].Why, "delayed is 4.5% faster") || c.A.Name != "full" {
		t.Errorf("check %+v, side %+v", c.Checks[0], c.A)
	}
}

// TestFailIfTrips holds B against A the other way round: B slower, its
// p99 higher, so both conditions trip.
func TestFailIfTrips(t *testing.T) {
	t.Chdir(t.TempDir())
	a, b := ycsbSides(t)
	c, err := Run(b, a, Options{FailIf: mustConditions(t, "throughput<-3%", "p99.read>+10%", "p50.read>+1%")})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Checks[0].Tripped || !c.Checks[1].Tripped {
		t.Errorf("checks %+v: want throughput and p99 tripped", c.Checks)
	}
	// p50 is not shown to differ: noise does not fail the build.
	if c.Checks[2].Tripped {
		t.Errorf("p50.read tripped on noise: %+v", c.Checks[2])
	}
	if !c.Tripped() {
		t.Error("Tripped() false")
	}
}

func TestFailIfOnOneRunEach(t *testing.T) {
	t.Chdir(t.TempDir())
	a := writeRun(t, "a.jsonl", fakeRun{throughput: 1000})
	b := writeRun(t, "b.jsonl", fakeRun{throughput: 900})
	c, err := Run(load(t, "A", []string{a}), load(t, "B", []string{b}), Options{FailIf: mustConditions(t, "throughput<-5%")})
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Checks[0]; !ch.Tripped || !strings.Contains(ch.Why, "judged on that estimate alone") {
		t.Errorf("one run each, 10%% slower: %+v", ch)
	}
}

func TestRefusals(t *testing.T) {
	t.Chdir(t.TempDir())
	ycsb := writeRun(t, "ycsb.jsonl", fakeRun{throughput: 1000})
	read95 := writeRun(t, "b.jsonl", fakeRun{throughput: 1000, settings: [][2]string{{"readproportion", "0.95"}}})
	stor := writeRun(t, "scan.jsonl", fakeRun{experiment: result.ExperimentStorage, phase: "scan", storage: &result.StorageSummary{Experiment: "scan", Rate: 1e8}})
	read := writeRun(t, "read.jsonl", fakeRun{experiment: result.ExperimentStorage, phase: "read", storage: &result.StorageSummary{Experiment: "read", Rate: 1e8}})
	load2 := func(a, b string) (Side, Side) { return load(t, "A", []string{a}), load(t, "B", []string{b}) }
	cases := []struct {
		name   string
		a, b   string
		opts   Options
		want   string
		forced bool
	}{
		{"experiments", ycsb, stor, Options{}, "ycsb.jsonl is a ycsb result and scan.jsonl a storage result: compare refuses different experiments (--force compares them anyway)", false},
		{"workloads", ycsb, read95, Options{}, "the workload differs: readproportion is 0.5 in ycsb.jsonl and 0.95 in b.jsonl; compare refuses different workloads (--force compares them anyway)", false},
		{"forced", ycsb, read95, Options{Force: true}, "", true},
		{"phase", ycsb, read95, Options{Phase: "load"}, `ycsb.jsonl has no phase "load" (it has phases run); compare the same phase on both sides, or name it with --phase`, false},
		{"storage experiments", stor, read, Options{}, "the workload differs: read.jsonl ran storage read and another file storage scan; compare refuses different workloads (--force compares them anyway)", false},
		{"metric", ycsb, ycsb, Options{Metrics: []string{"p99.scan"}}, `--metrics names the metric "p99.scan", which these results do not have; they have throughput`, false},
		{"fail-if metric", ycsb, ycsb, Options{FailIf: mustConditions(t, "rate<-5%")}, `--fail-if rate<-5% names the metric "rate", which these results do not have; they have throughput`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := load2(c.a, c.b)
			cmp, err := Run(a, b, c.opts)
			if c.forced {
				if err != nil || !strings.Contains(strings.Join(cmp.Notes, "\n"), "forced: the workload differs") {
					t.Errorf("forced: %v, notes %q", err, cmp.Notes)
				}
				return
			}
			if err == nil || !badinput.Is(err) || err.Error() != c.want || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
	if _, err := Run(Side{Name: "A"}, load(t, "B", []string{ycsb}), Options{}); err == nil || !badinput.Is(err) {
		t.Errorf("empty side: %v", err)
	}
	if _, err := Load("A", []string{"missing.jsonl"}); err == nil || !badinput.Is(err) || err.Error() != "cannot read missing.jsonl: no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile("junk.jsonl", []byte("hello\n"), 0o644)
	if _, err := Load("A", []string{"junk.jsonl"}); err == nil || !badinput.Is(err) || !strings.HasPrefix(err.Error(), "junk.jsonl is not a dbprobe result") {
		t.Errorf("junk: %v", err)
	}
}

// TestStorageRates compares storage results built by hand: the rate in
// the unit its experiment is given in, higher is better.
func TestStorageRates(t *testing.T) {
	t.Chdir(t.TempDir())
	var a, b []string
	for i, r := range []float64{100e6, 102e6, 99e6, 101e6, 98e6} {
		st := func(rate float64, dev string) *result.StorageSummary {
			return &result.StorageSummary{Experiment: "scan", Rate: rate, Bytes: int64(rate * 10), Seconds: 10, Table: result.StorageTable{Name: "t", Bytes: 1e9}}
		}
		a = append(a, writeRun(t, "local-"+string(rune('1'+i))+".jsonl", fakeRun{experiment: result.ExperimentStorage, settings: [][2]string{{"tablespace", "local"}}, storage: st(r, "vda")}))
		b = append(b, writeRun(t, "net-"+string(rune('1'+i))+".jsonl", fakeRun{experiment: result.ExperimentStorage, settings: [][2]string{{"tablespace", "network"}}, storage: st(r*0.8, "loop0")}))
	}
	c, err := Run(load(t, "A", a), load(t, "B", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	WriteText(&text, c)
	golden(t, "storage.txt", text.Bytes())
	if len(c.Metrics) != 1 {
		t.Fatalf("metrics %v, want the rate alone", c.Metrics)
	}
	m := c.Metrics[0]
	if m.Name != "rate" || m.Unit != "GB/min" || m.Outcome != Worse || !strings.HasPrefix(m.Verdict, "B is 20.0% slower (95% CI ") || !strings.Contains(m.Verdict, "p = 0.008") {
		t.Errorf("rate: %+v", m)
	}
	if math.Abs(m.MedianA-6) > 1e-9 { // 100 MB/s is 6 GB/min
		t.Errorf("median A %v GB/min, want 6", m.MedianA)
	}
}

// TestStressCosts compares a stress run's server cost per iteration:
// lower is better.
func TestStressCosts(t *testing.T) {
	t.Chdir(t.TempDir())
	f := func(v float64) *float64 { return &v }
	var a, b []string
	for i := range 5 {
		st := func(reads float64) *result.StressSummary {
			return &result.StressSummary{
				Statements:   []result.StressStatement{{Label: "LOOP.SQL-1", Text: "SELECT 1"}},
				PerIteration: &result.CostFigures{Calls: 100, LogicalReads: f(reads + float64(i))},
			}
		}
		a = append(a, writeRun(t, "a"+string(rune('1'+i))+".jsonl", fakeRun{experiment: result.ExperimentStress, throughput: 100 + float64(i), stress: st(50), series: [][3]any{{"ITERATION", 100, 300}}}))
		b = append(b, writeRun(t, "b"+string(rune('1'+i))+".jsonl", fakeRun{experiment: result.ExperimentStress, throughput: 100 + float64(i), stress: st(40), series: [][3]any{{"ITERATION", 100, 300}}}))
	}
	c, err := Run(load(t, "A", a), load(t, "B", b), Options{Metrics: []string{"server.logical-reads", "throughput"}})
	if err != nil {
		t.Fatal(err)
	}
	m := metric(t, c, "server.logical-reads")
	if m.Outcome != Better || !strings.HasPrefix(m.Verdict, "B is better: ") || !strings.Contains(m.Verdict, "lower") {
		t.Errorf("logical reads: %s", m.Verdict)
	}
	if m := metric(t, c, "throughput"); m.Unit != "iterations/s" || m.Outcome != NoDifference {
		t.Errorf("throughput: %+v", m)
	}
	// A stress run of other statements is other work.
	other := writeRun(t, "other.jsonl", fakeRun{experiment: result.ExperimentStress, throughput: 100, stress: &result.StressSummary{Statements: []result.StressStatement{{Label: "LOOP.SQL-1", Text: "SELECT 2"}}}})
	if _, err := Run(load(t, "A", a[:1]), load(t, "B", []string{other}), Options{}); err == nil || !strings.Contains(err.Error(), `the workload differs: a1.jsonl ran 1 statement "SELECT 1" and other.jsonl ran 1 statement "SELECT 2"`) {
		t.Errorf("other statements: %v", err)
	}
}

// TestCutShortFile: a file whose run was killed is compared as far as
// it is complete, and the comparison says so.
func TestCutShortFile(t *testing.T) {
	t.Chdir(t.TempDir())
	a := writeRun(t, "a.jsonl", fakeRun{throughput: 1000, series: [][3]any{{"READ", 10, 20}}})
	b := writeRun(t, "b.jsonl", fakeRun{throughput: 1000, cut: true})
	c, err := Run(load(t, "A", []string{a}), load(t, "B", []string{b}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	if len(c.CutShort) != 1 || c.CutShort[0] != "b.jsonl" || !strings.Contains(notes, "b.jsonl was cut short") || !strings.Contains(notes, "rebuilt from its 0 complete intervals") {
		t.Errorf("cut short %v, notes %q", c.CutShort, c.Notes)
	}
}

// TestSecretsNeverShown: a setting that holds a secret, and a URL with
// a password, differ between the sides; neither value is printed.
func TestSecretsNeverShown(t *testing.T) {
	t.Chdir(t.TempDir())
	a := writeRun(t, "a.jsonl", fakeRun{throughput: 1000, target: "postgres://u:hunter2@h/db", settings: [][2]string{{"db.passwd", "hunter2"}, {"db.url", "jdbc:postgresql://h/db?user=u&password=hunter2"}}})
	b := writeRun(t, "b.jsonl", fakeRun{throughput: 1000, target: "postgres://u:swordfish@h2/db", settings: [][2]string{{"db.passwd", "swordfish"}, {"db.url", "jdbc:postgresql://h2/db?user=u&password=swordfish"}}})
	c, err := Run(load(t, "A", []string{a}), load(t, "B", []string{b}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	WriteText(&text, c)
	WriteJSON(&js, c)
	for _, out := range []string{text.String(), js.String()} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "swordfish") {
			t.Errorf("a secret is shown:\n%s", out)
		}
	}
	if !strings.Contains(text.String(), "target") {
		t.Errorf("the target's host differs and is not listed:\n%s", text.String())
	}
}

// TestHolmNote: with many metrics and few runs, no metric can reach
// p < 0.05 after the correction, and the comparison says so.
func TestHolmNote(t *testing.T) {
	t.Chdir(t.TempDir())
	var a, b []string
	series := [][3]any{{"READ", 1, 2}, {"UPDATE", 1, 2}, {"INSERT", 1, 2}, {"SCAN", 1, 2}}
	for i := range 4 {
		a = append(a, writeRun(t, "a"+string(rune('1'+i))+".jsonl", fakeRun{throughput: 1000 + float64(i), series: series}))
		b = append(b, writeRun(t, "b"+string(rune('1'+i))+".jsonl", fakeRun{throughput: 2000 + float64(i), series: series}))
	}
	c, err := Run(load(t, "A", a), load(t, "B", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "with 9 metrics and these runs, the smallest p-value the Holm correction leaves is 0.26: no metric can show a difference") {
		t.Errorf("notes %q", c.Notes)
	}
	c, _ = Run(load(t, "A", a), load(t, "B", b), Options{Metrics: []string{"throughput"}})
	if m := metric(t, c, "throughput"); m.Outcome != Better {
		t.Errorf("throughput alone: %s", m.Verdict)
	}
}

// TestRunAgainst holds three variants against a baseline, on throughput
// alone: the Holm correction is over the three comparisons, so a p that
// shows a difference on its own (5 runs each: at best 0.008) must be
// multiplied by up to 3, and what one comparison alone would call a
// difference at p = 0.03 is no longer one.
func TestRunAgainst(t *testing.T) {
	t.Chdir(t.TempDir())
	side := func(name string, tps []float64) Side {
		var paths []string
		for i, tp := range tps {
			paths = append(paths, writeRun(t, name+string(rune('1'+i))+".jsonl", fakeRun{
				settings: [][2]string{{"threadcount", name}}, throughput: tp, series: [][3]any{{"READ", 100, 200}}}))
		}
		return load(t, name, paths)
	}
	base := side("1", []float64{1000, 1010, 990, 1005, 995})
	twice := side("2", []float64{2000, 2010, 1990, 2005, 1995})
	same := side("4", []float64{1001, 1011, 989, 1004, 996})
	// Two of its runs overlap the baseline: shown alone (p < 0.05),
	// not once corrected over three comparisons.
	edge := side("8", []float64{1012, 1020, 1030, 1040, 1002})
	opts := Options{Metrics: []string{"throughput"}}
	alone, err := Run(base, edge, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m := metric(t, alone, "throughput"); m.Outcome != Better {
		t.Fatalf("8 against 1 alone: %s; the test below needs a difference shown alone", m.Verdict)
	}
	cs, err := RunAgainst(base, []Side{twice, same, edge}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("%d comparisons, want 3", len(cs))
	}
	want := []Outcome{Better, NoDifference, NoDifference}
	for i, c := range cs {
		m := metric(t, c, "throughput")
		if c.A.Name != "1" || m.Outcome != want[i] {
			t.Errorf("%s against %s: %s (%s), want %s", c.B.Name, c.A.Name, m.Outcome, m.Verdict, want[i])
		}
		if *m.PAdjusted < *m.P || *m.PAdjusted > 3**m.P+1e-12 {
			t.Errorf("%s: p %v adjusted to %v over 3 comparisons", c.B.Name, *m.P, *m.PAdjusted)
		}
	}
	if p := metric(t, cs[2], "throughput"); *p.PAdjusted < Alpha || *p.P >= Alpha {
		t.Errorf("8 against 1: p %v, adjusted %v; want shown alone, not after Holm over 3", *p.P, *p.PAdjusted)
	}
	if !strings.Contains(metric(t, cs[0], "throughput").Verdict, "2 is ") {
		t.Errorf("the verdict names the variant: %s", metric(t, cs[0], "throughput").Verdict)
	}
}
