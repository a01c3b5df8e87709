package storage

import (
	"strings"
	"testing"
)

// TestUnmeasuredLogIsNotAShortfall: SQLite counts no log bytes, so a log
// promise on its write is "not measured", not "below promise by 100%".
func TestUnmeasuredLogIsNotAShortfall(t *testing.T) {
	c := small(t, Write, targets[0].url(t))
	var err error
	if c.Expect, err = ParseExpect("log=1MB/s,write=1MB/min"); err != nil {
		t.Fatal(err)
	}
	o, st := mustRun(t, c)
	if len(st.Expect) != 2 {
		t.Fatalf("expect checks %+v", st.Expect)
	}
	log := st.Expect[0]
	if log.NotMeasured == "" || log.Ratio != 0 || log.Held || !strings.Contains(log.NotMeasured, "no log_bytes counter") {
		t.Errorf("log check %+v, want not measured with why", log)
	}
	if st.Expect[1].NotMeasured != "" || st.Expect[1].Ratio <= 0 {
		t.Errorf("write check %+v, want measured", st.Expect[1])
	}
	if strings.Contains(o.text, "below promise by 100%") || !strings.Contains(o.text, "expect log=1MB/s: not measured (") {
		t.Errorf("text:\n%s", o.text)
	}
	if strings.Contains(o.text, "EXPECT LOG") {
		t.Errorf("a ratio line for the unmeasured log:\n%s", o.text)
	}
}

// TestPointsAreJudgedEach: read at two thread counts is judged and spread
// at each, and the headline names the point it is.
func TestPointsAreJudgedEach(t *testing.T) {
	c := small(t, Read, targets[0].url(t))
	c.Threads = []int{1, 2}
	var err error
	if c.Expect, err = ParseExpect("read=1GB/min"); err != nil {
		t.Fatal(err)
	}
	o, st := mustRun(t, c)
	if len(st.Steps) != 2 || len(st.Expect) != 2 {
		t.Fatalf("steps %d, checks %+v", len(st.Steps), st.Expect)
	}
	best := st.Steps[0]
	if st.Steps[1].Rate > best.Rate {
		best = st.Steps[1]
	}
	if st.Rate != best.Rate || st.Headline != best.Label {
		t.Errorf("headline %q at %g, want %s at %g", st.Headline, st.Rate, best.Label, best.Rate)
	}
	for i, e := range st.Expect {
		if e.Point != st.Steps[i].Label || e.Measured != st.Steps[i].Rate {
			t.Errorf("check %d %+v, want %s at %g", i, e, st.Steps[i].Label, st.Steps[i].Rate)
		}
	}
	for _, p := range st.PerSecond {
		if p.Point != "threads 1" && p.Point != "threads 2" {
			t.Errorf("per-second point without its point: %+v", p)
		}
	}
	if !strings.Contains(o.text, "expect read=1GB/min at threads 2:") || !strings.Contains(o.text, " at "+best.Label+", the fastest of 2 points") {
		t.Errorf("text:\n%s", o.text)
	}
}

// TestSerialCopyIsOnePoint: SQLite copies serially, so --dop 1,2 runs one
// point: no "fastest of 1 points", the notes say why once, and bulk
// claims no fill it does not do.
func TestSerialCopyIsOnePoint(t *testing.T) {
	url := targets[0].url(t)
	c := small(t, LogCopy, url)
	c.Dops = []int{1, 2}
	o, st := mustRun(t, c)
	if st.Headline != "" || strings.Contains(o.text, "fastest of 1") || strings.Count(o.text, "serially") > 1 {
		t.Errorf("headline %q\n%s", st.Headline, o.text)
	}
	o, _ = mustRun(t, small(t, Bulk, url))
	if strings.Contains(o.text, "table fill") {
		t.Errorf("bulk claims a fill:\n%s", o.text)
	}
}
