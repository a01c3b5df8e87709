package sqlserver

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testTable is YCSB's table shape with n fields, named as the command names
// it.
func testTable(n int) driver.Table {
	t := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}
	for i := 0; i < n; i++ {
		t.Fields = append(t.Fields, "FIELD"+strconv.Itoa(i))
	}
	return t
}

// statement is one named SQL text of a golden file.
type statement struct{ name, sql string }

// render lays statements out as a golden file: a "-- name" line, the text,
// and a blank line after each.
func render(stmts []statement) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString("-- ")
		b.WriteString(s.name)
		b.WriteString("\n")
		b.WriteString(s.sql)
		b.WriteString("\n\n")
	}
	return b.String()
}

// checkGolden compares got with testdata/name, or rewrites it under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -run TestGolden -update rewrites it after review):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestGolden pins the text of every statement the driver sends, one golden
// file per statement family, and per table type where the text depends on
// it.
func TestGolden(t *testing.T) {
	d := newDialect("dbo", testTable(3))
	procs := d.procs
	tableTypes := []driver.TableType{driver.TableDisk, driver.TableMemory, driver.TableNondurable}

	files := map[string][]statement{
		// Each statement sent through sp_executesql is followed by the
		// declarations sent with it.
		"read.sql": {
			{"all fields", d.read(nil)},
			{"fields 2, 0", d.read([]int{2, 0})},
			{"field 1", d.read([]int{1})},
			{"declarations", d.readParams().decls},
			{"procedure call", d.proc(procs.Read)},
		},
		"scan.sql": {
			{"all fields", d.scan(nil)},
			{"field 1", d.scan([]int{1})},
			{"declarations", d.scanParams().decls},
			{"procedure call", d.proc(procs.Scan)},
		},
		"update.sql": {
			{"all fields", d.update(nil)},
			{"all fields, declarations", d.updateParams(3).decls},
			{"field 1", d.update([]int{1})},
			{"field 1, declarations", d.updateParams(1).decls},
			{"fields 2, 0", d.update([]int{2, 0})},
			{"fields 2, 0, declarations", d.updateParams(2).decls},
			{"delayed transaction, field 1", delayedWrite(d.update([]int{1}))},
			{"procedure call", d.proc(procs.Update)},
			{"delayed transaction, procedure call", d.delayedProc(procs.Update, 4)},
			{"delayed transaction, procedure call, declarations", d.delayedProcParams(4).decls},
		},
		"insert.sql": {
			{"one row", d.insert(1)},
			{"one row, declarations", d.insertParams(1).decls},
			{"two rows", d.insert(2)},
			{"two rows, declarations", d.insertParams(2).decls},
			{"delayed transaction, one row", delayedWrite(d.insert(1))},
			{"procedure call", d.proc(procs.Insert)},
			{"delayed transaction, procedure call", d.delayedProc(procs.Insert, 4)},
			{"delayed transaction, procedure call, declarations", d.delayedProcParams(4).decls},
			{"bulk copy", d.copyIn()},
			{"batch transaction begin", beginTransaction},
			{"batch transaction commit", commitTransaction},
			{"batch transaction commit, delayed", commitDelayed},
			{"batch transaction rollback", rollbackIfOpen},
		},
		"delete.sql": {
			{"one key", d.delete()},
			{"declarations", d.deleteParams().decls},
			{"delayed transaction", delayedWrite(d.delete())},
			{"procedure call", d.proc(procs.Delete)},
			{"delayed transaction, procedure call", d.delayedProc(procs.Delete, 1)},
			{"delayed transaction, procedure call, declarations", d.delayedProcParams(1).decls},
		},
		"catalog.sql": {
			{"table exists", d.exists()},
			{"table identity", d.identity()},
			{"table state", d.tableState()},
			{"columns", d.columns()},
			{"has rows", d.hasRows()},
			{"existing procedures", d.existingProcedures()},
			{"recompile procedures", d.recompileProcedures()},
			{"drop table", d.dropTable()},
			{"database state", stateQuery},
			{"session options", sessionQuery},
			{"session options, without sys.dm_exec_sessions", sessionQueryNoDMV},
			{"lifecycle lock", getLifecycle},
			{"lifecycle unlock", releaseLifecycle},
		},
		"marker.sql": {
			{"ensure", newMarkers("dbo").ensure()},
			{"add identity", newMarkers("dbo").addIdentity()},
			{"shape", newMarkers("dbo").shape()},
			{"recorded", newMarkers("dbo").recorded()},
			{"recorded, legacy", newMarkers("dbo").recordedLegacy()},
			{"record", newMarkers("dbo").record()},
			{"forget", newMarkers("dbo").forget()},
			{"leftover filegroups", newMarkers("dbo").leftovers()},
		},
		"drop_procedures.sql": namedList(procs.All(), d.dropProcedures()),
		"datatable.sql":       dataTableStatements(),
		"sqltext.sql":         sqlTextStatements(),
		"settings.sql":        settingStatements(t),
		"faults.sql": {
			{"connection limit", connectionLimitQuery},
			{"user sessions", userSessionsQuery},
			{"data file", dataFileQuery},
			{"server clock", clockSQL},
		},
	}
	for _, tt := range tableTypes {
		var create []statement
		if tt == driver.TableDisk {
			create = []statement{{"create", d.createTable(tt, 0)}}
		} else {
			create = []statement{
				{"create, 1048576 buckets", d.createTable(tt, 1<<20)},
				{"create, 64 buckets", d.createTable(tt, 64)},
			}
		}
		files["create_"+tt.String()+".sql"] = create
		files["procedures_"+tt.String()+".sql"] = namedList(procs.All(), d.createProcedures(tt != driver.TableDisk))
	}
	for name, stmts := range files {
		t.Run(name, func(t *testing.T) { checkGolden(t, name, render(stmts)) })
	}

	if *update {
		return
	}
	// A file left from a statement family that no longer exists would
	// mislead a reader: every golden file must be one the test writes.
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; strings.HasSuffix(e.Name(), ".sql") && !ok {
			t.Errorf("testdata/%s is not written by TestGolden: remove it", e.Name())
		}
	}
}

// dataTableStatements are the statements of the storage and stress
// experiments' tables (driver.DataTable), placed and not, with a SQL text
// bound as the stress experiment sends it.
func dataTableStatements() []statement {
	src := newDataSQL("dbo", driver.DataTable{Name: "storage_src", PayloadBytes: 2000})
	dst := newDataSQL("dbo", driver.DataTable{Name: "storage_dst", PayloadBytes: 2000,
		Where: &driver.Location{Dir: `D:\data`, Name: "dbprobe_fg_0123456789abcdef"}})
	bound, err := sqlgen.Bind(sqlgen.SQLServer, "SELECT TOP (:n) * FROM [t:x] WHERE k = :k OR j = :k -- :no")
	if err != nil {
		panic(err)
	}
	return []statement{
		{"create", src.create(2000)},
		{"create, on a filegroup", dst.create(2000)},
		{"fill", src.fill(2000)},
		{"size", src.size()},
		{"copy, MAXDOP 1", copyInto(src, dst, 1)},
		{"copy, MAXDOP 8", copyInto(src, newDataSQL("dbo", driver.DataTable{Name: "storage_dst", PayloadBytes: 2000}), 8)},
		{"insert select", insertSelect(src, dst)},
		{"scan, whole", src.scan(false)},
		{"scan, slice", src.scan(true)},
		{"id range", src.idRange()},
		{"insert rows, not bulk", src.insertRows(2)},
		{"bulk copy", src.bulkCopy()},
		{"add filegroup", addFilegroup("dbprobe_fg_0123456789abcdef", "/var/opt/mssql/data/")},
		{"add filegroup, Windows path", addFilegroup("dbprobe_fg_0123456789abcdef", `D:\data`)},
		{"filegroup identity", filegroupIdentity},
		{"remove filegroup", removeFilegroup("dbprobe_fg_0123456789abcdef")},
		{"cache size", cacheSizeSQL},
		{"cache counts", cacheCountsSQL},
		{"SQL text bound", bound.Text},
		{"transaction begin, commit, rollback", beginTransaction + "\n" + commitTransaction + "\n" + rollbackIfOpen},
	}
}

// settingStatements are the ALTER DATABASE statements Open runs and the
// ones Close puts the options back with, for each change there is.
func settingStatements(t *testing.T) []statement {
	st := dbState{delayedDurability: "DISABLED"}
	var out []statement
	for _, opts := range []driver.Options{
		{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeDatabase},
		{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction, TableType: driver.TableMemory},
	} {
		changes, err := planChanges(opts, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range changes {
			out = append(out,
				statement{c.why + ": set " + c.option, c.apply},
				statement{c.why + ": put " + c.option + " back", c.restore})
		}
	}
	forced := dbState{delayedDurability: "FORCED", elevateToSnapshot: true}
	changes, err := planChanges(driver.Options{Durability: driver.DurabilityFull}, forced)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		out = append(out,
			statement{c.why + ": set " + c.option, c.apply},
			statement{c.why + ": put " + c.option + " back", c.restore})
	}
	return out
}

// namedList pairs names with statements.
func namedList(names, sqls []string) []statement {
	out := make([]statement, len(sqls))
	for i := range sqls {
		out[i] = statement{names[i], sqls[i]}
	}
	return out
}

func TestQuoteName(t *testing.T) {
	for in, want := range map[string]string{
		"usertable":  "[usertable]",
		"Select":     "[Select]",
		"a]b":        "[a]]b]",
		"with space": "[with space]",
		"]]":         "[]]]]]",
	} {
		if got := quoteName(in); got != want {
			t.Errorf("quoteName(%q) = %s, want %s", in, got, want)
		}
	}
	if got, want := literal("[dbo].[it's]"), "N'[dbo].[it''s]'"; got != want {
		t.Errorf("literal = %s, want %s", got, want)
	}
	// A name with quotes and brackets is delimited everywhere it appears.
	odd := newDialect("my schema", driver.Table{Name: "t]'x", KeyColumn: "k", KeyLength: 8, Fields: []string{"f"}, FieldLength: 4})
	if got, want := odd.delete(), "DELETE FROM [my schema].[t]]'x] WHERE [k] = @p1"; got != want {
		t.Errorf("delete = %s, want %s", got, want)
	}
	if got, want := odd.exists(), "SELECT CASE WHEN OBJECT_ID(N'[my schema].[t]]''x]', N'U') IS NULL THEN 0 ELSE 1 END"; got != want {
		t.Errorf("exists = %s, want %s", got, want)
	}
}

// TestParamsFollowColumns: every declaration is the column's own type at
// its declared length, and its limit that length; VARBINARY(MAX) columns
// have no limit to check.
func TestParamsFollowColumns(t *testing.T) {
	d := newDialect("dbo", driver.Table{Name: "t", KeyColumn: "k", KeyLength: 24, Fields: []string{"a", "b"}, FieldLength: 9000})
	p := d.insertParams(2)
	if want := "@p1 VARBINARY(24), @p2 VARBINARY(MAX), @p3 VARBINARY(MAX), @p4 VARBINARY(24), @p5 VARBINARY(MAX), @p6 VARBINARY(MAX)"; p.decls != want {
		t.Errorf("insertParams(2) = %q, want %q", p.decls, want)
	}
	if fmt.Sprint(p.limits) != "[24 0 0 24 0 0]" {
		t.Errorf("limits = %v", p.limits)
	}
	if p := d.scanParams(); p.decls != "@p1 VARBINARY(24), @p2 BIGINT" || fmt.Sprint(p.limits) != "[24 0]" {
		t.Errorf("scanParams = %+v", p)
	}
}

func TestVarbinary(t *testing.T) {
	for n, want := range map[int]string{1: "VARBINARY(1)", 255: "VARBINARY(255)", 8000: "VARBINARY(8000)", 8001: "VARBINARY(MAX)", 0: "VARBINARY(MAX)"} {
		if got := varbinary(n); got != want {
			t.Errorf("varbinary(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestRowsPerInsert(t *testing.T) {
	for _, tc := range []struct{ fields, want int }{
		{0, 1000}, // 2098 one-parameter rows: the VALUES limit binds
		{1, 1000}, // 1049 two-parameter rows: the VALUES limit binds
		{2, 699},  // 699 × 3 = 2097 parameters
		{10, 190}, // YCSB: 190 × 11 = 2090 parameters
		{2097, 1}, // one row of exactly 2098 parameters
		{3000, 1}, // wider than the limit: one row, which the server refuses
	} {
		got := rowsPerInsert(tc.fields)
		if got != tc.want {
			t.Errorf("rowsPerInsert(%d) = %d, want %d", tc.fields, got, tc.want)
		}
		if tc.fields < maxParams && got*(tc.fields+1) > maxParams {
			t.Errorf("rowsPerInsert(%d) = %d binds %d parameters, over %d", tc.fields, got, got*(tc.fields+1), maxParams)
		}
	}
	// The multi-row INSERT of a full chunk binds exactly that many parameters.
	d := newDialect("dbo", testTable(10))
	sql := d.insert(rowsPerInsert(10))
	if n := strings.Count(sql, "@p"); n != 190*11 {
		t.Errorf("insert(%d) has %d parameters, want %d", rowsPerInsert(10), n, 190*11)
	}
	if !strings.HasSuffix(sql, "@p2090)") {
		t.Errorf("insert(190) does not end with @p2090: …%s", sql[len(sql)-20:])
	}
}

func TestCreateProceduresOrder(t *testing.T) {
	d := newDialect("dbo", testTable(2))
	for _, native := range []bool{false, true} {
		stmts := d.createProcedures(native)
		names := d.procs.All()
		if len(stmts) != len(names) {
			t.Fatalf("%d procedures, want %d", len(stmts), len(names))
		}
		for i, s := range stmts {
			if !strings.HasPrefix(s, "CREATE PROCEDURE [dbo].["+names[i]+"]") {
				t.Errorf("procedure %d creates %q, want %s", i, firstLine(s), names[i])
			}
			if got := strings.Contains(s, "NATIVE_COMPILATION"); got != native {
				t.Errorf("%s: natively compiled = %v, want %v", names[i], got, native)
			}
		}
	}
}
