package replica

import (
	"bytes"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestStampRoundTrip(t *testing.T) {
	e, _ := ParseEpoch("abcde00001")
	other, _ := ParseEpoch("abcde00002")
	for _, v := range []uint64{0, 1, 35, 36, 1_000_000, maxVersion} {
		val := bytes.Repeat([]byte{'x'}, 40)
		Stamp(val, e, v)
		if kind, got, _ := ReadStamp(val, e); kind != Own || got != v {
			t.Errorf("version %d: read back %v %d", v, kind, got)
		}
		if kind, got, ep := ReadStamp(val, other); kind != Foreign || got != v || ep != e {
			t.Errorf("version %d under another epoch: %v %d %s, want Foreign of %s", v, kind, got, ep, e)
		}
		if !bytes.Equal(val[StampLen:], bytes.Repeat([]byte{'x'}, 40-StampLen)) {
			t.Errorf("version %d: the stamp wrote past its %d bytes: %q", v, StampLen, val)
		}
	}
}

func TestReadStampUnstamped(t *testing.T) {
	e, _ := ParseEpoch("abcde00001")
	for _, val := range []string{
		"", "@abcde00001", // too short
		"xabcde000010000000001 rest",     // no mark
		"@abcde00001000000000! rest",     // a digit that is not one
		"@ABCDE000010000000001 rest",     // an epoch that is not lower-case
		"@abcde00001000000000A rest",     // an upper-case digit
		"user1234:field0:-12345678 rest", // a dataintegrity value
	} {
		if kind, v, _ := ReadStamp([]byte(val), e); kind != Unstamped || v != 0 {
			t.Errorf("%q: %v %d, want Unstamped 0", val, kind, v)
		}
	}
}

func TestEpochStart(t *testing.T) {
	start := time.Date(2026, 11, 27, 19, 4, 5, 600, time.UTC)
	e, err := NewEpoch(start)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Start(); !got.Equal(start.Truncate(time.Second)) {
		t.Errorf("epoch %s starts %v, want %v", e, got, start.Truncate(time.Second))
	}
	back, ok := ParseEpoch(e.String())
	if !ok || back != e || driver.CheckIdentifier("table", HeartbeatName(e)) != nil {
		t.Errorf("epoch %s: parsed back %s %v; heartbeat %s", e, back, ok, HeartbeatName(e))
	}
	for _, bad := range []string{"", "abc", "ABCDEFGHIJ", "abcdefghi!", "abcdefghijk"} {
		if _, ok := ParseEpoch(bad); ok {
			t.Errorf("ParseEpoch(%q) accepted it", bad)
		}
	}
}

// FuzzReadStamp checks that any value reads without panic, and that a
// value read as stamped writes back to the same stamp.
func FuzzReadStamp(f *testing.F) {
	e, _ := ParseEpoch("qwert00000")
	f.Add([]byte("@qwert0000000000000zz and the rest"))
	f.Add([]byte("@zzzzzzzzzz0000000001"))
	f.Add([]byte("plain random value"))
	f.Fuzz(func(t *testing.T, val []byte) {
		kind, v, other := ReadStamp(val, e)
		if kind == Unstamped {
			return
		}
		again := make([]byte, StampLen)
		ep := e
		if kind == Foreign {
			ep = other
		}
		Stamp(again, ep, v)
		if !bytes.Equal(again, val[:StampLen]) {
			t.Fatalf("%q read as %v %d, which stamps as %q", val, kind, v, again)
		}
	})
}
