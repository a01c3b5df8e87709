package keygen

import (
	"math"
	"strings"
	"testing"
)

func TestFNVHash64(t *testing.T) {
	// Hashed key names YCSB prints for the first load-phase inserts
	// (insertorder=hashed): user6284781860667377211, user8517097267634966620,
	// user1820151046732198393.
	tests := []struct {
		in   int64
		want int64
	}{
		{0, 6284781860667377211},
		{1, 8517097267634966620},
		{2, 1820151046732198393},
	}
	for _, tc := range tests {
		if got := FNVHash64(tc.in); got != tc.want {
			t.Errorf("FNVHash64(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestFNVHash64NeverNegative(t *testing.T) {
	rng := newRand(1)
	inputs := []int64{math.MinInt64, math.MaxInt64, -1, -2}
	for range 100_000 {
		inputs = append(inputs, int64(rng.Uint64()))
	}
	for _, v := range inputs {
		if h := FNVHash64(v); h < 0 {
			t.Fatalf("FNVHash64(%d) = %d, negative", v, h)
		}
	}
}

func TestAbsSat(t *testing.T) {
	tests := []struct{ in, want int64 }{
		{0, 0},
		{5, 5},
		{-5, 5},
		{math.MaxInt64, math.MaxInt64},
		{-math.MaxInt64, math.MaxInt64},
		{math.MinInt64, math.MaxInt64}, // YCSB's Math.abs would leave it negative
	}
	for _, tc := range tests {
		if got := absSat(tc.in); got != tc.want {
			t.Errorf("absSat(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestKeyName(t *testing.T) {
	tests := []struct {
		name    string
		keynum  int64
		hashed  bool
		padding int
		want    string
	}{
		{"hashed first key", 0, true, 1, "user6284781860667377211"},
		{"hashed second key", 1, true, 1, "user8517097267634966620"},
		{"hashed third key", 2, true, 1, "user1820151046732198393"},
		{"ordered 0", 0, false, 1, "user0"},
		{"ordered 1", 1, false, 1, "user1"},
		{"padding 0 means none", 12345, false, 0, "user12345"},
		{"padded", 7, false, 5, "user00007"},
		{"padding shorter than digits", 123456, false, 3, "user123456"},
		{"padding exactly digits", 123, false, 3, "user123"},
		{"hashed and padded", 0, true, 25, "user000000" + "6284781860667377211"},
		{"largest", math.MaxInt64, false, 1, "user9223372036854775807"},
		{"negative counts sign as digit like YCSB", -5, false, 4, "user00-5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeyName(tc.keynum, tc.hashed, tc.padding); got != tc.want {
				t.Errorf("KeyName(%d, %v, %d) = %q, want %q", tc.keynum, tc.hashed, tc.padding, got, tc.want)
			}
			got := AppendKey([]byte("prefix/"), tc.keynum, tc.hashed, tc.padding)
			if want := "prefix/" + tc.want; string(got) != want {
				t.Errorf("AppendKey = %q, want %q", got, want)
			}
		})
	}
}

func TestAppendKeyDoesNotAllocate(t *testing.T) {
	tests := []struct {
		name    string
		hashed  bool
		padding int
	}{
		{"ordered", false, 1},
		{"hashed", true, 1},
		{"hashed padded", true, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, 0, 64)
			var k int64
			allocs := testing.AllocsPerRun(1000, func() {
				buf = AppendKey(buf[:0], k, tc.hashed, tc.padding)
				k++
			})
			if allocs != 0 {
				t.Errorf("AppendKey allocated %v times per call, want 0", allocs)
			}
			if !strings.HasPrefix(string(buf), "user") {
				t.Errorf("AppendKey built %q", buf)
			}
		})
	}
}
