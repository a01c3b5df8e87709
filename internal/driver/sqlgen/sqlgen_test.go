package sqlgen

import (
	"reflect"
	"strings"
	"testing"
)

func ycsb(d Dialect, schema string) *Table {
	return d.Table(schema, "usertable", "YCSB_KEY", []string{"FIELD0", "FIELD1", "FIELD2"})
}

// TestStatements pins each statement in each dialect: the texts the
// drivers' own tests and golden files pin too, written here once.
func TestStatements(t *testing.T) {
	pg, my, lite, ms := ycsb(Postgres, "public"), ycsb(MySQL, ""), ycsb(SQLite, ""), ycsb(SQLServer, "dbo")
	for _, tc := range []struct{ name, got, want string }{
		{"pg read", pg.Read(nil), `SELECT "FIELD0", "FIELD1", "FIELD2" FROM "public"."usertable" WHERE "YCSB_KEY" = $1`},
		{"pg scan", pg.Scan([]int{1}), `SELECT "YCSB_KEY", "FIELD1" FROM "public"."usertable" WHERE "YCSB_KEY" >= $1 ORDER BY "YCSB_KEY" LIMIT $2`},
		{"pg update", pg.Update([]int{2, 0}), `UPDATE "public"."usertable" SET "FIELD2" = $1, "FIELD0" = $2 WHERE "YCSB_KEY" = $3`},
		{"pg insert", pg.Insert(2), `INSERT INTO "public"."usertable" ("YCSB_KEY", "FIELD0", "FIELD1", "FIELD2") VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)`},
		{"pg delete", pg.Delete(), `DELETE FROM "public"."usertable" WHERE "YCSB_KEY" = $1`},
		{"pg has rows", pg.HasRows(), `SELECT 1 FROM "public"."usertable" LIMIT 1`},
		{"mysql read", my.Read([]int{2, 0}), "SELECT `FIELD2`, `FIELD0` FROM `usertable` WHERE `YCSB_KEY` = ?"},
		{"mysql scan", my.Scan(nil), "SELECT `YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2` FROM `usertable` WHERE `YCSB_KEY` >= ? ORDER BY `YCSB_KEY` LIMIT ?"},
		{"mysql update", my.Update(nil), "UPDATE `usertable` SET `FIELD0` = ?, `FIELD1` = ?, `FIELD2` = ? WHERE `YCSB_KEY` = ?"},
		{"mysql insert", my.Insert(1), "INSERT INTO `usertable` (`YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2`) VALUES (?, ?, ?, ?)"},
		{"sqlite update", lite.Update([]int{1, 0}), `UPDATE "usertable" SET "FIELD1" = ?, "FIELD0" = ? WHERE "YCSB_KEY" = ?`},
		{"sqlite delete", lite.Delete(), `DELETE FROM "usertable" WHERE "YCSB_KEY" = ?`},
		{"sqlserver read", ms.Read([]int{1}), `SELECT [FIELD1] FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1`},
		{"sqlserver scan", ms.Scan(nil), `SELECT TOP (@p2) [YCSB_KEY], [FIELD0], [FIELD1], [FIELD2] FROM [dbo].[usertable] WHERE [YCSB_KEY] >= @p1 ORDER BY [YCSB_KEY]`},
		{"sqlserver update", ms.Update([]int{2, 0}), `UPDATE [dbo].[usertable] SET [FIELD2] = @p1, [FIELD0] = @p2 WHERE [YCSB_KEY] = @p3`},
		{"sqlserver insert", ms.Insert(2), `INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4), (@p5, @p6, @p7, @p8)`},
		{"sqlserver has rows", ms.HasRows(), `SELECT TOP (1) 1 FROM [dbo].[usertable]`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		d         Dialect
		in, want  string
		qualified string
	}{
		{Postgres, `a"b`, `"a""b"`, `"s"."a""b"`},
		{MySQL, "a`b", "`a``b`", "`s`.`a``b`"},
		{SQLite, `select`, `"select"`, `"s"."select"`},
		{SQLServer, "a]b", "[a]]b]", "[s].[a]]b]"},
		{SQLServer, "]]", "[]]]]]", "[s].[]]]]]"},
	} {
		if got := tc.d.Quote(tc.in); got != tc.want {
			t.Errorf("%s Quote(%q) = %s, want %s", tc.d.Name, tc.in, got, tc.want)
		}
		if got := tc.d.Qualify("s", tc.in); got != tc.qualified {
			t.Errorf("%s Qualify(s, %q) = %s, want %s", tc.d.Name, tc.in, got, tc.qualified)
		}
		if got := tc.d.Qualify("", tc.in); got != tc.want {
			t.Errorf("%s Qualify(\"\", %q) = %s, want %s", tc.d.Name, tc.in, got, tc.want)
		}
	}
}

func TestBind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     Dialect
		in    string
		text  string
		names []string
		args  []int
	}{
		{"numbered, repeated", Postgres, "SELECT * FROM t WHERE a = :id OR b = :id AND c = :other",
			"SELECT * FROM t WHERE a = $1 OR b = $1 AND c = $2", []string{"id", "other"}, []int{0, 1}},
		{"positional, repeated", MySQL, "UPDATE t SET v = :v WHERE k = :k OR k2 = :k",
			"UPDATE t SET v = ? WHERE k = ? OR k2 = ?", []string{"v", "k"}, []int{0, 1, 1}},
		{"sql server", SQLServer, "SELECT TOP (:n) * FROM [a:b] WHERE x = :x",
			"SELECT TOP (@p1) * FROM [a:b] WHERE x = @p2", []string{"n", "x"}, []int{0, 1}},
		{"cast and assignment", Postgres, "SELECT :a::int, x := 1, '::b'::text",
			"SELECT $1::int, x := 1, '::b'::text", []string{"a"}, []int{0}},
		{"strings and comments", SQLite, "SELECT ':no', \":no\" -- :no\n, /* :no */ :yes",
			"SELECT ':no', \":no\" -- :no\n, /* :no */ ?", []string{"yes"}, []int{0}},
		{"doubled quotes", SQLite, "SELECT 'it''s :no', :yes", "SELECT 'it''s :no', ?", []string{"yes"}, []int{0}},
		{"mysql backslash and hash", MySQL, "SELECT 'a\\' :no', `:no` # :no\n, :yes",
			"SELECT 'a\\' :no', `:no` # :no\n, ?", []string{"yes"}, []int{0}},
		{"postgres standard string ends at backslash", Postgres, `SELECT 'a\', :yes`,
			`SELECT 'a\', $1`, []string{"yes"}, []int{0}},
		{"postgres E string", Postgres, `SELECT E'a\' :no', :yes`,
			`SELECT E'a\' :no', $1`, []string{"yes"}, []int{0}},
		{"dollar quotes", Postgres, "DO $body$ BEGIN PERFORM :no; END $body$; SELECT $$:no$$, :yes, $1",
			"DO $body$ BEGIN PERFORM :no; END $body$; SELECT $$:no$$, $1, $1", []string{"yes"}, []int{0}},
		{"nested comments", Postgres, "/* a /* :no */ :no */ :yes", "/* a /* :no */ :no */ $1", []string{"yes"}, []int{0}},
		{"flat comments", MySQL, "/* a /* :no */ :yes", "/* a /* :no */ ?", []string{"yes"}, []int{0}},
		{"no parameters", Postgres, "SELECT 1", "SELECT 1", nil, nil},
		{"dollar inside a name", Postgres, "SELECT a$b$, :x", "SELECT a$b$, $1", []string{"x"}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Bind(tc.d, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tc.text || !reflect.DeepEqual(got.Names, tc.names) || !reflect.DeepEqual(got.Args, tc.args) {
				t.Errorf("Bind(%q) = %q %q %v, want %q %q %v", tc.in, got.Text, got.Names, got.Args, tc.text, tc.names, tc.args)
			}
		})
	}
}

func TestBindUnclosed(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		in   string
		want string
	}{
		{Postgres, "SELECT 1,\n'abc", "a string opened on line 2 is not closed"},
		{Postgres, "SELECT $x$ abc", "a $x$ string opened on line 1 is not closed"},
		{SQLServer, "SELECT [abc", "a bracketed name opened on line 1 is not closed"},
		{MySQL, "\n\nSELECT /* x", "a /* comment opened on line 3 is not closed"},
		{Postgres, "/* /* */ SELECT :x", "a /* comment opened on line 1 is not closed"},
	} {
		_, err := Bind(tc.d, tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Bind(%s, %q) = %v, want %q", tc.d.Name, tc.in, err, tc.want)
		}
	}
}

// FuzzBind checks what holds for any text: no panic; text without a colon
// comes back as it was; every placeholder stands for a name Bind returned.
func FuzzBind(f *testing.F) {
	for _, s := range []string{"SELECT :a, ':b', \"c\" -- :d", "$$:x$$ :y", "[:z] :w", "E'\\'' :v", "/* /* */ */ :u"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, d := range []Dialect{Postgres, MySQL, SQLite, SQLServer} {
			b, err := Bind(d, text)
			if err != nil {
				continue
			}
			if !strings.Contains(text, ":") && b.Text != text {
				t.Fatalf("%s: %q without parameters became %q", d.Name, text, b.Text)
			}
			for _, a := range b.Args {
				if a < 0 || a >= len(b.Names) {
					t.Fatalf("%s: argument %d of %q names no parameter of %q", d.Name, a, text, b.Names)
				}
			}
			if d.Numbered && len(b.Args) != len(b.Names) {
				t.Fatalf("%s: %d arguments for %d names", d.Name, len(b.Args), len(b.Names))
			}
		}
	})
}

func TestStripAndReturnsRows(t *testing.T) {
	got, err := Strip(Postgres, "SELECT 'a', \"b\" /* c */ -- d\n, $$e$$, f")
	if err != nil || got != "SELECT  ,      \n,  , f" {
		t.Errorf("Strip = %q, %v", got, err)
	}
	for _, tc := range []struct {
		d    Dialect
		text string
		want bool
	}{
		{Postgres, "SELECT 1", true},
		{Postgres, "  /* note */ (select 1) union (select 2)", true},
		{Postgres, "with x as (select 1) select * from x", true},
		{Postgres, "INSERT INTO t VALUES (1) RETURNING id", true},
		{Postgres, "INSERT INTO t VALUES ('RETURNING')", false},
		{Postgres, "UPDATE t SET a = 1", false},
		{MySQL, "-- SELECT\nDELETE FROM t WHERE id = 1", false},
		{MySQL, "SHOW STATUS", true},
		{MySQL, "CALL p(1)", true},
		{SQLite, "PRAGMA page_count", true},
		{SQLServer, "INSERT INTO t OUTPUT INSERTED.id VALUES (1)", true},
		{SQLServer, "INSERT INTO [output] VALUES (1)", false},
		{SQLServer, "EXEC sp_who", true},
		{Postgres, "DO $$ BEGIN PERFORM 1; END $$", false},
	} {
		if got := ReturnsRows(tc.d, tc.text); got != tc.want {
			t.Errorf("%s ReturnsRows(%q) = %v, want %v", tc.d.Name, tc.text, got, tc.want)
		}
	}
}
