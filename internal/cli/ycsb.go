package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/ycsb"
)

// execute turns the flags of load, run or ycsb into the YCSB experiment's
// configuration and runs its phases.
func execute(cmd *cobra.Command, o *options, phases []runner.Phase) error {
	props, err := o.properties(cmd)
	if err != nil {
		return err
	}
	if err := checkMetricsFlags(cmd, &o.sharedOptions); err != nil {
		return err
	}
	several, err := o.clients.config(cmd)
	if err != nil {
		return err
	}
	con, err := experiment.NewConsole(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.status, o.quiet)
	if err != nil {
		return err
	}
	defer con.Close()
	target, outputs, monitor := o.experimentConfigs(con)
	target.KeepDefault = o.keepDB
	return ycsb.Run(cmd.Context(), &ycsb.Config{
		Phases:       phases,
		Properties:   props,
		Strict:       o.strict,
		Target:       target,
		Outputs:      outputs,
		Monitor:      monitor,
		Warmup:       o.warmup,
		DrainTimeout: o.drainTimeout,
		Seed:         o.seed,
		SeedGiven:    cmd.Flags().Changed("seed"),
		DropExisting: o.dropExisting,
		NoCopy:       o.noCopy,
		Shards:       o.shards,
		ShardsFile:   o.shardsFile,
		CommandLine:  commandLine(cmd),
		// --db is the header's target; -p, -P and --workload are in the
		// properties' sources.
		Flags:   flagSettings(cmd.Flags(), propertyFlags, "db", "property", "properties", "workload", "shard", "shards-file", "read-db"),
		Stdout:  con.Stdout,
		Stderr:  con.Stderr,
		Clients: several,
		ReadDB:  o.readDB,
	})
}

// commandLine is the command as typed, with its secrets hidden: its
// path (dbprobe storage scan), then the arguments after it.
func commandLine(cmd *cobra.Command) string {
	path := append([]string{"dbprobe"}, strings.Fields(cmd.CommandPath())[1:]...)
	return redactCommand(append(path, os.Args[min(len(path), len(os.Args)):]...), cmd.Flags())
}

// redactCommand joins a command line with the --db URL's password and the
// values of secret properties (-p db.passwd=…) hidden where they are given,
// in every spelling the flag parser accepts: --db X, --db=X, -p X, -pX,
// -p=X, a shorthand cluster such as -sp X or -spX. It reads the line as
// flags reads it, so a value is known for what it is. Other arguments are
// left as typed (searched for the password, a short one would be found in
// the letters of other words), except that one that looks like a URL with
// a password is shown as driver.RedactURL shows it.
func redactCommand(args []string, flags *pflag.FlagSet) string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return strings.Join(out, " ")
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			f := flags.Lookup(name)
			switch {
			case f == nil:
				out[i] = redactLooseURL(a)
			case hasValue:
				out[i] = "--" + name + "=" + redactFlagValue(f.Name, value)
			case f.NoOptDefVal == "" && i+1 < len(args):
				i++
				out[i] = redactFlagValue(f.Name, args[i])
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// A cluster of shorthands: each takes no value until one
			// that does, which takes the rest of the argument (after an
			// optional =) or else the next argument.
			for k := 1; k < len(a); k++ {
				f := flags.ShorthandLookup(a[k : k+1])
				if f == nil {
					out[i] = redactLooseURL(a)
					break
				}
				if f.NoOptDefVal != "" {
					continue
				}
				rest := a[k+1:]
				switch {
				case rest != "":
					eq := ""
					if strings.HasPrefix(rest, "=") {
						eq, rest = "=", rest[1:]
					}
					out[i] = a[:k+1] + eq + redactFlagValue(f.Name, rest)
				case i+1 < len(args):
					i++
					out[i] = redactFlagValue(f.Name, args[i])
				}
				break
			}
		default:
			out[i] = redactLooseURL(a)
		}
	}
	return strings.Join(out, " ")
}

// redactFlagValue hides the secret in the value of the flag named name.
func redactFlagValue(name, value string) string {
	switch name {
	case "db", "read-db":
		return driver.RedactURL(value)
	case "property":
		return config.RedactAssignment(value)
	case "shard":
		return redactShard(value)
	}
	return redactLooseURL(value)
}

// redactLooseURL shows an argument that looks like a URL with a password
// (scheme:…@…, or a password option), and a key=URL, as driver.RedactURL
// shows the URL; any other argument as it is.
func redactLooseURL(a string) string {
	prefix, v := "", a
	if k, rest, ok := strings.Cut(a, "="); ok && !strings.Contains(k, ":") {
		prefix, v = k+"=", rest
	}
	if !strings.Contains(v, ":") || !strings.Contains(v, "@") && !strings.Contains(strings.ToLower(v), "passw") {
		return a
	}
	return prefix + driver.RedactURL(v)
}
