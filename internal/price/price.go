// Package price reads what a database costs, as --price takes it: an
// amount per hour or per month (dbprobe storage --price 2.40/hour), and
// for a sweep the variants a price applies to
// (dbprobe sweep --price 'threads=16:3555/month'). One grammar, one
// parser, for every command that takes a price.
package price

import (
	"math"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// HoursPerMonth turns a monthly price into an hourly one: 730 hours, the
// year's 8,760 over 12, as the cloud price lists count a month.
const HoursPerMonth = 730

// Rate is what an hour of the database costs.
type Rate struct {
	// PerHour is the amount per hour, a monthly price divided by
	// HoursPerMonth.
	PerHour float64
	// Given is the price as given ("$2.40/hour", "1991/month").
	Given string
}

// ParseRate reads AMOUNT/hour or AMOUNT/month (also /h, /hr, /mo); a
// currency sign before the amount is dropped. Anything else, a negative
// or infinite amount included, is bad input naming the --price flag.
func ParseRate(s string) (Rate, error) {
	amount, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	amount = strings.TrimLeft(strings.TrimSpace(amount), "$€£¥ ")
	v, err := strconv.ParseFloat(amount, 64)
	if !ok || err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return Rate{}, badinput.New("--price %q: give AMOUNT/hour or AMOUNT/month, e.g. --price 2.40/hour", s)
	}
	switch strings.ToLower(strings.TrimSpace(per)) {
	case "hour", "h", "hr":
		return Rate{PerHour: v, Given: s}, nil
	case "month", "mo":
		return Rate{PerHour: v / HoursPerMonth, Given: s}, nil
	}
	return Rate{}, badinput.New("--price %q: the price is per hour or per month (AMOUNT/hour, AMOUNT/month)", s)
}

// Match is one KEY=VALUE of a price's selector.
type Match struct {
	Key, Value string
}

// Selected is a price with the settings it applies to: a sweep's
// variants whose settings include every Match. No Match applies it to
// every variant.
type Selected struct {
	Matches []Match
	Rate    Rate
	// Given is the whole --price value as given.
	Given string
}

// Parse reads KEY=VALUE[,KEY=VALUE…]:AMOUNT/hour (or /month), or a bare
// AMOUNT/hour that applies to everything. The rate is after the last
// colon: an amount never holds one, a value may. A key given twice, an
// empty key or value, or a malformed rate is bad input.
func Parse(s string) (Selected, error) {
	sel := Selected{Given: s}
	text := strings.TrimSpace(s)
	rate := text
	if i := strings.LastIndex(text, ":"); i >= 0 {
		rate = text[i+1:]
		seen := map[string]bool{}
		for _, kv := range strings.Split(text[:i], ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return Selected{}, badinput.New("--price %q: give KEY=VALUE[,KEY=VALUE…]:AMOUNT/hour, e.g. --price 'threads=16:3555/month', or AMOUNT/hour for every variant", s)
			}
			if seen[k] {
				return Selected{}, badinput.New("--price %q names %s twice; give each key once", s, k)
			}
			seen[k] = true
			sel.Matches = append(sel.Matches, Match{Key: k, Value: v})
		}
	}
	r, err := ParseRate(rate)
	if err != nil {
		return Selected{}, badinput.New("--price %q: give KEY=VALUE[,KEY=VALUE…]:AMOUNT/hour or AMOUNT/month, e.g. --price 'threads=16:3555/month'", s)
	}
	sel.Rate = r
	return sel, nil
}

// Applies reports whether the price applies to a variant with these
// settings: every Match's key has that value.
func (s Selected) Applies(settings map[string]string) bool {
	for _, m := range s.Matches {
		if v, ok := settings[m.Key]; !ok || v != m.Value {
			return false
		}
	}
	return true
}
