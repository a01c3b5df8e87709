package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/durability"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
)

// durabilityOptions are the flags of dbprobe durability.
type durabilityOptions struct {
	database   string
	durability string
	cycles     int
	writers    int
	crashAfter string
	bindir     string
	out        string
	seed       uint64
	db         string
}

// sqliteWriterCommand is the hidden subcommand the check re-runs dbprobe
// with to write to SQLite in a process it can kill.
const sqliteWriterCommand = "sqlite-writer"

func newDurabilityCommand() *cobra.Command {
	o := &durabilityOptions{}
	cmd := &cobra.Command{
		Use:   "durability",
		Short: "Crash-durability check: kill a database it started itself and count the acknowledged writes it lost",
		Long: `durability proves, rather than takes on faith, that a database keeps the
commits it acknowledged when it crashes.

It starts its own throwaway database — a PostgreSQL or MariaDB server on
127.0.0.1 (binaries found on PATH, in /usr/lib/postgresql/*/bin, or in
--bindir) or a new SQLite file — and never runs against an existing one:
it kills it. Each cycle, --writers writers insert rows, one commit each,
and every commit the database acknowledges is appended to a client log
that is fsynced as it goes. At a random moment within --crash-after of the
first commit, every process of the server gets SIGKILL at once (for SQLite,
the dbprobe child process that writes); the database is restarted, crash
recovery included, and every acknowledged row is looked for. Each cycle
and the total report acknowledged writes, lost writes, and whether the
lost ones are each writer's most recent (a tail: what asynchronous commit
trades away) or scattered (a hole: a bug). Rows committed whose
acknowledgement never arrived are counted apart: they are allowed.

--durability full (the default) expects 0 lost: PostgreSQL
synchronous_commit=on, MariaDB innodb_flush_log_at_trx_commit=1, SQLite
synchronous=FULL. delayed measures what is given up: PostgreSQL
synchronous_commit=off loses the last commits on a process kill; MariaDB
innodb_flush_log_at_trx_commit=2 and SQLite synchronous=OFF do not.
server leaves the instance's defaults (SQLite: synchronous=NORMAL in WAL).

What a process kill can and cannot prove: it shows whether a database
acknowledges a commit before the commit is safe from the database process
dying. It cannot show what an OS crash or a power loss does: MySQL
innodb_flush_log_at_trx_commit=2 and SQLite synchronous=OFF (or NORMAL in
WAL mode) keep acknowledged commits in the OS page cache, which survives a
process kill and not a power loss, so 0 lost there proves nothing about
power loss; nor does any kill prove that the disk honours fsync. The report
says so for the database and setting that ran.

--out writes dbprobe's JSON result as the check goes (experiment
durability): a header with the settings and the database, a cycle record
as each cycle is checked, then the totals and the verdict. A check
killed on the way keeps the cycles it checked; dbprobe recover totals
them.

Exit code 1 when writes were lost under full (or server) durability, or a
loss was scattered; 2 for bad input.`,
		Example: `  dbprobe durability --database postgres
  dbprobe durability --database postgres --durability delayed --writers 16 --cycles 10
  dbprobe durability --database mariadb --crash-after 500ms..2s --out durability.jsonl
  dbprobe durability --database sqlite --durability delayed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDurability(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.database, "database", "sqlite", "the database to start and kill: postgres, mariadb or sqlite")
	f.StringVar(&o.durability, "durability", "full", "when commits are acknowledged: full (PostgreSQL synchronous_commit=on, MariaDB innodb_flush_log_at_trx_commit=1, SQLite synchronous=FULL), delayed (off, 2, OFF) or server (the instance's defaults)")
	f.IntVar(&o.cycles, "cycles", 5, "how many times the database is killed, restarted and checked")
	f.IntVar(&o.writers, "writers", 8, "concurrent writers, each committing one row at a time on its own connection")
	f.StringVar(&o.crashAfter, "crash-after", "1s..3s", "kill at a random moment this long after a cycle's first acknowledged commit: MIN..MAX, or one duration")
	f.StringVar(&o.bindir, "bindir", "", "directory of the server binaries (postgres and initdb, or mariadbd); default: found as the Debian packages install them")
	f.StringVar(&o.out, "out", "", "also write the JSON result to this file as the check goes: a header, one cycle record per cycle, the totals (dbprobe's result format, experiment durability)")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the kill moments (default: from the clock; printed)")
	// --db exists only to refuse it in words rather than as an unknown flag.
	f.StringVar(&o.db, "db", "", "not accepted: the check runs only on a database it starts itself")
	f.MarkHidden("db")
	setGroup(f, groupTarget, "database", "bindir", "db")
	setGroup(f, groupShape, "cycles", "writers", "crash-after", "seed")
	setGroup(f, groupKnobs, "durability")
	setGroup(f, groupOutputs, "out")
	completeDurabilityFlags(cmd)

	cmd.AddCommand(&cobra.Command{
		Use:    sqliteWriterCommand,
		Short:  "the SQLite writer of a durability check (started by the check itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !durability.IsChild() {
				return badinput.New("dbprobe durability %s is run by dbprobe durability itself; run dbprobe durability --database sqlite", sqliteWriterCommand)
			}
			return durability.ChildMain(cmd.Context(), cmd.OutOrStdout())
		},
	})
	return cmd
}

// config turns the flags into the check's configuration; every
// error is bad input.
func (o *durabilityOptions) config() (durability.Config, error) {
	var cfg durability.Config
	if o.db != "" {
		return cfg, badinput.New("dbprobe durability does not take --db: it kills the database it checks, so it runs only on one it starts itself; choose --database postgres, mariadb or sqlite")
	}
	db, err := durability.ParseDatabase(o.database)
	if err != nil {
		return cfg, err
	}
	d, err := driver.ParseDurability(o.durability)
	if err != nil {
		return cfg, badinput.New("--durability: %v", err)
	}
	lo, hi, err := parseDurationRange(o.crashAfter)
	if err != nil {
		return cfg, err
	}
	cfg = durability.Config{
		Database: db, Durability: d, Cycles: o.cycles, Writers: o.writers,
		CrashAfterMin: lo, CrashAfterMax: hi, Seed: o.seed, Bindir: o.bindir,
		ChildArgs: []string{"durability", sqliteWriterCommand},
	}
	if o.bindir != "" {
		if fi, err := os.Stat(o.bindir); err != nil || !fi.IsDir() {
			return cfg, badinput.New("--bindir %s is not a directory; give the directory of the server binaries", o.bindir)
		}
	}
	return cfg, cfg.Validate()
}

// parseDurationRange parses MIN..MAX or a single duration.
func parseDurationRange(s string) (time.Duration, time.Duration, error) {
	loText, hiText, isRange := strings.Cut(s, "..")
	if !isRange {
		hiText = loText
	}
	lo, err1 := time.ParseDuration(strings.TrimSpace(loText))
	hi, err2 := time.ParseDuration(strings.TrimSpace(hiText))
	if err1 != nil || err2 != nil {
		return 0, 0, badinput.New("--crash-after %q: write MIN..MAX or one duration, e.g. 1s..3s or 500ms", s)
	}
	return lo, hi, nil
}

func runDurability(cmd *cobra.Command, o *durabilityOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	out := durability.Output{Header: durabilityHeader(cmd, cfg)}
	if o.out != "" {
		// Created before the check, so that a wrong path fails first.
		out.W, err = result.Create(o.out)
		if err != nil {
			return badinput.New("cannot create --out %s: %v", o.out, experiment.ShortError(errors.Unwrap(err)))
		}
		defer out.W.Close()
	}
	// The first Ctrl-C ends the cycle at hand (the database is killed as
	// planned, only sooner) and the report covers the cycles checked.
	in := experiment.WatchInterrupts(cmd.Context())
	defer in.Stop()
	rep, err := durability.Run(in.Context(), cfg, cmd.OutOrStdout(), out)
	if out.W != nil {
		if cerr := out.W.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write --out %s: %w", o.out, cerr)
		}
		if err != nil {
			// An empty file says nothing; one with a header keeps the
			// cycles checked before the failure, which dbprobe recover
			// totals.
			if fi, serr := os.Stat(o.out); serr == nil && fi.Size() == 0 {
				os.Remove(o.out)
			}
		}
	}
	if err != nil {
		if sig := in.Signal(); sig != nil {
			return &experiment.Interrupted{Signal: sig, Err: err}
		}
		return err
	}
	if rep.Interrupted {
		return &experiment.Interrupted{Signal: in.Signal(), Out: o.out}
	}
	if passed, verdict := rep.Verdict(); !passed {
		return errors.New("durability check " + verdict)
	}
	return nil
}

// durabilityHeader is the command's part of the JSON result's header: the
// command line, every flag with its value in force and where it came
// from (the seed as chosen, the crash window as read), the environment.
func durabilityHeader(cmd *cobra.Command, cfg durability.Config) result.Header {
	settings := flagSettings(cmd.Flags(), nil)
	for i, s := range settings {
		switch s.Key {
		case "seed":
			settings[i].Value = strconv.FormatUint(cfg.Seed, 10)
			if s.Source == config.SourceDefault {
				settings[i].Source = "default (clock)"
			}
		case "crash-after":
			settings[i].Value = cfg.CrashAfter()
		}
	}
	h := result.Header{Command: commandLine(cmd), Environment: experiment.Environment()}
	for _, s := range settings {
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
	}
	return h
}
