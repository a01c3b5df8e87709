package driver_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/workload"
)

func TestCheckIdentifier(t *testing.T) {
	long := strings.Repeat("a", driver.MaxIdentifier)
	for _, name := range []string{"usertable", "_t", "UserTable", "t1", "select", long} {
		if err := driver.CheckIdentifier("table", name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, name := range []string{"", "1t", "usertable; DROP TABLE x", `a"b`, "a`b", "a]b", "a b", "a-b", "a.b", "a'b",
		"usertab\u0430e" /* Cyrillic a */, "usertable\u202e", "usertable\x00", "usertable\n", "ü", long + "a", strings.Repeat("x", 10000)} {
		err := driver.CheckIdentifier("table", name)
		if !badinput.Is(err) {
			t.Errorf("%q: %v, want bad input", name, err)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\x00\u202e") || len(msg) > 300 {
			t.Errorf("%q: message is not one short line: %q", name, msg)
		}
	}
	table := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", Fields: []string{"FIELD0", "FIELD1"}}
	if err := driver.CheckTable(table); err != nil {
		t.Fatal(err)
	}
	bad := table
	bad.Fields = []string{"FIELD0", "x) ; DROP TABLE y; --"}
	if err := driver.CheckTable(bad); !badinput.Is(err) || !strings.Contains(err.Error(), "field column") {
		t.Fatalf("a field column with SQL in it: %v", err)
	}
}

// A name the drivers take is plain ASCII that needs no quoting, and the
// drivers and the configuration agree on every name: one refuses what the
// other would pass on.
func FuzzCheckIdentifier(f *testing.F) {
	for _, s := range []string{"usertable", "usertable; DROP TABLE x", `a"b`, "a`b", "a]b", "usertab\u0430e", "\u202e", "a\x00", "a\n", strings.Repeat("a", 64), "_", "9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := driver.CheckIdentifier("table", name)
		if (err == nil) != workload.ValidIdentifier(name) {
			t.Fatalf("%q: the driver says %v, the workload says valid=%v", name, err, workload.ValidIdentifier(name))
		}
		if err != nil {
			msg := err.Error()
			if !badinput.Is(err) || !utf8.ValidString(msg) || strings.ContainsFunc(msg, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\u202e' }) {
				t.Fatalf("%q: message %q is not one clean line of bad input", name, msg)
			}
			return
		}
		if len(name) > driver.MaxIdentifier {
			t.Fatalf("%q: longer than %d bytes", name, driver.MaxIdentifier)
		}
		for _, c := range []byte(name) {
			if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				t.Fatalf("%q: accepted with byte %q", name, c)
			}
		}
	})
}
