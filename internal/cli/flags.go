package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/export"
)

// sharedOptions are the flags every experiment command takes: the
// target, the outputs, the monitor and the interrupts.
type sharedOptions struct {
	db           string
	passwordFile string
	status       bool
	quiet        bool
	out          string
	seed         uint64

	// allowInsecureTLS accepts less than verified TLS to a host that is
	// not loopback.
	allowInsecureTLS bool

	monitorInterval time.Duration
	waitSamples     int
	noMonitor       bool
	metricsAddr     string
	metricsRemote   bool
	metricsLinger   time.Duration
	influxOut       string
	hlog            string
	drainTimeout    time.Duration
}

// options are the flags load, run and ycsb share.
type options struct {
	sharedOptions
	propFiles    []string
	props        []string
	workload     string
	threads      int
	target       float64
	records      int64
	operations   int64
	duration     time.Duration
	strict       bool
	warmup       time.Duration
	dropExisting bool
	noCopy       bool
	keepDB       bool
	shardOptions
	readDB string

	tableType        string
	durability       string
	durabilityScope  string
	opPath           string
	bucketCount      int64
	retries          int
	retryBackoff     time.Duration
	retryMaxBackoff  time.Duration
	opTimeout        time.Duration
	onError          string
	reconnectTimeout time.Duration

	clients clientOptions
}

// addTargetFlags adds --db (with its usage, which says what happens
// without it), --password-file and --allow-insecure-tls.
func addTargetFlags(cmd *cobra.Command, o *sharedOptions, dbUsage string) {
	f := cmd.Flags()
	f.StringVar(&o.db, "db", "", dbUsage)
	f.StringVar(&o.passwordFile, "password-file", "", "read the database password from this file (else the URL or env DBPROBE_PASSWORD)")
	f.BoolVar(&o.allowInsecureTLS, "allow-insecure-tls", false, "connect to a database that is not on loopback without verified TLS (PostgreSQL sslmode other than verify-full, MySQL tls other than true, SQL Server without encrypt or with TrustServerCertificate=true, Redis redis:// or skip_verify); the weaker mode is recorded in the result")
	setGroup(f, groupTarget, "db", "password-file", "allow-insecure-tls")
	register(cmd, "db", completeDB)
}

// addOutputFlags adds the outputs, the progress on stderr, the monitor
// and --drain-timeout.
func addOutputFlags(cmd *cobra.Command, o *sharedOptions) {
	f := cmd.Flags()
	f.BoolVarP(&o.status, "status", "s", false, "print a status line in YCSB's format on stderr every 10 seconds (load, run, ycsb: every status.interval seconds) instead of the live progress line a terminal gets")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr, neither the live line nor status lines; notes (where a kept database is, the metrics address), warnings and errors still print")
	f.StringVar(&o.out, "out", "", "also write the JSON result to this file, record by record as the run goes")
	f.DurationVar(&o.monitorInterval, "monitor-interval", time.Second, "how often the monitor samples the database's counters and waits, the host (when the database is on this machine) and dbprobe itself; the samples go to the JSON result (--out), --influx-out and --metrics-addr, and the bottleneck verdict needs 3 of them")
	f.IntVar(&o.waitSamples, "monitor-wait-samples", 10, "how many times per monitor interval the database's sessions are looked at for what they wait on (PostgreSQL pg_stat_activity, MySQL processlist, SQL Server requests), 1 to 100")
	f.BoolVar(&o.noMonitor, "no-monitor", false, "do not sample the database, the host or dbprobe during the phase")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (throughput, latency, the monitor's samples) at http://ADDR/metrics while the run goes; loopback only unless --metrics-allow-remote, e.g. 127.0.0.1:9464")
	f.DurationVar(&o.metricsLinger, "metrics-linger", 0, "keep serving --metrics-addr this long after the last phase, so that a scrape after the end takes the run's last counts (e.g. 30s for a 15 s scrape interval; a first Ctrl-C ends the wait); 0 = stop serving at once")
	f.BoolVar(&o.metricsRemote, "metrics-allow-remote", false, "let --metrics-addr be an address other machines reach (the figures describe the database and its host)")
	f.StringVar(&o.influxOut, "influx-out", "", "also write the per-second figures and the monitor's samples to this file as InfluxDB line protocol")
	f.StringVar(&o.hlog, "hlog", "", "also write each second's latency histograms to this file as an HdrHistogram interval log, for HdrHistogram's own tools: values in microseconds, one tag per phase and series (Tag=load/INSERT, Tag=run/READ, Tag=stress/ITERATION, Tag=stress/LOOP.SQL-1; warm-up as run-warmup/READ), a ycsb run's load and run in one file; e.g. HistogramLogProcessor -i FILE -tag run/READ -outputValueUnitRatio 1000 (milliseconds)")
	f.DurationVar(&o.drainTimeout, "drain-timeout", 10*time.Second, "on the first Ctrl-C (or SIGTERM), how long operations in flight may take to finish before they are cancelled; the summary is then printed and the result marked interrupted. A second Ctrl-C exits at once (status 130) without a summary: dbprobe recover rebuilds it from --out")
	setGroup(f, groupFaults, "drain-timeout")
	setGroup(f, groupOutputs, "out", "status", "quiet", "influx-out", "metrics-addr", "metrics-allow-remote", "metrics-linger", "hlog")
	setGroup(f, groupMonitor, "monitor-interval", "monitor-wait-samples", "no-monitor")
}

// checkMetricsFlags refuses the flags of the Prometheus endpoint without
// the endpoint, and an address it could not serve on, before anything is
// made: a bad --metrics-addr once came after the line that announced a
// new SQLite database.
func checkMetricsFlags(cmd *cobra.Command, o *sharedOptions) error {
	if err := checkOutputDirs(o); err != nil {
		return err
	}
	if o.metricsAddr != "" {
		return export.CheckMetricsAddr(o.metricsAddr, o.metricsRemote)
	}
	for _, f := range []string{"metrics-allow-remote", "metrics-linger"} {
		if cmd.Flags().Changed(f) {
			return badinput.New("--%s applies to the Prometheus endpoint, and no --metrics-addr is given; add --metrics-addr 127.0.0.1:PORT or drop --%s", f, f)
		}
	}
	return nil
}

// checkOutputDirs refuses an output file whose directory is not there,
// before anything is made: the file itself is created only once the
// database is reached, after the line that announces a new SQLite
// database, so such a mistake cost two lines and a database made and
// removed.
func checkOutputDirs(o *sharedOptions) error {
	for _, f := range []struct{ flag, path string }{{"--out", o.out}, {"--influx-out", o.influxOut}, {"--hlog", o.hlog}} {
		if f.path == "" || f.path == "-" {
			continue
		}
		dir := filepath.Dir(f.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return badinput.New("cannot write %s %s: directory %s does not exist; create it or give another path", f.flag, f.path, dir)
		}
	}
	return nil
}

// experimentConfigs are the target, outputs and monitor the shared flags
// ask for, the outputs with the console's progress line.
func (o *sharedOptions) experimentConfigs(con *experiment.Console) (experiment.TargetConfig, experiment.OutputConfig, experiment.MonitorConfig) {
	return experiment.TargetConfig{DB: o.db, PasswordFile: o.passwordFile, AllowInsecureTLS: o.allowInsecureTLS},
		experiment.OutputConfig{Out: o.out, InfluxOut: o.influxOut, MetricsAddr: o.metricsAddr, MetricsRemote: o.metricsRemote, MetricsLinger: o.metricsLinger, Hlog: o.hlog, Status: o.status, Progress: con.Progress},
		experiment.MonitorConfig{Off: o.noMonitor, Interval: o.monitorInterval, WaitSamples: o.waitSamples}
}

// addCommonFlags adds the flags every YCSB command takes.
func addCommonFlags(cmd *cobra.Command, o *options) {
	addTargetFlags(cmd, &o.sharedOptions, "database URL: postgres://user@host:5432/db, mysql://user@host:3306/db, sqlserver://user@host:1433?database=db, redis://host:6379/0, sqlite:///path/file.db, null (env DBPROBE_DB; load and ycsb default to a new SQLite database in a temporary directory, run needs one)")
	f := cmd.Flags()
	f.StringArrayVarP(&o.propFiles, "properties", "P", nil, "YCSB properties file; repeatable, later files override earlier ones; workloads/workloada…f are built in")
	f.StringArrayVarP(&o.props, "property", "p", nil, "YCSB property key=value, overriding files; repeatable (e.g. -p recordcount=100000)")
	f.StringVar(&o.workload, "workload", "", "core workload a–f (or a properties file), read before any -P file (default a when no -P is given)")
	f.IntVar(&o.threads, "threads", 1, "worker threads, each with its own connection; refused before the phase when the server accepts fewer connections than these and the monitor's (property threadcount)")
	f.Float64Var(&o.target, "target", 0, "total operations per second to pace at, open loop; 0 = as fast as possible, closed loop (property target)")
	f.Int64Var(&o.records, "records", 0, "records in the table (property recordcount; 1000 in the built-in workloads, e.g. --records 1000000)")
	f.DurationVar(&o.duration, "duration", 0, "stop the phase after this long, e.g. 5m (property maxexecutiontime); an operationcount only a built-in workload or the default set (1000) gives way, so the run lasts this long, while one you set stands")
	f.BoolVar(&o.strict, "strict", false, "treat an unknown property as an error instead of a note")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the workers' random sources (default: from the clock; printed in the header)")

	f.StringVar(&o.tableType, "table-type", "disk", "how load creates the table: disk (ordinary), memory (SQL Server memory-optimized, MySQL ENGINE=MEMORY, SQLite in-memory database) or nondurable (PostgreSQL UNLOGGED, SQL Server SCHEMA_ONLY) (property tabletype)")
	f.StringVar(&o.durability, "durability", "server", "when commits are acknowledged: server (leave the server's setting and report it), full, or delayed (SQL Server DELAYED_DURABILITY, PostgreSQL synchronous_commit=off, MySQL innodb_flush_log_at_trx_commit=2, SQLite synchronous=OFF; server-wide settings are put back at exit) (property durability)")
	f.StringVar(&o.durabilityScope, "durability-scope", "database", "where delayed durability is asked for: database, or transaction (SQL Server: COMMIT WITH (DELAYED_DURABILITY = ON)) (property durability.scope)")
	f.StringVar(&o.opPath, "op-path", "statement", "statement (prepared statements) or procedure (stored procedures dbprobe creates beside the table and drops with it) (property oppath)")
	f.Int64Var(&o.bucketCount, "bucket-count", 0, "hash buckets of a SQL Server memory-optimized table (default: recordcount rounded up to a power of two) (property bucketcount)")
	f.IntVar(&o.retries, "retries", 0, "repeat an operation that failed with a retryable error (deadlock, write conflict, serialization failure, busy) up to N times; 0 = never, as YCSB (property retries)")
	f.DurationVar(&o.retryBackoff, "retry-backoff", time.Millisecond, "wait before the first retry; each later wait doubles, with jitter (property retry.backoff)")
	f.DurationVar(&o.retryMaxBackoff, "retry-max-backoff", 100*time.Millisecond, "longest wait between retries (property retry.maxbackoff)")
	f.DurationVar(&o.opTimeout, "op-timeout", 0, "fail an operation (a load batch counts as one) that takes longer than this, counted as Return=ERROR(timeout); its worker then reconnects; 0 = no limit, as YCSB (property op.timeout)")
	f.StringVar(&o.onError, "on-error", "stop", "what a phase does at a failure more attempts cannot fix (a full disk or log, a read-only database, a quota spent, a permission revoked): stop (at once, saying why, what was done and, for a database on this machine, the free space of its file system; exit status 1) or continue (count such failures and go on, to measure the failure itself) (property onerror)")
	o.reconnectTimeout = 60 * time.Second
	f.Var(&teachingDuration{d: &o.reconnectTimeout, hint: "give a duration such as 30s or 2m, or 0 to wait as long as it takes"}, "reconnect-timeout", "how long a load, or a run bounded by --operations alone, waits for a database that stopped answering before it stops (exit status 1, the result kept up to then); a run with --duration keeps trying until its end; 0 = wait as long as it takes (property reconnect.timeout)")

	setGroup(f, groupWorkload, "workload", "properties", "property", "records", "seed", "strict")
	setGroup(f, groupShape, "threads", "target", "duration")
	setGroup(f, groupKnobs, "table-type", "durability", "durability-scope", "op-path", "bucket-count")
	setGroup(f, groupFaults, "retries", "retry-backoff", "retry-max-backoff", "op-timeout", "on-error", "reconnect-timeout")
	addShardFlags(cmd, &o.shardOptions)
	addOutputFlags(cmd, &o.sharedOptions)
	addClientFlags(cmd, &o.clients)
	completeCommonFlags(cmd)
}

// addRunFlags adds the flags of the commands with a run phase.
func addRunFlags(cmd *cobra.Command, o *options) {
	cmd.Flags().Int64Var(&o.operations, "operations", 0, "operations in the run phase (property operationcount; 1000 in the built-in workloads, which --duration overrides; e.g. --operations 1000000)")
	cmd.Flags().DurationVar(&o.warmup, "warmup", 0, "exclude the run phase's first DURATION from the statistics (the operations still count toward operationcount)")
	setGroup(cmd.Flags(), groupWorkload, "operations")
	setGroup(cmd.Flags(), groupShape, "warmup")
	addReadDBFlag(cmd, o)
}

func addLoadFlags(cmd *cobra.Command, o *options) {
	cmd.Flags().BoolVar(&o.dropExisting, "drop-existing", false, "drop and recreate the table if dbprobe created it earlier (a table dbprobe did not create is never dropped)")
	cmd.Flags().BoolVar(&o.noCopy, "no-copy", false, "load with multi-row INSERTs of db.batchsize rows instead of the database's bulk API (COPY, LOAD DATA LOCAL INFILE, bulk copy; for Redis, one script call per row)")
	setGroup(cmd.Flags(), groupKnobs, "drop-existing", "no-copy")
}

// propertyFlags are the flags that set a property, by flag name: their
// values, with the flag as the source, are the property's.
var propertyFlags = map[string]string{
	"threads": "threadcount", "target": "target", "records": "recordcount", "operations": "operationcount",
	"duration": "maxexecutiontime", "table-type": "tabletype", "durability": "durability",
	"durability-scope": "durability.scope", "op-path": "oppath", "bucket-count": "bucketcount",
	"retries": "retries", "retry-backoff": "retry.backoff", "retry-max-backoff": "retry.maxbackoff",
	"op-timeout": "op.timeout", "on-error": "onerror", "reconnect-timeout": "reconnect.timeout",
}

// properties gathers the configuration sources in precedence order:
// built-in or --workload file, -P files, -p properties, typed flags.
func (o *options) properties(cmd *cobra.Command) (*config.Properties, error) {
	p := config.NewProperties()
	if o.workload != "" {
		if err := p.LoadBuiltin(o.workload, ""); err != nil {
			return nil, err
		}
	} else if len(o.propFiles) == 0 {
		if err := p.LoadBuiltin("a", "workloads/workloada, by default"); err != nil {
			return nil, err
		}
	}
	for _, f := range o.propFiles {
		if err := p.LoadFile(f); err != nil {
			return nil, err
		}
	}
	for _, kv := range o.props {
		if err := p.SetAssignment(kv); err != nil {
			return nil, err
		}
	}
	fromFlags(p, cmd.Flags(), propertyFlags)
	return p, nil
}

// ycsbStyleArgs rewrites YCSB's single-dash long options (-threads 8,
// -target 100) into dbprobe's, so a YCSB command line works unchanged.
func ycsbStyleArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case a == "-threads" || a == "-target" || strings.HasPrefix(a, "-threads=") || strings.HasPrefix(a, "-target="):
			out[i] = "-" + a
		default:
			out[i] = a
		}
	}
	return out
}

// teachingDuration is a duration flag whose complaint about a value that
// does not parse says what to give instead: the parser's own ("time:
// invalid duration") names no remedy.
type teachingDuration struct {
	d    *time.Duration
	hint string
}

func (t *teachingDuration) String() string {
	if t.d == nil {
		return "0s"
	}
	return t.d.String()
}

func (t *teachingDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New(t.hint)
	}
	*t.d = d
	return nil
}

func (t *teachingDuration) Type() string { return "duration" }
