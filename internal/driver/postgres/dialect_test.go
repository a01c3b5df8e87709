package postgres

import (
	"encoding/binary"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func testTable(fields int) driver.Table {
	t := driver.Table{Name: "UserTable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}
	for i := 0; i < fields; i++ {
		t.Fields = append(t.Fields, "FIELD"+string(rune('0'+i)))
	}
	return t
}

func TestDialectSQL(t *testing.T) {
	d := newDialect("public", testTable(3))
	for _, tc := range []struct{ name, got, want string }{
		{"create", d.createTable(255, 100, false),
			`CREATE TABLE "public"."usertable" ("ycsb_key" varchar(255) COLLATE "C" PRIMARY KEY, "field0" varchar(100) NOT NULL, "field1" varchar(100) NOT NULL, "field2" varchar(100) NOT NULL)`},
		{"create unlogged", d.createTable(255, 100, true),
			`CREATE UNLOGGED TABLE "public"."usertable" ("ycsb_key" varchar(255) COLLATE "C" PRIMARY KEY, "field0" varchar(100) NOT NULL, "field1" varchar(100) NOT NULL, "field2" varchar(100) NOT NULL)`},
		{"call read all", d.callRead(nil), `SELECT "field0", "field1", "field2" FROM "public"."dbprobe_usertable_read"($1)`},
		{"call read some", d.callRead([]int{2, 0}), `SELECT "field2", "field0" FROM "public"."dbprobe_usertable_read"($1)`},
		{"call scan all", d.callScan(nil), `SELECT "ycsb_key", "field0", "field1", "field2" FROM "public"."dbprobe_usertable_scan"($1, $2) ORDER BY "ycsb_key" COLLATE "C"`},
		{"call scan one", d.callScan([]int{1}), `SELECT "ycsb_key", "field1" FROM "public"."dbprobe_usertable_scan"($1, $2) ORDER BY "ycsb_key" COLLATE "C"`},
		{"call update all", d.callUpdate(nil), `SELECT "public"."dbprobe_usertable_update"($4, $1, $2, $3)`},
		{"call update one", d.callUpdate([]int{1}), `SELECT "public"."dbprobe_usertable_update"($2, NULL, $1, NULL)`},
		{"call update two", d.callUpdate([]int{2, 0}), `SELECT "public"."dbprobe_usertable_update"($3, $2, NULL, $1)`},
		{"call insert", d.callInsert(), `SELECT "public"."dbprobe_usertable_insert"($1, $2, $3, $4)`},
		{"call delete", d.callDelete(), `SELECT "public"."dbprobe_usertable_delete"($1)`},
		{"read all", d.read(nil), `SELECT "field0", "field1", "field2" FROM "public"."usertable" WHERE "ycsb_key" = $1`},
		{"read some", d.read([]int{2, 0}), `SELECT "field2", "field0" FROM "public"."usertable" WHERE "ycsb_key" = $1`},
		{"scan all", d.scan(nil), `SELECT "ycsb_key", "field0", "field1", "field2" FROM "public"."usertable" WHERE "ycsb_key" >= $1 ORDER BY "ycsb_key" LIMIT $2`},
		{"scan one", d.scan([]int{1}), `SELECT "ycsb_key", "field1" FROM "public"."usertable" WHERE "ycsb_key" >= $1 ORDER BY "ycsb_key" LIMIT $2`},
		{"update all", d.update(nil), `UPDATE "public"."usertable" SET "field0" = $1, "field1" = $2, "field2" = $3 WHERE "ycsb_key" = $4`},
		{"update one", d.update([]int{1}), `UPDATE "public"."usertable" SET "field1" = $1 WHERE "ycsb_key" = $2`},
		{"insert 1", d.insert(1), `INSERT INTO "public"."usertable" ("ycsb_key", "field0", "field1", "field2") VALUES ($1, $2, $3, $4)`},
		{"insert 2", d.insert(2), `INSERT INTO "public"."usertable" ("ycsb_key", "field0", "field1", "field2") VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)`},
		{"delete", d.delete(), `DELETE FROM "public"."usertable" WHERE "ycsb_key" = $1`},
		{"copy", d.copyFrom(), `COPY "public"."usertable" ("ycsb_key", "field0", "field1", "field2") FROM STDIN`},
		{"has rows", d.hasRows(), `SELECT 1 FROM "public"."usertable" LIMIT 1`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	if got, want := newDialect("", testTable(1)).delete(), `DELETE FROM "usertable" WHERE "ycsb_key" = $1`; got != want {
		t.Errorf("no schema: got %s, want %s", got, want)
	}
	// A reserved word as a name still makes valid SQL.
	if got, want := quote("Select"), `"select"`; got != want {
		t.Errorf("quote: got %s, want %s", got, want)
	}
}

func TestRowsPerInsert(t *testing.T) {
	for _, fields := range []int{1, 10, 100} {
		n := rowsPerInsert(fields)
		if n*(fields+1) > maxParams || (n+1)*(fields+1) <= maxParams {
			t.Errorf("rowsPerInsert(%d) = %d: not the most rows within %d parameters", fields, n, maxParams)
		}
	}
}

func TestAppendCopyText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a\tb\nc\rd\\e", `a\tb\nc\rd\\e`},
		{`\.`, `\\.`},
		{"é'\"", "é'\""},
	} {
		if got := string(appendCopyText([]byte("x"), []byte(tc.in))); got != "x"+tc.want {
			t.Errorf("appendCopyText(%q) = %q, want %q", tc.in, got, "x"+tc.want)
		}
	}
}

func TestClassOfSQLState(t *testing.T) {
	for code, want := range map[string]driver.Class{
		"40001": driver.ClassConflict,
		"40P01": driver.ClassConflict,
		"57014": driver.ClassTimeout,
		"57P01": driver.ClassConnLost,
		"57P02": driver.ClassConnLost,
		"57P03": driver.ClassConnLost,
		"08006": driver.ClassConnLost,
		"08P01": driver.ClassConnLost,
		"23505": driver.ClassOther,
		"42P01": driver.ClassOther,
	} {
		if got := classOfSQLState(code); got != want {
			t.Errorf("classOfSQLState(%s) = %v, want %v", code, got, want)
		}
	}
}

func TestFoldName(t *testing.T) {
	if got := foldName("YCSB_Key9é"); got != "ycsb_key9é" {
		t.Errorf("foldName = %q", got)
	}
}

func TestRowsAffected(t *testing.T) {
	for tag, want := range map[string]int64{
		"UPDATE 1\x00":   1,
		"DELETE 0\x00":   0,
		"INSERT 0 5\x00": 5,
		"COPY 13000":     13000,
		"SELECT 1\x00":   1,
		"BEGIN\x00":      0,
		"":               0,
	} {
		if got := rowsAffected([]byte(tag)); got != want {
			t.Errorf("rowsAffected(%q) = %d, want %d", tag, got, want)
		}
	}
}

// readingWire returns a wire whose server sends one DataRow message with
// body, and then nothing.
func readingWire(t *testing.T, body []byte) *wire {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	msg := binary.BigEndian.AppendUint32([]byte{'D'}, uint32(4+len(body)))
	msg = append(msg, body...)
	go server.Write(msg)
	return &wire{conn: client, fe: pgproto3.NewFrontend(client, client)}
}

func TestDecodeRow(t *testing.T) {
	body := []byte{0, 3, 0, 0, 0, 2, 'h', 'i', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	c := readingWire(t, body)
	if !c.next() {
		t.Fatalf("no row: %v", c.broken)
	}
	if len(c.row) != 3 || string(c.row[0]) != "hi" || c.row[1] != nil || c.row[2] == nil || len(c.row[2]) != 0 {
		t.Fatalf("row = %q", c.row)
	}
	if cap(c.row[0]) != 2 {
		t.Errorf("a value's capacity reaches into the read buffer")
	}
	for _, short := range [][]byte{{0}, {0, 1, 0, 0}, {0, 1, 0, 0, 0, 5, 'a'}} {
		c := readingWire(t, short)
		if c.next() || c.broken == nil {
			t.Errorf("a DataRow of %v was accepted", short)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it there under -update.
func golden(t *testing.T, name, got string) {
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
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, path, got)
	}
}

// The functions of the procedure path, for the YCSB table of three fields:
// the text PostgreSQL is given, checked against a real server by the
// conformance suite on the procedure path.
func TestProcedureDDL(t *testing.T) {
	d := newDialect("public", testTable(3))
	var b strings.Builder
	for _, ddl := range d.createProcedures() {
		b.WriteString(ddl)
		b.WriteString(";\n\n")
	}
	b.WriteString("-- signatures\n")
	for _, sig := range d.procedureSignatures() {
		b.WriteString(sig)
		b.WriteString("\n")
	}
	golden(t, "procedures.golden.sql", b.String())

	// Without a schema, the names are left to the search path.
	for _, ddl := range newDialect("", testTable(1)).createProcedures() {
		if strings.Contains(ddl, `"public"`) || !strings.Contains(ddl, `"dbprobe_usertable_`) {
			t.Errorf("no schema: %s", ddl)
		}
	}
}

func TestProcedureNames(t *testing.T) {
	if got := strings.Join(procedureNames(testTable(1)), " "); got != "dbprobe_usertable_read dbprobe_usertable_scan dbprobe_usertable_update dbprobe_usertable_insert dbprobe_usertable_delete" {
		t.Errorf("procedureNames = %s", got)
	}
	for _, tc := range []struct {
		n    int
		fits bool
	}{{1, true}, {48, true}, {49, false}} {
		tbl := driver.Table{Name: strings.Repeat("T", tc.n)}
		if got := procedureNamesFit(tbl); got != tc.fits {
			t.Errorf("a table name of %d bytes: fits %v, want %v", tc.n, got, tc.fits)
		}
		if err := checkProcedureNames(tbl); (err == nil) != tc.fits || (err != nil && !strings.Contains(err.Error(), "at most 48 bytes")) {
			t.Errorf("checkProcedureNames(%d bytes) = %v", tc.n, err)
		}
	}
}

func TestTableStorage(t *testing.T) {
	for _, tc := range []struct {
		persistence, am string
		want            driver.TableType
		storage         string
	}{
		{"p", "heap", driver.TableDisk, "logged heap table"},
		{"p", "", driver.TableDisk, "logged heap table"},
		{"u", "heap", driver.TableNondurable, "UNLOGGED heap table (not written to the WAL; emptied after a crash)"},
		{"t", "heap", driver.TableNondurable, "TEMPORARY heap table"},
		{"p", "columnar", driver.TableDisk, "logged columnar table"},
	} {
		typ, storage := tableStorage(tc.persistence, tc.am)
		if typ != tc.want || storage != tc.storage {
			t.Errorf("tableStorage(%q, %q) = %v, %q; want %v, %q", tc.persistence, tc.am, typ, storage, tc.want, tc.storage)
		}
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1, "42": 42} {
		if got, ok := parseCount([]byte(in)); !ok || got != want {
			t.Errorf("parseCount(%q) = %d, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "-1", "1 ", "x", "1234567890123456789"} {
		if _, ok := parseCount([]byte(bad)); ok {
			t.Errorf("parseCount(%q) accepted", bad)
		}
	}
	if _, ok := parseCount(nil); ok {
		t.Error("parseCount(NULL) accepted")
	}
}

func TestURLSetting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		value  string
		found  bool
	}{
		{"none", map[string]string{"application_name": "x"}, "", false},
		{"parameter", map[string]string{"synchronous_commit": "off"}, "off", true},
		{"parameter in capitals", map[string]string{"Synchronous_Commit": "local"}, "local", true},
		{"options -c", map[string]string{"options": "-c synchronous_commit=off"}, "off", true},
		{"options -c joined", map[string]string{"options": "-csynchronous_commit=remote_apply"}, "remote_apply", true},
		{"options --", map[string]string{"options": "--synchronous-commit=on"}, "on", true},
		{"options, the last wins", map[string]string{"options": "-c synchronous_commit=on  -c work_mem=4MB -c synchronous_commit=off"}, "off", true},
		{"options, other settings", map[string]string{"options": "-c work_mem=4MB"}, "", false},
		{"options, escaped space", map[string]string{"options": `-c application_name=a\ b -c synchronous_commit=off`}, "off", true},
		{"the parameter wins over options", map[string]string{"options": "-c synchronous_commit=off", "synchronous_commit": "on"}, "on", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := urlSetting(tc.params, "synchronous_commit")
			if v != tc.value || ok != tc.found {
				t.Errorf("urlSetting = %q, %v; want %q, %v", v, ok, tc.value, tc.found)
			}
		})
	}
	if got := splitOptions(`  -c a=b\ c\\  -cx=y `); strings.Join(got, "|") != `-c|a=b c\|-cx=y` {
		t.Errorf("splitOptions = %q", got)
	}
}

// FuzzOptionsSetting checks that a setting written into options the way
// libpq users write it, with spaces and backslashes escaped, is found
// with its value whatever surrounds it.
func FuzzOptionsSetting(f *testing.F) {
	f.Add("off", "-c work_mem=4MB", true)
	f.Add("a b\\c", "", false)
	f.Add("", "--x=y", true)
	f.Fuzz(func(t *testing.T, value, before string, joined bool) {
		escape := func(s string) string {
			var b strings.Builder
			for i := 0; i < len(s); i++ {
				switch s[i] {
				case ' ', '\t', '\n', '\r', '\f', '\v', '\\':
					b.WriteByte('\\')
				}
				b.WriteByte(s[i])
			}
			return b.String()
		}
		sw := "-c synchronous_commit=" + escape(value)
		if joined {
			sw = "-csynchronous_commit=" + escape(value)
		}
		// before must end where a new switch can start.
		opts := before + " " + sw
		if strings.HasSuffix(before, "\\") || strings.HasSuffix(strings.TrimRight(before, " \t\n\r\f\v"), "-c") {
			return
		}
		got, ok := optionsSetting(opts, "synchronous_commit")
		if !ok || got != value {
			t.Fatalf("optionsSetting(%q) = %q, %v; want %q", opts, got, ok, value)
		}
	})
}

func TestDurabilityAgrees(t *testing.T) {
	for _, tc := range []struct {
		d     driver.Durability
		value string
		want  bool
	}{
		{driver.DurabilityFull, "on", true},
		{driver.DurabilityFull, "local", true},
		{driver.DurabilityFull, "remote_apply", true},
		{driver.DurabilityFull, "off", false},
		{driver.DurabilityDelayed, "off", true},
		{driver.DurabilityDelayed, "on", false},
		{driver.DurabilityDelayed, "local", false},
		{driver.DurabilityFull, "sometimes", false},
	} {
		if got := durabilityAgrees(tc.d, tc.value); got != tc.want {
			t.Errorf("durabilityAgrees(%v, %q) = %v, want %v", tc.d, tc.value, got, tc.want)
		}
	}
}

func TestApplyDurability(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       driver.Durability
		params  map[string]string
		want    string // synchronous_commit afterwards, "" for none
		failure string // part of the error, "" for none
	}{
		{"server leaves it", driver.DurabilityServer, map[string]string{}, "", ""},
		{"server keeps the URL's", driver.DurabilityServer, map[string]string{"synchronous_commit": "off"}, "off", ""},
		{"full", driver.DurabilityFull, map[string]string{}, "on", ""},
		{"delayed", driver.DurabilityDelayed, map[string]string{}, "off", ""},
		{"full keeps an agreeing URL", driver.DurabilityFull, map[string]string{"synchronous_commit": "local"}, "local", ""},
		{"full against the URL", driver.DurabilityFull, map[string]string{"synchronous_commit": "off"}, "off",
			"--durability full asks for synchronous_commit = on, but the URL sets synchronous_commit = off"},
		{"delayed against options", driver.DurabilityDelayed, map[string]string{"options": "-c synchronous_commit=on"}, "",
			"--durability delayed asks for synchronous_commit = off, but the URL sets synchronous_commit = on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := applyDurability(tc.params, tc.d)
			if tc.failure != "" {
				if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.failure) {
					t.Fatalf("error %v, want bad input saying %q", err, tc.failure)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.params["synchronous_commit"]; got != tc.want {
				t.Errorf("synchronous_commit = %q, want %q", got, tc.want)
			}
		})
	}
}
