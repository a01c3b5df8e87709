package shard

import (
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		err  string
	}{
		{"null", Spec{URL: "null"}, ""},
		{"postgres://u@h:5432/db", Spec{URL: "postgres://u@h:5432/db"}, ""},
		{"postgres://u:pw@h:5432/db@0-999", Spec{URL: "postgres://u:pw@h:5432/db", Bounded: true, First: 0, Last: 999}, ""},
		{"mysql://u@h/db@1000-", Spec{URL: "mysql://u@h/db", Bounded: true, First: 1000, Last: Open}, ""},
		{" sqlite:///tmp/a.db@5-5 ", Spec{URL: "sqlite:///tmp/a.db", Bounded: true, First: 5, Last: 5}, ""},
		{"postgres://u@host-1/db", Spec{URL: "postgres://u@host-1/db"}, ""},
		{"", Spec{}, "empty"},
		{"@0-9", Spec{}, "no database URL"},
		{"null@9-3", Spec{}, "ends before it starts"},
		{"sqlite:///tmp/b.db@", Spec{}, "write the record range as FIRST-LAST"},
		{"null@-5", Spec{}, "write the record range"},
		{"null@1-2-3", Spec{}, "write the record range"},
		{"null@12", Spec{}, "write the record range"},
		{"postgres://u:pw@h/db@5", Spec{}, "postgres://u:xxxxx@h/db@5"},
		{"null@99999999999999999999-", Spec{}, "too large"},
		{"postgres://u:pw@a/db@0-9 read=postgres://u:pw@b/db", Spec{URL: "postgres://u:pw@a/db", Bounded: true, First: 0, Last: 9, Read: "postgres://u:pw@b/db"}, ""},
		{"\tpostgres://a/db   read=postgres://b/db ", Spec{URL: "postgres://a/db", Read: "postgres://b/db"}, ""},
		{"postgres://a/db read=", Spec{}, "only read=REPLICA_URL may follow"},
		{"postgres://a/db write=postgres://b/db", Spec{}, "only read=REPLICA_URL may follow"},
		{"postgres://u:pw@a/db read=postgres://u:pw@b/db read=postgres://c/db", Spec{}, "--shard postgres://u:xxxxx@a/db read=postgres://u:xxxxx@b/db read=postgres://c/db: after"},
	}
	for _, tc := range tests {
		got, err := ParseSpec(tc.in)
		if tc.err != "" {
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSpec(%q) error %v, want bad input with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"null", "postgres://u:p@h/db@0-9", "x@1-", "@", "a@-1", "a@1-2-3", "a@0-1 read=b", "a read= b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSpec(%q): %v is not one line of bad input", s, err)
			}
			return
		}
		if sp.URL == "" {
			t.Fatalf("ParseSpec(%q) gave no URL", s)
		}
		if sp.Bounded && (sp.First < 0 || sp.Last != Open && sp.Last < sp.First) {
			t.Fatalf("ParseSpec(%q) = %+v: bad range", s, sp)
		}
	})
}

func bounded(ranges ...Range) []Spec {
	var specs []Spec
	for _, r := range ranges {
		specs = append(specs, Spec{URL: "null", Bounded: true, First: r.First, Last: r.Last})
	}
	return specs
}

func TestPlan(t *testing.T) {
	t.Run("even split", func(t *testing.T) {
		got, err := Plan([]Spec{{URL: "a"}, {URL: "b"}, {URL: "c"}}, 1000)
		want := []Range{{0, 332}, {333, 665}, {666, Open}}
		if err != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("Plan = %v, %v; want %v", got, err, want)
		}
	})
	good := []struct {
		name   string
		ranges []Range
	}{
		{"in order", []Range{{0, 499}, {500, 999}}},
		{"out of order, open end", []Range{{500, Open}, {0, 499}}},
		{"beyond recordcount", []Range{{0, 499}, {500, 5000}, {6000, Open}}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Plan(bounded(tc.ranges...), 1000)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != tc.ranges[i] {
					t.Errorf("range %d = %v, want %v", i, got[i], tc.ranges[i])
				}
			}
		})
	}
	bad := []struct {
		name  string
		specs []Spec
		want  string
	}{
		{"gap in the middle", bounded(Range{0, 399}, Range{500, Open}), "records 400-499 are in no shard"},
		{"gap at the start", bounded(Range{10, 499}, Range{500, Open}), "records 0-9 are in no shard"},
		{"short of recordcount", bounded(Range{0, 499}, Range{500, 899}), "records 900-999 are in no shard"},
		{"overlap", bounded(Range{0, 599}, Range{500, Open}), "shards 1 (0-599) and 2 (500-) both hold records 500-599"},
		{"overlap with an open range", bounded(Range{0, Open}, Range{500, 700}), "both hold records 500-700"},
		{"mixed", []Spec{{URL: "a"}, {URL: "b", Bounded: true, First: 0, Last: 9}}, "1 of 2 --shard values have @FIRST-LAST bounds"},
		{"more shards than records", []Spec{{URL: "a"}, {URL: "b"}, {URL: "c"}}, "3 shards for recordcount=2"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			records := int64(1000)
			if strings.Contains(tc.want, "recordcount=2") {
				records = 2
			}
			_, err := Plan(tc.specs, records)
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Plan error %v, want bad input with %q", err, tc.want)
			}
		})
	}
}

func TestCheckRepeats(t *testing.T) {
	parse := func(urls ...string) []driver.Target {
		var ts []driver.Target
		for _, u := range urls {
			tg, err := driver.ParseTarget(u, "")
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, tg)
		}
		return ts
	}
	tests := []struct {
		urls []string
		want string
	}{
		{[]string{"postgres://a@127.0.0.1:5432/x", "postgres://a@127.0.0.1:5432/y"}, ""},
		{[]string{"postgres://a@127.0.0.1:5432/x", "postgres://a@127.0.0.1:5433/x"}, ""},
		{[]string{"postgres://a@127.0.0.1:5432/x", "mysql://a@127.0.0.1:5432/x"}, ""},
		{[]string{"null", "null"}, ""},
		{[]string{"postgres://a:secret@127.0.0.1:5432/x", "postgres://b:secret@LOCALHOST:5432/x"}, "shards 1 and 2 are the same database"},
		{[]string{"sqlite:///tmp/a.db", "sqlite:///tmp/b.db", "sqlite:///tmp/a.db"}, "shards 1 and 3"},
	}
	for _, tc := range tests {
		err := CheckRepeats(parse(tc.urls...))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.urls, err)
		case tc.want != "" && (err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.urls, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("the message shows a password: %v", err)
		}
	}
}
