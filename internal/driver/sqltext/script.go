package sqltext

import (
	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// Script cuts text into its statements by d's rules (sqlgen.Script): the
// SplitScript of every SQL driver. Every error is about the text, so it is
// bad input, naming the line.
func Script(d sqlgen.Dialect, text string) ([]driver.ScriptStatement, error) {
	stmts, err := sqlgen.Script(d, text)
	if err != nil {
		return nil, badinput.New("%s script: %v", d.Name, err)
	}
	out := make([]driver.ScriptStatement, len(stmts))
	for i, s := range stmts {
		out[i] = driver.ScriptStatement(s)
	}
	return out, nil
}
