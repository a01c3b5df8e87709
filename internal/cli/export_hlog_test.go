package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/export"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// hlogCounts reads a .hlog with HdrHistogram's own log reader and adds up
// the values of each tag over its intervals.
func hlogCounts(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	counts := map[string]int64{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			return counts
		}
		if h.Tag() == "" {
			t.Fatalf("an interval of %s has no tag", path)
		}
		counts[h.Tag()] += h.TotalCount()
	}
}

// checkHlogAgainstResult runs dbprobe with --hlog and --out and checks that
// every tag's count, added up over the log's intervals, is the JSON
// result's count of that series: the summary's for measured intervals, the
// warm-up intervals' for a warm-up tag.
func checkHlogAgainstResult(t *testing.T, args ...string) {
	t.Helper()
	dir := t.TempDir()
	hlog, out := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.jsonl")
	if _, stderr, err := run(t, append(args, "--hlog", hlog, "--out", out)...); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	got := hlogCounts(t, hlog)
	want := map[string]int64{}
	for _, p := range readResult(t, out).Phases {
		if p.Summary == nil {
			t.Fatalf("phase %s has no summary", p.Header.Phase)
		}
		for _, s := range p.Summary.Series {
			if s.Count > 0 {
				want[export.HlogTag(p.Header.Phase, s.Name, false)] = s.Count
			}
		}
		for _, iv := range p.Intervals {
			if !iv.Warmup {
				continue
			}
			for _, s := range iv.Series {
				if s.Count > 0 {
					want[export.HlogTag(p.Header.Phase, s.Name, true)] += s.Count
				}
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("the result counts nothing")
	}
	for tag, n := range want {
		if got[tag] != n {
			t.Errorf("tag %s: the .hlog holds %d values, the JSON result counts %d", tag, got[tag], n)
		}
	}
	for tag := range got {
		if _, ok := want[tag]; !ok {
			t.Errorf("tag %s is in the .hlog (%d values) but no series of the result", tag, got[tag])
		}
	}
	t.Logf("%d tags: %v", len(got), got)
}

// A real short run on SQLite, load and run with a warm-up, in one log.
func TestHlogCountsMatchTheResultOnSQLite(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "hlog.db")
	checkHlogAgainstResult(t, "ycsb", "--db", db, "-p", "recordcount=1000", "-p", "operationcount=0", "--duration", "1500ms", "--warmup", "400ms", "--threads", "2")
}

// On PostgreSQL, paced (open loop), so the Intended- series are logged too.
func TestHlogCountsMatchTheResultOnPostgres(t *testing.T) {
	db := testdb.FreshPostgresDatabase(t)
	checkHlogAgainstResult(t, "ycsb", "--db", db, "-p", "recordcount=500", "-p", "operationcount=1500", "--target", "1500", "--threads", "4")
}

func TestHlogBadInput(t *testing.T) {
	dir := t.TempDir()
	loaded := "sqlite://" + filepath.Join(dir, "loaded.db")
	if _, stderr, err := run(t, "load", "--db", loaded, "-p", "recordcount=10"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.hlog")
	const earlier = "an earlier run's log\n"
	if err := os.WriteFile(kept, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no such directory", []string{"run", "--db", loaded, "--hlog", filepath.Join(dir, "nope", "x.hlog")}, "cannot write --hlog"},
		{"a directory", []string{"run", "--db", loaded, "--hlog", dir}, "cannot write --hlog"},
		{"same as --out", []string{"run", "--db", loaded, "--hlog", kept, "--out", kept}, "is also --out"},
		{"stdout", []string{"run", "--db", loaded, "--hlog", "-"}, "stdout carries the text results"},
		// Refused once the outputs are open: the existing log is kept.
		{"refused run", []string{"run", "--db", "sqlite://" + empty, "--hlog", kept}, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			if !badinput.Is(err) {
				t.Fatalf("err %v, want bad input (exit 2)", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q, want one line containing %q", msg, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(kept); string(b) != earlier {
		t.Fatalf("a refused run changed the existing .hlog: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !os.IsNotExist(err) {
		t.Fatalf("a directory was created: %v", err)
	}
}

// --hlog alone, without --out: the runner must encode the histograms for
// it all the same. The counts are checked against the text summary.
func TestHlogAloneCountsMatchTheText(t *testing.T) {
	dir := t.TempDir()
	hlog := filepath.Join(dir, "alone.hlog")
	stdout, stderr, err := run(t, "ycsb", "--db", "sqlite://"+filepath.Join(dir, "alone.db"), "-p", "recordcount=300", "-p", "operationcount=900", "--hlog", hlog)
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	got := hlogCounts(t, hlog)
	blocks := parseYCSB(t, stdout)
	if len(blocks) != 2 {
		t.Fatalf("%d summaries in the output, want load and run:\n%s", len(blocks), stdout)
	}
	want := map[string]int64{}
	for i, phase := range []string{"load", "run"} {
		for section, m := range blocks[i] {
			if n, ok := m["Operations"]; ok && section != "OVERALL" && n > 0 {
				want[export.HlogTag(phase, section, false)] = int64(n)
			}
		}
	}
	if want["load/INSERT"] != 300 || want["run/READ"]+want["run/UPDATE"] != 900 {
		t.Fatalf("the text summary: %v", want)
	}
	for tag, n := range want {
		if got[tag] != n {
			t.Errorf("tag %s: the .hlog holds %d values, the text summary counts %d", tag, got[tag], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the .hlog's tags %v, the summary's series %v", got, want)
	}
}
