package stress

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Script is one file of statements an iteration may run, in order.
type Script struct {
	// Path is the file as given; Name its base name upper-cased, which
	// labels its statements' series ("LOOP.SQL").
	Path   string
	Name   string
	Weight float64
	// Statements are the file's statements in order.
	Statements []Statement
}

// Statement is one statement of a script.
type Statement struct {
	// Label names its series: the script's Name and its place from 1
	// ("LOOP.SQL-3").
	Label string
	// Line is the line of the file it starts on.
	Line int
	// Text is the statement as written, :name parameters and all.
	Text string
}

// readScript reads a file of statements: missing, unreadable and empty
// files are bad input naming the flag and the file.
func readScript(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", badinput.New("%s %s: no such file", flag, path)
	case err != nil:
		return "", badinput.New("%s %s: cannot read it: %v", flag, path, experimentShort(err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", badinput.New("%s %s is empty: give a file with at least one statement", flag, path)
	}
	if onlyComments(string(b)) {
		// Said before anything is connected or created; the database's
		// own split (loadStatements) says it again of what it alone
		// reads as a comment.
		return "", noStatement(flag, path)
	}
	return string(b), nil
}

// noStatement is the refusal of a file without a statement.
func noStatement(flag, path string) error {
	return badinput.New("%s %s holds no statement (only comments or separators): write at least one statement in it, each ending with ;", flag, path)
}

// onlyComments reports whether text holds nothing but white space,
// semicolons and comments every SQL dialect reads as such (-- to the end
// of the line, /* … */), so that such a file is refused before the
// database is opened.
func onlyComments(text string) bool {
	for i := 0; i < len(text); {
		switch {
		case strings.HasPrefix(text[i:], "--"):
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				return true
			}
			i += end + 1
		case strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				// An open comment: the database's split says where.
				return false
			}
			i += 2 + end + 2
		case text[i] == ';' || text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r':
			i++
		default:
			return false
		}
	}
	return true
}

// experimentShort drops the path an os error repeats.
func experimentShort(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadStatements reads and splits the file of flag into its statements;
// a file of comments alone is bad input.
func loadStatements(db driver.SQLRunner, flag, path string) ([]driver.ScriptStatement, error) {
	text, err := readScript(flag, path)
	if err != nil {
		return nil, err
	}
	stmts, err := db.SplitScript(text)
	if err != nil {
		return nil, badinput.New("%s %s: %v", flag, path, err)
	}
	if len(stmts) == 0 {
		return nil, noStatement(flag, path)
	}
	return stmts, nil
}

// loadScripts reads every --sql file and labels its statements. Two
// files of the same base name would label their series alike: their
// labels take the directory too.
func loadScripts(db driver.SQLRunner, files []ScriptFile) ([]*Script, error) {
	names := map[string]int{}
	for _, f := range files {
		names[strings.ToUpper(filepath.Base(f.Path))]++
	}
	var out []*Script
	for _, f := range files {
		stmts, err := loadStatements(db, "--sql", f.Path)
		if err != nil {
			return nil, err
		}
		name := strings.ToUpper(filepath.Base(f.Path))
		if names[name] > 1 {
			name = strings.ToUpper(filepath.ToSlash(filepath.Clean(f.Path)))
		}
		s := &Script{Path: f.Path, Name: name, Weight: f.Weight}
		for k, st := range stmts {
			s.Statements = append(s.Statements, Statement{Label: fmt.Sprintf("%s-%d", name, k+1), Line: st.Line, Text: st.Text})
		}
		out = append(out, s)
	}
	seen := map[string]string{}
	for _, s := range out {
		if other, dup := seen[s.Name]; dup {
			return nil, badinput.New("--sql %s is given twice (%s): give each file once, with a weight (FILE@WEIGHT) to run it more often", s.Path, other)
		}
		seen[s.Name] = s.Path
	}
	return out, nil
}
