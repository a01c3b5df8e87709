package cli

import (
	"math"
	"strconv"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"2%": 0.02, "0%": 0, " 2.5% ": 0.025, "99.9%": 0.999} {
		if got, err := parsePercent(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "%", "-1%", "100%", "1e1%", "NaN%", "Inf%", "0x1p1%", "two%", "2%%", "1_0%"} {
		if _, err := parsePercent(in); err == nil || !badinput.Is(err) {
			t.Errorf("%q: %v, want bad input", in, err)
		}
	}
}

// FuzzParsePercent: --min-effect never panics, and what it accepts is a
// fraction in [0, 1) that prints back to itself.
func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"2%", "0%", "2.5%", "", "100%", "-1%", "1e1%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parsePercent(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("%q: not bad input: %v", s, err)
			}
			return
		}
		if !(v >= 0 && v < 1) {
			t.Fatalf("%q gave %v", s, v)
		}
		again, err := parsePercent(strconv.FormatFloat(v*100, 'f', -1, 64) + "%")
		if err != nil || math.Abs(again-v) > 1e-12 {
			t.Fatalf("%q: %v does not parse back (%v, %v)", s, v, again, err)
		}
	})
}
