package redis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// ownershipKey is the set of the tables dbprobe created in a logical
// database. '#' keeps it apart from every record key ("<table>:…").
const ownershipKey = "dbprobe#tables"

// keys names the Redis keys of one table.
type keys struct {
	table string
	// prefix starts every record key: "<table>:".
	prefix string
	// index is the sorted set of the table's YCSB keys.
	index string
	// schema is the hash describing the table.
	schema string
	// match is the SCAN pattern of the table's record keys.
	match string
}

// newKeys returns the key names of table name, which must be a plain
// identifier (driver.CheckIdentifier): letters, digits and underscores.
// Anything else could hold the key separators ':' and '#' or a SCAN
// pattern's metacharacters.
func newKeys(name string) (keys, error) {
	if err := driver.CheckIdentifier("table", name); err != nil {
		return keys{}, err
	}
	return keys{
		table:  name,
		prefix: name + ":",
		index:  name + "#index",
		schema: name + "#schema",
		match:  name + ":*",
	}, nil
}

// appendRecord appends the record key of a YCSB key to buf.
func (k keys) appendRecord(buf []byte, ykey []byte) []byte {
	return append(append(buf, k.prefix...), ykey...)
}

// record returns the record key of a YCSB key.
func (k keys) record(ykey []byte) string {
	return string(k.appendRecord(make([]byte, 0, len(k.prefix)+len(ykey)), ykey))
}

// lexFrom is the ZRANGEBYLEX bound of the members from startKey on,
// inclusive: "[" and the key's bytes, which the index compares as memcmp
// does (all scores are 0). "[" alone, for an empty start key, is every
// member.
func lexFrom(startKey []byte) string {
	return "[" + string(startKey)
}

// The fields of a table's schema hash.
const (
	schemaColumnPrefix = "column:" // column:0 is the key column, column:1… the fields
	schemaTableType    = "table_type"
	schemaKeyLength    = "key_length"
	schemaFieldLength  = "field_length"
	schemaCreatedAt    = "created_at"
	schemaVersion      = "dbprobe_version"
)

// schemaHash returns the field/value pairs of a table's schema hash.
func schemaHash(t driver.Table, tt driver.TableType, now time.Time, version string) []any {
	cols := columns(t)
	out := make([]any, 0, 2*len(cols)+10)
	for i, c := range cols {
		out = append(out, schemaColumnPrefix+strconv.Itoa(i), c)
	}
	return append(out,
		schemaTableType, tt.String(),
		schemaKeyLength, strconv.Itoa(t.KeyLength),
		schemaFieldLength, strconv.Itoa(t.FieldLength),
		schemaCreatedAt, now.UTC().Format(time.RFC3339),
		schemaVersion, version,
	)
}

// columns lists a table's columns in order: the key column, then the fields.
func columns(t driver.Table) []string {
	return append([]string{t.KeyColumn}, t.Fields...)
}

// schema is what a table's schema hash says.
type schema struct {
	Columns   []string
	TableType driver.TableType
}

// parseSchema reads a schema hash back. The columns must be numbered 0…n-1
// without a gap: a hash written by anything else is reported, not guessed.
func parseSchema(h map[string]string) (schema, error) {
	var s schema
	byIndex := map[int]string{}
	for f, v := range h {
		rest, ok := strings.CutPrefix(f, schemaColumnPrefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 || i >= len(h) {
			return schema{}, fmt.Errorf("schema field %q is not a column number", f)
		}
		byIndex[i] = v
	}
	if len(byIndex) == 0 {
		return schema{}, fmt.Errorf("schema lists no columns")
	}
	idx := make([]int, 0, len(byIndex))
	for i := range byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for n, i := range idx {
		if n != i {
			return schema{}, fmt.Errorf("schema lacks column %d", n)
		}
		s.Columns = append(s.Columns, byIndex[i])
	}
	if v, ok := h[schemaTableType]; ok {
		tt, err := driver.ParseTableType(v)
		if err != nil {
			return schema{}, fmt.Errorf("schema: %w", err)
		}
		s.TableType = tt
	}
	return s, nil
}
