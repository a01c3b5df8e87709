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

// TestFailIfSaysWhenItCannotTrip: with 4 runs each, the Holm correction
// over every metric leaves no p-value under 0.05, so a 20% fall in
// throughput cannot trip throughput<-5%. The check says it could not
// have, and how to make it able to; narrowed to throughput it trips.
func TestFailIfSaysWhenItCannotTrip(t *testing.T) {
	t.Chdir(t.TempDir())
	var a, b []string
	for i := range 4 {
		a = append(a, writeRun(t, "a"+strconv.Itoa(i)+".jsonl", fakeRun{
			throughput: 1000 + float64(i), series: [][3]any{{"READ", 400 + i, 2000 + i}, {"UPDATE", 900 + i, 3000 + i}},
		}))
		b = append(b, writeRun(t, "b"+strconv.Itoa(i)+".jsonl", fakeRun{
			throughput: 800 + float64(i), series: [][3]any{{"READ", 402 + i, 2001 + i}, {"UPDATE", 901 + i, 3002 + i}},
		}))
	}
	cond := mustConditions(t, "throughput<-5%", "throughput>+5%")
	c, err := Run(load(t, "A", a), load(t, "B", b), Options{FailIf: cond})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range c.Checks {
		if ch.Tripped {
			t.Errorf("%s tripped with no p-value under 0.05 possible: %+v", ch.Condition.Text, ch)
		}
		if !strings.Contains(ch.Why, "it could not have tripped: with 4 runs each, the Holm correction over 5 metrics leaves no p-value below 0.14") ||
			!strings.HasSuffix(ch.Why, "add runs, or give --metrics throughput") {
			t.Errorf("%s: %q does not say it could not have tripped", ch.Condition.Text, ch.Why)
		}
	}
	c, err = Run(load(t, "A", a), load(t, "B", b), Options{Metrics: []string{"throughput"}, FailIf: cond})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Checks[0].Tripped {
		t.Errorf("throughput alone, 20%% slower over 4 runs each: not tripped: %+v", c.Checks[0])
	}
	for _, ch := range c.Checks {
		if strings.Contains(ch.Why, "could not have") {
			t.Errorf("%s: %q, though one metric can show a difference", ch.Condition.Text, ch.Why)
		}
	}
}
