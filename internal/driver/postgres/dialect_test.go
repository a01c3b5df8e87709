package postgres

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"dbprobe/internal/driver"
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
		{"create", d.createTable(255, 100),
			`CREATE TABLE "public"."usertable" ("ycsb_key" varchar(255) COLLATE "C" PRIMARY KEY, "field0" varchar(100) NOT NULL, "field1" varchar(100) NOT NULL, "field2" varchar(100) NOT NULL)`},
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
