package driver

import (
	"strconv"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// MaxIdentifier is the longest table or column name dbprobe uses: 63
// bytes, PostgreSQL's limit and within every other database's.
const MaxIdentifier = 63

// CheckIdentifier reports, as a badinput error, a name that is not a plain
// identifier: an ASCII letter or underscore, then ASCII letters, digits and
// underscores, at most MaxIdentifier bytes. Such a name needs no quoting in
// any database dbprobe drives, so quoting it anyway can never be escaped
// from, and it folds the same way everywhere. what names the name in the
// message ("table", "column").
func CheckIdentifier(what, name string) error {
	if plainIdentifier(name) {
		return nil
	}
	// Quoted in ASCII and cut short, so that a name with control or
	// look-alike characters, or a very long one, stays one readable line.
	shown, cut := name, ""
	if len(shown) > MaxIdentifier+8 {
		shown, cut = shown[:MaxIdentifier+8], "…"
	}
	return badinput.New("%s name %s%s is not a plain identifier; use ASCII letters, digits and _ (starting with a letter or _), at most %d characters",
		what, strconv.QuoteToASCII(shown), cut, MaxIdentifier)
}

func plainIdentifier(s string) bool {
	if s == "" || len(s) > MaxIdentifier {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CheckTable checks every name of t with CheckIdentifier. Each driver calls
// it before it puts a name into SQL text or a key, whoever built the Table:
// the configuration validates the names the user gives, and this keeps a
// driver safe from a caller that did not.
func CheckTable(t Table) error {
	if err := CheckIdentifier("table", t.Name); err != nil {
		return err
	}
	if err := CheckIdentifier("key column", t.KeyColumn); err != nil {
		return err
	}
	for _, f := range t.Fields {
		if err := CheckIdentifier("field column", f); err != nil {
			return err
		}
	}
	return nil
}
