package result

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/measure"
)

func progressStatus() Status {
	return Status{
		Elapsed: 72 * time.Second, TotalOps: 45120, Total: 100000, OpsPerSec: 3811.6, Remaining: 15 * time.Second,
		Series: []measure.Summary{
			{Name: "READ", Percentiles: []measure.Percentile{{Percentile: 50, Micros: 300}, {Percentile: 99, Micros: 1234}}},
			{Name: "UPDATE", Percentiles: []measure.Percentile{{Percentile: 99, Micros: 2_500_000}}},
			{Name: "UPDATE-FAILED", Percentiles: []measure.Percentile{{Percentile: 99, Micros: 99}}},
		},
	}
}

// The line holds every field when it fits, and leaves fields out, the
// least telling first, when it does not; it never exceeds the width.
func TestProgressLine(t *testing.T) {
	full := "run 1m12s  45,120/100,000 ops 45%  15s left  3,812 ops/s  READ p99 1.2ms  UPDATE p99 2.50s  2 errors"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{200, full},
		{utf8.RuneCountInString(full), full},
		{utf8.RuneCountInString(full) - 1, "run 1m12s  45,120/100,000 ops 45%  15s left  3,812 ops/s  UPDATE p99 2.50s  2 errors"},
		{74, "run 1m12s  45,120/100,000 ops 45%  3,812 ops/s  UPDATE p99 2.50s  2 errors"},
		{73, "run 1m12s  45,120/100,000 ops 45%  3,812 ops/s  2 errors"},
		{50, "run 1m12s  45,120/100,000 ops 45%  2 errors"},
		{39, "run 1m12s  45,120/100,000 ops 45%"},
		{20, "run 1m12s  45,120/10"},
		{0, ""},
	} {
		got := ProgressLine("run", progressStatus(), 2, tc.width)
		if got != tc.want {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > max(tc.width, 0) {
			t.Errorf("width %d: line of %d columns", tc.width, n)
		}
	}
	// Open loop: the p99s from the intended start replace the service
	// times.
	s := progressStatus()
	s.Series = append(s.Series, measure.Summary{Name: "Intended-READ", Percentiles: []measure.Percentile{{Percentile: 99, Micros: 40_000}}})
	if got, want := ProgressLine("run", s, 0, 200), "run 1m12s  45,120/100,000 ops 45%  15s left  3,812 ops/s  Intended-READ p99 40.0ms  0 errors"; got != want {
		t.Errorf("open loop:\n got %q\nwant %q", got, want)
	}
	// A phase bounded by time alone: no total, no percentage.
	s = progressStatus()
	s.Total, s.Remaining = 0, -1
	if got, want := ProgressLine("load", s, 1, 200), "load 1m12s  45,120 ops  3,812 ops/s  READ p99 1.2ms  UPDATE p99 2.50s  1 error"; got != want {
		t.Errorf("no total:\n got %q\nwant %q", got, want)
	}
}

// The Output: a Header draws, a Status redraws in place, writes through
// Guard clear the line first, a Summary clears it, and after Close
// nothing draws it again. Failures count once, not again per code.
func TestProgressOutput(t *testing.T) {
	var term, other bytes.Buffer
	p := NewProgress(&term, func() int { return 100 })
	p.Header(Header{Phase: "run"})
	s := progressStatus()
	s.Series = append(s.Series, measure.Summary{Name: "READ", Statuses: []measure.StatusCount{{Status: "OK", Count: 10}, {Status: "ERROR", Count: 3}, {Status: "ERROR(40001)", Count: 3}, {Status: "NOT_FOUND", Count: 1}}})
	p.Status(s)
	p.Status(s)
	if got := term.String(); !strings.HasPrefix(got, "\rrun starting\x1b[K\rrun 1m12s") || strings.Contains(got, "\n") {
		t.Errorf("not drawn in place: %q", got)
	}
	if !strings.Contains(term.String(), "  8 errors\x1b[K") {
		t.Errorf("errors not counted once each across statuses (want 8): %q", term.String())
	}
	term.Reset()
	p.Guard(&other).Write([]byte("[OVERALL], RunTime(ms), 1\n"))
	if term.String() != "\r\x1b[K" || other.String() != "[OVERALL], RunTime(ms), 1\n" {
		t.Errorf("guarded write: terminal %q, writer %q", term.String(), other.String())
	}
	term.Reset()
	p.Guard(&other).Write([]byte("x"))
	if term.Len() != 0 {
		t.Errorf("a cleared line is cleared again: %q", term.String())
	}
	p.Status(s)
	term.Reset()
	p.Summary(Summary{})
	if term.String() != "\r\x1b[K" {
		t.Errorf("summary: %q, want the line cleared", term.String())
	}
	p.Close()
	term.Reset()
	p.Header(Header{Phase: "run"})
	p.Status(s)
	if term.Len() != 0 {
		t.Errorf("drawn after Close: %q", term.String())
	}
}

func TestProgressWords(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 59499 * time.Millisecond: "59s", 61 * time.Second: "1m01s", 7384 * time.Second: "2h03m04s"} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %s, want %s", d, got, want)
		}
	}
	for us, want := range map[int64]string{0: "0us", 999: "999us", 1000: "1.0ms", 12345: "12.3ms", 3_400_000: "3.40s"} {
		if got := micros(us); got != want {
			t.Errorf("micros(%d) = %s, want %s", us, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -4500: "-4,500", -9000: "-9,000"} {
		if got := Grouped(n); got != want {
			t.Errorf("Grouped(%d) = %s, want %s", n, got, want)
		}
	}
}
