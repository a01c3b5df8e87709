package null

import (
	"context"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

var table = driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0", "FIELD1"}, FieldLength: 100}

func open(t testing.TB) driver.DB {
	t.Helper()
	target, err := driver.ParseTarget("null", "")
	if err != nil {
		t.Fatalf("ParseTarget(null): %v", err)
	}
	if target.Driver != "null" {
		t.Fatalf("driver %q, want null", target.Driver)
	}
	db, err := Driver{}.Open(context.Background(), target, driver.Options{Sessions: 8})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func TestNull(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if got := db.Info(); got.Driver != "null" || got.Library != "none (no-op)" {
		t.Errorf("Info() = %+v", got)
	}
	st, err := db.Inspect(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"YCSB_KEY", "FIELD0", "FIELD1"}
	if !st.Exists || !st.CreatedByDbprobe || !st.HasRows || len(st.Columns) != len(want) {
		t.Fatalf("Inspect = %+v", st)
	}
	for i := range want {
		if st.Columns[i] != want[i] {
			t.Fatalf("Columns = %v, want %v", st.Columns, want)
		}
	}
	if err := db.CreateTable(ctx, table); err != nil {
		t.Error(err)
	}
	s, err := db.Session(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	values := [][]byte{[]byte("kept"), nil}
	if err := s.Read(ctx, []byte("k"), nil, values); err != nil || string(values[0]) != "kept" || values[1] != nil {
		t.Errorf("Read = %v and changed values to %q", err, values)
	}
	visited := false
	if n, err := s.Scan(ctx, []byte("k"), 10, nil, func([]byte, [][]byte) { visited = true }); n != 0 || err != nil || visited {
		t.Errorf("Scan = %d, %v (visited %v), want 0, nil, no visit", n, err, visited)
	}
	for name, err := range map[string]error{
		"Update":      s.Update(ctx, []byte("k"), []int{0}, values),
		"Insert":      s.Insert(ctx, []byte("k"), values),
		"InsertBatch": s.InsertBatch(ctx, [][]byte{[]byte("k")}, [][][]byte{values}),
		"Delete":      s.Delete(ctx, []byte("missing")),
		"Close":       s.Close(),
		"DropTable":   db.DropTable(ctx, table),
		"DB.Close":    db.Close(),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenRefusesAnAddress(t *testing.T) {
	for _, raw := range []string{"null://host/db", "null:x", "null:?fast=1"} {
		target, err := driver.ParseTarget(raw, "")
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", raw, err)
		}
		if _, err := (Driver{}).Open(context.Background(), target, driver.Options{}); !badinput.Is(err) {
			t.Errorf("Open(%q) = %v, want bad input", raw, err)
		}
	}
}

// TestNoAllocation holds the driver to costing nothing per operation,
// called through the interfaces as the runner calls it.
func TestNoAllocation(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	s, err := db.Session(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("user1")
	fields := []int{1}
	values := [][]byte{make([]byte, 0, 100), make([]byte, 0, 100)}
	keys := [][]byte{key}
	batch := [][][]byte{values}
	visit := func([]byte, [][]byte) {}
	for name, op := range map[string]func(){
		"Read":        func() { _ = s.Read(ctx, key, nil, values) },
		"Update":      func() { _ = s.Update(ctx, key, fields, values) },
		"Insert":      func() { _ = s.Insert(ctx, key, values) },
		"InsertBatch": func() { _ = s.InsertBatch(ctx, keys, batch) },
		"Scan":        func() { _, _ = s.Scan(ctx, key, 10, nil, visit) },
		"Delete":      func() { _ = s.Delete(ctx, key) },
		"Session":     func() { _, _ = db.Session(ctx, table) },
	} {
		if n := testing.AllocsPerRun(1000, op); n != 0 {
			t.Errorf("%s allocates %.1f times per call, want 0", name, n)
		}
	}
}

func BenchmarkReadUpdate(b *testing.B) {
	ctx := context.Background()
	s, err := open(b).Session(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	key := []byte("user1")
	fields := []int{1}
	values := [][]byte{make([]byte, 0, 100), make([]byte, 0, 100)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			_ = s.Read(ctx, key, nil, values)
		} else {
			_ = s.Update(ctx, key, fields, values[1:])
		}
	}
}

// The null driver stores nothing, so a knob that changes how a database
// stores or commits would be ignored: it is refused instead.
func TestKnobsAreRefused(t *testing.T) {
	target, err := driver.ParseTarget("null", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]driver.Options{
		"--table-type memory":     {TableType: driver.TableMemory},
		"--durability delayed":    {Durability: driver.DurabilityDelayed},
		"--op-path procedure":     {OpPath: driver.PathProcedure},
		"--table-type nondurable": {TableType: driver.TableNondurable},
	} {
		_, err := Driver{}.Open(context.Background(), target, opts)
		if !badinput.Is(err) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Open = %v, want bad input naming it", name, err)
		}
	}
}

// Every phase goes ahead on the null table, as often as it is run.
func TestInspectIsStateless(t *testing.T) {
	st, err := open(t).Inspect(context.Background(), table)
	if err != nil || !st.Stateless {
		t.Errorf("Inspect = %+v, %v; want a stateless table", st, err)
	}
}

func TestCapabilitiesSayWhyNot(t *testing.T) {
	d, err := Driver{}.Open(context.Background(), driver.Target{}, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.CheckDescription(d); err != nil {
		t.Fatal(err)
	}
	err = driver.Describe(d).Need(driver.CapScan)
	if !badinput.Is(err) || err.Error() != "the null driver has no server-side table scan: it keeps nothing and runs no statement, so it measures only dbprobe itself; use --db with a database" {
		t.Errorf("Need(scan) = %v", err)
	}
}
