package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// unknownCommandRE matches cobra's complaint about a command name it does
// not know: `unknown command "ycbs" for "dbprobe"`, followed for the root
// by its "Did you mean this?" lines.
var unknownCommandRE = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)

// describeUnknownCommand rewrites cobra's unknown-command error as one
// line that names the closest commands and where the list is. Cobra's own
// puts its suggestions on lines of their own, which the one-line error
// turned into tabs and double spaces, and suggests nothing at all for a
// subcommand's typo ("dbprobe storage scna"). Any other error is returned
// as it is.
func describeUnknownCommand(root *cobra.Command, err error) error {
	m := unknownCommandRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	typed, path := m[1], m[2]
	parent := root
	if fields := strings.Fields(path); len(fields) > 1 {
		if c, _, ferr := root.Find(fields[1:]); ferr == nil {
			parent = c
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q", typed, path)
	if parent.SuggestionsMinimumDistance <= 0 {
		// Cobra sets its default of 2 only on the root as it runs.
		parent.SuggestionsMinimumDistance = 2
	}
	if s := parent.SuggestionsFor(typed); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	} else if names := commandNames(parent); len(names) > 0 {
		msg += "; it has " + strings.Join(names, ", ")
	}
	return badinput.New("%s (see %s --help)", msg, path)
}

// commandNames lists the commands under c a user would run, in cobra's
// order.
func commandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "help" && sub.Name() != "completion" {
			names = append(names, sub.Name())
		}
	}
	return names
}
