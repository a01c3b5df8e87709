package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// complete asks dbprobe for completions as a shell does, through cobra's
// hidden __complete command, and returns the values and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Execute(context.Background(), append([]string{"__complete"}, args...), &out, &errb); err != nil {
		t.Fatalf("__complete %v: %v (%s)", args, err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// The knobs complete with the values their parsers accept, and nothing
// else; file names are not offered for them.
func TestCompletionOfEnumValues(t *testing.T) {
	const noFiles = ":4" // cobra.ShellCompDirectiveNoFileComp
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--table-type", ""}, []string{"disk", "memory", "nondurable"}},
		{[]string{"load", "--durability", ""}, []string{"server", "full", "delayed"}},
		{[]string{"ycsb", "--durability-scope", ""}, []string{"database", "transaction"}},
		{[]string{"run", "--op-path", ""}, []string{"statement", "procedure"}},
		{[]string{"run", "--on-error", ""}, []string{"stop", "continue"}},
		{[]string{"run", "--workload", ""}, []string{"a", "b", "c", "d", "e", "f"}},
		{[]string{"ycsb", "--workload", "C"}, []string{"c"}},
		{[]string{"durability", "--database", ""}, []string{"postgres", "mariadb", "sqlite"}},
		{[]string{"durability", "--durability", ""}, []string{"server", "full", "delayed"}},
	} {
		got, directive := complete(t, tc.args...)
		if !slices.Equal(got, tc.want) || directive != noFiles {
			t.Errorf("__complete %v = %v %s, want %v %s", tc.args, got, directive, tc.want, noFiles)
		}
	}
}

// A --workload that names no built-in workload falls back to the shell's
// file names: it may be a properties file.
func TestCompletionOfWorkloadFile(t *testing.T) {
	got, directive := complete(t, "run", "--workload", "workloads/my")
	if len(got) != 0 || directive != ":0" {
		t.Errorf("__complete run --workload workloads/my = %v %s, want no values and :0 (files)", got, directive)
	}
}

// --db completes with the registered drivers' schemes, without a space
// after them so that the rest of the URL follows.
func TestCompletionOfDatabaseSchemes(t *testing.T) {
	got, directive := complete(t, "run", "--db", "")
	for _, want := range []string{"postgres://", "mysql://", "sqlite://", "redis://", "sqlserver://"} {
		if !slices.Contains(got, want) {
			t.Errorf("__complete run --db lacks %s: %v", want, got)
		}
	}
	if directive != ":6" { // NoSpace | NoFileComp
		t.Errorf("__complete run --db directive %s, want :6", directive)
	}
}

// The completion command cobra provides writes a script for each shell.
func TestCompletionCommand(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__start_dbprobe", "zsh": "#compdef dbprobe", "fish": "complete -c dbprobe", "powershell": "Register-ArgumentCompleter"} {
		var out, errb bytes.Buffer
		if err := Execute(context.Background(), []string{"completion", shell}, &out, &errb); err != nil {
			t.Fatalf("completion %s: %v (%s)", shell, err, errb.String())
		}
		if !strings.Contains(out.String(), marker) {
			t.Errorf("completion %s does not write a %s script (no %q)", shell, shell, marker)
		}
	}
}
