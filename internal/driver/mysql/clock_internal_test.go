package mysql

import (
	"testing"
	"time"
)

func TestParseEpochMicros(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1764273600.123456": time.Unix(1764273600, 123456000).UTC(),
		"1764273600.5":      time.Unix(1764273600, 500000000).UTC(),
		"1764273600":        time.Unix(1764273600, 0).UTC(),
	} {
		got, err := parseEpochMicros(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "1.1234567", "1.x"} {
		if _, err := parseEpochMicros(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseEpochMicros(f *testing.F) {
	f.Add("1764273600.123456")
	f.Add("-1.5")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseEpochMicros(s)
		if err == nil && got.Nanosecond()%1000 != 0 {
			t.Fatalf("%q read as %s: finer than a microsecond", s, got)
		}
	})
}
