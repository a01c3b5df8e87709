package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// allCommands is every command of the tree, hidden ones included, with
// cobra's own --help and --version flags and completion command added as
// running them adds them.
func allCommands() []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		c.InitDefaultVersionFlag()
		c.InheritedFlags() // the parents' persistent flags, in Flags
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewRoot()
	root.InitDefaultCompletionCmd()
	walk(root)
	return out
}

// Every flag of every command is filed under exactly one of the help's
// groups, so a flag added without one fails here rather than printing
// under "Other flags".
func TestEveryFlagInOneGroup(t *testing.T) {
	for _, c := range allCommands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			groups := f.Annotations[groupAnnotation]
			if len(groups) > 1 {
				t.Errorf("%s --%s is in %d groups %v; file it under one", c.CommandPath(), f.Name, len(groups), groups)
			}
			if g := flagGroup(f); !knownGroup(g) {
				t.Errorf("%s --%s is in no known flag group (%q): add it to a setGroup call beside its definition", c.CommandPath(), f.Name, g)
			}
		})
	}
}

// help runs dbprobe ARGS --help and returns what it printed.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Execute(context.Background(), append(args, "--help"), &out, &errb); err != nil {
		t.Fatalf("%v --help: %v (%s)", args, err, errb.String())
	}
	return out.String()
}

// --help prints each visible flag once, under its group's heading, in
// the groups' order, and no line wider than 80 columns.
func TestHelpGroupsFlags(t *testing.T) {
	for _, args := range [][]string{nil, {"load"}, {"run"}, {"ycsb"}, {"durability"}, {"stress"}, {"recover"}, {"completion"}} {
		text := help(t, args...)
		name := strings.Join(append([]string{"dbprobe"}, args...), " ")
		for i, line := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("%s --help line %d is %d columns: %q", name, i+1, n, line)
			}
		}
		if strings.Contains(text, "Other flags:") {
			t.Errorf("%s --help has flags in no group:\n%s", name, text)
		}
		// The headings, in order, and each flag below its own.
		var cmd *cobra.Command
		for _, c := range allCommands() {
			if c.CommandPath() == name {
				cmd = c
			}
		}
		if cmd == nil {
			t.Fatalf("no command %s", name)
		}
		last := -1
		for _, g := range flagGroups {
			at := strings.Index(text, "\n"+g.heading+":\n")
			var names []string
			cmd.Flags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && flagGroup(f) == g.id {
					names = append(names, f.Name)
				}
			})
			if len(names) == 0 {
				if at >= 0 {
					t.Errorf("%s --help has an empty heading %q", name, g.heading)
				}
				continue
			}
			if at < 0 {
				t.Errorf("%s --help lacks the heading %q for %v", name, g.heading, names)
				continue
			}
			if at < last {
				t.Errorf("%s --help prints %q out of order", name, g.heading)
			}
			last = at
			section := text[at+1:]
			if end := strings.Index(section, "\n\n"); end >= 0 {
				section = section[:end]
			}
			for _, n := range names {
				if !strings.Contains(section, "--"+n+" ") && !strings.HasSuffix(section, "--"+n) && !strings.Contains(section, "--"+n+"\n") {
					t.Errorf("%s --help does not list --%s under %q:\n%s", name, n, g.heading, section)
				}
			}
		}
	}
	if !strings.Contains(help(t), "\n  completion ") {
		t.Errorf("dbprobe --help does not list the completion command")
	}
}

// The examples of a command wrap before an option, with a continuation
// that keeps them runnable, and a comment moves above its command.
func TestWrapExamples(t *testing.T) {
	in := "  dbprobe run --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada -p operationcount=1000000 --threads 200 -s\n" +
		"  dbprobe recover durability.jsonl   # a killed dbprobe durability --out durability.jsonl\n" +
		"  dbprobe ycsb"
	want := "  dbprobe run --db postgres://ycsb@127.0.0.1:5432/bench -P workloads/workloada \\\n" +
		"      -p operationcount=1000000 --threads 200 -s\n" +
		"  # a killed dbprobe durability --out durability.jsonl\n" +
		"  dbprobe recover durability.jsonl\n" +
		"  dbprobe ycsb"
	if got := wrapExamples(in, 80); got != want {
		t.Errorf("wrapExamples:\n%s\nwant\n%s", got, want)
	}
}

// The root's --help is where a newcomer starts: it names every command
// that runs an experiment or reads a result, so that none added later is
// left out of it (it once said storage and stress were "to come" long
// after both shipped).
func TestRootHelpNamesEveryCommand(t *testing.T) {
	root := NewRoot()
	long := root.Long
	for _, c := range root.Commands() {
		name := c.Name()
		if c.Hidden || name == "version" || name == "help" || name == "completion" {
			continue
		}
		if !strings.Contains(long, name) {
			t.Errorf("dbprobe --help does not name %s; add it to the root command's Long text", name)
		}
	}
	if strings.Contains(long, "to come") {
		t.Errorf("dbprobe --help still promises something %q", "to come")
	}
}
