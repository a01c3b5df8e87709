package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbprobe/internal/badinput"
	"dbprobe/internal/config"
	"dbprobe/internal/driver"
	"dbprobe/internal/export"
	"dbprobe/internal/monitor"
	"dbprobe/internal/rawnet"
	"dbprobe/internal/result"
	"dbprobe/internal/runner"
	"dbprobe/internal/workload"
	"dbprobe/internal/ycsb"
)

// job is one invocation of load, run or ycsb, resolved and connected.
type job struct {
	// loads says a load phase is among the command's phases, so the
	// database may be created.
	loads  bool
	opts   *options
	cmd    *cobra.Command
	cfg    *config.Config
	target driver.Target
	db     driver.DB
	table  driver.Table
	stdout io.Writer
	stderr io.Writer
	// outs receives the header, intervals, monitor samples, status lines
	// and summary of every phase: the text on stdout, and --out,
	// --influx-out and --metrics-addr when given.
	outs *result.Outputs
	// kept says whether a JSON result keeps the intervals' histograms and
	// the monitor's samples; ticks, whether any output takes intervals.
	kept, ticks bool
	log         *slog.Logger
	stops       *interrupts
	seed        uint64
	tempDir     string // the default SQLite database's directory, when used
	// removeTemp says whether tempDir goes at exit: ycsb removes it unless
	// --keep-db; load keeps it for a later run.
	removeTemp bool
	args       []string
}

// ErrPhaseFailed marks a phase that ran but did not do what it was asked,
// such as a load with failed inserts: exit code 1.
var ErrPhaseFailed = errors.New("phase failed")

// execute runs the given phases in order with the command's flags. A
// first Ctrl-C or SIGTERM drains the phase and ends the command with its
// summary; a second one returns at once, leaving the phases' goroutine to
// die with the process, which only cmd/dbprobe may end.
func execute(cmd *cobra.Command, o *options, phases []runner.Phase) error {
	stops := watchInterrupts(cmd.Context())
	defer stops.stop()
	done := make(chan error, 1)
	go func() { done <- runPhases(cmd, o, phases, stops) }()
	select {
	case err := <-done:
		if sig := stops.signal(); sig != nil {
			return &Interrupted{Signal: sig, Out: o.out, Err: err}
		}
		return err
	case <-stops.abandoned:
		return &Interrupted{Signal: stops.signal(), Abandoned: true, Out: o.out}
	}
}

// runPhases connects and runs the phases; stops.ctx is cancelled by the
// first interrupt.
func runPhases(cmd *cobra.Command, o *options, phases []runner.Phase, stops *interrupts) (err error) {
	ctx := stops.ctx
	j := &job{opts: o, cmd: cmd, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(), stops: stops}
	j.log = slog.New(slog.NewTextHandler(j.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := j.resolve(phases); err != nil {
		return err
	}
	defer j.cleanupTemp()
	if j.removeTemp {
		dir := j.tempDir
		stops.atAbandon(func() { os.RemoveAll(dir) })
	}
	if err := j.connect(ctx); err != nil {
		return err
	}
	defer j.db.Close()
	if r, ok := j.db.(driver.SettingsRestorer); ok {
		// Close is never reached after a second interrupt: a server-wide
		// setting the run changed is put back here instead.
		stderr := j.stderr
		stops.atAbandon(func() { restoreAtAbandon(r, stderr) })
	}
	if err := j.openOutputs(ctx, stops); err != nil {
		return err
	}
	defer func() {
		if cerr := j.outs.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, ph := range phases {
		interrupted, err := j.phase(ctx, ph)
		if err != nil {
			return err
		}
		if interrupted {
			break
		}
	}
	return nil
}

// openOutputs opens the outputs the flags ask for, each behind
// result.Output.
func (j *job) openOutputs(ctx context.Context, stops *interrupts) error {
	o := j.opts
	j.outs = &result.Outputs{}
	j.outs.Add("stdout", result.NewText(j.stdout, j.stderr, o.status))
	if o.out != "" {
		w, err := result.Create(o.out)
		if err != nil {
			return badinput.New("cannot write --out %s: %v", o.out, shortError(errors.Unwrap(err)))
		}
		// On a second interrupt the file is closed between two records,
		// so it ends with a whole one however the process then ends.
		stops.atAbandon(func() { w.Close() })
		j.outs.Add(o.out, w)
		j.kept, j.ticks = true, true
	}
	if o.influxOut != "" {
		x, err := export.CreateInflux(o.influxOut, map[string]string{"driver": j.db.Info().Driver})
		if err != nil {
			return badinput.New("cannot write --influx-out %s: %v", o.influxOut, shortError(err))
		}
		j.outs.Add(o.influxOut, x)
		j.ticks = true
	}
	if o.metricsAddr != "" {
		p := export.NewPrometheus(map[string]string{"driver": j.db.Info().Driver})
		addr, err := p.Serve(ctx, o.metricsAddr)
		if err != nil {
			return err
		}
		fmt.Fprintf(j.stderr, "dbprobe: Prometheus metrics at http://%s/metrics while the run goes\n", addr)
		j.outs.Add("--metrics-addr", p)
		j.ticks = true
	}
	return nil
}

// resolve builds the typed configuration and the target.
func (j *job) resolve(phases []runner.Phase) error {
	o := j.opts
	props, err := o.properties(j.cmd)
	if err != nil {
		return err
	}
	if j.cfg, err = config.Resolve(props, o.strict); err != nil {
		return err
	}
	for _, ph := range phases {
		j.loads = j.loads || ph == runner.Load
		if ph == runner.Run && j.cfg.Workload.OperationCount == 0 && j.cfg.MaxExecutionTime == 0 {
			return badinput.New("operationcount=0 and no maxexecutiontime: the run would do nothing; set -p operationcount=N or --duration D")
		}
	}
	if o.drainTimeout < 0 {
		return badinput.New("--drain-timeout %s must not be negative (0 cancels operations in flight at once)", o.drainTimeout)
	}
	if o.warmup < 0 {
		return badinput.New("--warmup %s must not be negative", o.warmup)
	}
	if t := j.cfg.MaxExecutionTime; o.warmup > 0 && t > 0 && o.warmup >= t && slices.Contains(phases, runner.Run) {
		return badinput.New("--warmup %s is not shorter than maxexecutiontime=%s: nothing of the run would be measured; shorten the warm-up or lengthen the run", o.warmup, t)
	}
	if (o.waitSamples < 1 || o.waitSamples > 100) && !o.noMonitor {
		return badinput.New("--monitor-wait-samples %d: give 1 to 100 samples per interval (default 10)", o.waitSamples)
	}
	if o.monitorInterval < 10*time.Millisecond && !o.noMonitor {
		return badinput.New("--monitor-interval %s is too short: give 10ms or more (default 1s), or --no-monitor", o.monitorInterval)
	}
	j.seed = o.seed
	if !j.cmd.Flags().Changed("seed") {
		j.seed = uint64(time.Now().UnixNano())
	}
	password, err := o.password()
	if err != nil {
		return err
	}
	raw, source := o.db, "--db"
	if raw == "" {
		raw, source = os.Getenv("DBPROBE_DB"), "DBPROBE_DB"
	}
	if raw == "" {
		if phases[0] == runner.Run {
			return badinput.New("run needs --db: the database that dbprobe load filled (e.g. --db sqlite:///tmp/dbprobe-123/ycsb.db)")
		}
		dir, err := os.MkdirTemp("", "dbprobe-")
		if err != nil {
			return fmt.Errorf("creating a temporary directory for SQLite: %w", err)
		}
		j.tempDir = dir
		j.removeTemp = len(phases) > 1 && !o.keepDB
		raw = "sqlite://" + filepath.ToSlash(filepath.Join(dir, "ycsb.db"))
		what := "kept for dbprobe run"
		if j.removeTemp {
			what = "removed at exit; --keep-db keeps it"
		}
		fmt.Fprintf(j.stderr, "dbprobe: no --db given: using a new SQLite database %s (%s)\n", filepath.Join(dir, "ycsb.db"), what)
	}
	if j.target, err = driver.ParseTargetFrom(source, raw, password); err != nil {
		return err
	}
	// Checked for every target, though only the server drivers use it: a
	// value that means nothing is an error wherever it is given.
	if err := rawnet.Check(); err != nil {
		return err
	}
	j.target.AllowInsecureTLS = o.allowInsecureTLS
	s := &j.cfg.Workload
	// The columns hold the longest value the workload writes: fieldlength,
	// or with fieldlengthdistribution=histogram the histogram's longest.
	j.table = driver.Table{Name: s.Table, KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: s.FieldNames(), FieldLength: s.MaxFieldLength()}
	return nil
}

func (j *job) cleanupTemp() {
	if j.tempDir == "" {
		return
	}
	if j.removeTemp {
		os.RemoveAll(j.tempDir)
		return
	}
	fmt.Fprintf(j.stderr, "dbprobe: the SQLite database stays at %s; run against it with --db %s\n", filepath.Join(j.tempDir, "ycsb.db"), j.target.Redacted())
}

// connect opens the database, failing early on an unreachable server or
// refused credentials.
func (j *job) connect(ctx context.Context) error {
	d, _, err := driver.Lookup(j.target.Driver)
	if err != nil {
		return badinput.New("%v", err)
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := j.cfg
	j.db, err = d.Open(octx, j.target, driver.Options{
		Sessions: c.Threads, BulkLoad: !j.opts.noCopy,
		TableType: c.TableType, BucketCount: c.BucketCount,
		Durability: c.Durability, DurabilityScope: c.DurabilityScope, OpPath: c.OpPath,
		Existing: !j.loads,
	})
	if err != nil {
		return scrubbed{j.target, err}
	}
	return nil
}

// phase runs one phase and prints its results. It reports whether the
// phase was interrupted.
func (j *job) phase(ctx context.Context, ph runner.Phase) (bool, error) {
	tableNotes, err := j.prepareTable(ctx, ph)
	if err != nil {
		return false, err
	}
	var monitored []monitor.Interval
	mon, monitorNotes := j.startMonitor(ctx, ph, &monitored)
	seenNotes := 0
	if mon != nil {
		seenNotes = len(mon.Notes())
	}
	var lateNotes []string // what the monitor lost during the phase
	stopMonitor := func() {
		if mon != nil {
			mon.Stop()
			for _, n := range mon.Notes()[seenNotes:] {
				lateNotes = append(lateNotes, "monitor: "+n)
			}
			mon = nil
		}
	}
	defer stopMonitor()
	header := j.header(ph)
	header.Notes = append(header.Notes, tableNotes...)
	header.Notes = append(header.Notes, monitorNotes...)
	if err := j.outs.Header(header); err != nil {
		return false, err
	}

	cfg := j.cfg
	ropts := runner.Options{
		Phase:            ph,
		Threads:          cfg.Threads,
		Target:           cfg.Target,
		MaxExecutionTime: cfg.MaxExecutionTime,
		BatchSize:        cfg.BatchSize,
		Percentiles:      cfg.Percentiles,
		Seed:             j.seed,
		DrainTimeout:     max(j.opts.drainTimeout, time.Nanosecond), // the runner reads 0 as its default
		Retry:            runner.RetryPolicy{Max: cfg.Retries, Backoff: cfg.RetryBackoff, MaxBackoff: cfg.RetryMaxBackoff},
		OpTimeout:        cfg.OpTimeout,
		Histograms:       j.kept,
		OnStart: func(_, origin time.Time) {
			// The runner's intervals end on whole seconds from its start.
			if mon != nil {
				mon.Align(origin)
			}
		},
		OnFirstError: func(op, code string, err error) {
			j.log.Warn("operation failed; later failures with this code are only counted", "op", op, "code", code, "error", j.target.ScrubError(err))
		},
	}
	if ph == runner.Run {
		ropts.Warmup = j.opts.warmup
	}
	if j.opts.status {
		ropts.StatusInterval = cfg.StatusInterval
		ropts.OnStatus = func(s runner.Status) {
			j.outs.Status(result.Status{Now: s.Now, Elapsed: s.Elapsed, TotalOps: s.TotalOps, OpsPerSec: s.OpsPerSec, Remaining: s.Remaining, Series: s.Series})
		}
	}
	if j.ticks {
		ropts.OnTick = func(t runner.Tick) {
			iv := result.Interval{Phase: ph.String(), Start: t.Start, End: t.End, Elapsed: t.Elapsed, Ops: t.Ops, Warmup: t.Warmup, Series: t.Series}
			if d := t.End.Sub(t.Start).Seconds(); d > 0 {
				iv.OpsPerSec = float64(t.Ops) / d
			}
			j.outs.Interval(iv)
		}
	}

	out, err := ycsb.Execute(ctx, j.db, j.table, &cfg.Workload, ropts)
	// The monitor's last interval belongs before the summary.
	stopMonitor()
	if err != nil {
		return false, scrubbed{j.target, err}
	}
	sum := result.Summary{
		Phase:       ph.String(),
		RunTime:     out.RunTime,
		Ops:         out.Ops,
		Throughput:  out.Throughput,
		Series:      out.Series,
		Errors:      out.Errors,
		Interrupted: out.Interrupted,
		Warmup:      out.Warmup,
		RetryLimit:  cfg.Retries,
	}
	sum.Ending = j.ending(ph, out)
	if len(out.Outages) > 0 || out.Reconnects > 0 {
		sum.Availability = &result.Availability{Reconnects: out.Reconnects}
		for _, o := range out.Outages {
			sum.Availability.Outages = append(sum.Availability.Outages, result.Outage{Start: o.Start, End: o.End, Failed: o.Failed, Ongoing: o.Ongoing})
		}
	}
	sum.Notes = append(sum.Notes, lateNotes...)
	if out.Interrupted {
		sum.Notes = append(sum.Notes, j.interruptNote())
	}
	if !j.opts.noMonitor {
		sum.Diagnosis = diagnose(monitored, out.Start, out.End, cfg.Threads, j.db.Info().Placement)
	}
	// WriteText itself reports interruption, warm-up, overflow and errors.
	if out.WarmupUnfinished {
		sum.Notes = append(sum.Notes, "the phase ended before its warm-up did: nothing was measured")
	}
	if err := j.outs.Summary(sum); err != nil {
		return false, err
	}
	if ph == runner.Load && out.Failed > 0 {
		return out.Interrupted, fmt.Errorf("%w: load: %d of %d inserts failed (%s); the table is incomplete", ErrPhaseFailed, out.Failed, out.Ops, formatCodes(out.Errors))
	}
	return out.Interrupted, nil
}

func formatCodes(codes map[string]int64) string {
	var parts []string
	for code, n := range codes {
		parts = append(parts, fmt.Sprintf("%s×%d", code, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// prepareTable checks the table before a phase: load creates it or
// refuses to touch someone else's data; run needs it to exist.
func (j *job) prepareTable(ctx context.Context, ph runner.Phase) (notes []string, err error) {
	t := j.table
	where := j.target.Redacted()
	st, err := j.db.Inspect(ctx, t)
	if err != nil {
		return nil, scrubbed{j.target, fmt.Errorf("inspecting table %s: %w", t.Name, err)}
	}
	if st.Stateless {
		return []string{fmt.Sprintf("table %s: %s", t.Name, st.Storage)}, nil
	}
	if ph == runner.Run {
		if !st.Exists {
			return nil, badinput.New("table %s does not exist in %s; load it first with dbprobe load and the same --db, -P and -p", t.Name, where)
		}
		if err := checkColumns(t, st); err != nil {
			return nil, err
		}
		if err := j.checkTableType(st); err != nil {
			return nil, err
		}
		if err := j.checkProcedures(st); err != nil {
			return nil, err
		}
		if err := j.checkPrivileges(ctx, ph); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("table %s: %s", t.Name, st.Storage))
		if !st.HasRows {
			notes = append(notes, fmt.Sprintf("table %s is empty: reads, updates and scans will find nothing", t.Name))
		}
		return notes, nil
	}
	s := &j.cfg.Workload
	sliced := s.InsertStart != 0 || s.InsertCount != s.RecordCount
	switch {
	case !st.Exists:
		if err := j.db.CreateTable(ctx, t); err != nil {
			return nil, scrubbed{j.target, fmt.Errorf("creating table %s: %w", t.Name, err)}
		}
		notes = append(notes, fmt.Sprintf("created table %s (recorded as dbprobe's: --drop-existing may drop it later)", t.Name))
	case !st.CreatedByDbprobe:
		if j.opts.dropExisting && st.OwnershipNote != "" {
			return nil, badinput.New("table %s in %s will not be dropped: %s", t.Name, where, st.OwnershipNote)
		}
		if j.opts.dropExisting {
			return nil, badinput.New("table %s in %s was not created by dbprobe: it will not be dropped; drop it yourself or use another table with -p table=NAME", t.Name, where)
		}
		if st.HasRows && st.OwnershipNote != "" {
			return nil, badinput.New("table %s in %s holds rows, and dbprobe will not load into it: %s", t.Name, where, st.OwnershipNote)
		}
		if st.HasRows {
			return nil, badinput.New("table %s in %s holds rows dbprobe did not write: refusing to load into it; use another table with -p table=NAME", t.Name, where)
		}
		if err := checkColumns(t, st); err != nil {
			return nil, err
		}
		if err := j.checkTableType(st); err != nil {
			return nil, err
		}
		if err := j.checkProcedures(st); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("loading into the existing empty table %s, which dbprobe did not create and will never drop", t.Name))
	case j.opts.dropExisting:
		if err := j.db.DropTable(ctx, t); err != nil {
			return nil, scrubbed{j.target, fmt.Errorf("dropping table %s: %w", t.Name, err)}
		}
		if err := j.db.CreateTable(ctx, t); err != nil {
			return nil, scrubbed{j.target, fmt.Errorf("creating table %s: %w", t.Name, err)}
		}
		notes = append(notes, fmt.Sprintf("dropped and recreated table %s (created by dbprobe earlier)", t.Name))
	case st.HasRows && !sliced:
		return nil, badinput.New("table %s in %s already holds rows from an earlier dbprobe load; use them with dbprobe run, or add --drop-existing to drop and reload it", t.Name, where)
	default:
		if err := checkColumns(t, st); err != nil {
			return nil, err
		}
		if err := j.checkTableType(st); err != nil {
			return nil, err
		}
	}
	// How the table is stored, as the database reports it now.
	if st, err = j.db.Inspect(ctx, t); err != nil {
		return nil, scrubbed{j.target, fmt.Errorf("inspecting table %s: %w", t.Name, err)}
	}
	if err := j.checkPrivileges(ctx, ph); err != nil {
		return nil, err
	}
	notes = append(notes, fmt.Sprintf("table %s: %s", t.Name, st.Storage))
	return notes, nil
}

// checkTableType refuses to run on a table stored otherwise than the user
// asked for with an explicit table type: the figures would be mislabelled.
func (j *job) checkTableType(st driver.TableState) error {
	if !j.tableTypeChosen() || st.Type == j.cfg.TableType {
		return nil
	}
	return badinput.New("table %s is a %s table (%s), but tabletype=%s was asked for; load it again with --table-type %s --drop-existing, or leave --table-type out to run on it as it is",
		j.table.Name, st.Type, st.Storage, j.cfg.TableType, j.cfg.TableType)
}

// checkProcedures refuses the procedure path on a table dbprobe did not
// create: the path creates procedures beside the table, in someone else's
// schema, and DropTable, which would remove them, never touches that table.
func (j *job) checkProcedures(st driver.TableState) error {
	if j.cfg.OpPath != driver.PathProcedure || st.CreatedByDbprobe {
		return nil
	}
	return badinput.New("table %s was not created by dbprobe, and --op-path procedure would create procedures beside it that dbprobe could never drop; use --op-path statement, or a table dbprobe loads (-p table=NAME)", j.table.Name)
}

// tableTypeChosen reports whether the user set the table type (by flag,
// -p or a file) rather than leaving the default.
func (j *job) tableTypeChosen() bool {
	for _, s := range j.cfg.Settings {
		if s.Key == "tabletype" {
			return s.Source != config.SourceDefault
		}
	}
	return false
}

// checkColumns makes sure an existing table has the workload's shape.
func checkColumns(t driver.Table, st driver.TableState) error {
	want := append([]string{t.KeyColumn}, t.Fields...)
	ok := len(st.Columns) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.EqualFold(st.Columns[i], want[i])
	}
	if !ok {
		return badinput.New("table %s has columns %s, but this workload needs %s (fieldcount=%d); use the fieldcount it was loaded with, or another table with -p table=NAME",
			t.Name, strings.Join(st.Columns, ","), strings.Join(want, ","), len(t.Fields))
	}
	return nil
}

// header describes the phase: every effective setting and its source.
func (j *job) header(ph runner.Phase) result.Header {
	cfg := j.cfg
	info := j.db.Info()
	h := result.Header{
		Phase:     ph.String(),
		Command:   j.commandLine(),
		StartedAt: time.Now(),
		Target:    j.target.Redacted(),
		Notes:     append([]string(nil), cfg.Notes...),
		Environment: result.Environment{
			Dbprobe: Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
			CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		},
		Database: result.Database{Driver: info.Driver, Library: info.Library, ServerVersion: info.ServerVersion, Placement: info.Placement.String()},
	}
	h.Environment.Hostname, _ = os.Hostname()
	h.Experiment = result.ExperimentYCSB
	for _, s := range info.Settings {
		h.Database.Settings = append(h.Database.Settings, result.Setting{Key: s.Name, Value: s.Value})
	}
	for _, s := range cfg.Settings {
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
	}
	mode := "closed loop (each thread starts its next operation when the last one returns)"
	if cfg.Target > 0 {
		mode = fmt.Sprintf("open loop at %g ops/s in all; latency from each operation's intended start is reported as Intended-OP", cfg.Target)
		if ph == runner.Load && cfg.BatchSize > 1 {
			mode += "; rows are due at that rate, and a batch goes out when its last row is due"
		}
	}
	h.Settings = append(h.Settings, result.Setting{Key: "ends", Value: j.bounds(ph), Source: "derived"})
	seedSource := "--seed"
	if !j.cmd.Flags().Changed("seed") {
		seedSource = "default (clock)"
	}
	h.Settings = append(h.Settings,
		result.Setting{Key: "mode", Value: mode, Source: sourceOf(j.cmd, "target", "derived")},
		result.Setting{Key: "seed", Value: strconv.FormatUint(j.seed, 10), Source: seedSource},
	)
	if ph == runner.Load {
		path := "the database's bulk API (PostgreSQL COPY, MySQL LOAD DATA LOCAL INFILE, SQL Server bulk copy, Redis one script per batch), db.batchsize rows per transaction"
		if j.opts.noCopy {
			path = "multi-row INSERT, db.batchsize rows per statement and transaction"
		}
		h.Settings = append(h.Settings, result.Setting{Key: "load path", Value: path, Source: sourceOf(j.cmd, "no-copy", "default")})
		if cfg.BatchSize > 1 {
			h.Notes = append(h.Notes, "each loaded row's latency is its batch's: a row is acknowledged when its batch commits")
		}
	}
	if ph == runner.Run {
		h.Settings = append(h.Settings, result.Setting{Key: "warmup", Value: j.opts.warmup.String(), Source: sourceOf(j.cmd, "warmup", "default")})
		if j.opts.warmup > 0 {
			h.Notes = append(h.Notes, fmt.Sprintf("warm-up: the first %s of the run are excluded from the statistics", j.opts.warmup))
		}
	}
	h.Settings = append(h.Settings,
		result.Setting{Key: "drain timeout", Value: j.opts.drainTimeout.String(), Source: sourceOf(j.cmd, "drain-timeout", "default")},
		result.Setting{Key: "strict", Value: strconv.FormatBool(j.opts.strict), Source: sourceOf(j.cmd, "strict", "default")},
	)
	if ph == runner.Run && cfg.Workload.RequestDistribution == workload.Zipfian {
		h.Notes = append(h.Notes, "requestdistribution zipfian is YCSB's scrambled zipfian (constant 0.99): popular keys are scattered over the table")
	}
	return h
}

// bounds says in advance what will end the phase: its count, its time,
// or whichever comes first.
func (j *job) bounds(ph runner.Phase) string {
	s := &j.cfg.Workload
	var count string
	switch {
	case ph == runner.Load:
		count = fmt.Sprintf("%d records (insertcount)", s.InsertCount)
	case s.OperationCount > 0:
		count = fmt.Sprintf("%d operations (operationcount)", s.OperationCount)
	}
	limit := ""
	if t := j.cfg.MaxExecutionTime; t > 0 {
		limit = t.String() + " (maxexecutiontime)"
	}
	switch {
	case count != "" && limit != "":
		return "after " + count + " or " + limit + ", whichever comes first"
	case count != "":
		return "after " + count
	}
	return "after " + limit
}

// ending says which bound ended the phase, with the figures.
func (j *job) ending(ph runner.Phase, out *runner.Outcome) *result.Ending {
	e := &result.Ending{By: out.EndedBy.String()}
	switch out.EndedBy {
	case runner.EndedByInterrupt:
		e.Text = fmt.Sprintf("interrupted after %d operations", out.Ops)
	case runner.EndedByTime:
		e.Text = fmt.Sprintf("maxexecutiontime=%s ran out after %d operations", j.cfg.MaxExecutionTime, out.Ops)
		if ph == runner.Load {
			e.Text += fmt.Sprintf(", before the %d records of insertcount were all inserted", j.cfg.Workload.InsertCount)
		} else if n := j.cfg.Workload.OperationCount; n > 0 {
			e.Text += fmt.Sprintf(", before the %d of operationcount", n)
		}
	default:
		if ph == runner.Load {
			e.Text = fmt.Sprintf("all %d records of insertcount done", j.cfg.Workload.InsertCount)
		} else {
			e.Text = fmt.Sprintf("all %d operations of operationcount done", j.cfg.Workload.OperationCount)
		}
		if t := j.cfg.MaxExecutionTime; t > 0 {
			e.Text += fmt.Sprintf(" before maxexecutiontime=%s", t)
		}
	}
	return e
}

func sourceOf(cmd *cobra.Command, flag, otherwise string) string {
	if cmd.Flags().Changed(flag) {
		return "--" + flag
	}
	return otherwise
}

// commandLine is the command as typed, with its secrets hidden.
func (j *job) commandLine() string {
	return redactCommand(append([]string{"dbprobe", j.cmd.Name()}, os.Args[min(2, len(os.Args)):]...), j.cmd.Flags())
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
	case "db":
		return driver.RedactURL(value)
	case "property":
		return config.RedactAssignment(value)
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

// scrubbed is an error whose message, if it holds the target's password
// in a library's words, shows them withheld (see driver.Target.ScrubError).
type scrubbed struct {
	target driver.Target
	err    error
}

func (s scrubbed) Error() string { return s.target.ScrubError(s.err) }
func (s scrubbed) Unwrap() error { return s.err }

// interruptNote says what stopped the phase and how long operations in
// flight were given.
func (j *job) interruptNote() string {
	by := "stopped early"
	if sig := j.stops.signal(); sig != nil {
		by = "stopped by " + signalName(sig)
	}
	return fmt.Sprintf("%s: no operation started after it; those in flight had up to %s (--drain-timeout) to finish, and any still running then was cancelled and counted as failed", by, j.opts.drainTimeout)
}

// abandonRestoreTimeout bounds putting server settings back after a second
// interrupt, which is meant to stop the command at once.
const abandonRestoreTimeout = 5 * time.Second

// restoreAtAbandon puts back the server-wide settings the run changed
// when a second interrupt abandons the command, and says so on stderr if
// it cannot.
func restoreAtAbandon(r driver.SettingsRestorer, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), abandonRestoreTimeout)
	defer cancel()
	if err := r.RestoreSettings(ctx); err != nil {
		fmt.Fprintf(stderr, "dbprobe: %v; set it back by hand\n", err)
	}
}
