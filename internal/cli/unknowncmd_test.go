package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// A mistyped command is one line of bad input that names the command
// meant, for the root's commands and for storage's experiments alike,
// and lists them when nothing is close.
func TestUnknownCommandIsOneLineWithASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ycbs"}, `unknown command "ycbs" for "dbprobe"; did you mean ycsb? (see dbprobe --help)`},
		{[]string{"storage", "scna"}, `unknown command "scna" for "dbprobe storage"; did you mean scan? (see dbprobe storage --help)`},
		{[]string{"storage", "xyz"}, `unknown command "xyz" for "dbprobe storage"; it has bulk, cache, logcopy, read, scan, write (see dbprobe storage --help)`},
	} {
		var out, errb bytes.Buffer
		err := Execute(context.Background(), tc.args, &out, &errb)
		if err == nil {
			t.Fatalf("%v: no error", tc.args)
		}
		if !badinput.Is(err) {
			t.Errorf("%v: %v is not bad input (exit 2)", tc.args, err)
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.args, got, tc.want)
		}
		if strings.ContainsAny(err.Error(), "\n\t") {
			t.Errorf("%v: %q is not one line", tc.args, err.Error())
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q on stdout", tc.args, out.String())
		}
	}
}
