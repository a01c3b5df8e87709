package durability

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// writtenCheck writes a check's JSON result as Run does, and returns it
// with the report and the text the check printed.
func writtenCheck(t *testing.T, d driver.Durability, cycles []result.Cycle, interrupted bool) (data []byte, rep *Report, text string) {
	t.Helper()
	start := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	var buf, out bytes.Buffer
	o := Output{W: result.NewWriter(&buf), Header: result.Header{Settings: []result.Setting{
		{Key: "database", Value: "postgres"}, {Key: "durability", Value: d.String()}, {Key: "cycles", Value: "4"},
		{Key: "writers", Value: "8"}, {Key: "crash-after", Value: "1s..3s"}, {Key: "seed", Value: "42"},
	}}}
	info := driver.Info{Driver: "postgres", Library: "pgx", ServerVersion: "16.4", Placement: driver.PlacementServer,
		Settings: []driver.Setting{{Name: "synchronous_commit", Value: "off"}, {Name: "shared_buffers", Value: "128MB"}}}
	rep = &Report{Database: "postgres", Server: "16.4", Durability: d, Settings: durabilitySettings(Postgres, info.Settings),
		Writers: 8, Cycles: 4, CrashAfter: "1s..3s", Seed: 42, Caveat: Caveat(Postgres, d), Interrupted: interrupted}
	writeHeader(&out, rep)
	if err := o.header(start, info); err != nil {
		t.Fatal(err)
	}
	for i, c := range cycles {
		c.Phase, c.Number = Phase, i+1
		c.Start = start.Add(time.Duration(i) * 3 * time.Second)
		c.End = c.Start.Add(2 * time.Second)
		c.CrashAfter, c.Recovery = 1234*time.Millisecond, 900*time.Millisecond
		rep.add(&c, rep.Lost+c.EarlierLost)
		writeCycle(&out, c)
		if err := o.cycle(c); err != nil {
			t.Fatal(err)
		}
	}
	writeTotal(&out, rep)
	if err := o.summary(rep, 12*time.Second); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), rep, out.String()
}

func lossyCycles() []result.Cycle {
	return []result.Cycle{
		{Acknowledged: 1000, Lost: 3, Pattern: result.PatternTail, LostWindow: 20 * time.Millisecond, FirstLostPosition: 998},
		{Acknowledged: 1200, Pattern: result.PatternNone, UnacknowledgedPresent: 1},
		{Acknowledged: 900, Lost: 2, Pattern: result.PatternScattered, LostWindow: 35 * time.Millisecond, FirstLostPosition: 10, EarlierLost: 1},
	}
}

// TestFromResultPrintsWhatTheCheckPrinted rebuilds the report from the
// result file and prints it: line for line what the check printed.
func TestFromResultPrintsWhatTheCheckPrinted(t *testing.T) {
	data, want, text := writtenCheck(t, driver.DurabilityDelayed, lossyCycles(), true)
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Phases[0]
	got, err := FromResult(p.Header, p.Cycles, *p.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if got.Lost != want.Lost || got.Acknowledged != want.Acknowledged || got.ScatteredCycles != 1 || got.Caveat != want.Caveat || !got.Interrupted {
		t.Errorf("report %+v\nwant %+v", got, want)
	}
	var out bytes.Buffer
	if err := WriteText(&out, got, []string{"recovered"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != text+"note: recovered\n" {
		t.Errorf("printed\n%s\nthe check printed\n%s", out.String(), text)
	}
}

// TestFinishJudgesAsTheCheckDid: a summary rebuilt from the cycles gets
// the verdict and caveat the check itself wrote.
func TestFinishJudgesAsTheCheckDid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      driver.Durability
		cycles []result.Cycle
		passed bool
	}{
		{"scattered", driver.DurabilityDelayed, lossyCycles(), false},
		{"a tail under delayed", driver.DurabilityDelayed, lossyCycles()[:2], true},
		{"a tail under full", driver.DurabilityFull, lossyCycles()[:2], false},
		{"nothing lost", driver.DurabilityFull, lossyCycles()[1:2], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _, _ := writtenCheck(t, tc.d, tc.cycles, false)
			f, err := result.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			p := f.Phases[0]
			written := *p.Summary.Durability
			p.Summary = nil
			s, err := result.RecoverSummary(p)
			if err != nil {
				t.Fatal(err)
			}
			Finish(p, &s)
			if *s.Durability != written || written.Passed != tc.passed {
				t.Errorf("finished %+v\nthe check wrote %+v", *s.Durability, written)
			}
		})
	}
}

func TestFinishWithoutSettings(t *testing.T) {
	data, _, _ := writtenCheck(t, driver.DurabilityFull, lossyCycles()[1:2], false)
	f, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Phases[0]
	p.Header.Settings = p.Header.Settings[1:] // no database
	p.Summary = nil
	s, _ := result.RecoverSummary(p)
	Finish(p, &s)
	if s.Durability.Passed || !strings.HasPrefix(s.Durability.Verdict, "not judged: the header's database setting") || s.Durability.Caveat != "" {
		t.Errorf("finished %+v", *s.Durability)
	}
	if _, err := FromResult(p.Header, p.Cycles, s); err == nil {
		t.Error("FromResult without a database: no error")
	}
	// Another experiment's summary is not the check's to finish.
	other := result.Summary{Ops: 5}
	Finish(result.Phase{}, &other)
	if other.Durability != nil || other.Ops != 5 {
		t.Errorf("a YCSB summary was changed: %+v", other)
	}
}
