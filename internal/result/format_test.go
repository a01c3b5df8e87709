package result

import (
	"math"
	"strconv"
	"testing"
)

// The expected strings are Java's Double.toString (checked against a JDK;
// the two JDK 19+ cases are marked), because YCSB prints doubles with it.
func TestJavaDouble(t *testing.T) {
	tenth, fifth := 0.1, 0.2
	point3 := tenth + fifth // computed at run time: a constant 0.1+0.2 is exactly 0.3
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-2, "-2.0"},
		{100, "100.0"},
		{98.91196834817013, "98.91196834817013"},
		{33.88, "33.88"},
		{0.1, "0.1"},
		{point3, "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"},
		{100.0 / 3, "33.333333333333336"},
		{123456.789, "123456.789"},
		{9999999, "9999999.0"},
		{9765624.99875, "9765624.99875"},
		// 1e7 and up: scientific.
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{-1e7, "-1.0E7"},
		{1e21, "1.0E21"},
		{1e23, "1.0E23"}, // JDK 19+; older JDKs print 9.999999999999999E22
		{math.MaxFloat64, "1.7976931348623157E308"},
		// Below 1e-3: scientific.
		{0.001, "0.001"},
		{0.0015, "0.0015"},
		{0.0009, "9.0E-4"},
		{0.00099999, "9.9999E-4"},
		{1e-6, "1.0E-6"},
		{-1.5e-5, "-1.5E-5"},
		{math.SmallestNonzeroFloat64, "4.9E-324"}, // Java's two-digit rule
		// What YCSB prints for a zero run time.
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := javaDouble(tt.in)
			if got != tt.want {
				t.Fatalf("javaDouble(%v) = %q, want %q", tt.in, got, tt.want)
			}
			// Whatever the form, it must read back as the same double.
			back, err := strconv.ParseFloat(got, 64)
			if err != nil {
				t.Fatalf("ParseFloat(%q): %v", got, err)
			}
			if back != tt.in && !(math.IsNaN(back) && math.IsNaN(tt.in)) {
				t.Fatalf("%q reads back as %v, want %v", got, back, tt.in)
			}
		})
	}
}

func TestJavaDoubleReadsBack(t *testing.T) {
	// Every finite double, whatever its magnitude, must survive the round
	// trip: a parser of our output gets the exact number back.
	for _, bits := range []uint64{1, 2, 1 << 52, 0x3ff0000000000001, 0x7fefffffffffffff, 0x4340000000000000, 0x3f50624dd2f1a9fb} {
		x := math.Float64frombits(bits)
		for _, v := range []float64{x, -x} {
			s := javaDouble(v)
			back, err := strconv.ParseFloat(s, 64)
			if err != nil || back != v {
				t.Errorf("javaDouble(%v) = %q reads back as %v, %v", v, s, back, err)
			}
		}
	}
}

func TestOrdinal(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0th"},
		{1, "1st"},
		{2, "2nd"},
		{3, "3rd"},
		{4, "4th"},
		{10, "10th"},
		{11, "11th"},
		{12, "12th"},
		{13, "13th"},
		{21, "21st"},
		{22, "22nd"},
		{23, "23rd"},
		{50, "50th"},
		{95, "95th"},
		{99, "99th"},
		{100, "100th"},
		{101, "101st"},
		{111, "111th"},
		{112, "112th"},
		{99.9, "99.9"},
		{99.99, "99.99"},
		{99.999, "99.999"},
		{0.5, "0.5"},
		{0.0001, "1.0E-4"},
	}
	for _, tt := range tests {
		if got := ordinal(tt.in); got != tt.want {
			t.Errorf("ordinal(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The expected strings are Java's DecimalFormat("#.##").
func TestDecimal2(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1234.5, "1234.5"},
		{1234, "1234"},
		{33.876, "33.88"},
		{33.874, "33.87"},
		{0.125, "0.12"},       // an exact tie: half-even
		{0.375, "0.38"},       // an exact tie: half-even
		{0.135, "0.14"},       // binary 0.13500000000000000888…: above the tie
		{1234.565, "1234.57"}, // binary 1234.56500000000005…: above the tie
		{1.005, "1"},          // binary 1.00499999999999989…: below the tie
		{0.001, "0"},
		{0.005, "0.01"}, // binary 0.005000000000000000104…
		{2.5, "2.5"},
		{9765624.99875, "9765625"},
		{1e9, "1000000000"},
		{-0.001, "0"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
	}
	for _, tt := range tests {
		if got := decimal2(tt.in); got != tt.want {
			t.Errorf("decimal2(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}, {1234, "1234 files"}} {
		if got := Plural(tc.n, "file"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
