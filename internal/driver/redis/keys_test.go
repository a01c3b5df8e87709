package redis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestNewKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"usertable", true},
		{"User_Table_2", true},
		{"_x", true},
		{"", false},
		{"a:b", false},     // the record separator
		{"a#index", false}, // dbprobe's own keys' separator
		{"user*", false},   // a SCAN pattern would match other tables
		{"user?", false},
		{"user[1]", false},
		{`user\`, false},
		{"user table", false},
		{"usér", false},
		{strings.Repeat("a", 256), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := newKeys(tc.name)
			if !tc.ok {
				if err == nil || !badinput.Is(err) {
					t.Fatalf("newKeys(%q) = %+v, %v; want a badinput error", tc.name, k, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("newKeys(%q): %v", tc.name, err)
			}
			want := keys{table: tc.name, prefix: tc.name + ":", index: tc.name + "#index", schema: tc.name + "#schema", match: tc.name + ":*"}
			if k != want {
				t.Errorf("newKeys(%q) = %+v, want %+v", tc.name, k, want)
			}
		})
	}
}

// No YCSB key makes a record key equal to one of dbprobe's own keys, of
// this table or another, whatever its bytes.
func TestRecordKeysNeverCollide(t *testing.T) {
	tables := []string{"usertable", "user", "dbprobe", "a"}
	own := map[string]bool{ownershipKey: true}
	for _, name := range tables {
		k, _ := newKeys(name)
		own[k.index], own[k.schema] = true, true
	}
	ykeys := []string{"", "index", "schema", "#index", "tables", "x#schema", ":", "::", "user1234", "\x00\xff", "*"}
	for _, name := range tables {
		k, _ := newKeys(name)
		for _, y := range ykeys {
			r := k.record([]byte(y))
			if own[r] {
				t.Errorf("table %s, YCSB key %q: record key %q is one of dbprobe's own keys", name, y, r)
			}
			if !strings.HasPrefix(r, name+":") {
				t.Errorf("record key %q does not start with %q", r, name+":")
			}
		}
	}
}

func TestRecordKey(t *testing.T) {
	k, _ := newKeys("usertable")
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, y := range [][]byte{nil, []byte("user1"), all} {
		want := "usertable:" + string(y)
		if got := k.record(y); got != want {
			t.Errorf("record(%q) = %q, want %q", y, got, want)
		}
		buf := []byte("junk")
		if got := string(k.appendRecord(buf[:0], y)); got != want {
			t.Errorf("appendRecord(%q) = %q, want %q", y, got, want)
		}
	}
}

func TestLexFrom(t *testing.T) {
	for _, tc := range []struct{ start, want string }{
		{"", "["},
		{"user1", "[user1"},
		{"[(-+", "[[(-+"}, // the bound's own syntax is only its first byte
		{"\x00\xff", "[\x00\xff"},
	} {
		if got := lexFrom([]byte(tc.start)); got != tc.want {
			t.Errorf("lexFrom(%q) = %q, want %q", tc.start, got, tc.want)
		}
	}
}

// schemaMap turns schemaHash's pairs into the map HGETALL returns.
func schemaMap(t *testing.T, pairs []any) map[string]string {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("schemaHash returned %d values, want pairs", len(pairs))
	}
	m := map[string]string{}
	for i := 0; i < len(pairs); i += 2 {
		m[fmt.Sprint(pairs[i])] = fmt.Sprint(pairs[i+1])
	}
	return m
}

func TestSchemaRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		fields int
		tt     driver.TableType
	}{{1, driver.TableDisk}, {10, driver.TableMemory}, {12, driver.TableDisk}} {
		tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100}
		for i := range tc.fields {
			tbl.Fields = append(tbl.Fields, fmt.Sprintf("FIELD%d", i))
		}
		now := time.Date(2026, 11, 22, 1, 2, 3, 0, time.FixedZone("X", 3600))
		m := schemaMap(t, schemaHash(tbl, tc.tt, now, "v1.2.3"))
		s, err := parseSchema(m)
		if err != nil {
			t.Fatalf("parseSchema(%v): %v", m, err)
		}
		if want := columns(tbl); !slices.Equal(s.Columns, want) {
			t.Errorf("columns %v, want %v (in order: FIELD10 after FIELD9)", s.Columns, want)
		}
		if s.TableType != tc.tt {
			t.Errorf("table type %v, want %v", s.TableType, tc.tt)
		}
		for k, want := range map[string]string{
			"created_at": "2026-11-22T00:02:03Z", "dbprobe_version": "v1.2.3", "key_length": "255", "field_length": "100",
		} {
			if m[k] != want {
				t.Errorf("%s = %q, want %q", k, m[k], want)
			}
		}
	}
}

func TestParseSchemaRefusesWhatItDidNotWrite(t *testing.T) {
	for name, h := range map[string]map[string]string{
		"no columns":      {"table_type": "disk"},
		"a gap":           {"column:0": "YCSB_KEY", "column:2": "FIELD1"},
		"not a number":    {"column:0": "YCSB_KEY", "column:x": "FIELD0"},
		"negative":        {"column:-1": "YCSB_KEY"},
		"beyond the hash": {"column:0": "YCSB_KEY", "column:7": "FIELD0"},
		"unknown type":    {"column:0": "YCSB_KEY", "table_type": "ssd"},
	} {
		t.Run(name, func(t *testing.T) {
			if s, err := parseSchema(h); err == nil {
				t.Errorf("parseSchema(%v) = %+v, want an error", h, s)
			}
		})
	}
	// Without a table type (an older schema), the table is an ordinary one.
	s, err := parseSchema(map[string]string{"column:0": "YCSB_KEY", "column:1": "FIELD0"})
	if err != nil || s.TableType != driver.TableDisk || len(s.Columns) != 2 {
		t.Errorf("parseSchema without a type = %+v, %v", s, err)
	}
}

func TestParseInfo(t *testing.T) {
	text := "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nexecutable:/usr/bin/redis-server\r\n\r\n# Persistence\r\naof_enabled:1\r\nodd line\r\n"
	got := parseInfo(text)
	want := map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone", "executable": "/usr/bin/redis-server", "aof_enabled": "1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseInfo = %v, want %v", got, want)
	}
}
