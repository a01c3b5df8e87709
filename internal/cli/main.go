package cli

import (
	"context"
	"io"
	"strings"
)

// Execute runs dbprobe with the given arguments (without the program name).
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := NewRoot()
	root.SetArgs(ycsbStyleArgs(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
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
