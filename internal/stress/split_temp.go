package stress

import (
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// splitScript is TEMPORARY, until the dialect-aware SplitScript lands
// (branch lexer): it splits text on semicolons outside single quotes,
// double quotes and -- and /* */ comments, which is enough for the tests'
// scripts and no more. It is deleted when SplitScript is merged.
func splitScript(_ driver.SQLRunner, text string) ([]driver.ScriptStatement, error) {
	var out []driver.ScriptStatement
	line, start, startLine := 1, 0, 1
	flush := func(end int) {
		st := strings.TrimSpace(stripComments(text[start:end]))
		if st != "" {
			// The statement's line: skip the blank lines and comments before it.
			lead := text[start:end]
			off := strings.Index(lead, firstCode(lead))
			out = append(out, driver.ScriptStatement{Text: strings.TrimSpace(lead[off:]), Line: startLine + strings.Count(lead[:off], "\n")})
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			line++
		case c == '\'' || c == '"':
			j := strings.IndexByte(text[i+1:], c)
			if j < 0 {
				i = len(text)
				break
			}
			line += strings.Count(text[i:i+1+j], "\n")
			i += j + 1
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				i = len(text)
				break
			}
			i += j - 1
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i:], "*/")
			if j < 0 {
				i = len(text)
				break
			}
			line += strings.Count(text[i:i+j], "\n")
			i += j + 1
		case c == ';':
			flush(i)
			start, startLine = i+1, line
		}
	}
	flush(len(text))
	return out, nil
}

// stripComments drops -- and /* */ comments, for telling a statement
// from none.
func stripComments(s string) string {
	for {
		i := strings.Index(s, "/*")
		j := strings.Index(s, "*/")
		if i < 0 || j < i {
			break
		}
		s = s[:i] + s[j+2:]
	}
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if k := strings.Index(l, "--"); k >= 0 && !strings.ContainsAny(l[:k], `'"`) {
			l = l[:k]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// firstCode returns the first line of s that holds code.
func firstCode(s string) string {
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "--") && !strings.HasPrefix(t, "/*") {
			return t
		}
	}
	return strings.TrimSpace(s)
}
