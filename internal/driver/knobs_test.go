package driver

import (
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestKnobsParseWhatTheyPrint(t *testing.T) {
	for _, tt := range []TableType{TableDisk, TableMemory, TableNondurable} {
		if got, err := ParseTableType(strings.ToUpper(tt.String())); err != nil || got != tt {
			t.Errorf("ParseTableType(%q) = %v, %v", tt, got, err)
		}
	}
	for _, d := range []Durability{DurabilityServer, DurabilityFull, DurabilityDelayed} {
		if got, err := ParseDurability(d.String()); err != nil || got != d {
			t.Errorf("ParseDurability(%q) = %v, %v", d, got, err)
		}
	}
	for _, s := range []DurabilityScope{ScopeDatabase, ScopeTransaction} {
		if got, err := ParseDurabilityScope(s.String()); err != nil || got != s {
			t.Errorf("ParseDurabilityScope(%q) = %v, %v", s, got, err)
		}
	}
	for _, p := range []OpPath{PathStatement, PathProcedure} {
		if got, err := ParseOpPath(" " + p.String()); err != nil || got != p {
			t.Errorf("ParseOpPath(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParseTableType("ssd"); err == nil || !strings.Contains(err.Error(), "disk, memory, nondurable") {
		t.Errorf("ParseTableType(ssd) = %v, want an error listing the types", err)
	}
	if _, err := ParseDurability("lazy"); err == nil {
		t.Error("ParseDurability(lazy) succeeded")
	}
}

func TestProceduresAreNamedAfterTheTable(t *testing.T) {
	p := Procedures(Table{Name: "usertable"})
	if p.Read != "dbprobe_usertable_read" || p.Update != "dbprobe_usertable_update" || len(p.All()) != 5 {
		t.Errorf("Procedures = %+v", p)
	}
}

func TestUnsupportedIsBadInput(t *testing.T) {
	err := Unsupported("PostgreSQL", "in-memory table (--table-type memory)", "use --table-type nondurable for an UNLOGGED table")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "PostgreSQL has no in-memory table") {
		t.Errorf("Unsupported = %v (bad input: %v)", err, badinput.Is(err))
	}
}
