package durability

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestResultGolden pins the JSON result of a check as it is on disk: the
// header, a cycle record per cycle, the summary. The times are fixed
// here; a real check writes the clock's.
func TestResultGolden(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 12, 0, 0, 123456789, time.UTC)
	var buf bytes.Buffer
	out := Output{W: result.NewWriter(&buf), Header: result.Header{
		Command: "dbprobe durability --database postgres --durability delayed --cycles 3 --seed 7 --out check.jsonl",
		Settings: []result.Setting{
			{Key: "database", Value: "postgres", Source: "--database"},
			{Key: "durability", Value: "delayed", Source: "--durability"},
			{Key: "cycles", Value: "3", Source: "--cycles"},
			{Key: "writers", Value: "8", Source: "default"},
			{Key: "crash-after", Value: "1s..3s", Source: "default"},
			{Key: "seed", Value: "7", Source: "--seed"},
		},
		Environment: result.Environment{Dbprobe: "0.1.0", Go: "go1.26.8", OS: "linux", Arch: "amd64", CPUs: 8, GOMAXPROCS: 8, Hostname: "bench-client-1"},
	}}
	info := driver.Info{Driver: "postgres", Library: "github.com/jackc/pgx/v5 v5.12.0", ServerVersion: "16.4",
		Settings: []driver.Setting{{Name: "synchronous_commit", Value: "off"}, {Name: "fsync", Value: "on"}}}
	if err := out.header(t0, info); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Durability: driver.DurabilityDelayed, Cycles: 3, Caveat: Caveat(Postgres, driver.DurabilityDelayed)}
	cycles := []struct {
		c       result.Cycle
		earlier int
	}{
		{result.Cycle{Acknowledged: 37741, Lost: 6, Pattern: result.PatternTail, LostWindow: 40*time.Millisecond + 17*time.Microsecond, FirstLostPosition: 37736}, 0},
		{result.Cycle{Acknowledged: 14601, Pattern: result.PatternNone, UnacknowledgedPresent: 2}, 6},
		{result.Cycle{Acknowledged: 20000, Lost: 27, Pattern: result.PatternTail, LostWindow: 12 * time.Millisecond, FirstLostPosition: 19974}, 7},
	}
	for i, tc := range cycles {
		c := tc.c
		c.Phase, c.Number = Phase, i+1
		c.Start = t0.Add(time.Duration(1+3*i) * time.Second)
		c.End = c.Start.Add(2*time.Second + 940123456)
		c.CrashAfter = 1500*time.Millisecond + 250*time.Microsecond
		c.Recovery = 940123456
		rep.add(&c, tc.earlier)
		if err := out.cycle(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.summary(rep, 9*time.Second+876*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	golden(t, "result.golden", buf.Bytes())

	f, err := result.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Phases[0].Summary.Durability; s.Lost != 34 || s.Acknowledged != 72342 || s.TailCycles != 2 || !s.Passed {
		t.Errorf("summary read back %+v", s)
	}
}

// TestOutputNone writes nothing when there is no writer.
func TestOutputNone(t *testing.T) {
	var o Output
	if err := o.header(time.Now(), driver.Info{}); err != nil {
		t.Error(err)
	}
	if err := o.cycle(result.Cycle{}); err != nil {
		t.Error(err)
	}
	if err := o.summary(&Report{}, time.Second); err != nil {
		t.Error(err)
	}
}
