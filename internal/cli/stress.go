package cli

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/stress"
)

// stressOptions are the flags of dbprobe stress.
type stressOptions struct {
	sharedOptions
	sql              []string
	setup            string
	teardown         string
	sessionSetup     string
	threads          int
	iterations       int64
	duration         time.Duration
	target           float64
	delay            time.Duration
	warmup           time.Duration
	transaction      bool
	protocol         string
	connectPerIter   bool
	paramsQuery      string
	paramsCSV        string
	paramsOrder      string
	params           []string
	explain          bool
	retries          int
	retryBackoff     time.Duration
	retryMaxBackoff  time.Duration
	opTimeout        time.Duration
	onError          string
	reconnectTimeout time.Duration
	mix              string
	rows             int64
	rowBytes         int
	keep             bool
	placement        string
	placementTemp    string
}

func newStressCommand() *cobra.Command {
	o := &stressOptions{}
	cmd := &cobra.Command{
		Use:   "stress",
		Short: "Run your own SQL under N threads × M iterations, measured per statement",
		Long: `stress runs the statements of one or more SQL files, as SQLQueryStress does,
and measures them as YCSB's runs are measured: a latency histogram per
statement and per iteration, errors by code, the per-second series, the
monitor's verdict, and what each statement cost the server.

Each thread has its own connection and runs --iterations iterations (N
threads × M iterations in all), or runs until --duration. An iteration
picks one --sql file (by weight: --sql a.sql@3 --sql b.sql@1) and runs
its statements in order, each on its own, or all in one transaction with
--transaction. Statements end with ; by the database's own rules (quotes,
comments and dollar quotes are respected).

Parameters are written :name in the SQL and bound as real parameters,
never spliced into the text. Their values come from --params-query (a
query run once at the start: each column, named as the database names
it, is a parameter; rows are dealt round-robin or at random), from
--params-csv (a header row of names), or from --param NAME=DIST:LO:HI
(uniform, zipfian or sequential, drawn per iteration from --seed;
sequential gives LO first and wraps around to LO after HI). A
parameter the SQL uses and none of these gives is refused before anything
runs.

Before anything is measured, --setup runs once (each statement as
written, not prepared: MySQL prepares no CREATE TRIGGER), and every
statement is prepared, so that a syntax error is one line naming the
file, the line and the database's message; each statement's plan is
taken with the values it first runs with. --explain analyzes each
statement once at the end and says when its plan changed. --teardown
runs once at the end, also after Ctrl-C or a failure once --setup ran.
Your SQL runs as written: dbprobe adds nothing destructive of its own.

Results: YCSB's lines per statement ([LOOP.SQL-2] is the second statement
of loop.sql) and for [ITERATION], with RowsReturned and RowsAffected, and
where the database keeps them the server's costs per call (logical and
physical reads, rows, CPU and time) and per iteration (the whole
database's, other sessions included). Without --db a new SQLite database
in a temporary directory is used and removed at exit.`,
		Example: `  dbprobe stress --sql loop.sql --threads 8 --iterations 1000 --param id=uniform:1:100000
  dbprobe stress --db postgres://app@127.0.0.1:5432/shop --setup setup.sql --teardown teardown.sql --sql order.sql@3 --sql report.sql@1 --threads 32 --duration 2m --params-csv customers.csv --transaction --retries 5
  dbprobe stress --db mysql://app@127.0.0.1:3306/shop --sql lookup.sql --params-query 'SELECT id FROM customers' --params-order random --threads 16 --iterations 5000 --explain --out stress.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStress(cmd, o)
		},
	}
	addTargetFlags(cmd, &o.sharedOptions, "database URL: postgres://user@host:5432/db, mysql://user@host:3306/db, sqlserver://user@host:1433?database=db, sqlite:///path/file.db (env DBPROBE_DB; default: a new SQLite database in a temporary directory, removed at exit)")
	f := cmd.Flags()
	f.StringArrayVar(&o.sql, "sql", nil, "a file of statements an iteration runs in order; repeatable, FILE@WEIGHT to pick it more or less often (e.g. --sql read.sql@9 --sql write.sql@1)")
	f.StringVar(&o.setup, "setup", "", "a file of statements run once before the measurement, each as written, unprepared (create and fill tables, triggers)")
	f.StringVar(&o.teardown, "teardown", "", "a file of statements run once after it, also after Ctrl-C or a failure once --setup ran")
	f.StringVar(&o.sessionSetup, "session-setup", "", "a file of statements run on every connection as it opens, before any other: your application's session settings (SET …)")
	f.StringVar(&o.paramsQuery, "params-query", "", "a query run once at the start whose columns, as the database names them (give an expression a name with AS), give the parameters' values, a row per iteration (e.g. 'SELECT id, name FROM customers')")
	f.StringVar(&o.paramsCSV, "params-csv", "", "a CSV file whose header row names the parameters and each later row gives their values, a row per iteration")
	f.StringVar(&o.paramsOrder, "params-order", "round-robin", "how rows of --params-query and --params-csv are dealt out: round-robin (iteration i takes row i, cycling) or random")
	f.StringArrayVar(&o.params, "param", nil, "a parameter drawn per iteration, NAME=DIST:LO:HI with DIST uniform, zipfian (YCSB's scrambled zipfian) or sequential (LO, LO+1, … HI, then LO again; one counter shared by the threads, the first iteration getting LO); repeatable")
	f.BoolVar(&o.explain, "explain", false, "at the end, analyze each statement once (PostgreSQL EXPLAIN (ANALYZE, BUFFERS) and the like, rolled back) and say when its plan changed from the one at the start")
	f.StringVar(&o.mix, "mix", "", "run a built-in workload instead of --sql: oltp, the repeatable SELECT/INSERT/UPDATE/DELETE loop over a table of wide rows that dbprobe creates, fills and drops (--iterations defaults to 100000)")
	f.Int64Var(&o.rows, "rows", stress.DefaultMixRows, "rows of the --mix table, filled on the server before the run")
	f.IntVar(&o.rowBytes, "row-bytes", stress.DefaultMixRowBytes, "payload bytes of each --mix row, a fixed-width column stored inline and uncompressed")
	f.BoolVar(&o.keep, "keep", false, "keep the --mix table (and its --placement) at the end; the next --mix run drops it and makes it afresh")
	f.StringVar(&o.placement, "placement", "", "a directory on the database's host for the --mix table: a tablespace (PostgreSQL) or DATA DIRECTORY (MySQL) dbprobe makes there and drops after; without --db, the SQLite database file itself")
	f.StringVar(&o.placementTemp, "placement-temp", "", "a directory on the database's host for its temporary files (sorts and hashes that spill), set on every connection: PostgreSQL a tablespace in temp_tablespaces, SQLite PRAGMA temp_store_directory")
	f.StringVar(&o.protocol, "protocol", "prepared", "prepared (statements prepared once per connection, as pgbench -M prepared) or simple (the text sent each time, the client putting in the values, as pgbench -M simple)")
	f.BoolVar(&o.transaction, "transaction", false, "run an iteration's statements as one transaction (COMMIT timed apart); a failure rolls it back and --retries repeats the whole iteration")
	f.BoolVar(&o.connectPerIter, "connect-per-iteration", false, "open a new connection for every iteration (session setup and prepare included), timed as CONNECT: for applications that connect each time")
	f.IntVar(&o.threads, "threads", 1, "threads, each with its own connection")
	f.Int64Var(&o.iterations, "iterations", 0, "iterations per thread (as SQLQueryStress counts: --threads × --iterations in all); 0 = until --duration")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long, e.g. 5m; with --iterations, whichever comes first")
	f.Float64Var(&o.target, "target", 0, "iterations per second in all, open loop: latency is also measured from each iteration's intended start (Intended-ITERATION); 0 = closed loop")
	f.DurationVar(&o.delay, "delay", 0, "pause between two iterations of a thread (SQLQueryStress's delay), not counted in any latency")
	f.DurationVar(&o.warmup, "warmup", 0, "exclude the first DURATION from the figures, rows and server costs (its iterations still count toward --iterations)")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the script choice, --param draws and --params-order random (default: from the clock; printed in the header)")
	f.IntVar(&o.retries, "retries", 0, "repeat a statement (with --transaction, the whole iteration) that failed with a retryable error (deadlock, serialization failure, busy) up to N times")
	f.DurationVar(&o.retryBackoff, "retry-backoff", time.Millisecond, "wait before the first retry; each later wait doubles, with jitter")
	f.DurationVar(&o.retryMaxBackoff, "retry-max-backoff", 100*time.Millisecond, "longest wait between retries")
	f.DurationVar(&o.opTimeout, "op-timeout", 0, "fail a statement (with --transaction, an iteration) that takes longer than this, counted as Return=ERROR(timeout); its thread then reconnects; 0 = no limit")
	f.StringVar(&o.onError, "on-error", "stop", "what the run does at a failure more attempts cannot fix (a full disk, a read-only database, a permission revoked): stop (exit status 1) or continue")
	o.reconnectTimeout = 60 * time.Second
	f.Var(&teachingDuration{d: &o.reconnectTimeout, hint: "give a duration such as 30s or 2m, or 0 to wait as long as it takes"}, "reconnect-timeout", "how long a run bounded by --iterations alone waits for a database that stopped answering before it stops; a run with --duration keeps trying until its end; 0 = wait as long as it takes")
	addOutputFlags(cmd, &o.sharedOptions)
	setGroup(f, groupWorkload, "sql", "mix", "rows", "row-bytes", "keep", "setup", "teardown", "session-setup", "params-query", "params-csv", "params-order", "param", "seed", "explain")
	setGroup(f, groupShape, "threads", "iterations", "duration", "target", "delay", "warmup")
	setGroup(f, groupKnobs, "protocol", "transaction", "connect-per-iteration", "placement", "placement-temp")
	setGroup(f, groupFaults, "retries", "retry-backoff", "retry-max-backoff", "op-timeout", "on-error", "reconnect-timeout")
	register(cmd, "protocol", fixedValues(enumNames(stress.ParseProtocol)))
	register(cmd, "mix", fixedValues(stress.MixNames()))
	register(cmd, "params-order", fixedValues(enumNames(stress.ParseOrder)))
	register(cmd, "on-error", fixedValues(enumNames(runner.ParseOnError)))
	return cmd
}

// runStress turns the flags into the experiment's configuration and runs
// it; stress.Run validates it before anything connects.
func runStress(cmd *cobra.Command, o *stressOptions) error {
	if err := checkMetricsFlags(cmd, &o.sharedOptions); err != nil {
		return err
	}
	c := &stress.Config{
		Setup: o.setup, Teardown: o.teardown, SessionSetup: o.sessionSetup,
		Threads: o.threads, Iterations: o.iterations, Duration: o.duration, Rate: o.target, Delay: o.delay, Warmup: o.warmup,
		Transaction: o.transaction, ConnectPerIteration: o.connectPerIter,
		ParamsQuery: o.paramsQuery, ParamsCSV: o.paramsCSV, Explain: o.explain,
		Retries: o.retries, RetryBackoff: o.retryBackoff, RetryMaxBackoff: o.retryMaxBackoff,
		OpTimeout: o.opTimeout, ReconnectTimeout: o.reconnectTimeout, DrainTimeout: o.drainTimeout,
		Seed: o.seed, SeedGiven: cmd.Flags().Changed("seed"),
		StatusInterval: 10 * time.Second,
		CommandLine:    commandLine(cmd),
		Flags:          flagSettings(cmd.Flags(), nil, "db"),
	}
	if err := o.mixConfig(cmd, c); err != nil {
		return err
	}
	for _, s := range o.sql {
		sf, err := stress.ParseScriptArg(s)
		if err != nil {
			return err
		}
		c.Scripts = append(c.Scripts, sf)
	}
	for _, p := range o.params {
		spec, err := stress.ParseParam(p)
		if err != nil {
			return err
		}
		c.Params = append(c.Params, spec)
	}
	var err error
	if c.Protocol, err = stress.ParseProtocol(o.protocol); err != nil {
		return err
	}
	if c.ParamsOrder, err = stress.ParseOrder(o.paramsOrder); err != nil {
		return err
	}
	if c.OnError, err = runner.ParseOnError(o.onError); err != nil {
		return badinput.New("%v", err)
	}
	con, err := experiment.NewConsole(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.status, o.quiet)
	if err != nil {
		return err
	}
	defer con.Close()
	c.Target, c.Outputs, c.Monitor = o.experimentConfigs(con)
	c.Stdout, c.Stderr, c.Quiet = con.Stdout, con.Stderr, o.quiet
	return stress.Run(cmd.Context(), c)
}

// mixConfig reads --mix and the flags that shape its table; those flags
// without --mix are bad input, since they would change nothing.
func (o *stressOptions) mixConfig(cmd *cobra.Command, c *stress.Config) error {
	c.Placement, c.PlacementTemp, c.Keep = o.placement, o.placementTemp, o.keep
	if o.mix == "" {
		for _, name := range []string{"rows", "row-bytes"} {
			if cmd.Flags().Changed(name) {
				return badinput.New("--%s shapes the table of --mix oltp; without --mix dbprobe creates no table", name)
			}
		}
		return nil
	}
	m, err := stress.ParseMix(o.mix)
	if err != nil {
		return err
	}
	c.Mix, c.Rows, c.RowBytes = m, o.rows, o.rowBytes
	if !cmd.Flags().Changed("iterations") {
		c.Iterations = stress.DefaultMixIterations
		// The header shows the count in force, and why.
		for i := range c.Flags {
			if c.Flags[i].Key == "iterations" {
				c.Flags[i].Value, c.Flags[i].Source = strconv.FormatInt(c.Iterations, 10), "default of --mix"
			}
		}
	}
	return nil
}
