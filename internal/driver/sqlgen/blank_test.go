package sqlgen

import (
	"strings"
	"testing"
)

func TestCommentsOnly(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		text string
		want bool
	}{
		{SQLite, "", true},
		{SQLite, " \n\t", true},
		{SQLite, "/*+ hint */", true},
		{SQLite, "/*! SET NAMES utf8 */ -- and a line", true},
		{SQLite, "-- one\n/* two */\n", true},
		{Postgres, "/* outer /* nested */ still */", true},
		{MySQL, "# hash\n/*M! x */", true},
		{SQLite, "/*+ hint */ SELECT 1", false},
		{SQLite, "'/* a string */'", false},
		{SQLite, `"name"`, false},
		{SQLite, ";", false},
		{SQLite, "/* open", false},
		{Postgres, "$$ -- $$", false},
		{SQLite, "# not a comment in SQLite", false},
	} {
		if got := CommentsOnly(tc.d, tc.text); got != tc.want {
			t.Errorf("%s %q: %v, want %v", tc.d.Name, tc.text, got, tc.want)
		}
	}
}

// FuzzCommentsOnly holds CommentsOnly against Script: text of comments
// only gives no statement but kept comments (hints, executable ones).
func FuzzCommentsOnly(f *testing.F) {
	for _, s := range []string{"/*+ h */", "-- x\n", "/*! a */;/* b */", "SELECT 1 -- x", "'--'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, d := range []Dialect{Postgres, MySQL, SQLite, SQLServer} {
			if !CommentsOnly(d, text) {
				continue
			}
			stmts, err := Script(d, text)
			if err != nil {
				continue
			}
			for _, st := range stmts {
				if !strings.HasPrefix(st.Text, "/*") {
					t.Errorf("%s %q: comments only, but Script finds %q", d.Name, text, st.Text)
				}
			}
		}
	})
}
