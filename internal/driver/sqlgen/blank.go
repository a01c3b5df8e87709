package sqlgen

import "strings"

// CommentsOnly reports whether text holds nothing but blanks and
// comments, an optimizer hint (/*+ …) or executable comment (/*! …)
// included: what a database that reads those as comments (SQLite) is
// given no statement by. A string or quoted name is not a comment; text
// with a construct left open is not reported (the database will say
// what is wrong with it).
func CommentsOnly(d Dialect, text string) bool {
	only := true
	err := split(d, text, func(start, end int) {
		// ASCII blanks only: the databases read others as code.
		if strings.Trim(text[start:end], " \t\n\r\f\v") != "" {
			only = false
		}
	}, func(start, end int) {
		if c := text[start]; c != '-' && c != '#' && c != '/' {
			only = false
		}
	})
	return err == nil && only
}
