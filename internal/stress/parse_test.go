package stress

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestCheckColumns(t *testing.T) {
	for _, tc := range []struct {
		cols []string
		bad  string
	}{
		{cols: []string{"id", "Name", "_x1"}},
		{cols: []string{"id", "?column?"}, bad: `names column 2 "?column?", which no :name can refer to`},
		{cols: []string{"id + 1"}, bad: "give it a name with AS"},
		{cols: []string{"id", "n", "id"}, bad: "columns 1 and 3 are both named id"},
	} {
		err := checkColumns("PostgreSQL", tc.cols)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v", tc.cols, err)
		case tc.bad != "" && (!badinput.Is(err) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: %v; want bad input saying %q", tc.cols, err, tc.bad)
		}
	}
}

func TestParseParam(t *testing.T) {
	p, err := ParseParam("id=zipfian:1:1000")
	if err != nil || p != (ParamSpec{Name: "id", Dist: Zipfian, Lo: 1, Hi: 1000}) {
		t.Errorf("got %+v, %v", p, err)
	}
	if p.String() != "id=zipfian:1:1000" {
		t.Errorf("String %q", p.String())
	}
	for _, bad := range []string{"id", "id=uniform:1", "id=normal:1:2", "id=uniform:5:1", "1d=uniform:1:2", "id=uniform:a:b", "=uniform:1:2"} {
		if _, err := ParseParam(bad); !badinput.Is(err) {
			t.Errorf("--param %q: %v, want bad input", bad, err)
		}
	}
}

func FuzzParseParam(f *testing.F) {
	for _, s := range []string{"id=uniform:1:10", "x=sequential:-5:5", "a=zipfian:0:9223372036854775807", "=::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseParam(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Errorf("%q: %v is not bad input", s, err)
			}
			return
		}
		if p.Hi < p.Lo || !isParamName(p.Name) {
			t.Errorf("%q: accepted %+v", s, p)
		}
		// Every accepted spec makes a generator that draws in range.
		d := newGenerator(p).dealer(0, 1)
		v := make([]any, 1)
		d(0, v)
		if x := v[0].(int64); x < p.Lo || x > p.Hi {
			t.Errorf("%q: drew %d", s, x)
		}
	})
}

func FuzzParseScriptArg(f *testing.F) {
	for _, s := range []string{"a.sql", "a.sql@3", "a@b.sql", "x@0.5", "@", "a.sql@1e10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sf, err := ParseScriptArg(s)
		if err != nil {
			if !badinput.Is(err) {
				t.Errorf("%q: %v is not bad input", s, err)
			}
			return
		}
		if sf.Path == "" || !(sf.Weight > 0) || sf.Weight > 1e9 {
			t.Errorf("%q: accepted %+v", s, sf)
		}
	})
}

func TestPlanShape(t *testing.T) {
	a := "Index Scan using t_pkey on t  (cost=0.29..8.30 rows=1 width=4)\n  Index Cond: (id = $1)"
	b := "Index Scan using t_pkey on t  (cost=0.42..8.44 rows=1 width=4)\n  Index Cond: (id = $1)"
	c := "Seq Scan on t  (cost=0.00..1693.00 rows=1 width=4)\n  Filter: (id = $1)"
	if PlanShape(a) != PlanShape(b) {
		t.Errorf("estimates changed the shape:\n%s\n%s", PlanShape(a), PlanShape(b))
	}
	if PlanShape(a) == PlanShape(c) {
		t.Errorf("an index scan and a sequential scan have one shape: %s", PlanShape(a))
	}
}

// Rows are dealt round-robin by iteration number, so thread t's block of
// iterations takes the rows the numbers give, whatever the threads.
func TestRowsRoundRobin(t *testing.T) {
	r := &rows{cols: []string{"id"}, vals: [][]any{{"a"}, {"b"}, {"c"}}}
	d := r.dealer(0, 1)
	v := make([]any, 1)
	var got []any
	for i := int64(0); i < 5; i++ {
		d(i, v)
		got = append(got, v[0])
	}
	if !slices.Equal(got, []any{"a", "b", "c", "a", "b"}) {
		t.Errorf("dealt %v", got)
	}
	p := &shared{perThread: 10, threads: 3}
	if p.iteration(2, 4) != 24 {
		t.Errorf("thread 2's 5th iteration is %d, want 24", p.iteration(2, 4))
	}
	p.perThread = 0
	if p.iteration(2, 4) != 14 {
		t.Errorf("without --iterations, thread 2's 5th iteration is %d, want 14", p.iteration(2, 4))
	}
}

// Weights share the iterations out: 3:1 gives about three quarters to
// the first.
func TestWeightedChoice(t *testing.T) {
	f, err := newFiles([]*Script{{Weight: 3}, {Weight: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Chooser(0, 42)
	n := [2]int{}
	for i := int64(0); i < 40000; i++ {
		n[c.Choose(i, nil)]++
	}
	if share := float64(n[0]) / 40000; share < 0.74 || share > 0.76 {
		t.Errorf("the first script got %.3f of the iterations, want 0.75", share)
	}
}
