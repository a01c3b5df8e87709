package price

import (
	"math"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"$2.40/hour", 2.4}, {"730/month", 1}, {" 3 / h ", 3}, {"1991/mo", 1991.0 / 730}, {"0/hour", 0}} {
		r, err := ParseRate(c.in)
		if err != nil || math.Abs(r.PerHour-c.want) > 1e-12 || r.Given != c.in {
			t.Errorf("ParseRate(%q) = %+v, %v; want %v/hour", c.in, r, err, c.want)
		}
	}
	for _, in := range []string{"", "2.40", "2.40/day", "x/hour", "-1/hour", "Inf/hour", "NaN/hour"} {
		if _, err := ParseRate(in); !badinput.Is(err) {
			t.Errorf("ParseRate(%q): %v, want bad input", in, err)
		}
	}
}

func TestParse(t *testing.T) {
	s, err := Parse("threads=16,durability=full:3555/month")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Matches) != 2 || s.Matches[0] != (Match{"threads", "16"}) || s.Matches[1] != (Match{"durability", "full"}) {
		t.Errorf("matches %+v", s.Matches)
	}
	if math.Abs(s.Rate.PerHour-3555.0/730) > 1e-9 || s.Rate.Given != "3555/month" {
		t.Errorf("rate %+v", s.Rate)
	}
	if !s.Applies(map[string]string{"threads": "16", "durability": "full", "x": "y"}) ||
		s.Applies(map[string]string{"threads": "16"}) || s.Applies(map[string]string{"threads": "8", "durability": "full"}) {
		t.Error("Applies")
	}
	all, err := Parse("$2/hour")
	if err != nil || len(all.Matches) != 0 || all.Rate.PerHour != 2 || !all.Applies(nil) {
		t.Errorf("bare price: %+v %v", all, err)
	}
	// A value may hold a colon; the rate is after the last one.
	u, err := Parse("placement=/mnt/a:b:1/hour")
	if err != nil || u.Matches[0].Value != "/mnt/a:b" {
		t.Errorf("colon in value: %+v %v", u, err)
	}
	for _, in := range []string{"", "threads=16", "threads=16:", ":2/hour", "threads:2/hour", "=16:2/hour", "threads=:2/hour",
		"threads=1,threads=2:2/hour", "threads=16:2/day", "threads=16:-2/hour"} {
		_, err := Parse(in)
		if !badinput.Is(err) {
			t.Errorf("Parse(%q): %v, want bad input", in, err)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): message of several lines", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2.40/hour", "$100/month", "threads=16:3555/month", "a=1,b=2:1/h", "a=1:b", "1/day", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("Parse(%q): %v is not one line of bad input", s, err)
			}
			return
		}
		if p.Rate.PerHour < 0 || math.IsNaN(p.Rate.PerHour) || math.IsInf(p.Rate.PerHour, 0) {
			t.Fatalf("Parse(%q) = %+v", s, p)
		}
		for _, m := range p.Matches {
			if m.Key == "" || m.Value == "" {
				t.Fatalf("Parse(%q): empty key or value in %+v", s, p)
			}
		}
	})
}
