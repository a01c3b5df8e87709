package cli

import (
	"context"
	"io"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Execute runs dbprobe with the given arguments (without the program name).
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := NewRoot()
	root.SetArgs(ycsbStyleArgs(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && IsUsageError(err) {
		err = hideArgs(err, args)
		err = describeUnknownCommand(root, err)
	}
	return err
}

// hideArgs rewrites the parser's complaint about the command line, which
// quotes an argument as typed ("unknown shorthand flag: 'd' in
// -db=postgres://u:pw@h/x"), with every argument that holds a URL's
// password shown as redactLooseURL shows it. The argument is known, so it
// is replaced whole, never the password's letters wherever they are.
func hideArgs(err error, args []string) error {
	msg := err.Error()
	for _, a := range args {
		if r := redactLooseURL(a); r != a {
			msg = strings.ReplaceAll(msg, a, r)
		}
	}
	if msg == err.Error() {
		return err
	}
	return badinput.New("%s", msg)
}

// IsUsageError reports whether err is cobra's complaint about the command
// line (an unknown flag, a missing value): bad input.
func IsUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument", "invalid argument", "accepts "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
