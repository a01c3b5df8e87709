package sqlgen

import (
	"fmt"
	"strings"
)

// Bound is SQL text whose :name parameters were replaced by a dialect's
// placeholders.
type Bound struct {
	// Text is the statement to prepare.
	Text string
	// Names are the parameters, each once, in the order of first use.
	Names []string
	// Args says, for each positional argument the statement takes, which
	// of Names it is: 0, 1, 2, … for numbered placeholders, where a name
	// used twice is one argument; one entry per ? otherwise, so a name
	// used twice is passed twice.
	Args []int
}

// Bind replaces the :name parameters of text with d's placeholders. A
// parameter is a colon followed by a letter or an underscore, then
// letters, digits and underscores; a colon is not one inside a string, a
// quoted identifier or a comment, nor after another colon (PostgreSQL's
// ::type cast, SQL Server's SCHEMA::name), nor before = (an assignment).
// Values are therefore always bound as real parameters, never spliced into
// the text. A string, quoted identifier or comment left open is an error
// naming the line it starts on: the lexer could not tell where parameters
// may be.
func Bind(d Dialect, text string) (Bound, error) {
	var out Bound
	index := map[string]int{}
	var b strings.Builder
	b.Grow(len(text))
	code := func(start, end int) {
		for i := start; i < end; {
			c := text[i]
			if c != ':' || i+1 >= end || !isNameStart(text[i+1]) || (i > 0 && text[i-1] == ':') {
				b.WriteByte(c)
				i++
				continue
			}
			j := i + 2
			for j < end && isName(text[j]) {
				j++
			}
			name := text[i+1 : j]
			n, seen := index[name]
			if !seen {
				n = len(out.Names)
				index[name] = n
				out.Names = append(out.Names, name)
			}
			if d.Numbered {
				d.Param(&b, n+1)
				if !seen {
					out.Args = append(out.Args, n)
				}
			} else {
				d.Param(&b, 0)
				out.Args = append(out.Args, n)
			}
			i = j
		}
	}
	other := func(start, end int) { b.WriteString(text[start:end]) }
	if err := split(d, text, code, other); err != nil {
		return Bound{}, err
	}
	out.Text = b.String()
	return out, nil
}

// Strip returns text with every string, quoted name and comment replaced
// by one space: what is left is the statement's code, its keywords and
// unquoted names.
func Strip(d Dialect, text string) (string, error) {
	var b strings.Builder
	err := split(d, text, func(start, end int) { b.WriteString(text[start:end]) }, func(int, int) { b.WriteByte(' ') })
	return b.String(), err
}

// Words returns the words of text's code in upper case, in order: its
// keywords and unquoted names, split at every character that cannot be in
// one (blanks, punctuation, operators), with strings, quoted names and
// comments left out. A construct left open is Strip's error.
func Words(d Dialect, text string) ([]string, error) {
	code, err := Strip(d, text)
	if err != nil {
		return nil, err
	}
	words := strings.FieldsFunc(code, func(r rune) bool {
		return !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	for i, w := range words {
		words[i] = strings.ToUpper(w)
	}
	return words, nil
}

// rowKeywords start a statement that returns rows.
var rowKeywords = map[string]bool{
	"SELECT": true, "WITH": true, "SHOW": true, "DESCRIBE": true, "DESC": true, "EXPLAIN": true,
	"VALUES": true, "TABLE": true, "PRAGMA": true, "CALL": true, "EXEC": true, "EXECUTE": true, "FETCH": true,
}

// ReturnsRows reports whether text looks like a statement that returns
// rows: it starts (after comments and parentheses) with SELECT, WITH,
// SHOW, EXPLAIN, VALUES, CALL, EXEC, … or has a RETURNING or OUTPUT
// clause. Drivers whose library cannot give both a statement's rows and
// its count of rows changed run such a statement as a query, and any other
// as an update. A WITH … UPDATE is then a query whose count of rows
// changed is unknown.
func ReturnsRows(d Dialect, text string) bool {
	words, err := Words(d, text)
	if err != nil {
		return true // the database will say what is wrong with it
	}
	for i, w := range words {
		if i == 0 && rowKeywords[w] {
			return true
		}
		if w == "RETURNING" || (w == "OUTPUT" && d.Brackets) {
			return true
		}
	}
	return false
}

// split walks text, calling code for each run outside strings, quoted
// names and comments and other for each of those, with their offsets, in
// order. A construct left open is an error naming the line it starts on.
func split(d Dialect, text string, code, other func(start, end int)) error {
	line := 1
	from := 0 // start of the code run not yet handed over
	emit := func(start, end int) {
		if from < start {
			code(from, start)
		}
		other(start, end)
		line += strings.Count(text[start:end], "\n")
		from = end
	}
	for i := 0; i < len(text); {
		c := text[i]
		end, what := -1, ""
		switch {
		case c == '\n':
			line++
		case c == '\'':
			backslash := d.BackslashEscapes || (d.DollarQuotes && i > 0 && (text[i-1] == 'E' || text[i-1] == 'e') && (i < 2 || !isIdent(text[i-2])))
			end, what = closeQuote(text, i, '\'', backslash), "string"
		case c == '"':
			end, what = closeQuote(text, i, '"', d.BackslashEscapes), "quoted name"
		case c == '`' && d.Open == '`':
			end, what = closeQuote(text, i, '`', false), "quoted name"
		case c == '[' && d.Brackets:
			end, what = closeQuote(text, i, ']', false), "bracketed name"
		case c == '-' && strings.HasPrefix(text[i:], "--"), c == '#' && d.HashComments:
			end = strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += i
			}
			what = "comment"
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end, what = closeComment(text, i, d.NestedComments), "/* comment"
		case c == '$' && d.DollarQuotes && (i == 0 || !isIdent(text[i-1])):
			if tag, ok := dollarTag(text[i:]); ok {
				what = tag + " string"
				if e := strings.Index(text[i+len(tag):], tag); e >= 0 {
					end = i + 2*len(tag) + e
				}
			}
		}
		if what == "" || c == '\n' {
			i++
			continue
		}
		if end < 0 {
			return fmt.Errorf("a %s opened on line %d is not closed", what, line)
		}
		if from < i {
			code(from, i)
			from = i
		}
		emit(i, end)
		i = end
	}
	if from < len(text) {
		code(from, len(text))
	}
	return nil
}

// closeQuote returns the index just past the quote that closes the one
// opened at text[start] (a doubled closing quote stands for one, and with
// backslash a backslash escapes the next byte), -1 when none does.
func closeQuote(text string, start int, closing byte, backslash bool) int {
	for i := start + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			if backslash {
				i++
			}
		case closing:
			if i+1 < len(text) && text[i+1] == closing {
				i++
				continue
			}
			return i + 1
		}
	}
	return -1
}

// closeComment returns the index just past the */ that closes the comment
// opened at text[start], -1 when none does; nested counts inner /* … */
// pairs.
func closeComment(text string, start int, nested bool) int {
	depth := 0
	for i := start; i+1 < len(text); i++ {
		switch {
		case text[i] == '/' && text[i+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			i++
		case text[i] == '*' && text[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// dollarTag returns the $tag$ that s starts with, if it starts a
// PostgreSQL dollar-quoted string: $$ or $ then an identifier not
// starting with a digit then $. $1 is a parameter, not a tag.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '$':
			return s[:i+1], true
		case i == 1 && !isIdentStart(c):
			return "", false
		case !isIdent(c):
			return "", false
		}
	}
	return "", false
}

// isNameStart and isName tell the bytes of a parameter's name: ASCII
// letters, digits and underscores, not starting with a digit.
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isName(c byte) bool      { return isNameStart(c) || '0' <= c && c <= '9' }

// isIdentStart and isIdent tell the bytes of an unquoted identifier, as
// PostgreSQL reads them (any byte of a multi-byte letter, $ after the
// first), so that a $ inside a name is not taken for a dollar quote.
func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdent(c byte) bool {
	return isIdentStart(c) || '0' <= c && c <= '9' || c == '$'
}
