package replica

import (
	"bytes"
	"testing"
)

func TestStampRoundTrip(t *testing.T) {
	e := Epoch{'a', 'b', 'c', 'd', 'e'}
	other := Epoch{'a', 'b', 'c', 'd', 'f'}
	for _, v := range []uint64{0, 1, 35, 36, 1_000_000, maxVersion} {
		val := bytes.Repeat([]byte{'x'}, 40)
		Stamp(val, e, v)
		if kind, got := ReadStamp(val, e); kind != Own || got != v {
			t.Errorf("version %d: read back %v %d", v, kind, got)
		}
		if kind, got := ReadStamp(val, other); kind != Foreign || got != v {
			t.Errorf("version %d under another epoch: %v %d, want Foreign", v, kind, got)
		}
		if !bytes.Equal(val[StampLen:], bytes.Repeat([]byte{'x'}, 40-StampLen)) {
			t.Errorf("version %d: the stamp wrote past its %d bytes: %q", v, StampLen, val)
		}
	}
}

func TestReadStampUnstamped(t *testing.T) {
	e := Epoch{'a', 'b', 'c', 'd', 'e'}
	for _, val := range []string{
		"", "@abcde", // too short
		"xabcde0000000001 rest",  // no mark
		"@abcde000000000! rest",  // a digit that is not one
		"@ABCDE0000000001 rest",  // an epoch that is not lower-case
		"@abcde000000000A rest",  // an upper-case digit
		"user1234:field0:-12345", // a dataintegrity value
	} {
		if kind, v := ReadStamp([]byte(val), e); kind != Unstamped || v != 0 {
			t.Errorf("%q: %v %d, want Unstamped 0", val, kind, v)
		}
	}
}

func TestNewEpochIsLetters(t *testing.T) {
	e, err := NewEpoch()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e {
		if c < 'a' || c > 'z' {
			t.Fatalf("epoch %q has a byte outside a-z", e[:])
		}
	}
}

// FuzzReadStamp checks that any value reads without panic, and that a
// value read as stamped writes back to the same stamp.
func FuzzReadStamp(f *testing.F) {
	e := Epoch{'q', 'w', 'e', 'r', 't'}
	f.Add([]byte("@qwert00000000zz and the rest"))
	f.Add([]byte("@zzzzz0000000001"))
	f.Add([]byte("plain random value"))
	f.Fuzz(func(t *testing.T, val []byte) {
		kind, v := ReadStamp(val, e)
		if kind == Unstamped {
			return
		}
		again := make([]byte, StampLen)
		ep := e
		if kind == Foreign {
			copy(ep[:], val[1:1+epochLen])
		}
		Stamp(again, ep, v)
		if !bytes.Equal(again, val[:StampLen]) {
			t.Fatalf("%q read as %v %d, which stamps as %q", val, kind, v, again)
		}
	})
}
