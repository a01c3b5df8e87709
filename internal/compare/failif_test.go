package compare

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestParseCondition(t *testing.T) {
	good := []struct {
		in   string
		want Condition
	}{
		{"throughput<-5%", Condition{Metric: "throughput", Op: "<", Percent: -5}},
		{"p99.read>+10%", Condition{Metric: "p99.read", Op: ">", Percent: 10}},
		{" P99.READ >= 10.5% ", Condition{Metric: "p99.read", Op: ">=", Percent: 10.5}},
		{"rate.threads-4<=0%", Condition{Metric: "rate.threads-4", Op: "<=", Percent: 0}},
		{"server.logical-reads>.5%", Condition{Metric: "server.logical-reads", Op: ">", Percent: 0.5}},
	}
	for _, g := range good {
		c, err := ParseCondition(g.in)
		if err != nil {
			t.Errorf("%q: %v", g.in, err)
			continue
		}
		if c.Metric != g.want.Metric || c.Op != g.want.Op || c.Percent != g.want.Percent || c.Text != strings.TrimSpace(g.in) {
			t.Errorf("%q: %+v, want %+v", g.in, c, g.want)
		}
	}
	bad := map[string]string{
		"":                    "empty condition",
		"throughput":          "no < or >",
		"<-5%":                "no metric before <",
		"throughput<-5":       "the threshold must be a percentage ending in %",
		"throughput<%":        `"" is not a plain number`,
		"throughput<-5%%":     `"-5%" is not a plain number`,
		"throughput<1e2%":     `"1e2" is not a plain number`,
		"throughput<NaN%":     `"NaN" is not a plain number`,
		"throughput<Inf%":     `"Inf" is not a plain number`,
		"throughput<0x10%":    `"0x10" is not a plain number`,
		"throughput<1_0%":     `"1_0" is not a plain number`,
		"throughput<-100%":    "a change cannot reach −100% (B at zero)",
		"throughput<<5%":      `"<5" is not a plain number`,
		"through put<5%":      `"through put" is not a metric name`,
		"throughput=<5%":      `"throughput=" is not a metric name`,
		"throughput<5% x":     "the threshold must be a percentage ending in %",
		"throughput<- 5%":     `"- 5" is not a plain number`,
		"throughput<2e7%":     `"2e7" is not a plain number`,
		"throughput<9999999%": "the threshold is more than 1000000%",
	}
	for in, why := range bad {
		_, err := ParseCondition(in)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want bad input saying %q", in, err, why)
		}
	}
	cs, err := ParseConditions("throughput<-5%,p99.read>+10%")
	if err != nil || len(cs) != 2 || cs[1].Metric != "p99.read" {
		t.Errorf("two conditions: %+v %v", cs, err)
	}
	if _, err := ParseConditions("throughput<-5%,"); err == nil {
		t.Error("a trailing comma is accepted")
	}
}

func TestConditionHolds(t *testing.T) {
	c := func(s string) Condition { x, _ := ParseCondition(s); return x }
	for _, x := range []struct {
		c      string
		change float64
		want   bool
	}{
		{"t<-5%", -5.1, true}, {"t<-5%", -5, false}, {"t<=-5%", -5, true},
		{"t>10%", 10.01, true}, {"t>10%", 10, false}, {"t>=10%", 10, true},
	} {
		if got := c(x.c).holds(x.change); got != x.want {
			t.Errorf("%s on %v%%: %v", x.c, x.change, got)
		}
	}
}

// FuzzParseCondition: the parser never panics, and what it accepts
// prints back to a condition that parses to the same.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"throughput<-5%", "p99.read>+10%", "x>=0%", "a<=.5%", "", "<", "%", "t<1e3%", "t<-100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCondition(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("%q: an error that is not bad input: %v", s, err)
			}
			return
		}
		if c.Metric == "" || c.Percent <= -100 || c.Percent > 1e6 {
			t.Fatalf("%q parsed to %+v", s, c)
		}
		again, err := ParseCondition(c.Metric + c.Op + strconvF(c.Percent) + "%")
		if err != nil || again.Metric != c.Metric || again.Op != c.Op || again.Percent != c.Percent {
			t.Fatalf("%q: %+v does not parse back: %+v %v", s, c, again, err)
		}
	})
}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
