package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// groupAnnotation is the pflag annotation that files a flag under one of
// the help's headings. Cobra has no flag groups of its own, so the usage
// function reads it.
const groupAnnotation = "dbprobe_group"

// The flag groups, in the order --help prints them.
const (
	groupTarget   = "target"
	groupWorkload = "workload"
	groupShape    = "shape"
	groupKnobs    = "knobs"
	groupFaults   = "faults"
	groupOutputs  = "outputs"
	groupMonitor  = "monitor"
	groupGeneral  = "general"
)

// flagGroups are the groups and their headings, in print order.
var flagGroups = []struct{ id, heading string }{
	{groupTarget, "Target and connection"},
	{groupWorkload, "Workload"},
	{groupShape, "Load shape: threads, pace, duration"},
	{groupKnobs, "Knobs: table type, durability, operation path"},
	{groupFaults, "Failures, retries and interrupts"},
	{groupOutputs, "Outputs and progress"},
	{groupMonitor, "Monitor"},
	{groupGeneral, "General"},
}

// helpWidth is the width --help wraps flag descriptions to: a terminal's
// default, so that no line wraps in one.
const helpWidth = 80

// setGroup files the named flags of fs under group. A name that is not a
// flag of fs is a mistake in the command's definition, caught by any test
// that builds the command.
func setGroup(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, groupAnnotation, []string{group}); err != nil {
			panic(fmt.Sprintf("cli: group %s: %v", group, err))
		}
	}
}

// cobraFlags are the flags cobra adds as a command runs: --help,
// --version, and --no-descriptions of the completion commands. They are
// general.
var cobraFlags = []string{"help", "version", "no-descriptions"}

// flagGroup is the group a flag is filed under, "" when none.
func flagGroup(f *pflag.Flag) string {
	if g := f.Annotations[groupAnnotation]; len(g) == 1 {
		return g[0]
	}
	if len(f.Annotations[groupAnnotation]) == 0 && slices.Contains(cobraFlags, f.Name) {
		return groupGeneral
	}
	return ""
}

// knownGroup reports whether g is one of flagGroups.
func knownGroup(g string) bool {
	for _, k := range flagGroups {
		if k.id == g {
			return true
		}
	}
	return false
}

// usage prints a command's usage as cobra's default does, except that its
// flags are printed group by group under their headings; a flag in no
// group (a mistake TestEveryFlagInOneGroup catches) still prints, under
// "Other flags".
func usage(c *cobra.Command) error {
	w := c.OutOrStderr()
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n  " + c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:\n  " + c.NameAndAliases())
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + wrapExamples(c.Example, helpWidth))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				pad := 2 + sub.NamePadding() + 1
				fmt.Fprintf(&b, "\n  %-*s %s", sub.NamePadding(), sub.Name(), wrapWords(sub.Short, helpWidth-pad, strings.Repeat(" ", pad)))
			}
		}
	}
	// InheritedFlags merges the parents' persistent flags into Flags, so
	// that they print with the command's own.
	c.InheritedFlags()
	b.WriteString(groupedFlags(c.Flags()))
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// groupedFlags renders the visible flags of fs under their groups'
// headings, each group's descriptions wrapped to helpWidth.
func groupedFlags(fs *pflag.FlagSet) string {
	sets := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := flagGroup(f)
		if !knownGroup(g) {
			g = ""
		}
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = fs.SortFlags
		}
		sets[g].AddFlag(f)
	})
	var b strings.Builder
	write := func(heading string, set *pflag.FlagSet) {
		if set == nil {
			return
		}
		b.WriteString("\n\n" + heading + ":\n")
		b.WriteString(strings.TrimRight(set.FlagUsagesWrapped(helpWidth), "\n"))
	}
	for _, g := range flagGroups {
		write(g.heading, sets[g.id])
	}
	write("Other flags", sets[""])
	return b.String()
}

// wrapWords wraps text at spaces to lines of at most width columns, each
// line after the first starting with indent.
func wrapWords(text string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		if i > 0 && col+1+n > width {
			b.WriteString("\n" + indent)
			col = 0
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// wrapExamples breaks example command lines longer than width before an
// option, with a shell continuation (" \\"), so that each still runs when
// pasted: an option stays with its value. A trailing comment moves to a
// line of its own above the command, since a continuation does not work
// inside one.
func wrapExamples(text string, width int) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if utf8.RuneCountInString(line) <= width {
			continue
		}
		lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
		var b strings.Builder
		if cmd, comment, ok := strings.Cut(line, " #"); ok {
			b.WriteString(lead + "#" + comment + "\n")
			line = cmd
		}
		// Segments: the command, then each option with the words after
		// it up to the next option.
		var segs []string
		for _, w := range strings.Fields(line) {
			if len(segs) == 0 || strings.HasPrefix(w, "-") {
				segs = append(segs, w)
			} else {
				segs[len(segs)-1] += " " + w
			}
		}
		b.WriteString(lead + segs[0])
		col := len(lead) + utf8.RuneCountInString(segs[0])
		for k, seg := range segs[1:] {
			n := utf8.RuneCountInString(seg)
			// Room for " \\" after this segment unless it is the last.
			room := 2
			if k == len(segs)-2 {
				room = 0
			}
			if col+1+n+room > width {
				b.WriteString(" \\\n" + lead + "    ")
				col = len(lead) + 4
			} else {
				b.WriteByte(' ')
				col++
			}
			b.WriteString(seg)
			col += n
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}
