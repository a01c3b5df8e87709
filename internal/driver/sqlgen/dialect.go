package sqlgen

import (
	"strconv"
	"strings"
)

// Limit is where a dialect writes a statement's row limit.
type Limit int

// The row limit styles.
const (
	// LimitClause ends the statement with LIMIT n (PostgreSQL, MySQL,
	// SQLite).
	LimitClause Limit = iota
	// LimitTop follows SELECT with TOP (n) (SQL Server).
	LimitTop
)

// Dialect is what the statements of this package need to know about a
// database's SQL.
type Dialect struct {
	// Name names the dialect in messages.
	Name string
	// Open and Close delimit an identifier; a Close inside the name is
	// doubled, which every one of these databases reads as one.
	Open, Close byte
	// Numbered says placeholders carry their parameter's number ($1,
	// @p1), so a parameter used twice is written twice with one number;
	// otherwise they are a bare ? each, bound in order of appearance.
	Numbered bool
	// Prefix comes before a numbered placeholder's number ("$", "@p"), or
	// is the whole placeholder when it is not numbered ("?").
	Prefix string
	// Limit is where a row limit goes.
	Limit Limit
	// BackslashEscapes says a backslash escapes the next character in a
	// string literal (MySQL's default sql_mode); PostgreSQL's E'…'
	// strings are recognised whatever this says.
	BackslashEscapes bool
	// DollarQuotes says $tag$…$tag$ is a string (PostgreSQL).
	DollarQuotes bool
	// Brackets says […] delimits an identifier (SQL Server); Open and
	// Close are then '[' and ']'.
	Brackets bool
	// HashComments says # starts a comment to the end of the line (MySQL).
	HashComments bool
	// NestedComments says /* … */ comments nest (PostgreSQL, SQL Server).
	NestedComments bool
	// Batches says a script is cut into batches by lines that hold only
	// GO, and a semicolon ends nothing: each batch goes to the server
	// whole, as sqlcmd and SSMS send it (SQL Server).
	Batches bool
	// Delimiters says a DELIMITER line of a script changes what ends a
	// statement until the next one, as the mysql client reads it (MySQL).
	Delimiters bool
}

// The dialects of the four SQL drivers.
var (
	// Postgres quotes with double quotes and numbers its parameters $1, $2,
	// …. The driver folds names to lower case before quoting them, as
	// PostgreSQL folds unquoted ones.
	Postgres = Dialect{Name: "PostgreSQL", Open: '"', Close: '"', Numbered: true, Prefix: "$", Limit: LimitClause, DollarQuotes: true, NestedComments: true}
	// MySQL quotes with backticks; its placeholders are ?.
	MySQL = Dialect{Name: "MySQL", Open: '`', Close: '`', Prefix: "?", Limit: LimitClause, BackslashEscapes: true, HashComments: true, Delimiters: true}
	// SQLite quotes with double quotes; its placeholders are ?.
	SQLite = Dialect{Name: "SQLite", Open: '"', Close: '"', Prefix: "?", Limit: LimitClause}
	// SQLServer delimits with brackets and numbers its parameters @p1,
	// @p2, …, the names go-mssqldb binds positional arguments to.
	SQLServer = Dialect{Name: "SQL Server", Open: '[', Close: ']', Numbered: true, Prefix: "@p", Limit: LimitTop, Brackets: true, NestedComments: true, Batches: true}
)

// Quote delimits one identifier. Names reach the drivers checked as plain
// identifiers (driver.CheckIdentifier), so the doubling never happens for
// them; it keeps any other name from ending the delimiters early.
func (d Dialect) Quote(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 2)
	b.WriteByte(d.Open)
	for i := 0; i < len(name); i++ {
		c := name[i]
		b.WriteByte(c)
		if c == d.Close {
			b.WriteByte(c)
		}
	}
	b.WriteByte(d.Close)
	return b.String()
}

// Qualify delimits name inside schema; an empty schema leaves the name to
// the connection's default (the search path, the user's schema).
func (d Dialect) Qualify(schema, name string) string {
	if schema == "" {
		return d.Quote(name)
	}
	return d.Quote(schema) + "." + d.Quote(name)
}

// Param writes the n-th parameter's placeholder, n counted from 1.
func (d Dialect) Param(b *strings.Builder, n int) {
	b.WriteString(d.Prefix)
	if d.Numbered {
		b.WriteString(strconv.Itoa(n))
	}
}
