package sqlgen

import "strings"

// Table holds the delimited names of one key-value table (a key column and
// fields) and returns the text of the statements every SQL driver runs on
// it. The statements are built when a session first prepares them, never
// per operation.
type Table struct {
	d Dialect
	// Name is the delimited, possibly schema-qualified table name.
	Name string
	// Key is the delimited key column.
	Key string
	// Fields are the delimited field columns, in order.
	Fields []string
}

// Table returns the statements of table name in schema ("" for none),
// with key column key and field columns fields, all names as the database
// should store them (a driver that folds case folds them first).
func (d Dialect) Table(schema, name, key string, fields []string) *Table {
	t := &Table{d: d, Name: d.Qualify(schema, name), Key: d.Quote(key), Fields: make([]string, len(fields))}
	for i, f := range fields {
		t.Fields[i] = d.Quote(f)
	}
	return t
}

// Dialect returns the table's dialect.
func (t *Table) Dialect() Dialect { return t.d }

// Columns writes the listed fields, or all of them when idx is nil,
// separated by commas.
func (t *Table) Columns(b *strings.Builder, idx []int) {
	if idx == nil {
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f)
		}
		return
	}
	for i, f := range idx {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Fields[f])
	}
}

// Read returns the SELECT of the listed fields (nil: all) of one key, the
// first parameter.
func (t *Table) Read(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	t.Columns(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(t.Name)
	b.WriteString(" WHERE ")
	b.WriteString(t.Key)
	b.WriteString(" = ")
	t.d.Param(&b, 1)
	return b.String()
}

// Scan returns the range read: the key then the listed fields (nil: all),
// from the first parameter's key on, inclusive, at most the second
// parameter's count of rows, in key order.
func (t *Table) Scan(idx []int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if t.d.Limit == LimitTop {
		b.WriteString("TOP (")
		t.d.Param(&b, 2)
		b.WriteString(") ")
	}
	b.WriteString(t.Key)
	b.WriteString(", ")
	t.Columns(&b, idx)
	b.WriteString(" FROM ")
	b.WriteString(t.Name)
	b.WriteString(" WHERE ")
	b.WriteString(t.Key)
	b.WriteString(" >= ")
	t.d.Param(&b, 1)
	b.WriteString(" ORDER BY ")
	b.WriteString(t.Key)
	if t.d.Limit == LimitClause {
		b.WriteString(" LIMIT ")
		t.d.Param(&b, 2)
	}
	return b.String()
}

// Update returns the UPDATE of the listed fields (nil: all): the new
// values are the first parameters, in the order of the list, and the key
// the last one.
func (t *Table) Update(idx []int) string {
	var b strings.Builder
	b.WriteString("UPDATE ")
	b.WriteString(t.Name)
	b.WriteString(" SET ")
	n := len(idx)
	if idx == nil {
		n = len(t.Fields)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if idx == nil {
			b.WriteString(t.Fields[i])
		} else {
			b.WriteString(t.Fields[idx[i]])
		}
		b.WriteString(" = ")
		t.d.Param(&b, i+1)
	}
	b.WriteString(" WHERE ")
	b.WriteString(t.Key)
	b.WriteString(" = ")
	t.d.Param(&b, n+1)
	return b.String()
}

// Insert returns a multi-row INSERT of rows records: each row's
// parameters are the key then every field, row after row.
func (t *Table) Insert(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(t.Name)
	b.WriteString(" (")
	b.WriteString(t.Key)
	b.WriteString(", ")
	t.Columns(&b, nil)
	b.WriteString(") VALUES ")
	p := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for c := 0; c <= len(t.Fields); c++ {
			if c > 0 {
				b.WriteString(", ")
			}
			t.d.Param(&b, p)
			p++
		}
		b.WriteString(")")
	}
	return b.String()
}

// Delete returns the DELETE of one key, the first parameter.
func (t *Table) Delete() string {
	var b strings.Builder
	b.WriteString("DELETE FROM ")
	b.WriteString(t.Name)
	b.WriteString(" WHERE ")
	b.WriteString(t.Key)
	b.WriteString(" = ")
	t.d.Param(&b, 1)
	return b.String()
}

// HasRows returns a query that yields one row when the table has any.
func (t *Table) HasRows() string {
	if t.d.Limit == LimitTop {
		return "SELECT TOP (1) 1 FROM " + t.Name
	}
	return "SELECT 1 FROM " + t.Name + " LIMIT 1"
}
