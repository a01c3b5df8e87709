package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/durability"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/workloads"
)

// enumNames lists an enum's names as its own String and Parse define
// them: the values 0, 1, 2… for as long as Parse accepts what String
// returns. The lists stay where the enums are defined, not copied here.
func enumNames[T interface {
	~int
	String() string
}](parse func(string) (T, error)) []string {
	var names []string
	for i := 0; ; i++ {
		name := T(i).String()
		if v, err := parse(name); err != nil || v != T(i) {
			return names
		}
		names = append(names, name)
	}
}

// fixedValues completes a flag with the given values, and nothing else.
func fixedValues(values []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeWorkload offers the built-in workloads' letters; once what is
// typed matches none of them, the shell's file names (a properties file).
func completeWorkload(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range workloads.Names {
		if strings.HasPrefix(n, strings.ToLower(typed)) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeDB offers the registered drivers' URL schemes ("postgres://"),
// to be followed by the rest of the URL, so without a space.
func completeDB(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, s := range driver.Schemes() {
		out = append(out, s+"://")
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeCommonFlags registers the value completions of the flags
// addCommonFlags defines.
func completeCommonFlags(cmd *cobra.Command) {
	register(cmd, "workload", completeWorkload)
	register(cmd, "table-type", fixedValues(enumNames(driver.ParseTableType)))
	register(cmd, "durability", fixedValues(enumNames(driver.ParseDurability)))
	register(cmd, "durability-scope", fixedValues(enumNames(driver.ParseDurabilityScope)))
	register(cmd, "op-path", fixedValues(enumNames(driver.ParseOpPath)))
	register(cmd, "on-error", fixedValues(enumNames(runner.ParseOnError)))
}

// completeDurabilityFlags registers the value completions of dbprobe
// durability's flags.
func completeDurabilityFlags(cmd *cobra.Command) {
	register(cmd, "database", fixedValues(enumNames(durability.ParseDatabase)))
	register(cmd, "durability", fixedValues(enumNames(driver.ParseDurability)))
}

// register is cmd.RegisterFlagCompletionFunc, whose only error is a
// mistake in the command's definition (no such flag, or registered twice).
func register(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic("cli: " + err.Error())
	}
}
