package deps

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// destructiveSQL is SQL that could destroy what dbprobe did not create:
// dbprobe drops only tables it recorded creating, one by one, and deletes
// only rows it names by key.
var destructiveSQL = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bCASCADE\b`), "CASCADE drops or empties what depends on a table, which dbprobe did not create"},
	{regexp.MustCompile(`(?i)\bDROP\s+(DATABASE|SCHEMA)\b`), "DROP DATABASE or SCHEMA destroys everything in it"},
	// Upper case and followed by a name: lower-case "truncate" is English
	// in messages, and a bare TRUNCATE is also SQLite's journal mode.
	{regexp.MustCompile(`\bTRUNCATE\s+[^\s;]|(?i)\btruncate\s+table\b`), "TRUNCATE empties a whole table"},
}

var (
	deleteFrom = regexp.MustCompile(`(?i)\bDELETE\s+FROM\b`)
	whereWord  = regexp.MustCompile(`(?i)\bWHERE\b`)
)

// sqlFinding is destructive SQL text found in a source file.
type sqlFinding struct {
	pos  token.Position
	text string
	why  string
}

// allowedDestructive lists the non-test source that may hold such SQL, and
// why: it never runs in dbprobe itself.
var allowedDestructive = map[string]string{
	"internal/testdb/": "test support: drops only the databases it created for one test",
}

// The module's non-test Go source holds no SQL text that could destroy
// what dbprobe did not create. It reads string expressions, not comments:
// literals joined with + and string variables of the same file are put
// together first, so "DELETE FROM " + table + where counts its WHERE.
func TestNoDestructiveSQL(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for prefix := range allowedDestructive {
			if strings.HasPrefix(rel, prefix) {
				return nil
			}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := scanSQL(rel, src)
		if err != nil {
			return err
		}
		files++
		for _, f := range found {
			t.Errorf("%s:%d: %s: %q", f.pos.Filename, f.pos.Line, f.why, f.text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen the drivers, or it proves nothing.
	if files < 50 {
		t.Fatalf("only %d Go files scanned under %s", files, root)
	}
}

// The scanner finds what it must and passes what it must: without this
// the test above could pass by finding nothing.
func TestScanSQL(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"cascade", `const q = "DROP TABLE x CASCADE"`, 1},
		{"lower-case cascade", `var q = "drop table x cascade"`, 1},
		{"drop database", `func f() string { return "DROP DATABASE " + name }`, 1},
		{"drop schema", "var q = `DROP SCHEMA s`", 1},
		{"truncate", `func f(t string) string { return "TRUNCATE TABLE " + t }`, 1},
		{"truncate without TABLE", `var q = "TRUNCATE usertable"`, 1},
		{"truncate in Sprintf", `func f() string { return fmt.Sprintf("truncate table %s", t) }`, 1},
		{"delete without where", `func f(t string) string { return "DELETE FROM " + t }`, 1},
		{"delete, where elsewhere", `func f(t string) string { a := "DELETE FROM " + t; return a + "; SELECT 1 WHERE 1" }`, 2},
		{"delete with where", `func f(t string) string { return "DELETE FROM " + t + " WHERE k = ?" }`, 0},
		{"delete, where from a variable", `func f(t string) string { whereKey := " WHERE " + k + " = ?"; return "DELETE FROM " + t + whereKey }`, 0},
		{"delete in a raw string", "var q = `DELETE FROM t\n WHERE k = $1`", 0},
		{"comments are not SQL", "// never CASCADE, never TRUNCATE\nvar x = 1", 0},
		{"English in a message", `var m = "the value was truncated; delete them yourself"`, 0},
		{"a journal mode", `var modes = []string{"DELETE", "TRUNCATE", "WAL"}`, 0},
		{"builder without where", "func f(b *strings.Builder) { b.WriteString(\"DELETE FROM \")\n b.WriteString(t)\n b.WriteString(\";\") }", 1},
		{"builder with where", "func f(b *strings.Builder) { b.WriteString(\"DELETE FROM \")\n b.WriteString(t)\n b.WriteString(\" WHERE \" + k)\n }", 0},
		{"builder truncate", "func f(b *strings.Builder) { b.WriteString(\"TRUNCATE \")\n b.WriteString(t) }", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, err := scanSQL("x.go", []byte("package x\n"+tt.src+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != tt.want {
				t.Fatalf("%d findings, want %d: %v", len(found), tt.want, found)
			}
		})
	}
}

// scanSQL parses one Go file and returns its destructive SQL text.
func scanSQL(name string, src []byte) ([]sqlFinding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	s := &stringEval{vars: map[string]ast.Expr{}}
	// String variables and constants by name: a name assigned twice keeps
	// its first value, which is enough to join SQL built in pieces.
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						s.remember(id.Name, n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) {
				for i, id := range n.Names {
					s.remember(id.Name, n.Values[i])
				}
			}
		}
		return true
	})
	var found []sqlFinding
	check := func(pos token.Pos, text string) {
		p := fset.Position(pos)
		for _, d := range destructiveSQL {
			if d.re.MatchString(text) {
				found = append(found, sqlFinding{p, text, d.why})
			}
		}
		for _, loc := range deleteFrom.FindAllStringIndex(text, -1) {
			stmt := text[loc[0]:]
			if end := strings.IndexByte(stmt, ';'); end >= 0 {
				stmt = stmt[:end]
			}
			if !whereWord.MatchString(stmt) {
				found = append(found, sqlFinding{p, text, "DELETE FROM without WHERE empties a table"})
			}
		}
	}
	// SQL written piece by piece into a builder is read as one text: the
	// arguments of consecutive b.WriteString calls on the same b.
	written := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		var recv string
		var text strings.Builder
		var start token.Pos
		flush := func() {
			if recv != "" {
				check(start, text.String())
			}
			recv = ""
			text.Reset()
		}
		for _, st := range block.List {
			r, arg := writeStringCall(st)
			if r == "" || r != recv {
				flush()
			}
			if r == "" {
				continue
			}
			if recv == "" {
				recv, start = r, st.Pos()
			}
			text.WriteString(s.eval(arg, 0))
			written[arg] = true
		}
		flush()
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		expr, ok := n.(ast.Expr)
		if !ok || !isStringExpr(expr) {
			return true
		}
		if written[expr] {
			return false // read with its builder
		}
		check(expr.Pos(), s.eval(expr, 0))
		// The whole expression was read; its parts need not be again.
		return false
	})
	return found, nil
}

// writeStringCall returns the receiver (as written) and the argument of a
// statement recv.WriteString(arg); "" when st is not one.
func writeStringCall(st ast.Stmt) (string, ast.Expr) {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return "", nil
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", nil
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "WriteString" {
		return "", nil
	}
	return types.ExprString(sel.X), call.Args[0]
}

// isStringExpr reports a string literal or a + of expressions holding one.
func isStringExpr(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD && (isStringExpr(e.X) || isStringExpr(e.Y))
	case *ast.ParenExpr:
		return isStringExpr(e.X)
	}
	return false
}

// stringEval puts string expressions together, standing "?" for what it
// cannot know (a call, a field, a parameter).
type stringEval struct {
	vars map[string]ast.Expr
}

func (s *stringEval) remember(name string, e ast.Expr) {
	if _, ok := s.vars[name]; !ok && isStringExpr(e) {
		s.vars[name] = e
	}
}

func (s *stringEval) eval(e ast.Expr, depth int) string {
	if depth > 8 {
		return "?"
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			if v, err := strconv.Unquote(e.Value); err == nil {
				return v
			}
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return s.eval(e.X, depth+1) + s.eval(e.Y, depth+1)
		}
	case *ast.ParenExpr:
		return s.eval(e.X, depth+1)
	case *ast.Ident:
		if v, ok := s.vars[e.Name]; ok {
			return s.eval(v, depth+1)
		}
	}
	return "?"
}
