package mysql

import (
	"strings"
)

// digestKey normalises a statement, or a performance_schema DIGEST_TEXT,
// so that a statement and its server's digest text give the same key:
// MariaDB, and MySQL before 8.0, have no STATEMENT_DIGEST() to ask.
//
// The server's digest keeps a statement's tokens with every literal made
// ?, keywords in capitals, names in backticks (or bare and capitalised
// where they are also keywords, as MariaDB's ID), comments dropped, a
// list of only literals made (...) and rows of them (...) /* , ... */ —
// which the key drops as a comment — and a negative number - ?. The key
// does the same to both sides: tokens lower-cased, quotes of names
// dropped, strings, numbers, ?, NULL, TRUE and FALSE made ?, a sign
// before a value dropped, <> made !=, a parenthesised list of only ? made
// (...), and a run of such lists separated by commas made one.
func digestKey(text string) string {
	toks := digestTokens(text)
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		// A sign before a value, where a value (not an operand) is
		// expected: "- ?" after an operator, a comma, a keyword.
		if (t == "-" || t == "+") && i+1 < len(toks) && toks[i+1] == "?" && !operand(out) {
			continue
		}
		out = append(out, t)
		// (…) of only ? and commas, or the digest's own (...): (...).
		if t == ")" {
			if j := valueList(out[:len(out)-1]); j >= 0 {
				out = append(out[:j], "(...)")
			}
		}
		if n := len(out); n >= 3 && out[n-1] == "(...)" && out[n-2] == "," && out[n-3] == "(...)" {
			out = out[:n-2]
		}
	}
	return strings.Join(out, " ")
}

// valueList returns where the "(" is when toks end with "(" followed by
// ? , ? … ? or by "...", so that the next ")" closes a list of values;
// -1 otherwise.
func valueList(toks []string) int {
	n := len(toks)
	if n >= 2 && toks[n-1] == "..." && toks[n-2] == "(" {
		return n - 2
	}
	for j := n - 1; j >= 0; j-- {
		want := "?"
		if (n-1-j)%2 == 1 {
			want = ","
		}
		switch {
		case toks[j] == "(" && j < n-1 && toks[j+1] == "?":
			if (n-1-j)%2 == 1 {
				return j
			}
			return -1
		case toks[j] != want:
			return -1
		}
	}
	return -1
}

// operand reports whether the last token ends an operand, after which a
// sign is an operator: a name, a value, a closing parenthesis.
func operand(toks []string) bool {
	if len(toks) == 0 {
		return false
	}
	last := toks[len(toks)-1]
	switch last {
	case "?", ")", "(...)", "": // "" is the name ``
		return true
	}
	c := last[0]
	return (c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80) && !signKeyword[last]
}

// signKeyword are keywords after which + or - is a sign.
var signKeyword = map[string]bool{
	"select": true, "where": true, "and": true, "or": true, "not": true, "values": true, "value": true, "set": true,
	"by": true, "limit": true, "offset": true, "when": true, "then": true, "else": true, "return": true, "between": true,
	"in": true, "is": true, "like": true, "on": true, "having": true, "interval": true, "xor": true, "div": true, "mod": true,
}

// digestTokens splits text into the key's tokens (see digestKey).
func digestTokens(text string) []string {
	var toks []string
	s := text
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			s = s[1:]
		case c == '#' || (c == '-' && strings.HasPrefix(s, "--") && (len(s) == 2 || s[2] <= ' ')):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
			} else {
				s = ""
			}
		case c == '/' && strings.HasPrefix(s, "/*"):
			if i := strings.Index(s[2:], "*/"); i >= 0 {
				s = s[i+4:]
			} else {
				s = ""
			}
		case c == '\'' || c == '"':
			s = skipQuoted(s, c)
			toks = append(toks, "?")
		case c == '`':
			i := 1
			var name strings.Builder
			for i < len(s) {
				if s[i] == '`' {
					if i+1 < len(s) && s[i+1] == '`' {
						name.WriteByte('`')
						i += 2
						continue
					}
					i++
					break
				}
				name.WriteByte(s[i])
				i++
			}
			s = s[i:]
			toks = append(toks, strings.ToLower(name.String()))
		case c >= '0' && c <= '9' || (c == '.' && len(s) > 1 && s[1] >= '0' && s[1] <= '9'):
			i := 1
			for i < len(s) && (isWord(s[i]) || s[i] == '.' || ((s[i] == '+' || s[i] == '-') && (s[i-1] == 'e' || s[i-1] == 'E'))) {
				i++
			}
			s = s[i:]
			toks = append(toks, "?")
		case isWord(c):
			i := 1
			for i < len(s) && isWord(s[i]) {
				i++
			}
			w := strings.ToLower(s[:i])
			s = s[i:]
			// x'…', b'…', n'…' and _charset'…' are literals.
			if len(s) > 0 && s[0] == '\'' && (w == "x" || w == "b" || w == "n" || w[0] == '_') {
				s = skipQuoted(s, '\'')
				w = "?"
			}
			switch w {
			case "null", "true", "false":
				w = "?"
			}
			toks = append(toks, w)
		default:
			op := string(c)
			for _, o := range []string{"...", "<=>", "->>", "<>", "!=", "<=", ">=", ":=", "||", "&&", "<<", ">>", "->", "@@"} {
				if strings.HasPrefix(s, o) {
					op = o
					break
				}
			}
			s = s[len(op):]
			if op == "<>" {
				op = "!="
			}
			toks = append(toks, op)
		}
	}
	return toks
}

// isWord reports a byte of a bare name or keyword (UTF-8 included).
func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// skipQuoted returns s after the string that starts it, quoted by q, with
// backslash escapes and doubled quotes.
func skipQuoted(s string, q byte) string {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return s[i+1:]
		}
	}
	return ""
}

// digestMatches reports whether a statement's key matches a DIGEST_TEXT's
// key; a digest text the server cut short (it ends in "...", at
// max_digest_length) matches the statements it starts.
func digestMatches(stmtKey, digestText string) bool {
	trimmed := strings.TrimRight(digestText, " ")
	if !strings.HasSuffix(trimmed, "...") || strings.HasSuffix(trimmed, "(...)") {
		return stmtKey == digestKey(digestText)
	}
	prefix := digestTokens(strings.TrimSuffix(trimmed, "..."))
	if len(prefix) > 0 {
		prefix = prefix[:len(prefix)-1] // the last token may be cut
	}
	return strings.HasPrefix(stmtKey, digestKey(strings.Join(prefix, " ")))
}
