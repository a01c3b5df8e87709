package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	"github.com/dbprobe/dbprobe/internal/result"
)

// withoutSummary writes the result at path again without its last
// summary, as a run killed just before writing it leaves the file, and
// returns that summary.
func withoutSummary(t *testing.T, path string) *result.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sum := f.Phases[len(f.Phases)-1].Summary
	if sum == nil {
		t.Fatal("the run wrote no summary")
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var kept []byte
	for _, l := range lines {
		if !bytes.HasPrefix(l, []byte(`{"type":"summary","phase":"`+sum.Phase+`"`)) {
			kept = append(kept, l...)
		}
	}
	if err := os.WriteFile(path, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	return sum
}

// A recovered summary is the one the run wrote, down to the histograms,
// for a run with failures, error codes and retries: SQLite's write lock
// is held by the test, so every update fails BUSY after its retries.
func TestRecoverRebuildsTheRunsSummary(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "ycsb.db")
	db := "sqlite://" + filepath.ToSlash(dbPath)
	if _, stderr, err := run(t, "load", "--db", db, "-p", "recordcount=500", "--no-monitor"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	release := holdWriteLock(t, dbPath)
	out := filepath.Join(dir, "result.jsonl")
	_, stderr, err := run(t, "run", "--db", db+"?busy_timeout=1", "--operations", "600", "--threads", "2", "--retries", "2", "--no-monitor", "--out", out)
	release()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	want := withoutSummary(t, out)
	if len(want.Errors) == 0 || want.Series[0].Histogram == "" {
		t.Fatalf("the run had no failures or no histograms to recover: %+v", want)
	}
	stdout, stderr, err := run(t, "recover", out)
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "recovered the summary of phase run from") || !strings.Contains(stdout, "[UPDATE], Return=ERROR") || !strings.Contains(stdout, "[UPDATE], Retries, ") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	f := readResult(t, out)
	got := f.Phases[0].Summary
	if got == nil || !got.Recovered || !got.Interrupted {
		t.Fatalf("summary after recover: %+v", got)
	}
	if got.Ops != want.Ops || got.RunTime != want.RunTime || got.Throughput != want.Throughput || got.RetryLimit != want.RetryLimit ||
		!reflect.DeepEqual(got.Errors, want.Errors) || !reflect.DeepEqual(got.Series, want.Series) {
		t.Errorf("recovered summary differs from the run's\n got %+v\nwant %+v", *got, *want)
	}
}

// The recovered summary carries the bottleneck verdict the run printed,
// made again from the monitor samples in the result.
func TestRecoverRebuildsTheDiagnosis(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "ycsb.db"))
	if _, stderr, err := run(t, "load", "--db", db, "-p", "recordcount=500", "--no-monitor"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	out := filepath.Join(dir, "result.jsonl")
	if _, stderr, err := run(t, "run", "--db", db, "-p", "recordcount=500", "-p", "operationcount=0", "--duration", "3500ms", "--threads", "2", "--out", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	want := withoutSummary(t, out)
	if want.Diagnosis == nil {
		t.Fatal("the monitored run printed no diagnosis")
	}
	stdout, stderr, err := run(t, "recover", out)
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	got := readResult(t, out).Phases[0].Summary
	if got == nil || !reflect.DeepEqual(got.Diagnosis, want.Diagnosis) {
		t.Fatalf("recovered diagnosis %+v, want the run's %+v", got.Diagnosis, want.Diagnosis)
	}
	if !strings.Contains(stdout, "# bottleneck: "+want.Diagnosis.Verdict+"\n") {
		t.Errorf("recover did not print the verdict:\n%s", stdout)
	}
}

func TestRecoverOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "result.jsonl")
	if _, stderr, err := run(t, "run", "--db", "null", "--operations", "2000", "--no-monitor", "--out", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	want := withoutSummary(t, out)
	killed, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	repaired := filepath.Join(t.TempDir(), "repaired.jsonl")
	if _, stderr, err := run(t, "recover", out, "--out", repaired); err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, killed) {
		t.Error("recover --out changed the result it read")
	}
	got := readResult(t, repaired).Phases[0].Summary
	if got == nil || got.Ops != want.Ops || !reflect.DeepEqual(got.Series, want.Series) {
		t.Errorf("repaired summary %+v, want %+v", got, want)
	}
}

func TestRecoverNothingToDo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "result.jsonl")
	if _, stderr, err := run(t, "run", "--db", "null", "--operations", "100", "--no-monitor", "--out", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	before, _ := os.ReadFile(out)
	stdout, stderr, err := run(t, "recover", out)
	if err != nil || stdout != "" || !strings.Contains(stderr, "nothing to recover") {
		t.Fatalf("err %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Error("recover changed a complete result")
	}
}

// TestRecoverV1 recovers a run killed while writing its summary, in a
// result written by dbprobe before schema version 2 (the fixture of
// internal/result): the summary is the run's own, and the file stays a
// version 1 file.
func TestRecoverV1(t *testing.T) {
	fixtures := filepath.Join("..", "result", "testdata")
	whole := readResult(t, filepath.Join(fixtures, "v1_run.jsonl")).Phases[0].Summary
	killed, err := os.ReadFile(filepath.Join(fixtures, "v1_killed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	if err := os.WriteFile(path, killed, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run(t, "recover", path)
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "[OVERALL], Throughput(ops/sec), ") || !strings.Contains(stdout, "[READ], Operations, ") ||
		!strings.Contains(stderr, "recovered the summary of phase run from 6 intervals") || !strings.Contains(stderr, "last line of "+path+" was cut") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte(`{"type":"header","schema_version":1,`)) {
		t.Errorf("the recovered file is no longer version 1: %.60s", data)
	}
	got := readResult(t, path).Phases[0].Summary
	if got == nil || !got.Recovered || got.Ops != whole.Ops || !reflect.DeepEqual(got.Series, whole.Series) {
		t.Errorf("recovered summary %+v\nwant the run's %+v", got, whole)
	}
}

func TestRecoverBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	os.WriteFile(corrupt, []byte(`{"type":"header","schema_version":1,"phase":"run","started_at":"2024-01-01T12:00:00Z"}`+"\nnot json\n"), 0o644)
	future := filepath.Join(dir, "future.jsonl")
	os.WriteFile(future, []byte(`{"type":"header","schema_version":3,"experiment":"ycsb","phase":"run","started_at":"2030-01-01T12:00:00Z"}`+"\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"recover", filepath.Join(dir, "nope.jsonl")}, "cannot read"},
		{"damaged line", []string{"recover", corrupt}, "line 2: not a JSON record"},
		{"future version", []string{"recover", future}, "line 1: schema version 3: this dbprobe reads versions 1 and 2; use a newer dbprobe"},
		{"no file named", []string{"recover"}, "recover takes one result file, the --out of the killed run, and got 0 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			if err == nil || !(badinput.Is(err) || cli.IsUsageError(err)) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v: want one line of bad input containing %q", err, tt.want)
			}
		})
	}
}

// TestRecoverDurability recovers a durability check killed before its
// summary: the totals and verdict are the ones the check wrote, and the
// report is printed as the check printed it.
func TestRecoverDurability(t *testing.T) {
	out := filepath.Join(t.TempDir(), "durability.jsonl")
	stdout, stderr, err := run(t, "durability", "--database", "sqlite", "--cycles", "2", "--writers", "2",
		"--crash-after", "200ms..300ms", "--seed", "4", "--out", out)
	if err != nil {
		t.Fatalf("durability: %v\n%s", err, stderr)
	}
	want := withoutSummary(t, out)
	// A kill while the check wrote its summary also leaves a cut line.
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"summary","phase":"check","runtime_ms":`)
	f.Close()

	restdout, restderr, err := run(t, "recover", out)
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, restderr)
	}
	if !strings.Contains(restderr, "recovered the summary of phase check from 2 cycles") {
		t.Errorf("stderr:\n%s", restderr)
	}
	// The check's own lines, the cycles and the total among them, then
	// what says it was recovered.
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for _, l := range lines {
		if !strings.Contains(restdout, l+"\n") {
			t.Errorf("recover did not print %q:\n%s", l, restdout)
		}
	}
	if !strings.Contains(restdout, "interrupted after 2 of 2 cycles\n") || !strings.Contains(restdout, "note: recovered by dbprobe recover") {
		t.Errorf("recover printed:\n%s", restdout)
	}
	got := readResult(t, out).Phases[0].Summary
	if got == nil || got.Durability == nil || !got.Recovered || !got.Interrupted || *got.Durability != *want.Durability {
		t.Fatalf("recovered summary %+v, want the check's %+v", got, want)
	}
}

// A durability result whose header does not name its database and
// durability (another tool wrote it) is totalled, not judged.
func TestRecoverDurabilityWithoutSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.jsonl")
	os.WriteFile(path, []byte(`{"type":"header","schema_version":2,"experiment":"durability","phase":"check","started_at":"2024-01-01T12:00:00Z"}
{"type":"cycle","phase":"check","cycle":1,"start":"2024-01-01T12:00:01Z","end":"2024-01-01T12:00:03Z","acknowledged":500,"lost":2,"pattern":"tail","unacknowledged_present":0,"recovery_ms":900}
`), 0o644)
	stdout, stderr, err := run(t, "recover", path)
	if err != nil {
		t.Fatalf("recover: %v\n%s", err, stderr)
	}
	if stdout != "dbprobe durability (recovered): 500 acknowledged writes over 1 cycles, 2 lost; not judged: the header's database setting: unknown database \"\" for the durability check; known: postgres, mariadb (MySQL), sqlite\n" {
		t.Errorf("stdout %q", stdout)
	}
	s := readResult(t, path).Phases[0].Summary
	if s == nil || s.Durability == nil || s.Durability.Passed || s.Durability.Lost != 2 || s.RunTime != 3*time.Second {
		t.Errorf("summary %+v", s)
	}
}
