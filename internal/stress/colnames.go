package stress

import (
	"fmt"
	"strings"
	"unicode"
)

// columnNames returns the names of the columns a --params-query returns,
// read from its select list: an item's alias (AS name, or a name after
// the expression), else the column it names (t.id is id). SQLConn gives a
// row's values without their names, so the names are the query's own
// words. An item without a name (an expression without an alias, *) is
// an error saying to name it.
func columnNames(query string) ([]string, error) {
	items, err := selectList(query)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, it := range items {
		words := tokens(it)
		if len(words) == 0 {
			return nil, fmt.Errorf("an empty item in the select list")
		}
		last := words[len(words)-1]
		var name string
		switch {
		case len(words) >= 2 && strings.EqualFold(words[len(words)-2], "AS"):
			name = unquote(last)
		case len(words) >= 2 && isNameToken(last) && !isOperator(words[len(words)-2]):
			name = unquote(last)
		case len(words) == 1 && isNameToken(last):
			name = unquote(last)
			if k := strings.LastIndexByte(name, '.'); k >= 0 {
				name = unquote(name[k+1:])
			}
		}
		if strings.HasSuffix(strings.TrimSpace(it), "*") {
			return nil, fmt.Errorf("the select list has *: give the columns by name (SELECT id, name FROM …), whose names are the parameters'")
		}
		if !isParamName(name) {
			return nil, fmt.Errorf("the select list item %q has no name a parameter can take: give it one with AS, e.g. %s AS value", strings.TrimSpace(it), strings.TrimSpace(it))
		}
		names = append(names, name)
	}
	return names, nil
}

// selectList returns the items of the query's first select list, split
// on the commas outside parentheses, quotes and comments.
func selectList(q string) ([]string, error) {
	var items []string
	depth, start := 0, -1
	upper := asciiUpper(q)
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closing := c
			if c == '[' {
				closing = ']'
			}
			j := strings.IndexByte(q[i+1:], closing)
			if j < 0 {
				return nil, fmt.Errorf("a quote is not closed")
			}
			i += j + 1
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("a comment is not closed")
			}
			i += j + 1
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && start < 0 && keywordAt(upper, i, "SELECT"):
			start = i + len("SELECT")
			if keywordAt(upper, skipSpace(upper, start), "DISTINCT") {
				start = skipSpace(upper, start) + len("DISTINCT")
			}
			i = start - 1
		case depth == 0 && start >= 0 && c == ',':
			items = append(items, q[start:i])
			start = i + 1
		case depth == 0 && start >= 0 && (keywordAt(upper, i, "FROM") || keywordAt(upper, i, "WHERE") ||
			keywordAt(upper, i, "UNION") || keywordAt(upper, i, "ORDER") || keywordAt(upper, i, "LIMIT") || keywordAt(upper, i, "INTO") || c == ';'):
			return append(items, q[start:i]), nil
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("it is not a SELECT: give a query whose columns name the parameters, e.g. SELECT id FROM t")
	}
	return append(items, q[start:]), nil
}

// keywordAt reports whether the word kw starts at i of upper, on word
// boundaries.
func keywordAt(upper string, i int, kw string) bool {
	if !strings.HasPrefix(upper[i:], kw) {
		return false
	}
	before := i == 0 || !isWordByte(upper[i-1])
	after := i+len(kw) >= len(upper) || !isWordByte(upper[i+len(kw)])
	return before && after
}

func skipSpace(s string, i int) int {
	for i < len(s) && unicode.IsSpace(rune(s[i])) {
		i++
	}
	return i
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c >= 0x80
}

// tokens splits a select list item into words: names (dotted and quoted
// ones whole), and each other character on its own.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '"' || c == '`' || c == '[' || isWordByte(c):
			j := i
			for j < len(s) {
				switch d := s[j]; {
				case d == '"' || d == '`' || d == '[':
					closing := d
					if d == '[' {
						closing = ']'
					}
					k := strings.IndexByte(s[j+1:], closing)
					if k < 0 {
						j = len(s)
					} else {
						j += k + 2
					}
				case isWordByte(d):
					j++
				default:
					goto done
				}
			}
		done:
			out = append(out, s[i:j])
			i = j
		case c == '\'':
			k := strings.IndexByte(s[i+1:], '\'')
			if k < 0 {
				k = len(s) - i - 2
			}
			out = append(out, s[i:i+k+2])
			i += k + 2
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

// isNameToken reports whether a token is a name (plain or quoted), not a
// number, a string or an operator.
func isNameToken(t string) bool {
	if t == "" {
		return false
	}
	c := t[0]
	return c == '"' || c == '`' || c == '[' || c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c >= 0x80
}

// isOperator reports whether a token joins expressions, so that the name
// after it is part of the expression, not an alias.
func isOperator(t string) bool {
	switch strings.ToUpper(t) {
	case "+", "-", "*", "/", "%", "|", "&", "^", "=", "<", ">", "!", "~", ":", "(", ",", "AND", "OR", "NOT", "IS", "IN", "LIKE", "THEN", "ELSE", "WHEN", "CASE", "DISTINCT":
		return true
	}
	return false
}

// unquote drops the quotes around a quoted name.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '`' && s[len(s)-1] == '`' || s[0] == '[' && s[len(s)-1] == ']') {
		return s[1 : len(s)-1]
	}
	return s
}

// asciiUpper upper-cases the ASCII letters of s alone, so that every byte
// stays where it was (strings.ToUpper may change an invalid byte's width).
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
