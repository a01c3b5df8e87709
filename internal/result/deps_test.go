package result

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package free of database code: results are read
// and reported on machines with no database and no driver, and the data
// flows one way (measure → result → report). Only the standard library and
// the measurement core may be imported.
func TestImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			std := !strings.Contains(first, ".") && first != "dbprobe"
			if !std && path != "github.com/dbprobe/dbprobe/internal/measure" {
				t.Errorf("%s imports %s: only the standard library and github.com/dbprobe/dbprobe/internal/measure are allowed", name, path)
			}
		}
	}
}
