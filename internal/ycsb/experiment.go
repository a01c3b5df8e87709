package ycsb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// Config is what a YCSB command (load, run or ycsb) asks for: the
// properties in precedence order, and the flags that are not properties,
// each typed. The commands in internal/cli fill it from their flags.
type Config struct {
	// Phases are run in order: the load, the run, or both.
	Phases []runner.Phase
	// Properties are the YCSB properties and dbprobe's knobs, each with
	// its source; Strict makes an unknown one an error.
	Properties *config.Properties
	Strict     bool
	Target     experiment.TargetConfig
	Outputs    experiment.OutputConfig
	Monitor    experiment.MonitorConfig
	// Warmup excludes the run phase's first part from the statistics.
	Warmup time.Duration
	// DrainTimeout bounds operations in flight after the first interrupt.
	DrainTimeout time.Duration
	// Seed seeds the workers' random sources; SeedGiven says the user
	// chose it (else the clock's is used).
	Seed      uint64
	SeedGiven bool
	// DropExisting drops and recreates a table dbprobe created before;
	// NoCopy loads with multi-row INSERTs instead of the bulk API.
	DropExisting, NoCopy bool
	// Shards and ShardsFile spread the table over several databases
	// (--shard, --shards-file) instead of Target.DB; see shards.go.
	Shards     []string
	ShardsFile string
	// CommandLine is the command as typed, its secrets hidden.
	CommandLine string
	// Flags are every flag that is not a property, with its value and
	// source, for the header (config.FlagSettings).
	Flags []config.Setting
	// Stdout takes the text results, Stderr messages and status lines.
	Stdout, Stderr io.Writer
	// Clients is the command's place among the clients of a run of
	// several; the zero value is a lone client.
	Clients Clients
	// ReadDB is --read-db: a replica of the target that the run's reads
	// and scans go to (replica.go); "" for none.
	ReadDB string
}

// ErrPhaseFailed marks a phase that ran but did not do what it was asked,
// such as a load with failed inserts: exit code 1.
var ErrPhaseFailed = errors.New("phase failed")

// job is one invocation of the experiment, resolved and connected.
type job struct {
	c *Config
	// loads says a load phase is among the phases, so the database may be
	// created.
	loads  bool
	cfg    *config.Config
	target *experiment.Target
	db     driver.DB
	table  driver.Table
	outs   *experiment.Outputs
	log    *slog.Logger
	stops  *experiment.Interrupts
	seed   uint64
	// dataDir is the database's data directory when it is on this
	// machine and says where (asked before the phases: after a fault the
	// server may not answer), for the file system a stop names.
	dataDir string
	// specs are each phase's workload as this client runs it: its slice
	// of a run of several clients, the whole workload otherwise.
	specs map[runner.Phase]workload.Spec
	// waited says the --start-at wait is done (it applies to the first
	// phase only).
	waited bool
	// shards is set for a sharded job (--shard).
	shards *shards
	// rep is the replica reads go to (--read-db), when there is one.
	rep replicaRun
}

// Run runs the phases in order. A first Ctrl-C or SIGTERM drains the
// phase and ends the command with its summary; a second one returns at
// once (experiment.RunInterruptible).
func Run(ctx context.Context, c *Config) error {
	return experiment.RunInterruptible(ctx, c.Outputs.Out, func(stops *experiment.Interrupts) error { return run(c, stops) })
}

// run connects and runs the phases; stops' context is cancelled by the
// first interrupt.
func run(c *Config, stops *experiment.Interrupts) (err error) {
	ctx := stops.Context()
	j := &job{c: c, stops: stops}
	j.log = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := j.resolve(); err != nil {
		return err
	}
	if c.sharded() {
		err = j.resolveShards(c.Stderr)
	} else {
		j.target, err = experiment.ResolveTarget(j.targetConfig(), c.Stderr)
	}
	if err != nil {
		return err
	}
	defer j.target.Cleanup(c.Stderr)
	j.target.RemoveAtAbandon(stops)
	if err := j.connect(ctx); err != nil {
		return err
	}
	defer j.db.Close()
	if err := j.connectReplica(ctx); err != nil {
		return err
	}
	defer j.closeReplica()
	experiment.RestoreAtAbandon(j.db, stops, c.Stderr)
	j.dataDir = experiment.DataDirectory(ctx, j.db, j.target.Target)
	if j.outs, err = experiment.OpenOutputs(ctx, c.Outputs, c.Stdout, c.Stderr, map[string]string{"driver": j.db.Info().Driver}, stops); err != nil {
		return err
	}
	defer func() {
		if cerr := j.outs.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, ph := range c.Phases {
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

// resolve builds the typed configuration and checks what the flags asked.
func (j *job) resolve() error {
	c := j.c
	var err error
	if j.cfg, err = config.Resolve(c.Properties, c.Strict); err != nil {
		return err
	}
	for _, ph := range c.Phases {
		j.loads = j.loads || ph == runner.Load
		if ph == runner.Run && j.cfg.Workload.OperationCount == 0 && j.cfg.MaxExecutionTime == 0 {
			return badinput.New("operationcount=0 and no maxexecutiontime: the run would do nothing; set -p operationcount=N or --duration D")
		}
	}
	if c.DrainTimeout < 0 {
		return badinput.New("--drain-timeout %s must not be negative (0 cancels operations in flight at once)", c.DrainTimeout)
	}
	if c.Warmup < 0 {
		return badinput.New("--warmup %s must not be negative", c.Warmup)
	}
	if t := j.cfg.MaxExecutionTime; c.Warmup > 0 && t > 0 && c.Warmup >= t && slices.Contains(c.Phases, runner.Run) {
		return badinput.New("--warmup %s is not shorter than maxexecutiontime=%s: nothing of the run would be measured; shorten the warm-up or lengthen the run", c.Warmup, t)
	}
	if err := c.Monitor.Validate(); err != nil {
		return err
	}
	j.seed = c.Seed
	if !c.SeedGiven {
		j.seed = uint64(time.Now().UnixNano())
	}
	if err := j.resolveClients(); err != nil {
		return err
	}
	s := &j.cfg.Workload
	// The columns hold the longest value the workload writes: fieldlength,
	// or with fieldlengthdistribution=histogram the histogram's longest.
	j.table = driver.Table{Name: s.Table, KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: s.FieldNames(), FieldLength: s.MaxFieldLength()}
	return nil
}

// targetConfig completes the target's configuration with the default
// database of a command that loads: a new SQLite file, which ycsb removes
// at exit unless --keep-db, and load keeps for a later run.
func (j *job) targetConfig() experiment.TargetConfig {
	tc := j.c.Target
	if j.c.Phases[0] == runner.Run {
		tc.NoDefault = "run needs --db: the database that dbprobe load filled (e.g. --db sqlite:///tmp/dbprobe-123/ycsb.db)"
		return tc
	}
	tc.DefaultFile = "ycsb.db"
	if len(j.c.Phases) == 1 || tc.KeepDefault {
		tc.KeepDefault, tc.KeptFor = true, "dbprobe run"
	} else {
		tc.KeepFlag = "--keep-db"
	}
	return tc
}

// connect opens the database, failing early on an unreachable server or
// refused credentials.
func (j *job) connect(ctx context.Context) error {
	c := j.cfg
	opts := driver.Options{
		Sessions: c.Threads, BulkLoad: !j.c.NoCopy,
		TableType: c.TableType, BucketCount: c.BucketCount,
		Durability: c.Durability, DurabilityScope: c.DurabilityScope, OpPath: c.OpPath,
		Existing: !j.loads,
	}
	if j.shards != nil {
		return j.connectShards(ctx, opts)
	}
	// Before the database is opened, which may create its file.
	if err := experiment.CheckFiles(j.target, fmt.Sprintf("--threads %d", c.Threads), "lower --threads", c.Threads); err != nil {
		return err
	}
	db, err := j.target.Open(ctx, opts)
	if err != nil {
		return err
	}
	j.db = db
	return nil
}

// phase runs one phase and prints its results. It reports whether the
// phase was interrupted.
func (j *job) phase(ctx context.Context, ph runner.Phase) (bool, error) {
	// Before the table is touched, so that a refusal changes nothing, and
	// before the monitor opens its connection: the server counts those
	// dbprobe holds already among those in use.
	threads := j.cfg.Threads
	if err := experiment.CheckConnections(ctx, j.db, j.target.Target, fmt.Sprintf("--threads %d", threads), "lower --threads",
		threads, experiment.MonitorConnections(j.c.Monitor, j.db)); err != nil {
		return false, err
	}
	client, clientNotes, err := j.checkClients(ctx, ph)
	if err != nil {
		return false, err
	}
	if err := j.checkShardConnections(ctx); err != nil {
		return false, err
	}
	tableNotes, err := j.prepareTable(ctx, ph)
	if err != nil {
		return false, err
	}
	if ph == runner.Run {
		replicaNotes, err := j.startReplica(ctx)
		if err != nil {
			return false, err
		}
		tableNotes = append(tableNotes, replicaNotes...)
		// A phase that fails before its end still stops the heartbeat
		// and drops its table; endReplica does nothing the second time.
		defer j.endReplica(ctx)
	}
	mon, monitorNotes := experiment.StartMonitor(ctx, j.c.Monitor, j.db, j.target.Target, ph.String(), j.outs)
	defer mon.Stop()
	shardMons, shardMonNotes := j.startShardMonitors(ctx, ph.String())
	defer func() {
		for _, m := range shardMons {
			m.Stop()
		}
	}()
	header := j.header(ph)
	header.Client = client
	header.Notes = append(header.Notes, clientNotes...)
	header.Notes = append(header.Notes, tableNotes...)
	header.Notes = append(header.Notes, j.clientMonitorNotes(monitorNotes)...)
	header.Notes = append(header.Notes, shardMonNotes...)
	if err := j.outs.Header(header); err != nil {
		return false, err
	}

	cfg := j.cfg
	ropts := runner.Options{
		Phase:            ph,
		Threads:          cfg.Threads,
		Target:           j.phaseTarget(),
		MaxExecutionTime: cfg.MaxExecutionTime,
		BatchSize:        cfg.BatchSize,
		Percentiles:      cfg.Percentiles,
		Seed:             j.seed,
		DrainTimeout:     max(j.c.DrainTimeout, time.Nanosecond), // the runner reads 0 as its default
		Retry:            runner.RetryPolicy{Max: cfg.Retries, Backoff: cfg.RetryBackoff, MaxBackoff: cfg.RetryMaxBackoff},
		OpTimeout:        cfg.OpTimeout,
		OnError:          cfg.OnError,
		ReconnectTimeout: cfg.ReconnectTimeout,
	}
	if ph == runner.Run {
		ropts.Warmup = j.c.Warmup
	}
	if !j.waited {
		ropts.StartAt, j.waited = j.c.Clients.StartAt, true
	}
	experiment.PhaseWiring{Phase: ph.String(), Outputs: j.outs, Monitor: mon, Log: j.log, Target: j.target, StatusInterval: cfg.StatusInterval}.Wire(&ropts)
	alignShardMonitors(&ropts, shardMons)
	j.measureReplicaFrom(&ropts)

	out, err := ExecuteReads(ctx, j.db, j.rep.reads, j.table, j.phaseSpec(ph), ropts)
	mon.EndMonitor(out)
	shardSums, shardNotes, serr := j.shardSummaries(shardMons)
	replicaSum, rerr := j.endReplica(ctx)
	if err != nil {
		return false, experiment.Scrubbed(j.target.Target, err)
	}
	if rerr != nil {
		return false, rerr
	}
	if serr != nil {
		return false, serr
	}
	sum := experiment.Summary(ph.String(), out, cfg.Retries, mon)
	sum.Replica = replicaSum
	sum.Ending = j.ending(ph, out)
	if out.Interrupted {
		sum.Notes = append(sum.Notes, experiment.InterruptNote(j.stops, j.c.DrainTimeout))
	}
	sum.Shards = shardSums
	for _, s := range shardSums {
		sum.Notes = append(sum.Notes, result.ShardNote(s))
	}
	sum.Notes = append(sum.Notes, shardNotes...)
	var stopped error
	what := "operations"
	if ph == runner.Load {
		what = "rows"
	}
	faults := experiment.Faults{Failing: experiment.Failing(out, j.target.Target, what)}
	if sum.Availability != nil {
		faults.Outages = sum.Availability.Outages
	}
	if out.Stopped != nil {
		sum.Stopped, faults.Stopped = j.stopped(ph, out)
		stopped = &experiment.PhaseStopped{Text: sum.Stopped.Text, UserFix: badinput.Is(out.Stopped.Err), Failed: ErrPhaseFailed}
	}
	sum.Diagnosis = mon.Diagnose(out.Start, out.End, cfg.Threads, faults)
	// WriteText itself reports interruption, warm-up, overflow and errors.
	if out.WarmupUnfinished {
		sum.Notes = append(sum.Notes, "the phase ended before its warm-up did: nothing was measured")
	}
	if err := j.outs.Summary(sum); err != nil {
		return false, err
	}
	if stopped != nil {
		return false, stopped
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
		return nil, experiment.Scrubbed(j.target.Target, fmt.Errorf("inspecting table %s: %w", t.Name, err))
	}
	if st.Stateless {
		return []string{fmt.Sprintf("table %s: %s", t.Name, st.Storage)}, nil
	}
	if ph == runner.Run {
		if !st.Exists {
			return nil, badinput.New("table %s does not exist in %s; load it first with dbprobe load and the same --db, -P and -p", t.Name, where)
		}
		if err := j.checkExisting(st); err != nil {
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
	s := j.phaseSpec(ph)
	sliced := s.InsertStart != 0 || s.InsertCount != s.RecordCount
	switch {
	case !st.Exists && j.slice().Index > 0:
		// Client 0 creates the table; two clients creating it at once
		// would fail one of them.
		if st, err = j.awaitTable(ctx, max(j.cfg.ReconnectTimeout, time.Minute)); err != nil {
			return nil, err
		}
		if err := j.checkExisting(st); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("loading into table %s, created by client 0", t.Name))
	case !st.Exists:
		if err := j.db.CreateTable(ctx, t); err != nil {
			return nil, experiment.Scrubbed(j.target.Target, fmt.Errorf("creating table %s: %w", t.Name, err))
		}
		notes = append(notes, fmt.Sprintf("created table %s (recorded as dbprobe's: --drop-existing may drop it later)", t.Name))
	case !st.CreatedByDbprobe:
		if j.c.DropExisting && st.OwnershipNote != "" {
			return nil, badinput.New("table %s in %s will not be dropped: %s", t.Name, where, st.OwnershipNote)
		}
		if j.c.DropExisting {
			return nil, badinput.New("table %s in %s was not created by dbprobe: it will not be dropped; drop it yourself or use another table with -p table=NAME", t.Name, where)
		}
		if st.HasRows && st.OwnershipNote != "" {
			return nil, badinput.New("table %s in %s holds rows, and dbprobe will not load into it: %s", t.Name, where, st.OwnershipNote)
		}
		if st.HasRows {
			return nil, badinput.New("table %s in %s holds rows dbprobe did not write: refusing to load into it; use another table with -p table=NAME", t.Name, where)
		}
		if err := j.checkExisting(st); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("loading into the existing empty table %s, which dbprobe did not create and will never drop", t.Name))
	case j.c.DropExisting:
		if err := j.db.DropTable(ctx, t); err != nil {
			return nil, experiment.Scrubbed(j.target.Target, fmt.Errorf("dropping table %s: %w", t.Name, err))
		}
		if err := j.db.CreateTable(ctx, t); err != nil {
			return nil, experiment.Scrubbed(j.target.Target, fmt.Errorf("creating table %s: %w", t.Name, err))
		}
		notes = append(notes, fmt.Sprintf("dropped and recreated table %s (created by dbprobe earlier)", t.Name))
	case st.HasRows && !sliced:
		return nil, badinput.New("table %s in %s already holds rows from an earlier dbprobe load; use them with dbprobe run, or add --drop-existing to drop and reload it", t.Name, where)
	default:
		if err := j.checkExisting(st); err != nil {
			return nil, err
		}
	}
	// How the table is stored, as the database reports it now.
	if st, err = j.db.Inspect(ctx, t); err != nil {
		return nil, experiment.Scrubbed(j.target.Target, fmt.Errorf("inspecting table %s: %w", t.Name, err))
	}
	if err := j.checkPrivileges(ctx, ph); err != nil {
		return nil, err
	}
	notes = append(notes, fmt.Sprintf("table %s: %s", t.Name, st.Storage))
	return notes, nil
}

// checkExisting checks a table that is there for the phase: its columns,
// its table type, and for the procedure path that dbprobe owns it.
func (j *job) checkExisting(st driver.TableState) error {
	if err := checkColumns(j.table, st); err != nil {
		return err
	}
	if err := j.checkTableType(st); err != nil {
		return err
	}
	return j.checkProcedures(st)
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
		Phase:       ph.String(),
		Command:     j.c.CommandLine,
		StartedAt:   time.Now(),
		Target:      j.target.Redacted(),
		Notes:       append([]string(nil), cfg.Notes...),
		Environment: experiment.Environment(),
		Database:    result.Database{Driver: info.Driver, Library: info.Library, ServerVersion: info.ServerVersion, Placement: info.Placement.String()},
	}
	h.Experiment = result.ExperimentYCSB
	for _, s := range info.Settings {
		h.Database.Settings = append(h.Database.Settings, result.Setting{Key: s.Name, Value: s.Value})
	}
	modeSource := "derived"
	for _, s := range cfg.Settings {
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
		if s.Key == "target" && s.Source != config.SourceDefault {
			modeSource = s.Source
		}
	}
	mode := "closed loop (each thread starts its next operation when the last one returns)"
	if cfg.Target > 0 {
		mode = fmt.Sprintf("open loop at %g ops/s in all; latency from each operation's intended start is reported as Intended-OP", cfg.Target)
		if ph == runner.Load && cfg.BatchSize > 1 {
			mode += "; rows are due at that rate, and a batch goes out when its last row is due"
		}
		if j.slice().Several() {
			mode += fmt.Sprintf("; each of the %d clients paces at its share, %g ops/s", j.slice().Count, j.phaseTarget())
		}
	}
	h.Settings = append(h.Settings,
		result.Setting{Key: "ends", Value: j.bounds(ph), Source: "derived"},
		result.Setting{Key: "mode", Value: mode, Source: modeSource},
	)
	if ph == runner.Load {
		path := "the database's bulk API (its load path setting above, where it has one), db.batchsize rows per transaction"
		if j.c.NoCopy {
			path = "multi-row INSERT, db.batchsize rows per statement and transaction"
		}
		h.Settings = append(h.Settings, result.Setting{Key: "load path", Value: path, Source: "derived"})
		if cfg.BatchSize > 1 {
			h.Notes = append(h.Notes, "each loaded row's latency is its batch's: a row is acknowledged when its batch commits")
		}
	}
	// Every other flag, with its source; the seed with the value in force.
	for _, s := range j.c.Flags {
		switch {
		case s.Key == "seed":
			s.Value = strconv.FormatUint(j.seed, 10)
			if s.Source == config.SourceDefault {
				s.Source = "default (clock)"
			}
		case s.Key == "warmup" && ph != runner.Run:
			continue
		}
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
	}
	if s, ok := j.replicaSetting(ph); ok {
		h.Settings = append(h.Settings, s)
	}
	if ph == runner.Run && j.c.Warmup > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("warm-up: the first %s of the run are excluded from the statistics", j.c.Warmup))
	}
	if ph == runner.Run && cfg.Workload.RequestDistribution == workload.Zipfian {
		h.Notes = append(h.Notes, "requestdistribution zipfian is YCSB's scrambled zipfian (constant 0.99): popular keys are scattered over the table")
	}
	return h
}

// bounds says in advance what will end the phase: its count, its time,
// or whichever comes first.
func (j *job) bounds(ph runner.Phase) string {
	s := j.phaseSpec(ph)
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
	// failed says how many of the operations counted failed, so that a
	// count beside the stop line's "after 8,000 of 100,000 rows" (those
	// that succeeded) reads the same: "9000 operations (1000 failed)".
	failed := ""
	if out.Failed > 0 {
		failed = fmt.Sprintf(" (%d failed)", out.Failed)
	}
	switch out.EndedBy {
	case runner.EndedByInterrupt:
		e.Text = fmt.Sprintf("interrupted after %d operations%s", out.Ops, failed)
	case runner.EndedByError:
		e.Text = fmt.Sprintf("stopped after %d operations%s by a failure more attempts cannot fix (%s; onerror=stop)", out.Ops, failed, experiment.FailureWords(out.Stopped.Err))
	case runner.EndedByUnreachable:
		e.Text = fmt.Sprintf("stopped after %d operations%s: the database did not answer for %s (reconnect.timeout)", out.Ops, failed, experiment.SecondsText(j.cfg.ReconnectTimeout))
	case runner.EndedByTime:
		e.Text = fmt.Sprintf("maxexecutiontime=%s ran out after %d operations%s", j.cfg.MaxExecutionTime, out.Ops, failed)
		if ph == runner.Load {
			e.Text += fmt.Sprintf(", before the %d records of insertcount were all inserted", j.phaseSpec(ph).InsertCount)
		} else if n := j.phaseSpec(ph).OperationCount; n > 0 {
			e.Text += fmt.Sprintf(", before the %d of operationcount", n)
		}
	default:
		if ph == runner.Load {
			e.Text = fmt.Sprintf("all %d records of insertcount done", j.phaseSpec(ph).InsertCount)
		} else {
			e.Text = fmt.Sprintf("all %d operations of operationcount done", j.phaseSpec(ph).OperationCount)
		}
		if t := j.cfg.MaxExecutionTime; t > 0 {
			e.Text += fmt.Sprintf(" before maxexecutiontime=%s", t)
		}
		if out.Failed > 0 {
			e.Text += fmt.Sprintf("; %d of them failed", out.Failed)
		}
	}
	return e
}
