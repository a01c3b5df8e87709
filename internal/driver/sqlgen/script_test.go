package sqlgen

import (
	"fmt"
	"strings"
	"testing"
)

// st is a Statement in a test table: its line, then its text.
func st(line int, text string) Statement { return Statement{Text: text, Line: line} }

// TestScript pins how each dialect cuts scripts: every statement's text
// and line, written out whole.
func TestScript(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Dialect
		in   string
		want []Statement
	}{
		{"plain statements, blanks and comments dropped", Postgres,
			"-- set up\n\nCREATE TABLE t (a int);;\n  INSERT INTO t VALUES (1) ; /* done */\n-- only a comment;\n",
			[]Statement{st(3, "CREATE TABLE t (a int)"), st(4, "INSERT INTO t VALUES (1)")}},
		{"a comment inside a statement stays", SQLite,
			"SELECT 1, -- one\n 2 /* two */ + 3; -- after\n",
			[]Statement{st(1, "SELECT 1, -- one\n 2 /* two */ + 3")}},
		{"no final semicolon", MySQL, "SELECT 1;\nSELECT 2\n", []Statement{st(1, "SELECT 1"), st(2, "SELECT 2")}},
		{"semicolons in strings, names and comments", Postgres,
			"SELECT ';', \"a;b\", E'\\';' /* ; /* ; */ ; */ FROM t; SELECT 2",
			[]Statement{st(1, "SELECT ';', \"a;b\", E'\\';' /* ; /* ; */ ; */ FROM t"), st(1, "SELECT 2")}},
		{"postgres DO block", Postgres,
			"CREATE TABLE t (a int);\nDO $$\nBEGIN\n  INSERT INTO t VALUES (1);\n  INSERT INTO t VALUES (2);\nEND\n$$;\nSELECT count(*) FROM t;",
			[]Statement{
				st(1, "CREATE TABLE t (a int)"),
				st(2, "DO $$\nBEGIN\n  INSERT INTO t VALUES (1);\n  INSERT INTO t VALUES (2);\nEND\n$$"),
				st(8, "SELECT count(*) FROM t"),
			}},
		{"postgres plpgsql function in a tagged dollar quote", Postgres,
			"CREATE FUNCTION f(x int) RETURNS int AS $body$\nDECLARE y int := $$;$$;\nBEGIN\n  RETURN x + 1;\nEND;\n$body$ LANGUAGE plpgsql;\nSELECT f(1);",
			[]Statement{
				st(1, "CREATE FUNCTION f(x int) RETURNS int AS $body$\nDECLARE y int := $$;$$;\nBEGIN\n  RETURN x + 1;\nEND;\n$body$ LANGUAGE plpgsql"),
				st(7, "SELECT f(1)"),
			}},
		{"postgres BEGIN ATOMIC", Postgres,
			"CREATE FUNCTION g(x int) RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT x;\n  SELECT CASE WHEN x > 0 THEN x ELSE 0 END;\nEND;\nSELECT g(2);",
			[]Statement{
				st(1, "CREATE FUNCTION g(x int) RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT x;\n  SELECT CASE WHEN x > 0 THEN x ELSE 0 END;\nEND"),
				st(6, "SELECT g(2)"),
			}},
		{"postgres transaction statements", Postgres,
			"BEGIN;\nUPDATE t SET a = 1;\nCOMMIT;\nBEGIN ISOLATION LEVEL SERIALIZABLE;\nSELECT 1;\nEND;\nbegin\n;\nSTART TRANSACTION READ ONLY; BEGIN WORK; ROLLBACK; BEGIN",
			[]Statement{
				st(1, "BEGIN"), st(2, "UPDATE t SET a = 1"), st(3, "COMMIT"),
				st(4, "BEGIN ISOLATION LEVEL SERIALIZABLE"), st(5, "SELECT 1"), st(6, "END"),
				st(7, "begin"), st(9, "START TRANSACTION READ ONLY"), st(9, "BEGIN WORK"), st(9, "ROLLBACK"), st(9, "BEGIN"),
			}},
		{"pg_hint_plan hint and quoted BEGIN and END", Postgres,
			"/*+ SeqScan(t) */ SELECT \"begin\" FROM t WHERE x = 'END';\nSELECT t.end, \"case\" FROM t;",
			[]Statement{st(1, "/*+ SeqScan(t) */ SELECT \"begin\" FROM t WHERE x = 'END'"), st(2, "SELECT t.end, \"case\" FROM t")}},
		{"begin as a column's name", MySQL,
			"SELECT begin, x FROM t WHERE begin BETWEEN 1 AND 2; SELECT begin FROM t; SELECT 3",
			[]Statement{st(1, "SELECT begin, x FROM t WHERE begin BETWEEN 1 AND 2"), st(1, "SELECT begin FROM t"), st(1, "SELECT 3")}},
		{"postgres begin as a column's name", Postgres,
			"CREATE TABLE ev (begin int, stop int);\nSELECT begin stop FROM ev; SELECT 2",
			[]Statement{st(1, "CREATE TABLE ev (begin int, stop int)"), st(2, "SELECT begin stop FROM ev"), st(2, "SELECT 2")}},
		{"CASE expressions in a SELECT", MySQL,
			"SELECT CASE a WHEN 1 THEN 'x;' ELSE CASE WHEN b THEN 'y' END END AS c FROM t; SELECT 2;",
			[]Statement{st(1, "SELECT CASE a WHEN 1 THEN 'x;' ELSE CASE WHEN b THEN 'y' END END AS c FROM t"), st(1, "SELECT 2")}},
		{"sqlite trigger", SQLite,
			"BEGIN IMMEDIATE;\nCREATE TABLE log (n int);\nCREATE TRIGGER tr AFTER INSERT ON t\nBEGIN\n  INSERT INTO log VALUES (new.a);\n  SELECT CASE WHEN new.a < 0 THEN RAISE(ABORT, 'negative') END;\nEND;\nEND TRANSACTION;\nBEGIN DEFERRED TRANSACTION; COMMIT;",
			[]Statement{
				st(1, "BEGIN IMMEDIATE"), st(2, "CREATE TABLE log (n int)"),
				st(3, "CREATE TRIGGER tr AFTER INSERT ON t\nBEGIN\n  INSERT INTO log VALUES (new.a);\n  SELECT CASE WHEN new.a < 0 THEN RAISE(ABORT, 'negative') END;\nEND"),
				st(8, "END TRANSACTION"), st(9, "BEGIN DEFERRED TRANSACTION"), st(9, "COMMIT"),
			}},
		{"mysql procedure without DELIMITER", MySQL,
			"CREATE PROCEDURE p(IN n INT)\nBEGIN\n  DECLARE i INT DEFAULT 0;\n  IF n > 0 THEN\n    SET i = n; # count down\n  END IF;\n  lbl: WHILE i > 0 DO\n    SET i = i - 1;\n  END WHILE lbl;\n  CASE i WHEN 0 THEN SELECT 'done'; ELSE SELECT 'no'; END CASE;\n  REPEAT SET i = i + 1; UNTIL i > 2 END REPEAT;\n  l2: LOOP LEAVE l2; END LOOP;\nEND;\nCALL p(3);",
			[]Statement{
				st(1, "CREATE PROCEDURE p(IN n INT)\nBEGIN\n  DECLARE i INT DEFAULT 0;\n  IF n > 0 THEN\n    SET i = n; # count down\n  END IF;\n  lbl: WHILE i > 0 DO\n    SET i = i - 1;\n  END WHILE lbl;\n  CASE i WHEN 0 THEN SELECT 'done'; ELSE SELECT 'no'; END CASE;\n  REPEAT SET i = i + 1; UNTIL i > 2 END REPEAT;\n  l2: LOOP LEAVE l2; END LOOP;\nEND"),
				st(14, "CALL p(3)"),
			}},
		{"mysql DELIMITER", MySQL,
			"DROP PROCEDURE IF EXISTS p;\nDELIMITER //\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT '//';\nEND //\nCALL p()//\ndelimiter ;\nCALL p();\n",
			[]Statement{
				st(1, "DROP PROCEDURE IF EXISTS p"),
				st(3, "CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT '//';\nEND"),
				st(8, "CALL p()"), st(10, "CALL p()"),
			}},
		{"mysql DELIMITER quoted, words and blocks not counted under it", MySQL,
			"DELIMITER 'go'\nSELECT 1; END; SELECT 2 go SELECT 3 BEGIN go\nDELIMITER ; # back\nSELECT 4;",
			[]Statement{st(2, "SELECT 1; END; SELECT 2"), st(2, "SELECT 3 BEGIN"), st(4, "SELECT 4")}},
		{"mysql transactions and executable comments", MySQL,
			"/*!40101 SET NAMES utf8mb4 */;\nBEGIN;\nBEGIN WORK;\nXA BEGIN 'x';\nBEGIN NOT ATOMIC SELECT 1; SELECT 2; END;\n",
			[]Statement{
				st(1, "/*!40101 SET NAMES utf8mb4 */"), st(2, "BEGIN"), st(3, "BEGIN WORK"), st(4, "XA BEGIN 'x'"),
				st(5, "BEGIN NOT ATOMIC SELECT 1; SELECT 2; END"),
			}},
		{"a statement's first BEGIN is a transaction's, even without its semicolon", SQLite,
			"BEGIN\nINSERT INTO t VALUES (1);\nCOMMIT;",
			[]Statement{st(1, "BEGIN\nINSERT INTO t VALUES (1)"), st(3, "COMMIT")}},
		{"sql server GO batches", SQLServer,
			"CREATE TABLE t (a int);\nINSERT INTO t VALUES (1);\nGO\nCREATE PROCEDURE p AS\nBEGIN\n  SET NOCOUNT ON;\n  SELECT a FROM t;\nEND;\n  go  -- the procedure\nEXEC p;\nGO\n",
			[]Statement{
				st(1, "CREATE TABLE t (a int);\nINSERT INTO t VALUES (1);"),
				st(4, "CREATE PROCEDURE p AS\nBEGIN\n  SET NOCOUNT ON;\n  SELECT a FROM t;\nEND;"),
				st(10, "EXEC p;"),
			}},
		{"sql server GO inside a string or comment", SQLServer,
			"SELECT 'a\nGO\nb';\n/*\nGO\n*/\nSELECT [x\nGO];\nSELECT 1 GO\nGOTO l\nGO\n",
			[]Statement{st(1, "SELECT 'a\nGO\nb';\n/*\nGO\n*/\nSELECT [x\nGO];\nSELECT 1 GO\nGOTO l")}},
		{"sql server without GO is one batch", SQLServer,
			"BEGIN TRAN;\nUPDATE t SET a = 1;\nCOMMIT;", []Statement{st(1, "BEGIN TRAN;\nUPDATE t SET a = 1;\nCOMMIT;")}},
		{"CRLF line endings", Postgres,
			"-- one\r\nSELECT 1;\r\n\r\nDO $$\r\nBEGIN\r\nEND $$;\r\n  SELECT\r\n 2;\r\n",
			[]Statement{st(2, "SELECT 1"), st(4, "DO $$\r\nBEGIN\r\nEND $$"), st(7, "SELECT\r\n 2")}},
		{"CRLF GO lines", SQLServer,
			"SELECT 1\r\nGO\r\n\r\nSELECT 2\r\nGo\r\n",
			[]Statement{st(1, "SELECT 1"), st(4, "SELECT 2")}},
		{"CRLF DELIMITER lines", MySQL,
			"DELIMITER //\r\nSELECT 1; SELECT 2//\r\nDELIMITER ;\r\nSELECT 3;\r\n",
			[]Statement{st(2, "SELECT 1; SELECT 2"), st(4, "SELECT 3")}},
		{"only comments", MySQL, "# one\n-- two\n/* three */;\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Script(tc.d, tc.in)
			if err != nil {
				t.Fatalf("%s: %v", tc.d.Name, err)
			}
			if g, w := render(got), render(tc.want); g != w {
				t.Errorf("%s: Script(%q)\n--- got\n%s--- want\n%s", tc.d.Name, tc.in, g, w)
			}
		})
	}
}

// render lays statements out one per paragraph, for a readable diff.
func render(stmts []Statement) string {
	var b strings.Builder
	for _, s := range stmts {
		fmt.Fprintf(&b, "line %d: %q\n", s.Line, s.Text)
	}
	return b.String()
}

func TestScriptErrors(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		in   string
		want string
	}{
		{Postgres, "SELECT 1;\nSELECT 'abc;\nSELECT 2;", "a string opened on line 2 is not closed"},
		{Postgres, "SELECT 1;\r\n\r\nDO $$ BEGIN END;", "a $$ string opened on line 3 is not closed"},
		{MySQL, "SELECT 1;\n/* SELECT 2;", "a /* comment opened on line 2 is not closed"},
		{SQLServer, "SELECT 1\nGO\nSELECT [a", "a bracketed name opened on line 3 is not closed"},
		{SQLite, "SELECT 1;\nCREATE TRIGGER tr AFTER INSERT ON t\nBEGIN\n  SELECT 1;\n", "a BEGIN block opened on line 3 is not closed by its END"},
		{MySQL, "CREATE PROCEDURE p() BEGIN\n  IF 1 THEN SELECT 1; END IF;\n", "a BEGIN block opened on line 1 is not closed by its END"},
		{Postgres, "SELECT 1;\n\nCREATE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC\n  SELECT 1;\n", "a BEGIN block opened on line 3 is not closed by its END"},
		{Postgres, "SELECT 1;\nSELECT CASE WHEN true THEN 1;\nSELECT 2;", "a CASE opened on line 2 is not closed by its END"},
		{SQLServer, "SELECT 1\nGO\nSELECT 2\nGO 5\n", "GO 5 on line 4 runs its batch 5 times, which dbprobe does not do: write the batch out that many times"},
		{MySQL, "DELIMITER\nSELECT 1;", "DELIMITER on line 1 should name one delimiter, as in DELIMITER //"},
		{MySQL, "SELECT 1;\nDELIMITER \\\\\n", "DELIMITER on line 2 names a delimiter with a backslash, which the mysql client refuses too: choose another, as in DELIMITER //"},
		{MySQL, "DELIMITER '//\n", "a string opened on line 1 is not closed"},
		{MySQL, "DELIMITER ''''\n", "DELIMITER on line 1 names no delimiter dbprobe can read: write it without quotes, as in DELIMITER //"},
	} {
		_, err := Script(tc.d, tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s Script(%q) = %v, want %q", tc.d.Name, tc.in, err, tc.want)
		}
	}
}

// FuzzScript checks what holds for any script in every dialect: no
// panic; the statements are pieces of the script, in order, each trimmed
// and on a line of it; and in the dialects where only semicolons cut,
// the statements joined by semicolons cut the same again.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		"SELECT 1; SELECT ';' -- ;\n; /* ; */",
		"DO $$ BEGIN PERFORM 1; END $$; BEGIN; END;",
		"CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT CASE WHEN 1 THEN 2 END; END; BEGIN IMMEDIATE;",
		"DELIMITER //\nCREATE PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END IF; END//\nDELIMITER ;\nCALL p();",
		"SELECT 1;\r\nGO\r\nSELECT '\nGO\n'\n  go -- x\nGO 2\n",
		"/*!40101 SET x = 1 */; /*+ hint */ SELECT [a;b], `c;d`, \"e;f\", E'\\';'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		for _, d := range []Dialect{Postgres, MySQL, SQLite, SQLServer} {
			got, err := Script(d, text)
			if err != nil {
				continue
			}
			at, line := 0, 1
			for _, s := range got {
				// The lexers of all four databases take only ASCII blanks as
				// white space; U+0085 is an identifier character to them.
				if s.Text == "" || strings.Trim(s.Text, " \t\n\r\v\f") != s.Text {
					t.Fatalf("%s: statement %q is not trimmed", d.Name, s.Text)
				}
				i := strings.Index(text[at:], s.Text)
				if i < 0 {
					t.Fatalf("%s: statement %q is not in the script after offset %d: %q", d.Name, s.Text, at, text)
				}
				if s.Line < line || s.Line > lines {
					t.Fatalf("%s: statement %q on line %d, after line %d of %d", d.Name, s.Text, s.Line, line, lines)
				}
				at, line = at+i+len(s.Text), s.Line
			}
			if d.Batches || d.Delimiters {
				continue
			}
			var joined strings.Builder
			for _, s := range got {
				joined.WriteString(s.Text)
				joined.WriteString(";\n")
			}
			again, err := Script(d, joined.String())
			if err != nil {
				t.Fatalf("%s: the statements of %q joined fail: %v", d.Name, text, err)
			}
			if render(again) != render(renumber(got)) {
				t.Fatalf("%s: the statements of %q joined cut differently:\n%s---\n%s", d.Name, text, render(again), render(renumber(got)))
			}
		}
	})
}

// renumber gives statements the lines they have when written one after
// the other, each followed by ";\n".
func renumber(stmts []Statement) []Statement {
	out := make([]Statement, len(stmts))
	line := 1
	for i, s := range stmts {
		out[i] = Statement{Text: s.Text, Line: line}
		line += strings.Count(s.Text, "\n") + 1
	}
	return out
}
