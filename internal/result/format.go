package result

import (
	"math"
	"strconv"
	"strings"
)

// javaDouble formats x the way Java's Double.toString does, because YCSB's
// text exporter prints every double with it and parsers (and people
// diffing against YCSB runs) expect that shape: "98.91196834817013",
// "100.0", "1.0E7", "9.0E-4", "NaN", "Infinity".
//
// Java (since JDK 19, and for all ordinary values before) picks the
// shortest decimal that reads back as x, except that it never settles for
// one significant digit when two digits read back as x and are closer to it;
// that only matters for subnormals (Double.MIN_VALUE is "4.9E-324", not
// "5.0E-324"). Values with 1e-3 <= |x| < 1e7 are written plainly with at
// least one digit after the point, all others in Java's scientific form.
func javaDouble(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	neg := x < 0
	abs := math.Abs(x)

	digits, exp := decimalDigits(abs, -1)
	if len(digits) == 1 {
		// Java's two-digit rule: the closest two-digit decimal wins when it
		// still reads back as x.
		d2, e2 := decimalDigits(abs, 1)
		if v, err := strconv.ParseFloat(d2[:1]+"."+d2[1:]+"e"+strconv.Itoa(e2), 64); err == nil && v == abs {
			digits, exp = d2, e2
		}
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		digits = "0"
	}

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if abs >= 1e-3 && abs < 1e7 {
		// Plain notation: the value is 0.digits × 10^(exp+1).
		if exp >= 0 {
			intLen := exp + 1
			if len(digits) <= intLen {
				b.WriteString(digits)
				b.WriteString(strings.Repeat("0", intLen-len(digits)))
				b.WriteString(".0")
			} else {
				b.WriteString(digits[:intLen])
				b.WriteByte('.')
				b.WriteString(digits[intLen:])
			}
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -exp-1))
			b.WriteString(digits)
		}
		return b.String()
	}
	b.WriteString(digits[:1])
	b.WriteByte('.')
	if len(digits) > 1 {
		b.WriteString(digits[1:])
	} else {
		b.WriteByte('0')
	}
	b.WriteByte('E')
	b.WriteString(strconv.Itoa(exp))
	return b.String()
}

// decimalDigits returns the significant digits of a positive finite x and
// the decimal exponent of the first one (x ≈ d.ddd × 10^exp), shortest when
// prec is -1, else with prec+1 digits correctly rounded.
func decimalDigits(x float64, prec int) (digits string, exp int) {
	s := strconv.FormatFloat(x, 'e', prec, 64) // "d.ddde±XX"
	i := strings.IndexByte(s, 'e')
	mant, e := s[:i], s[i+1:]
	exp, _ = strconv.Atoi(e) // FormatFloat always writes a valid exponent
	return strings.Replace(mant, ".", "", 1), exp
}

// ordinal labels a percentile the way YCSB does in "95thPercentileLatency(us)":
// an integral percentile gets its English ordinal suffix (1st, 2nd, 3rd,
// 11th, 12th, 13th, 21st…), any other is printed as Java prints a double
// ("99.9").
func ordinal(p float64) string {
	if p != math.Trunc(p) || math.IsInf(p, 0) || math.Abs(p) > 1e15 {
		return javaDouble(p)
	}
	n := int64(p)
	suffix := "th"
	switch m := abs64(n) % 100; {
	case m == 11 || m == 12 || m == 13:
	case m%10 == 1:
		suffix = "st"
	case m%10 == 2:
		suffix = "nd"
	case m%10 == 3:
		suffix = "rd"
	}
	return strconv.FormatInt(n, 10) + suffix
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// decimal2 formats x like Java's DecimalFormat("#.##"), which YCSB's status
// line uses: at most two decimals, trailing zeros and a bare point dropped
// ("1234.5", "1234", "0"). Java rounds the shortest decimal that reads back
// as x, half-even with ties settled by the exact binary value; that is the
// shortest decimal itself when it has two decimals or fewer, and otherwise
// the exact value correctly rounded. Unlike Java it ignores the locale, so
// the separator is always a point.
func decimal2(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 2 {
		s = strconv.FormatFloat(x, 'f', 2, 64)
	}
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		// Java prints "-0" here too, but a negative zero rate means nothing.
		s = "0"
	}
	return s
}
