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
	line := 1
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			line++
			b.WriteByte(c)
			i++
			continue
		case c == '\'':
			backslash := d.BackslashEscapes || (d.DollarQuotes && i > 0 && (text[i-1] == 'E' || text[i-1] == 'e') && (i < 2 || !isIdent(text[i-2])))
			end, err := closeQuote(text, i, '\'', backslash, "string", line)
			if err != nil {
				return Bound{}, err
			}
			line += strings.Count(text[i:end], "\n")
			b.WriteString(text[i:end])
			i = end
			continue
		case c == '"':
			end, err := closeQuote(text, i, '"', d.BackslashEscapes, "quoted name", line)
			if err != nil {
				return Bound{}, err
			}
			line += strings.Count(text[i:end], "\n")
			b.WriteString(text[i:end])
			i = end
			continue
		case c == '`' && d.Open == '`':
			end, err := closeQuote(text, i, '`', false, "quoted name", line)
			if err != nil {
				return Bound{}, err
			}
			line += strings.Count(text[i:end], "\n")
			b.WriteString(text[i:end])
			i = end
			continue
		case c == '[' && d.Brackets:
			end, err := closeQuote(text, i, ']', false, "bracketed name", line)
			if err != nil {
				return Bound{}, err
			}
			line += strings.Count(text[i:end], "\n")
			b.WriteString(text[i:end])
			i = end
			continue
		case c == '-' && strings.HasPrefix(text[i:], "--"), c == '#' && d.HashComments:
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			b.WriteString(text[i : i+end])
			i += end
			continue
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end, err := closeComment(text, i, d.NestedComments, line)
			if err != nil {
				return Bound{}, err
			}
			line += strings.Count(text[i:end], "\n")
			b.WriteString(text[i:end])
			i = end
			continue
		case c == '$' && d.DollarQuotes && (i == 0 || !isIdent(text[i-1])):
			if tag, ok := dollarTag(text[i:]); ok {
				end := strings.Index(text[i+len(tag):], tag)
				if end < 0 {
					return Bound{}, fmt.Errorf("a %s string opened on line %d is not closed", tag, line)
				}
				end += i + 2*len(tag)
				line += strings.Count(text[i:end], "\n")
				b.WriteString(text[i:end])
				i = end
				continue
			}
		case c == ':' && i+1 < len(text) && isNameStart(text[i+1]) && (i == 0 || text[i-1] != ':'):
			j := i + 2
			for j < len(text) && isName(text[j]) {
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
			continue
		}
		b.WriteByte(c)
		i++
	}
	out.Text = b.String()
	return out, nil
}

// closeQuote returns the index just past the quote that closes the one
// opened at text[start] (a doubled closing quote stands for one, and with
// backslash a backslash escapes the next byte).
func closeQuote(text string, start int, closing byte, backslash bool, what string, line int) (int, error) {
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
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("a %s opened on line %d is not closed", what, line)
}

// closeComment returns the index just past the */ that closes the comment
// opened at text[start]; nested counts inner /* … */ pairs.
func closeComment(text string, start int, nested bool, line int) (int, error) {
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
				return i + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("a /* comment opened on line %d is not closed", line)
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
