package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/price"
	"github.com/dbprobe/dbprobe/internal/sweep"
)

// sweepOptions are the flags of dbprobe sweep.
type sweepOptions struct {
	vary     []string
	reps     int
	cooldown time.Duration
	between  string
	seed     uint64
	out      string
	prices   []string
	noLoad   bool
	keepDB   bool
	baseline string
}

// sweepExperiments are the commands a sweep runs, by their path below
// dbprobe.
var sweepExperiments = []string{"load", "run", "ycsb", "stress", "storage scan", "storage read", "storage write", "storage bulk", "storage logcopy"}

// sweepOutputFlags are the experiment's per-run files: one path given to
// every run would be overwritten by each.
var sweepOutputFlags = []string{"out", "hlog", "influx-out"}

// shapingProperties are the YCSB properties that decide what the table
// holds or how it is stored: variants that differ in one need a load of
// their own. The database (--db) shapes it too.
var shapingProperties = []string{"recordcount", "insertstart", "insertcount", "insertorder", "zeropadding", "fieldcount", "fieldlength",
	"minfieldlength", "fieldlengthdistribution", "fieldlengthhistogram", "fieldnameprefix", "table", "tabletype", "bucketcount"}

// runOnlyFlags are the flags of a run phase that a load of the table must
// not take: pacing and an end by time would cut or slow the load.
var runOnlyFlags = []string{"operations", "warmup", "target", "duration"}

// loadOnlyFlags are the flags of the load phase that a run must not take.
var loadOnlyFlags = []string{"drop-existing", "no-copy", "keep-db"}

func newSweepCommand() *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --vary KEY=V1,V2,… [--vary …] [--reps N] -- EXPERIMENT [its flags]",
		Short: "Run one experiment over a list of values of its settings, repeated and interleaved, with a recap table",
		Long: `sweep runs one experiment (run, ycsb, load, stress, storage scan|read|write|
bulk|logcopy) once per variant and repetition, and prints the recap table
the published studies print: one column per variant, a row for each setting
varied, then ops/s, average and 99th percentile read and write latency and
errors (stress and storage: their own headline figures), the spread of the
runs, and with --price what each variant costs.

--vary KEY=V1,V2,… takes a flag of the experiment (threads, durability,
table-type…) or, for load, run and ycsb, a YCSB property (recordcount,
fieldlength…); several --vary run their cross product. A key the
experiment does not know, an empty list or a value its flag refuses is
refused before anything runs.

Order: the runs of the variants are interleaved, never all of one and then
all of another: each round runs every variant once in an order shuffled
from --seed, so a drift with time (a cache warming, bloat, autovacuum, a
checkpoint) is spread over them. The order is printed before the first run.
Each run has its own result (NAME.run-07.jsonl and its text NAME.run-07.txt
beside the --out summary NAME.json), kept with its place in the order; the
sweep checks whether a variant's throughput moves with that place and says
so.

The table: for run and ycsb, the sweep loads the table once per table shape
(table type, record count, table name, field count and length, database)
with dbprobe load --drop-existing, which drops only a table dbprobe created,
and runs every variant of that shape on it; shapes go one after another.
--no-load uses the table as it is (a run experiment that varies no shaping
setting). ycsb without --db gets one SQLite file for the whole sweep.
stress and storage make their own tables in each run.

Over a numeric setting the recap prints the curve; over a number of workers
(threads, clients, dop) it says where throughput stops growing, what the
monitor named there, and fits the Universal Scalability Law (contention σ,
coherency κ, the peak N*, R²).

--price KEY=VALUE[,KEY=VALUE…]:AMOUNT/hour (or /month, 730 hours) prices
the variants it matches (a bare AMOUNT/hour prices all; the one naming the
most settings wins): cost per run, per million operations and per 1,000
ops/s sustained.

With two variants or more, each is held against the baseline (the first
variant, or --baseline: its number or its settings, e.g. threads=8) as
dbprobe compare holds B against A, on the headline metric alone
(throughput; a storage sweep's rate), with the Holm correction over the
comparisons: "threads=8 is 41% faster (95% CI 37–45%, p = 0.024, 5 runs
each)". With fewer than 4 runs per variant the rank test cannot reach
p < 0.05, and the line says how many runs would; with many variants the
correction needs more (5 runs each show at most 6 comparisons at once).

Each run is a dbprobe child process with its own exit status: a run that
fails is recorded and the sweep goes on; one that refuses its settings
stops it. A first Ctrl-C stops the run in progress as its own Ctrl-C would
(drained, its summary kept), runs no more, and prints the recap of the
finished runs; the summary says which did not run.`,
		Example: `  dbprobe sweep --vary threads=1,2,4,8,16,32 --reps 3 -- run --db postgres://bench@127.0.0.1:5432/bench --workload a --duration 30s
  dbprobe sweep --vary durability=full,delayed --vary table-type=disk,nondurable --reps 5 --between 'psql -c CHECKPOINT' -- ycsb --db postgres://bench@127.0.0.1:5432/bench -p recordcount=1000000 --threads 20 --duration 1m
  dbprobe sweep --vary recordcount=10000,100000,1000000 --reps 3 --out rows.json -- ycsb --workload c --threads 8 --duration 20s
  dbprobe sweep --vary dop=1,2,4,8 --reps 2 --price 'dop=1:1991/month' --price 'dop=2:3555/month' --price 1.2/hour -- storage logcopy --db postgres://bench@127.0.0.1:5432/bench --size 1GB`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSweep(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.vary, "vary", nil, "a setting and its values, KEY=V1,V2,…: a flag of the experiment (threads=1,2,4,8) or a YCSB property (recordcount=10000,100000); repeatable, for the cross product")
	f.IntVar(&o.reps, "reps", 3, "runs of each variant, interleaved with the other variants' runs")
	f.DurationVar(&o.cooldown, "cooldown", 0, "wait this long before every run but the first (e.g. 30s for the server to write its dirty pages); not counted as the sweep's own time")
	f.StringVar(&o.between, "between", "", "a shell command run before every run but the first, after --cooldown: a checkpoint, a cache drop, a restart (it gets DBPROBE_SWEEP_POSITION and DBPROBE_SWEEP_VARIANT); the sweep stops if it fails")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the order's shuffle (default: from the clock; printed with the order)")
	f.StringVar(&o.out, "out", "", "the sweep's summary (JSON); each run's result and text go beside it as NAME.run-N.jsonl and .txt (default sweep-YYYYMMDD-HHMMSS.json); an existing file is never overwritten")
	f.StringArrayVar(&o.prices, "price", nil, "what a variant's database costs, KEY=VALUE[,KEY=VALUE…]:AMOUNT/hour or /month (730 hours), or AMOUNT/hour for all; repeatable (e.g. --price 'threads=16:3555/month')")
	f.BoolVar(&o.noLoad, "no-load", false, "run and ycsb: use the table as it is instead of loading it once per table shape (refused when a --vary changes the table's shape)")
	f.StringVar(&o.baseline, "baseline", "", "the variant the others are compared against at the end: its number in the recap or its settings, e.g. threads=8 (default: the first)")
	f.BoolVar(&o.keepDB, "keep-db", false, "ycsb without --db: keep the SQLite database the sweep made in a temporary directory")
	setGroup(f, groupWorkload, "vary", "reps", "seed", "price", "no-load", "baseline")
	setGroup(f, groupShape, "cooldown", "between")
	setGroup(f, groupOutputs, "out")
	setGroup(f, groupTarget, "keep-db")
	register(cmd, "vary", fixedValues([]string{"threads=1,2,4,8,16,32", "durability=full,delayed", "table-type=disk,memory,nondurable", "recordcount=10000,100000,1000000"}))
	register(cmd, "price", fixedValues([]string{"AMOUNT/hour", "AMOUNT/month", "KEY=VALUE:AMOUNT/month"}))
	return cmd
}

// sweepExperiment is the experiment command of a sweep as parsed.
type sweepExperiment struct {
	// path is its path below dbprobe ("run", "storage scan").
	path []string
	// args are its flags as the user gave them.
	args []string
	// ycsb says it is load, run or ycsb, which take YCSB properties.
	ycsb bool
}

// fresh builds a new copy of the experiment's command, to parse a
// command line into.
func (e *sweepExperiment) fresh() (*cobra.Command, *options) {
	if e.ycsb {
		// The options the flags fill, to resolve the properties each
		// variant ends up with.
		return newYCSBFlags(e.path[0])
	}
	c, _, _ := NewRoot().Find(e.path)
	return c, nil
}

func runSweep(cmd *cobra.Command, o *sweepOptions, args []string) error {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 && len(args) > 0 || dash > 0 {
		return badinput.New("sweep takes the experiment after --: dbprobe sweep --vary threads=1,2,4 -- run --db URL …; %q is before it", args[0])
	}
	if len(args) == 0 {
		return badinput.New("nothing after --: give the experiment to sweep, e.g. dbprobe sweep --vary threads=1,2,4 -- run --db URL --workload a")
	}
	e, err := parseSweepExperiment(args)
	if err != nil {
		return err
	}
	if len(o.vary) == 0 {
		return badinput.New("no --vary: give a setting and its values, e.g. --vary threads=1,2,4,8")
	}
	if o.reps < 1 {
		return badinput.New("--reps %d: give at least 1 (3 or more to see the spread, 4 or more to check drift per variant)", o.reps)
	}
	if o.cooldown < 0 {
		return badinput.New("--cooldown %v: give a duration of 0 or more", o.cooldown)
	}
	base, _ := e.fresh()
	if err := base.ParseFlags(e.args); err != nil {
		return badinput.New("dbprobe %s: %v; see dbprobe %s --help", strings.Join(e.path, " "), err, strings.Join(e.path, " "))
	}
	if rest := base.Flags().Args(); len(rest) > 0 {
		return badinput.New("dbprobe %s takes no argument %q; see dbprobe %s --help", strings.Join(e.path, " "), rest[0], strings.Join(e.path, " "))
	}
	for _, name := range sweepOutputFlags {
		if base.Flags().Changed(name) {
			if name == "out" {
				return badinput.New("--out after --: give --out to sweep (its summary); each run's result goes beside it")
			}
			return badinput.New("--%s after --: every run would write the same file; drop it (each run's JSON result beside the summary holds the same figures)", name)
		}
	}
	vary, err := parseVary(o.vary, e, base)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.keepDB && e.path[0] != "ycsb" {
		return badinput.New("--keep-db applies to a sweep of ycsb without --db; drop it")
	}

	// run alone refuses to start without a database; in a sweep, its load
	// would fill a new SQLite file that no run then finds.
	if e.path[0] == "run" && !targetGiven(base, vary) && os.Getenv("DBPROBE_DB") == "" {
		return badinput.New("dbprobe sweep -- run needs --db: the database to load once per table shape and run on; or sweep ycsb, which makes a SQLite database for the sweep")
	}

	// A --db no driver reads is refused here, in one line, as the
	// experiment alone refuses it: found by the first load, it came after
	// the plan and an empty recap, and left a summary behind.
	var dbs []string
	if base.Flags().Changed("db") {
		dbs = append(dbs, base.Flags().Lookup("db").Value.String())
	}
	for _, v := range vary {
		if v.Key == "db" {
			dbs = append(dbs, v.Values...)
		}
	}
	for _, raw := range dbs {
		if _, err := driver.ParseTargetFrom("--db", raw, ""); err != nil {
			return err
		}
	}

	// The database of a ycsb sweep without one: one SQLite file for the
	// whole sweep, where each ycsb run alone would make and remove its own.
	var tempDB string
	if e.path[0] == "ycsb" && !base.Flags().Changed("db") && os.Getenv("DBPROBE_DB") == "" {
		dir, err := os.MkdirTemp("", "dbprobe-sweep-")
		if err != nil {
			return err
		}
		tempDB = dir
		if o.keepDB {
			defer fmt.Fprintf(cmd.ErrOrStderr(), "dbprobe sweep: kept the SQLite database in %s\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
	}
	variants, shapes, err := planSweep(e, vary, o, tempDB)
	if err != nil {
		return err
	}
	prices, err := parsePrices(o.prices, vary, variants)
	if err != nil {
		return err
	}
	baseline, err := sweep.BaselineID(variants, o.baseline)
	if err != nil {
		return badinput.New("%s", err)
	}
	out := o.out
	if out == "" {
		out = defaultSweepOut(time.Now())
	}
	if _, err := os.Stat(out); err == nil {
		return badinput.New("--out %s exists: give another name; a sweep never overwrites a summary", out)
	}
	if d := filepath.Dir(out); d != "." {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return badinput.New("--out %s: directory %s does not exist; create it or give another path", out, d)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sweep: finding the dbprobe binary to run: %w", err)
	}
	expFlags := base.Flags()
	redact := func(a []string) string {
		c, _ := e.fresh()
		// The load's and the ycsb-turned-run's flags are the experiment's
		// own, so its flag set reads them.
		c.Flags().AddFlagSet(expFlags)
		return "dbprobe " + redactCommand(a, c.Flags())
	}
	sweepArgs := os.Args[1:]
	if i := slices.Index(sweepArgs, "--"); i >= 0 {
		sweepArgs = sweepArgs[:i]
	}
	command := redactCommand(append([]string{"dbprobe"}, redactVaryArgs(sweepArgs)...), cmd.Flags()) + " -- " + redactCommand(args, expFlags)
	shown := make([]sweep.Vary, len(vary))
	for i, v := range vary {
		shown[i] = v
		shown[i].Values = make([]string, len(v.Values))
		for k, val := range v.Values {
			shown[i].Values[k] = shownValue(v.Key, val)
		}
	}
	return sweep.Run(cmd.Context(), &sweep.Config{
		Experiment: strings.Join(e.path, " "), Command: command, Vary: shown, Variants: variants, Shapes: shapes,
		Reps: o.reps, Seed: o.seed, Cooldown: o.cooldown, Between: o.between, BetweenShown: redactBetween(o.between), Out: out, Prices: prices, Baseline: baseline,
		Redact: redact, Exe: exe, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
	})
}

// parseSweepExperiment finds the experiment command in the arguments
// after --.
func parseSweepExperiment(args []string) (*sweepExperiment, error) {
	c, rest, err := NewRoot().Find(args)
	path := []string{}
	if err == nil {
		path = strings.Fields(c.CommandPath())[1:]
	}
	if err != nil || !slices.Contains(sweepExperiments, strings.Join(path, " ")) {
		return nil, badinput.New("dbprobe sweep -- %s: give an experiment after --: %s", args[0], strings.Join(sweepExperiments, ", "))
	}
	return &sweepExperiment{path: path, args: rest, ycsb: slices.Contains([]string{"load", "run", "ycsb"}, path[0])}, nil
}

// parseVary reads the --vary flags against the experiment's flags and
// properties.
func parseVary(specs []string, e *sweepExperiment, base *cobra.Command) ([]sweep.Vary, error) {
	var out []sweep.Vary
	seen := map[string]bool{}
	exp := "dbprobe " + strings.Join(e.path, " ")
	for _, spec := range specs {
		key, list, ok := strings.Cut(spec, "=")
		key = strings.TrimLeft(strings.TrimSpace(key), "-")
		if !ok || key == "" {
			return nil, badinput.New("--vary %q: give KEY=V1,V2,…, e.g. --vary threads=1,2,4,8", spec)
		}
		v := sweep.Vary{Key: key}
		f := base.Flags().Lookup(key)
		switch {
		case f != nil && (slices.Contains(sweepOutputFlags, key) || key == "help" || key == "quiet" || key == "status"):
			return nil, badinput.New("--vary %s: a sweep does not vary %s's --%s; vary a setting of the experiment", key, exp, key)
		case f != nil:
			v.As = "flag"
			if base.Flags().Changed(key) {
				return nil, badinput.New("--vary %s: %s is also given --%s after --; drop it there, the sweep sets it", key, exp, key)
			}
			if prop, ok := propertyFlags[key]; ok && e.ycsb {
				v.Shaping = slices.Contains(shapingProperties, prop)
			}
			v.Shaping = v.Shaping || key == "db"
		case e.ycsb && config.IsProperty(key):
			v.As = "property"
			v.Shaping = slices.Contains(shapingProperties, key)
			for flag, prop := range propertyFlags {
				if prop == key && base.Flags().Changed(flag) {
					return nil, badinput.New("--vary %s: %s is also given --%s, which sets %s and would win over the sweep's; drop it there", key, exp, flag, key)
				}
			}
		default:
			what := "flag"
			if e.ycsb {
				what = "flag or YCSB property"
			}
			return nil, badinput.New("--vary %s: %s has no %s %s; see %s --help", key, exp, what, key, exp)
		}
		if seen[key] {
			return nil, badinput.New("--vary %s is given twice; give all its values in one, e.g. --vary %s=1,2,4", key, key)
		}
		seen[key] = true
		for _, val := range strings.Split(list, ",") {
			val = strings.TrimSpace(val)
			if val == "" {
				return nil, badinput.New("--vary %q: an empty value; give KEY=V1,V2,… with no empty one", spec)
			}
			if slices.Contains(v.Values, val) {
				return nil, badinput.New("--vary %s gives %s twice; use --reps to repeat a variant", key, val)
			}
			v.Values = append(v.Values, val)
		}
		v.Concurrency = sweep.IsConcurrency(key)
		out = append(out, v)
	}
	return out, nil
}

// varyArgs are the arguments that set key to value.
func varyArgs(v sweep.Vary, value string) []string {
	if v.As == "property" {
		return []string{"-p", v.Key + "=" + value}
	}
	return []string{"--" + v.Key + "=" + value}
}

// shownValue is a varied value as the recap and the summary show it: a
// URL's password hidden.
func shownValue(key, value string) string {
	if key == "db" {
		return driver.RedactURL(value)
	}
	if config.SecretKey(key) {
		return config.ShownValue(value)
	}
	return value
}

// targetGiven reports whether the experiment's command line or a --vary
// names the database: --db, --shard or --shards-file.
func targetGiven(base *cobra.Command, vary []sweep.Vary) bool {
	for _, name := range []string{"db", "shard", "shards-file"} {
		if base.Flags().Changed(name) {
			return true
		}
		for _, v := range vary {
			if v.Key == name {
				return true
			}
		}
	}
	return false
}

// planSweep builds every variant's command line, checks that it parses
// and (load, run, ycsb) that its properties resolve, and groups the
// variants by the shape of the table they need.
func planSweep(e *sweepExperiment, vary []sweep.Vary, o *sweepOptions, tempDB string) ([]sweep.Variant, []sweep.Shape, error) {
	shaping := false
	for _, v := range vary {
		shaping = shaping || v.Shaping
	}
	if o.noLoad && (e.path[0] != "run" || shaping) {
		return nil, nil, badinput.New("--no-load applies to a sweep of run that varies nothing of the table's shape; drop it")
	}
	var dbArgs []string
	if tempDB != "" {
		dbArgs = []string{"--db", "sqlite://" + filepath.ToSlash(filepath.Join(tempDB, "sweep.db"))}
	}
	var variants []sweep.Variant
	var shapes []sweep.Shape
	shapeIndex := map[string]int{}
	var shapeValues []map[string]string
	combos := cross(vary)
	for i, combo := range combos {
		v := sweep.Variant{ID: i + 1}
		args := append([]string(nil), e.args...)
		shapeArgs := append([]string(nil), e.args...)
		for k, val := range combo {
			v.Settings = append(v.Settings, sweep.Setting{Key: vary[k].Key, Value: shownValue(vary[k].Key, val)})
			args = append(args, varyArgs(vary[k], val)...)
			if vary[k].Shaping {
				shapeArgs = append(shapeArgs, varyArgs(vary[k], val)...)
			}
		}
		c, opts := e.fresh()
		if err := c.ParseFlags(args); err != nil {
			return nil, nil, badinput.New("--vary %s: dbprobe %s: %v", v.Name(), strings.Join(e.path, " "), describeFlagError(err))
		}
		shapeKey := ""
		values := map[string]string{}
		if e.ycsb {
			props, err := opts.properties(c)
			if err != nil {
				return nil, nil, err
			}
			cfg, err := config.Resolve(props, opts.strict)
			if err != nil {
				return nil, nil, badinput.New("--vary %s: %v", v.Name(), err)
			}
			for _, s := range cfg.Settings {
				if slices.Contains(shapingProperties, s.Key) {
					values[s.Key] = s.Value
				}
			}
			values["db"] = driver.RedactURL(c.Flags().Lookup("db").Value.String())
			keys := make([]string, 0, len(values))
			for k := range values {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				shapeKey += k + "=" + values[k] + "\x00"
			}
		}
		k, ok := shapeIndex[shapeKey]
		if !ok {
			k = len(shapes)
			shapeIndex[shapeKey] = k
			shapeValues = append(shapeValues, values)
			sh := sweep.Shape{}
			switch {
			case e.path[0] == "run" && !o.noLoad, e.path[0] == "ycsb":
				load, err := loadArgs(e, shapeArgs, dbArgs)
				if err != nil {
					return nil, nil, err
				}
				sh.Load = load
			}
			shapes = append(shapes, sh)
		}
		v.Shape = k
		switch e.path[0] {
		case "ycsb":
			run, err := rebuildArgs(e, args, "run", loadOnlyFlags)
			if err != nil {
				return nil, nil, err
			}
			v.Args = append(append(run, dbArgs...), "--quiet")
		case "load":
			v.Args = append(append([]string{"load"}, args...), "--drop-existing", "--quiet")
		default:
			v.Args = append(append(append([]string(nil), e.path...), args...), "--quiet")
		}
		variants = append(variants, v)
	}
	// A shape is shown by the settings that tell it from the others.
	for k := range shapes {
		for key, val := range shapeValues[k] {
			for j := range shapes {
				if shapeValues[j][key] != val {
					shapes[k].Settings = append(shapes[k].Settings, sweep.Setting{Key: key, Value: val})
					break
				}
			}
		}
		sort.Slice(shapes[k].Settings, func(a, b int) bool { return shapes[k].Settings[a].Key < shapes[k].Settings[b].Key })
	}
	return variants, shapes, nil
}

// loadArgs are the arguments of the load that fills a shape's table: the
// experiment's flags and the shape's varied settings, without what only
// a run takes, with any pace or time limit a -P file or -p sets undone,
// and --drop-existing so that each shape starts from the rows it asks
// for (it drops only a table dbprobe created).
func loadArgs(e *sweepExperiment, shapeArgs, dbArgs []string) ([]string, error) {
	a, err := rebuildArgs(e, shapeArgs, "load", append(append([]string(nil), runOnlyFlags...), "keep-db", "drop-existing"))
	if err != nil {
		return nil, err
	}
	return append(append(a, dbArgs...), "--target=0", "--duration=0s", "--drop-existing", "--quiet"), nil
}

// rebuildArgs parses args as the experiment's and writes them back as the
// command "to" takes them, leaving out the flags skip names.
func rebuildArgs(e *sweepExperiment, args []string, to string, skip []string) ([]string, error) {
	c, _ := e.fresh()
	if err := c.ParseFlags(args); err != nil {
		return nil, badinput.New("dbprobe %s: %v", strings.Join(e.path, " "), err)
	}
	out := []string{to}
	c.Flags().Visit(func(f *pflag.Flag) {
		if slices.Contains(skip, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out, nil
}

// cross is the cross product of the values, the first key slowest.
func cross(vary []sweep.Vary) [][]string {
	out := [][]string{{}}
	for _, v := range vary {
		var next [][]string
		for _, prefix := range out {
			for _, val := range v.Values {
				next = append(next, append(append([]string(nil), prefix...), val))
			}
		}
		out = next
	}
	return out
}

// parsePrices reads --price and checks that each selects on a varied
// key and one of its values, and that no variant has two prices at once.
func parsePrices(specs []string, vary []sweep.Vary, variants []sweep.Variant) ([]price.Selected, error) {
	var out []price.Selected
	for _, s := range specs {
		p, err := price.Parse(s)
		if err != nil {
			return nil, err
		}
		for _, m := range p.Matches {
			i := slices.IndexFunc(vary, func(v sweep.Vary) bool { return v.Key == m.Key })
			if i < 0 {
				return nil, badinput.New("--price %q selects on %s, which no --vary varies; select on a varied key or give AMOUNT/hour for all", s, m.Key)
			}
			if !slices.Contains(vary[i].Values, m.Value) {
				return nil, badinput.New("--price %q: %s=%s is not one of the values --vary gives (%s)", s, m.Key, m.Value, strings.Join(vary[i].Values, ","))
			}
		}
		out = append(out, p)
	}
	for _, v := range variants {
		if _, err := sweep.PriceFor(out, v); err != nil {
			return nil, badinput.New("%v", err)
		}
	}
	return out, nil
}

// redactBetween shows a --between command with any URL's password in it
// hidden, word by word.
func redactBetween(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = redactLooseURL(w)
	}
	return strings.Join(f, " ")
}

// redactVaryArgs hides the password of every URL in the values of
// --vary (--vary db=URL1,URL2), which the command line's redaction
// reads as one value.
func redactVaryArgs(args []string) []string {
	out := append([]string(nil), args...)
	hide := func(spec string) string {
		key, list, ok := strings.Cut(spec, "=")
		if !ok {
			return spec
		}
		vals := strings.Split(list, ",")
		for i, v := range vals {
			vals[i] = shownValue(strings.TrimLeft(key, "-"), v)
			vals[i] = redactLooseURL(vals[i])
		}
		return key + "=" + strings.Join(vals, ",")
	}
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == "--vary" && i+1 < len(out):
			i++
			out[i] = hide(out[i])
		case strings.HasPrefix(out[i], "--vary="):
			out[i] = "--vary=" + hide(strings.TrimPrefix(out[i], "--vary="))
		}
	}
	return out
}

// defaultSweepOut names a summary by the second the sweep started, with
// a suffix when a sweep started in the same second already took it, so
// two sweeps started together do not refuse each other.
func defaultSweepOut(now time.Time) string {
	stem := "sweep-" + now.UTC().Format("20060102-150405")
	out := stem + ".json"
	for i := 2; i < 100; i++ {
		if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
			break
		}
		out = fmt.Sprintf("%s-%d.json", stem, i)
	}
	return out
}
