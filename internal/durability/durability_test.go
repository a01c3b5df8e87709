package durability

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestMain lets the test binary be the SQLite writer child that Run
// re-executes.
func TestMain(m *testing.M) {
	if IsChild() {
		if err := ChildMain(context.Background(), os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCheck runs a check, skipping (failing under CI=true) when the
// server is not installed. The JSON result it wrote must read back as
// the report it returned.
func runCheck(t *testing.T, cfg Config) (*Report, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, file bytes.Buffer
	rep, err := Run(ctx, cfg, &out, Output{W: result.NewWriter(&file), Header: result.Header{Command: "dbprobe durability"}})
	t.Logf("output:\n%s", out.String())
	if errors.Is(err, instance.ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResult(t, file.Bytes(), rep)
	return rep, out.String()
}

// checkResult reads a check's JSON result back and holds it against the
// report the check returned.
func checkResult(t *testing.T, data []byte, rep *Report) {
	t.Helper()
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the JSON result does not read back: %v", err)
	}
	if f.Truncated || len(f.Phases) != 1 {
		t.Fatalf("the JSON result has %d phases, truncated %v", len(f.Phases), f.Truncated)
	}
	// The check connects with the throwaway server's URL, password and
	// all: none of it belongs in the result.
	for _, secret := range []string{"@127.0.0.1", "postgres://", "mysql://", "sqlite://"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the JSON result holds %q", secret)
		}
	}
	p := f.Phases[0]
	if h := p.Header; h.Experiment != result.ExperimentDurability || h.Phase != Phase || h.Command != "dbprobe durability" || h.StartedAt.IsZero() || h.Database.Driver == "" {
		t.Errorf("header %+v", h)
	}
	if len(p.Cycles) != len(rep.Results) {
		t.Fatalf("%d cycle records, %d cycles in the report", len(p.Cycles), len(rep.Results))
	}
	for i, c := range p.Cycles {
		want := rep.Results[i]
		if !c.Start.Equal(want.Start) || !c.End.Equal(want.End) || !c.End.After(c.Start) {
			t.Errorf("cycle %d: start %v end %v, want %v %v", i+1, c.Start, c.End, want.Start, want.End)
		}
		c.Start, c.End, want.Start, want.End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if c != want {
			t.Errorf("cycle record %+v\nwant %+v", c, want)
		}
	}
	s := p.Summary
	if s == nil || s.Durability == nil {
		t.Fatalf("no durability summary: %+v", s)
	}
	passed, verdict := rep.Verdict()
	want := result.DurabilitySummary{Cycles: len(rep.Results), Acknowledged: rep.Acknowledged, Lost: rep.Lost,
		TailCycles: rep.TailCycles, ScatteredCycles: rep.ScatteredCycles, Passed: passed, Verdict: verdict, Caveat: rep.Caveat}
	if *s.Durability != want || s.Interrupted != rep.Interrupted || s.RunTime <= 0 {
		t.Errorf("summary %+v %+v\nwant %+v", *s, *s.Durability, want)
	}
}

// TestNothingLostUnderFullDurability is the check's promise: with full
// durability no acknowledged commit is lost over five crashes.
func TestNothingLostUnderFullDurability(t *testing.T) {
	for _, db := range []Database{Postgres, MariaDB, SQLite} {
		t.Run(db.String(), func(t *testing.T) {
			rep, out := runCheck(t, Config{
				Database: db, Durability: driver.DurabilityFull, Cycles: 5, Writers: 4,
				CrashAfterMin: 200 * time.Millisecond, CrashAfterMax: 500 * time.Millisecond, Seed: 1,
			})
			if len(rep.Results) != 5 {
				t.Fatalf("%d cycles ran, want 5", len(rep.Results))
			}
			for _, c := range rep.Results {
				if c.Acknowledged == 0 {
					t.Errorf("cycle %d acknowledged nothing: the kill came before any write", c.Number)
				}
				if c.Lost != 0 {
					t.Errorf("cycle %d lost %d of %d acknowledged writes under full durability", c.Number, c.Lost, c.Acknowledged)
				}
			}
			if rep.Lost != 0 {
				t.Errorf("total lost %d, want 0", rep.Lost)
			}
			for _, want := range []string{"cycle 5:", "total:", "0 lost", "what a process kill proves here:"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q", want)
				}
			}
		})
	}
}

// TestPostgresDelayedIsMeasured runs asynchronous commit: the loss may be
// more than zero, and must be measured and reported either way.
func TestPostgresDelayedIsMeasured(t *testing.T) {
	rep, out := runCheck(t, Config{
		Database: Postgres, Durability: driver.DurabilityDelayed, Cycles: 3, Writers: 8,
		CrashAfterMin: 300 * time.Millisecond, CrashAfterMax: 600 * time.Millisecond, Seed: 2,
	})
	if len(rep.Results) != 3 || rep.Acknowledged == 0 {
		t.Fatalf("%d cycles, %d acknowledged", len(rep.Results), rep.Acknowledged)
	}
	found := false
	for _, s := range rep.Settings {
		if s.Name == "synchronous_commit" {
			found = true
			if s.Value != "off" {
				t.Errorf("synchronous_commit read back as %q, want off", s.Value)
			}
		}
	}
	if !found {
		t.Errorf("settings %v lack synchronous_commit", rep.Settings)
	}
	if !strings.Contains(out, "setting: synchronous_commit = off") || !strings.Contains(rep.Caveat, "synchronous_commit=off") {
		t.Errorf("the output or caveat does not name synchronous_commit=off")
	}
	t.Logf("asynchronous commit lost %d of %d acknowledged writes (%d tail cycles, %d scattered)", rep.Lost, rep.Acknowledged, rep.TailCycles, rep.ScatteredCycles)
}

func TestAnalyse(t *testing.T) {
	kill := time.Unix(100, 0)
	acks := func(keys ...string) []ackEntry {
		var out []ackEntry
		for i, k := range keys {
			out = append(out, ackEntry{key: k, at: kill.Add(time.Duration(i-len(keys)) * time.Millisecond)})
		}
		return out
	}
	set := func(keys ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	a, b, c, d := rowKey(2, 0, 0), rowKey(2, 1, 0), rowKey(2, 0, 1), rowKey(2, 1, 1)
	old := rowKey(1, 0, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name        string
		acks        []ackEntry
		present     map[string]bool
		want        result.Cycle
		wantEarlier int
	}{
		{"none", acks(old, a, b), set(old, a, b, c), result.Cycle{Acknowledged: 2, Pattern: "none", UnacknowledgedPresent: 1}, 0},
		{"tail", acks(old, a, b, c, d), set(old, a, b), result.Cycle{Acknowledged: 4, Lost: 2, Pattern: "tail", FirstLostPosition: 3, LostWindow: 2 * ms}, 0},
		{"scattered", acks(old, a, b, c, d), set(old, a, c, d), result.Cycle{Acknowledged: 4, Lost: 1, Pattern: "scattered", FirstLostPosition: 2, LostWindow: 3 * ms}, 0},
		{"tail per writer", acks(old, a, c, b, d), set(old, a, b, d), result.Cycle{Acknowledged: 4, Lost: 1, Pattern: "tail", FirstLostPosition: 2, LostWindow: 3 * ms}, 0},
		{"earlier", acks(old, a), set(a), result.Cycle{Acknowledged: 1, Pattern: "none"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.Phase, tc.want.Number = Phase, 2
			got, earlier := analyse(2, tc.acks, tc.present, kill)
			if got != tc.want || earlier != tc.wantEarlier {
				t.Errorf("analyse = %+v, %d earlier missing; want %+v, %d", got, earlier, tc.want, tc.wantEarlier)
			}
		})
	}
}

func TestReportTotals(t *testing.T) {
	r := &Report{}
	r.add(&result.Cycle{Number: 1, Acknowledged: 10, Lost: 2, Pattern: "tail"}, 0)
	r.add(&result.Cycle{Number: 2, Acknowledged: 5, Lost: 1, Pattern: "scattered"}, 3)
	if r.Acknowledged != 15 || r.Lost != 4 || r.TailCycles != 1 || r.ScatteredCycles != 1 {
		t.Errorf("totals %+v", r)
	}
	if r.Results[1].EarlierLost != 1 {
		t.Errorf("cycle 2 EarlierLost = %d, want 1 (one more of cycle 1's rows gone)", r.Results[1].EarlierLost)
	}
}

func TestVerdict(t *testing.T) {
	full, delayed, server := driver.DurabilityFull, driver.DurabilityDelayed, driver.DurabilityServer
	for _, tc := range []struct {
		name                           string
		d                              driver.Durability
		cycles, acked, lost, scattered int
		passed                         bool
		verdict                        string
	}{
		{"nothing lost", full, 5, 1000, 0, 0, true, "passed: none of 1000 acknowledged writes lost"},
		{"lost under full", full, 5, 1000, 3, 0, false, "failed: 3 of 1000 acknowledged writes lost under full durability"},
		{"lost under server", server, 5, 1000, 3, 0, false, "failed: 3 of 1000 acknowledged writes lost under server durability"},
		{"a tail under delayed", delayed, 2, 52342, 33, 0, true, "passed: 33 of 52342 acknowledged writes lost, only each writer's most recent (a tail), as delayed durability allows"},
		{"scattered under delayed", delayed, 2, 100, 1, 1, false, "failed: acknowledged writes were lost out of order in 1 cycles"},
		{"no cycle", full, 0, 0, 0, 0, false, "not judged: no cycle was checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Durability: tc.d, Results: make([]result.Cycle, tc.cycles), Acknowledged: tc.acked, Lost: tc.lost, ScatteredCycles: tc.scattered}
			passed, verdict := r.Verdict()
			if passed != tc.passed || !strings.HasPrefix(verdict, tc.verdict) {
				t.Errorf("Verdict() = %v, %q; want %v, %q", passed, verdict, tc.passed, tc.verdict)
			}
		})
	}
}

func TestAckLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acks.log")
	for cycle := 1; cycle <= 2; cycle++ {
		l, err := openAckLog(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			l.record(rowKey(cycle, 0, int64(i)), time.Unix(0, int64(i)))
		}
		if err := l.close(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readAckLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2000 || got[1000].key != rowKey(2, 0, 0) || got[999].at.UnixNano() != 999 {
		t.Errorf("read back %d entries; [1000] = %+v", len(got), got[1000])
	}
	os.WriteFile(path, []byte("c0001-w000-0000000000 notanumber\n"), 0o644)
	if _, err := readAckLog(path); err == nil {
		t.Error("a damaged log was read without an error")
	}
}

func TestBadConfig(t *testing.T) {
	good := Config{Database: SQLite, Cycles: 1, Writers: 1, CrashAfterMin: time.Second, CrashAfterMax: time.Second}
	for name, mutate := range map[string]func(*Config){
		"cycles 0":       func(c *Config) { c.Cycles = 0 },
		"writers 0":      func(c *Config) { c.Writers = 0 },
		"crash reversed": func(c *Config) { c.CrashAfterMin = 3 * time.Second },
		"crash zero":     func(c *Config) { c.CrashAfterMin, c.CrashAfterMax = 0, 0 },
		"database":       func(c *Config) { c.Database = 7 },
	} {
		c := good
		mutate(&c)
		if _, err := Run(context.Background(), c, &bytes.Buffer{}, Output{}); !badinput.Is(err) {
			t.Errorf("%s: %v, want bad input", name, err)
		}
	}
	if _, err := ParseDatabase("oracle"); !badinput.Is(err) || !strings.Contains(err.Error(), "postgres, mariadb") {
		t.Errorf("ParseDatabase(oracle) = %v", err)
	}
	for in, want := range map[string]Database{"PostgreSQL": Postgres, "mysql": MariaDB, "sqlite": SQLite} {
		if got, err := ParseDatabase(in); err != nil || got != want {
			t.Errorf("ParseDatabase(%q) = %v, %v", in, got, err)
		}
	}
}

// TestMissingServer is bad input naming the package to install.
func TestMissingServer(t *testing.T) {
	cfg := Config{Database: MariaDB, Cycles: 1, Writers: 1, CrashAfterMin: time.Second, CrashAfterMax: time.Second, Bindir: t.TempDir()}
	_, err := Run(context.Background(), cfg, &bytes.Buffer{}, Output{})
	if !badinput.Is(err) || !errors.Is(err, instance.ErrNotInstalled) || !strings.Contains(err.Error(), "mariadb-server") {
		t.Errorf("Run with an empty --bindir: %v", err)
	}
}

func TestCaveatSaysWhatAKillCannotReveal(t *testing.T) {
	for _, tc := range []struct {
		db   Database
		d    driver.Durability
		want string
	}{
		{MariaDB, driver.DurabilityDelayed, "proves nothing about power loss"},
		{SQLite, driver.DurabilityDelayed, "proves nothing about power loss"},
		{SQLite, driver.DurabilityServer, "NORMAL in WAL mode"},
		{Postgres, driver.DurabilityDelayed, "cannot reveal"},
		{Postgres, driver.DurabilityFull, "cannot reveal"},
	} {
		if got := Caveat(tc.db, tc.d); !strings.Contains(got, tc.want) {
			t.Errorf("Caveat(%s, %s) = %q, want it to say %q", tc.db, tc.d, got, tc.want)
		}
	}
}
