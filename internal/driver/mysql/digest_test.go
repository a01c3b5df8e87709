package mysql

import (
	"strings"
	"testing"
)

// The digest texts are MariaDB 10.11's, read from
// events_statements_summary_by_digest after running each statement with
// its parameters interpolated.
func TestDigestKey(t *testing.T) {
	for _, tc := range []struct{ stmt, digest string }{
		{"select id, body from notes where id = ? /* c */ and body <> 'x' -- tail", "SELECT ID , BODY FROM `notes` WHERE ID = ? AND BODY != ? "},
		{"SELECT `id` FROM notes WHERE id IN (?, ?, ?) AND n > -5 AND body = \"dq\"", "SELECT `id` FROM `notes` WHERE ID IN (...) AND `n` > - ? AND BODY = ? "},
		{"update notes set body = concat(?, 'a'), n = n + 1 where id = ?", "UPDATE `notes` SET BODY = `concat` (...) , `n` = `n` + ? WHERE ID = ? "},
		{"insert into notes (id, body, n) values (?, ?, 1.5e3), (?, ?, null) on duplicate key update n = values(n)", "INSERT INTO `notes` ( ID , BODY , `n` ) VALUES (...) /* , ... */ ON DUPLICATE KEY UPDATE `n` = VALUES ( `n` ) "},
		{"SELECT COUNT(*) FROM notes n1 JOIN notes n2 ON n1.id=n2.id WHERE n1.body LIKE ?", "SELECT COUNT ( * ) FROM `notes` `n1` JOIN `notes` `n2` ON `n1` . `id` = `n2` . `id` WHERE `n1` . `body` LIKE ? "},
		{"delete from notes where id = ? and n is not null", "DELETE FROM `notes` WHERE ID = ? AND `n` IS NOT NULL "},
		{"SELECT @@version, x'41', _utf8mb4'a', n - 1 FROM t", "SELECT @@`version` , ? , ? , `n` - ? FROM `t` "},
	} {
		if got, want := digestKey(tc.stmt), digestKey(tc.digest); got != want {
			t.Errorf("%s\n  key    %s\n  digest %s", tc.stmt, got, want)
		}
		if !digestMatches(digestKey(tc.stmt), tc.digest) {
			t.Errorf("%s does not match %s", tc.stmt, tc.digest)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"SELECT a FROM t WHERE id = ?", "SELECT b FROM t WHERE id = ?"},
		{"SELECT a - 1 FROM t", "SELECT a 1 FROM t"},
		{"SELECT a FROM t WHERE id IN (?, ?)", "SELECT a FROM t WHERE id IN (?, b)"},
		{"UPDATE t SET a = ?", "DELETE FROM t WHERE a = ?"},
	} {
		if digestKey(tc.a) == digestKey(tc.b) {
			t.Errorf("%q and %q have the same key %q", tc.a, tc.b, digestKey(tc.a))
		}
	}
	long := "SELECT " + strings.Repeat("`a_column_name`, ", 60) + "`z` FROM `t`"
	cut := "SELECT " + strings.Repeat("`a_column_name` , ", 40) + "`a_col..."
	if !digestMatches(digestKey(long), cut) {
		t.Errorf("a digest text cut short does not match the statement it starts")
	}
	if digestMatches(digestKey("SELECT `b` FROM `t`"), cut) {
		t.Errorf("a digest text cut short matches another statement")
	}
}

// FuzzDigestKey: any text has a key, the same each time, and a statement
// always matches itself as a digest text.
func FuzzDigestKey(f *testing.F) {
	for _, s := range []string{"SELECT 1", "select `a``b` from t where x = 'it''s' -- c", "/* open", "'open", "VALUES (?, ?), (?, ?)", "x'", "- - ?", "(...)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := digestKey(s)
		if digestKey(s) != k {
			t.Errorf("two keys of %q", s)
		}
		if !digestMatches(k, s) && !strings.HasSuffix(strings.TrimRight(s, " "), "...") {
			t.Errorf("%q does not match itself", s)
		}
	})
}
