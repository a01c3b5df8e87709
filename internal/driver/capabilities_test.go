package driver

import (
	"context"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// onlyKV is a DB with only the key-value interface.
type onlyKV struct{}

func (onlyKV) Info() Info                                         { return Info{Driver: "kv"} }
func (onlyKV) Inspect(context.Context, Table) (TableState, error) { return TableState{}, nil }
func (onlyKV) CreateTable(context.Context, Table) error           { return nil }
func (onlyKV) DropTable(context.Context, Table) error             { return nil }
func (onlyKV) Session(context.Context, Table) (Session, error)    { return nil, nil }
func (onlyKV) Close() error                                       { return nil }

// describedDB says what caps says, and has no interface but Monitorable.
type describedDB struct {
	onlyKV
	caps Capabilities
}

func (d describedDB) Capabilities() Capabilities             { return d.caps }
func (describedDB) Monitor(context.Context) (Monitor, error) { return nil, nil }

// sqlDB has SQLRunner and TableSizer but claims none of them.
type sqlDB struct{ onlyKV }

func (sqlDB) SQLConn(context.Context, SQLOptions) (SQLConn, error)    { return nil, nil }
func (sqlDB) SplitScript(string) ([]ScriptStatement, error)           { return nil, nil }
func (sqlDB) Capabilities() Capabilities                              { return NewCapabilities("SQLish") }
func (sqlDB) TableSize(context.Context, DataTable) (TableSize, error) { return TableSize{}, nil }

// onlySize has TableSizer and no description.
type onlySize struct{ onlyKV }

func (onlySize) TableSize(context.Context, DataTable) (TableSize, error) { return TableSize{}, nil }

func TestNeedNamesTheDatabaseAndWhy(t *testing.T) {
	c := NewCapabilities("SQLite")
	c.Has(CapCopy, "CREATE TABLE AS")
	c.Lacks(CapParallelCopy, "it has one writer and copies serially; use --dop 1")
	if err := c.Need(CapCopy); err != nil {
		t.Errorf("Need(copy) = %v", err)
	}
	err := c.Need(CapCopy, CapParallelCopy, CapSQL)
	if !badinput.Is(err) || err.Error() != "SQLite has no parallel table copy: it has one writer and copies serially; use --dop 1" {
		t.Errorf("Need = %v", err)
	}
	if err := c.Need(CapSQL); err == nil || err.Error() != "SQLite has no SQL text: dbprobe does not do it there" || strings.Contains(err.Error(), "\n") {
		t.Errorf("Need of a capability nobody described = %v", err)
	}
	if got := len(c.List()); got != len(AllCapabilities()) {
		t.Errorf("List has %d entries, want %d", got, len(AllCapabilities()))
	}
	for _, cap := range AllCapabilities() {
		if strings.HasPrefix(cap.String(), "capability(") {
			t.Errorf("capability %d has no name", cap)
		}
	}
}

func TestDescribe(t *testing.T) {
	c := Describe(onlyKV{})
	if c.Database != "kv" {
		t.Errorf("Database = %q", c.Database)
	}
	err := c.Need(CapFill)
	if err == nil || err.Error() != "kv has no server-side table fill: the kv driver does only key-value operations" {
		t.Errorf("Need on a DB that does not describe itself: %v", err)
	}
	if err := CheckDescription(onlyKV{}); err != nil {
		t.Errorf("a key-value DB: %v", err)
	}
}

// CheckDescription catches a description that does not match the
// interfaces, both ways, and a lack without a reason.
func TestCheckDescription(t *testing.T) {
	claims := NewCapabilities("X")
	for _, cap := range AllCapabilities() {
		claims.Lacks(cap, "no")
	}
	claims.Has(CapSQL, "yes")
	if err := CheckDescription(describedDB{caps: claims}); err == nil || !strings.Contains(err.Error(), "claims SQL text without the interface") {
		t.Errorf("a claim without the interface: %v", err)
	}
	if err := CheckDescription(sqlDB{}); err == nil ||
		!strings.Contains(err.Error(), "has the interface of SQL text without claiming it") ||
		!strings.Contains(err.Error(), "has the interface of table size on disk without claiming it") {
		t.Errorf("interfaces without a claim: %v", err)
	}
	silent := NewCapabilities("X")
	if err := CheckDescription(describedDB{caps: silent}); err == nil || !strings.Contains(err.Error(), "without saying why") {
		t.Errorf("lacks without a reason: %v", err)
	}
	parallel := claims
	parallel.Lacks(CapSQL, "no")
	parallel.Has(CapParallelCopy, "yes")
	if err := CheckDescription(describedDB{caps: parallel}); err == nil || !strings.Contains(err.Error(), "parallel copy without a copy") {
		t.Errorf("a parallel copy without a copy: %v", err)
	}
	// Monitorable without the standard counters is fine.
	quiet := claims
	quiet.Lacks(CapSQL, "no")
	if err := CheckDescription(describedDB{caps: quiet}); err != nil {
		t.Errorf("a monitor without standard counters: %v", err)
	}
	if !Provides(onlySize{}, CapSize) || Provides(onlySize{}, CapFill) {
		t.Error("Provides does not follow the interfaces")
	}
}

func TestDataTableCheck(t *testing.T) {
	for _, tc := range []struct {
		t  DataTable
		ok bool
	}{
		{DataTable{Name: "t", PayloadBytes: 1}, true},
		{DataTable{Name: "t", PayloadBytes: MaxPayloadBytes}, true},
		{DataTable{Name: "t", PayloadBytes: 0}, false},
		{DataTable{Name: "t", PayloadBytes: MaxPayloadBytes + 1}, false},
		{DataTable{Name: "t;drop", PayloadBytes: 10}, false},
	} {
		err := tc.t.Check()
		if (err == nil) != tc.ok || (err != nil && !badinput.Is(err)) {
			t.Errorf("Check(%+v) = %v", tc.t, err)
		}
	}
	tbl := DataTable{Name: "t", PayloadBytes: 10}.Table()
	if err := CheckTable(tbl); err != nil || tbl.KeyColumn != DataKeyColumn || len(tbl.Fields) != 1 || tbl.Fields[0] != DataPayloadColumn {
		t.Errorf("Table() = %+v, %v", tbl, err)
	}
}

// The slices of a scan cover lo…hi once, in equal parts; more parts than
// values leave some empty.
func TestScanSlice(t *testing.T) {
	for _, tc := range []struct {
		lo, hi      int64
		part, parts int
		from, to    int64
	}{
		{0, 9, 0, 3, 0, 2}, {0, 9, 1, 3, 3, 5}, {0, 9, 2, 3, 6, 9},
		{1, 2, 2, 3, 2, 2}, {0, -1, 0, 2, 0, -1},
	} {
		if from, to := ScanSlice(tc.lo, tc.hi, tc.part, tc.parts); from != tc.from || to != tc.to {
			t.Errorf("ScanSlice(%d, %d, %d, %d) = %d…%d, want %d…%d", tc.lo, tc.hi, tc.part, tc.parts, from, to, tc.from, tc.to)
		}
	}
}
