package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func testTable(fields int) driver.Table {
	t := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}
	for i := 0; i < fields; i++ {
		t.Fields = append(t.Fields, "FIELD"+strconv.Itoa(i))
	}
	return t
}

// golden compares got with testdata/name, or rewrites it under -update.
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
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the dialect returns now (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestDialectStatements pins the text of every statement dbprobe sends in
// testdata/statements.sql: the CREATE TABLE of each table type, then the
// statements on the table, which are the same for every type.
func TestDialectStatements(t *testing.T) {
	var out strings.Builder
	wide := testTable(2)
	wide.FieldLength = 40000
	for _, tc := range []struct {
		name string
		t    driver.Table
		tt   driver.TableType
	}{
		{"disk", testTable(3), driver.TableDisk},
		{"memory", testTable(3), driver.TableMemory},
		{"disk, rows too wide for VARBINARY", wide, driver.TableDisk},
	} {
		d, err := newDialect(tc.t, tc.tt)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "-- create, %s\n%s;\n", tc.name, d.createTable(tc.tt, "0123456789abcdef"))
	}
	d, err := newDialect(testTable(3), driver.TableDisk)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		name, sql string
	}{
		{"read all", d.read(nil)},
		{"read some", d.read([]int{2, 0})},
		{"scan all", d.scan(nil)},
		{"scan one", d.scan([]int{1})},
		{"update all", d.update(nil)},
		{"update one", d.update([]int{1})},
		{"insert 1", d.insert(1)},
		{"insert 2", d.insert(2)},
		{"delete", d.delete()},
		{"has rows", d.hasRows()},
		{"load data", d.loadData("dbprobe_1")},
	} {
		fmt.Fprintf(&out, "-- %s\n%s;\n", st.name, st.sql)
	}
	for i, p := range d.procedures() {
		fmt.Fprintf(&out, "-- procedure %s\n%s;\n", d.procs.All()[i], p)
	}
	for i, c := range d.calls() {
		fmt.Fprintf(&out, "-- call %s\n%s;\n", d.procs.All()[i], c)
	}
	for _, n := range d.procs.All() {
		fmt.Fprintf(&out, "-- drop %s\n%s;\n", n, dropProcedure(n))
	}
	golden(t, "statements.sql", out.String())
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"usertable": "`usertable`",
		"select":    "`select`",
		"a`b":       "`a``b`",
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestColumnTypes(t *testing.T) {
	wide := testTable(10)
	wide.FieldLength = 10000
	huge := testTable(2)
	huge.FieldLength = 100000
	for _, tc := range []struct {
		name      string
		t         driver.Table
		tt        driver.TableType
		key, fld  string
		badInput  bool
		mentioned string
	}{
		{name: "ycsb disk", t: testTable(10), tt: driver.TableDisk, key: "VARBINARY(255)", fld: "VARBINARY(100)"},
		{name: "ycsb memory", t: testTable(10), tt: driver.TableMemory, key: "VARBINARY(255)", fld: "VARBINARY(100)"},
		{name: "wide disk", t: wide, tt: driver.TableDisk, key: "VARBINARY(255)", fld: "BLOB"},
		{name: "huge disk", t: huge, tt: driver.TableDisk, key: "VARBINARY(255)", fld: "MEDIUMBLOB"},
		{name: "wide memory", t: wide, tt: driver.TableMemory, badInput: true, mentioned: "--table-type disk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, fld, err := columnTypes(tc.t, tc.tt)
			if tc.badInput {
				if !badinput.Is(err) || !strings.Contains(err.Error(), tc.mentioned) {
					t.Fatalf("columnTypes = %q, %q, %v; want bad input mentioning %q", key, fld, err, tc.mentioned)
				}
				return
			}
			if err != nil || key != tc.key || fld != tc.fld {
				t.Fatalf("columnTypes = %q, %q, %v; want %q, %q", key, fld, err, tc.key, tc.fld)
			}
		})
	}
	// The boundary: the widest VARBINARY row MySQL takes.
	edge := driver.Table{Name: "t", KeyColumn: "k", KeyLength: 255, Fields: []string{"f"}, FieldLength: maxRowSize - 256 - 2}
	if _, fld, _ := columnTypes(edge, driver.TableDisk); fld != "VARBINARY(65277)" {
		t.Errorf("a row of exactly %d bytes: field type %s, want VARBINARY", maxRowSize, fld)
	}
	edge.FieldLength++
	if _, fld, _ := columnTypes(edge, driver.TableDisk); fld != "BLOB" {
		t.Errorf("a row of %d bytes: field type %s, want BLOB", maxRowSize+1, fld)
	}
}

func TestProcedureNamesTooLong(t *testing.T) {
	ok := testTable(1)
	ok.Name = strings.Repeat("t", maxIdentifier-len("dbprobe__update"))
	if err := checkProcedureNames(ok); err != nil {
		t.Errorf("a %d-character table name: %v", len(ok.Name), err)
	}
	long := ok
	long.Name += "t"
	if err := checkProcedureNames(long); !badinput.Is(err) {
		t.Errorf("a %d-character table name: %v, want bad input", len(long.Name), err)
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

func TestChunks(t *testing.T) {
	record := func(size int) [][]byte { return [][]byte{make([]byte, size), make([]byte, size)} }
	batch := func(n, size int) ([][]byte, [][][]byte) {
		keys := make([][]byte, n)
		values := make([][][]byte, n)
		for i := range keys {
			keys[i] = []byte("k")
			values[i] = record(size)
		}
		return keys, values
	}
	per := rowsPerInsert(2)
	for _, tc := range []struct {
		name      string
		maxPacket int
		n, size   int
		want      []int
	}{
		{"one row", 1 << 20, 1, 10, []int{1}},
		{"small rows", 1 << 20, 1000, 10, []int{1000}},
		{"by placeholders", 64 << 20, per + 5, 1, []int{per, per + 5}},
		// 1 MiB packets, half used: each 100 kB row (2 fields of 50 kB) fits 5 at a time.
		{"by packet size", 1 << 20, 12, 50000, []int{5, 10, 12}},
		{"a row over the budget goes alone", 1 << 20, 2, 400000, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{db: &DB{maxPacket: tc.maxPacket}, nfields: 2}
			keys, values := batch(tc.n, tc.size)
			if got := s.chunks(keys, values); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("chunks = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAppendLoadText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a\tb\nc\rd\\e", `a\tb\nc\rd\\e`},
		{"\x00nul\x1actrlz", `\0nul\Zctrlz`},
		{`\N`, `\\N`},
		{"NULL", "NULL"},
		{"é'\"\xff", "é'\"\xff"},
		// Past the eight bytes checked at a time: a byte to escape at
		// each place in a word and after it, and control bytes that
		// need none.
		{"0123456789abcdef\\", `0123456789abcdef\\`},
		{"01234567\n89abcdef\x01\x1f~\x7f\x80", `01234567\n89abcdef` + "\x01\x1f~\x7f\x80"},
		{strings.Repeat("x", 7) + "\t" + strings.Repeat("y", 9) + "\x00", strings.Repeat("x", 7) + `\t` + strings.Repeat("y", 9) + `\0`},
	} {
		if got := string(appendLoadText([]byte("x"), []byte(tc.in))); got != "x"+tc.want {
			t.Errorf("appendLoadText(%q) = %q, want %q", tc.in, got, "x"+tc.want)
		}
	}
}

// unescapeLoadText reads a field back as LOAD DATA does with ESCAPED BY
// '\': the model the test holds appendLoadText to.
func unescapeLoadText(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch b[i] {
		case '0':
			out = append(out, 0)
		case 'b':
			out = append(out, '\b')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'Z':
			out = append(out, 0x1a)
		default:
			out = append(out, b[i])
		}
	}
	return out
}

func FuzzAppendLoadText(f *testing.F) {
	for _, s := range []string{"", "a\tb", "\\N", "\x00\x1a\r\n\\\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		enc := appendLoadText(nil, v)
		if bytes.ContainsAny(enc, "\t\n") {
			t.Fatalf("appendLoadText(%q) = %q holds a separator", v, enc)
		}
		if bytes.Equal(enc, []byte(`\N`)) {
			t.Fatalf("appendLoadText(%q) reads as NULL", v)
		}
		if got := unescapeLoadText(enc); !bytes.Equal(got, v) {
			t.Fatalf("appendLoadText(%q) = %q reads back as %q", v, enc, got)
		}
	})
}

func TestLoadReader(t *testing.T) {
	var keys [][]byte
	var values [][][]byte
	var want []byte
	for i := 0; i < 3000; i++ { // several loadChunks
		k := []byte(fmt.Sprintf("key\t%05d", i))
		v := [][]byte{[]byte("a\\b"), bytes.Repeat([]byte{'x', '\n'}, i%50)}
		keys, values = append(keys, k), append(values, v)
		want = appendLoadRow(want, k, v)
	}
	for _, size := range []int{1, 7, 4096, 1 << 20} {
		r := &loadReader{}
		r.reset(keys, values)
		got, err := readInPieces(r, size)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("reading in pieces of %d: %d bytes, %v; want the %d bytes of the rows", size, len(got), err, len(want))
		}
	}
	r := &loadReader{}
	r.reset(nil, nil)
	if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("empty batch: Read = %d, %v; want 0, EOF", n, err)
	}
}

func readInPieces(r io.Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestClassify(t *testing.T) {
	myErr := func(n uint16) error { return &gomysql.MySQLError{Number: n, Message: "m"} }
	for _, tc := range []struct {
		name  string
		err   error
		class driver.Class
		code  string
	}{
		{"deadlock", myErr(1213), driver.ClassConflict, "1213"},
		{"lock wait timeout", myErr(1205), driver.ClassConflict, "1205"},
		{"duplicate key", myErr(1062), driver.ClassOther, "1062"},
		{"MySQL statement timeout", myErr(3024), driver.ClassTimeout, "3024"},
		{"MariaDB statement timeout", myErr(1969), driver.ClassTimeout, "1969"},
		{"server shutdown", myErr(1053), driver.ClassConnLost, "1053"},
		{"server gone", myErr(2006), driver.ClassConnLost, "2006"},
		{"wrapped", fmt.Errorf("x: %w", myErr(1213)), driver.ClassConflict, "1213"},
		{"bad connection", fmt.Errorf("x: %w", gomysql.ErrInvalidConn), driver.ClassConnLost, codeConnLost},
		{"connection done", sql.ErrConnDone, driver.ClassConnLost, codeConnLost},
		{"EOF", io.ErrUnexpectedEOF, driver.ClassConnLost, codeConnLost},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), driver.ClassOther, codeCanceled},
		{"deadline", context.DeadlineExceeded, driver.ClassTimeout, codeTimeout},
		{"other", errors.New("strange"), driver.ClassOther, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err)
			if driver.ClassOf(err) != tc.class || driver.Code(err) != tc.code {
				t.Errorf("classify(%v) = class %v, code %q; want %v, %q", tc.err, driver.ClassOf(err), driver.Code(err), tc.class, tc.code)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("classify(%v) lost the cause", tc.err)
			}
		})
	}
	if classify(nil) != nil || classify(driver.ErrNotFound) != driver.ErrNotFound {
		t.Error("classify must pass nil and ErrNotFound through")
	}
	if !isLoadRefused(classify(myErr(4166))) || !isLoadRefused(myErr(3948)) || !isLoadRefused(myErr(1148)) || isLoadRefused(myErr(1062)) {
		t.Error("isLoadRefused: 4166, 3948 and 1148 refuse LOAD DATA LOCAL, 1062 does not")
	}
}

func TestCheckKnobs(t *testing.T) {
	for _, tc := range []struct {
		opts driver.Options
		says string
	}{
		{driver.Options{TableType: driver.TableNondurable}, "--table-type memory"},
		{driver.Options{DurabilityScope: driver.ScopeTransaction, Durability: driver.DurabilityDelayed}, "server-wide"},
	} {
		err := checkKnobs(tc.opts)
		if !badinput.Is(err) || !strings.Contains(err.Error(), tc.says) || !strings.HasPrefix(err.Error(), "MySQL has no ") {
			t.Errorf("checkKnobs(%+v) = %v; want bad input saying %q", tc.opts, err, tc.says)
		}
	}
	for _, opts := range []driver.Options{
		{},
		{TableType: driver.TableMemory, Durability: driver.DurabilityDelayed, OpPath: driver.PathProcedure},
		{Durability: driver.DurabilityFull},
	} {
		if err := checkKnobs(opts); err != nil {
			t.Errorf("checkKnobs(%+v) = %v", opts, err)
		}
	}
}

func TestStorage(t *testing.T) {
	null := sql.NullString{}
	for _, tc := range []struct {
		engine, rowFormat, tableType string
		maxData                      sql.NullString
		tt                           driver.TableType
		want                         string
	}{
		{"InnoDB", "Dynamic", "BASE TABLE", null, driver.TableDisk, "ENGINE=InnoDB ROW_FORMAT=Dynamic"},
		{"MEMORY", "Fixed", "BASE TABLE", sql.NullString{String: "1048576", Valid: true}, driver.TableMemory,
			"ENGINE=MEMORY (not durable: rows are lost when the server restarts; room for at most 1.0 MiB of rows)"},
		{"MEMORY", "Fixed", "BASE TABLE", sql.NullString{String: "576198", Valid: true}, driver.TableMemory,
			"ENGINE=MEMORY (not durable: rows are lost when the server restarts; room for at most 562 KiB of rows)"},
		{"MEMORY", "Fixed", "BASE TABLE", sql.NullString{String: "14960652144340992246", Valid: true}, driver.TableMemory,
			"ENGINE=MEMORY (not durable: rows are lost when the server restarts)"},
		{"Aria", "Page", "BASE TABLE", null, driver.TableDisk, "ENGINE=Aria ROW_FORMAT=Page"},
		{"", "", "VIEW", null, driver.TableDisk, "VIEW"},
	} {
		tt, s := storage(tc.engine, tc.rowFormat, tc.tableType, tc.maxData)
		if tt != tc.tt || s != tc.want {
			t.Errorf("storage(%s, %s) = %v, %q; want %v, %q", tc.engine, tc.rowFormat, tt, s, tc.tt, tc.want)
		}
	}
}

func TestLockName(t *testing.T) {
	if got := lockName("bench"); got != "dbprobe_tables.bench" {
		t.Errorf("lockName(bench) = %q", got)
	}
	long := strings.Repeat("d", 64)
	a, b := lockName(long), lockName(long[:63]+"e")
	if len(a) > 64 || a == b {
		t.Errorf("lockName of long names: %q, %q; want distinct names of at most 64 characters", a, b)
	}
}
