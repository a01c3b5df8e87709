package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// ErrRunFailed marks a storage run stopped early by a failure: exit
// code 1.
var ErrRunFailed = errors.New("storage run failed")

// cleanupTimeout bounds dropping the run's tables once its own context is
// gone (Ctrl-C, a failure), so that a hung server does not hold the
// command.
const cleanupTimeout = 2 * time.Minute

// job is one storage run, resolved and connected.
type job struct {
	c      Config
	stops  *experiment.Interrupts
	log    *slog.Logger
	target *experiment.Target
	db     driver.DB
	caps   driver.Capabilities
	info   driver.Info
	where  string // the database in messages
	local  bool
	// dataDir is the database's data directory on this machine, "" when
	// not known or not local.
	dataDir string
	// logCap is the write cap the host puts on the log's device (logcopy
	// only), nil when none.
	logCap *deviceCap
	// copies are logcopy's copies, when each ran.
	copies []span
	outs   *experiment.Outputs
	mon    *experiment.Monitoring
	ev     *evidence
	dev    *deviceSampler
	// made are the tables this run created, dropped at its end unless
	// --keep.
	made []driver.DataTable
	// reused is a kept table of the right rows and payload that fill
	// takes as filled, with its rows; nil when there is none.
	reused     *driver.DataTable
	reusedRows int64
	// notes go in the header; sum is the summary being built.
	notes []string
	sum   result.StorageSummary
	// The measured part: its spans (chunks or log bytes per interval),
	// its start, the runner's series of every execution, and how it
	// ended.
	spans    []span
	origin   time.Time
	series   [][]measure.Summary
	ops      int64
	runTime  time.Duration
	errs     map[string]int64
	stopped  *runner.Stop
	intr     bool
	lastOut  *runner.Outcome
	steps    []stepWindow
	wallFrom time.Time

	// began and executed are when the last execution started and ended
	// (see execute).
	began, executed time.Time
	// verdict, when set, makes the verdict from the monitor's intervals
	// once the steps have their figures.
	verdict func([]monitor.Interval)
	// tickHook, startHook and ownStop, when set, let an experiment that
	// ends an execution itself (cache: once its hit share settles) see
	// its ticks and its start, and say that an interruption was its own,
	// not the user's.
	tickHook  func(runner.Tick)
	startHook func()
	ownStop   func() bool
}

// stepWindow is when a step ran, for the monitor's figures of it.
type stepWindow struct {
	index      int
	start, end time.Time
}

// Run runs one storage experiment: its table made and filled on the
// server, its measured passes beside the monitor, its summary, and its
// tables dropped (unless --keep), also after Ctrl-C or a failure. A
// first Ctrl-C stops the statement in flight on the server and keeps
// what was measured; a second one returns at once.
func Run(ctx context.Context, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	cc := c.withDefaults()
	return experiment.RunInterruptible(ctx, c.Outputs.Out, func(stops *experiment.Interrupts) error { return run(cc, stops) })
}

func run(c Config, stops *experiment.Interrupts) (err error) {
	ctx := stops.Context()
	j := &job{c: c, stops: stops, errs: map[string]int64{}}
	j.log = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if c.Kind == Write && c.Chunk > c.Size {
		// A chunk past --size would write more than was asked.
		chunk := "--chunk " + SizeText(c.Chunk)
		if c.chunkDefault {
			chunk = "the default " + chunk
		}
		fmt.Fprintf(c.Stderr, "dbprobe: %s is larger than --size %s: the chunk is the whole --size, one INSERT … SELECT of %s\n", chunk, SizeText(c.Size), SizeText(c.Size))
		j.notes = append(j.notes, fmt.Sprintf("--chunk %s clamped to --size %s", SizeText(c.Chunk), SizeText(c.Size)))
		c.Chunk = c.Size
		j.c.Chunk = c.Size
	}
	tc := c.Target
	tc.DefaultFile = "storage.db"
	if j.target, err = experiment.ResolveTarget(tc, c.Stderr); err != nil {
		return err
	}
	defer j.target.Cleanup(c.Stderr)
	j.target.RemoveAtAbandon(stops)
	sessions := 4
	for _, n := range c.Threads {
		sessions = max(sessions, n+3)
	}
	// Bulk loads by the bulk API unless --no-copy; every other
	// experiment writes on the server and loads nothing.
	bulk := !(c.Kind == Bulk && c.NoCopy)
	if j.db, err = j.target.Open(ctx, driver.Options{Sessions: sessions, BulkLoad: bulk}); err != nil {
		return err
	}
	defer j.db.Close()
	experiment.RestoreAtAbandon(j.db, stops, c.Stderr)
	j.info = j.db.Info()
	j.where = experiment.Where(j.db, j.target.Target)
	if err := j.capabilities(); err != nil {
		return err
	}
	j.local = experiment.Local(j.db, j.target.Target)
	j.dataDir = experiment.DataDirectory(ctx, j.db, j.target.Target)
	if err := j.refuseEarly(); err != nil {
		return err
	}
	if c.Kind == Scan {
		j.sizeFromCache(ctx)
	}
	if c.Kind == Cache {
		if err := j.cacheRefusals(ctx); err != nil {
			return err
		}
	}
	if err := j.dropLeftovers(ctx); err != nil {
		return err
	}
	if err := j.checkSpace(); err != nil {
		return err
	}
	if j.outs, err = experiment.OpenOutputs(ctx, c.Outputs, c.Stdout, c.Stderr, map[string]string{"driver": j.info.Driver}, stops); err != nil {
		return err
	}
	defer func() {
		if cerr := j.outs.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	defer j.dropMade(ctx)
	// A run that fails before its summary stops the device's sampler too.
	defer func() { j.dev.end(nil, time.Time{}) }()
	return j.runKind(ctx)
}

// needs are the capabilities each experiment cannot do without.
func (j *job) needs() []driver.Capability {
	switch j.c.Kind {
	case Scan:
		return []driver.Capability{driver.CapFill, driver.CapSize, driver.CapScan}
	case Read:
		return []driver.Capability{driver.CapFill, driver.CapSize, driver.CapSQL}
	case Write:
		return []driver.Capability{driver.CapFill, driver.CapSize, driver.CapInsertSelect}
	case Bulk:
		return []driver.Capability{driver.CapFill, driver.CapSize, driver.CapBulkLoad, driver.CapScan}
	case Cache:
		// The counters first: a database without them is refused for
		// what the experiment is about.
		return []driver.Capability{driver.CapCacheCounts, driver.CapFill, driver.CapSize, driver.CapSQL}
	}
	return []driver.Capability{driver.CapFill, driver.CapSize, driver.CapCopy}
}

// capabilities refuses, in one line naming the database, one that cannot
// run the experiment.
func (j *job) capabilities() error {
	j.caps = driver.Describe(j.db)
	if err := j.caps.Need(j.needs()...); err != nil {
		return badinput.New("dbprobe storage %s: %v", j.c.Kind, err)
	}
	return nil
}

// refuseEarly refuses what the database cannot give before anything is
// made: a cold scan asked for where dbprobe cannot evict the table.
func (j *job) refuseEarly() error {
	if j.c.Kind != Scan || !j.c.RequireCold {
		return nil
	}
	if !j.local {
		return badinput.New("%s is not on this machine: dbprobe cannot evict the table from its host's page cache, and --require-cold asks that it be; drop --require-cold (the scan then says what it could not do), or run dbprobe on the database's host", j.where)
	}
	if !j.caps.OK(driver.CapLocate) && os.Geteuid() != 0 {
		return badinput.New("%s does not say which files hold a table (%s), and dbprobe is not root, so it cannot make the table cold as --require-cold asks; run as root (drop_caches) or drop --require-cold", j.caps.Database, j.caps.Support(driver.CapLocate).Note)
	}
	return nil
}

// tableNames are the tables an experiment uses: fixed names, so that the
// next run finds what a killed one left.
func (j *job) tableNames() []string { return tableNamesOf(j.c.Kind) }

func tableNamesOf(k Kind) []string {
	base := "dbprobe_storage_" + k.String()
	switch k {
	case Write:
		return []string{base + "_src", base}
	case LogCopy:
		return []string{base + "_src", base + "_copy"}
	}
	return []string{base}
}

// dataTable is the experiment's table of that name.
func (j *job) dataTable(name string) driver.DataTable {
	return driver.DataTable{Name: name, PayloadBytes: j.c.Payload}
}

// filledName is the table the experiment fills before it measures and
// only reads from (the scanned, the read, the copied one): a kept one of
// the right rows and payload can be used again instead of refilled.
func (j *job) filledName() string {
	switch j.c.Kind {
	case Scan, Read, Write, LogCopy, Cache:
		return j.tableNames()[0]
	}
	return ""
}

// filledSize is the size the experiment fills its filled table to.
func (j *job) filledSize() int64 {
	if j.c.Kind == Write {
		return j.c.Chunk
	}
	return j.c.Size
}

// dropLeftovers drops the tables of every storage experiment that an
// earlier run left (a kill -9 gives it no chance to; --keep leaves them),
// saying so: they cost the database space whichever experiment runs next.
// A kept table this experiment fills is used again when it holds the
// rows and payload this run would fill it with. A table of this
// experiment's names that dbprobe did not create is bad input, and stays;
// one of another experiment's names is not in the way, and stays too.
func (j *job) dropLeftovers(ctx context.Context) error {
	for k := Scan; k <= lastKind; k++ {
		for _, name := range tableNamesOf(k) {
			if err := j.dropLeftover(ctx, k, name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (j *job) dropLeftover(ctx context.Context, k Kind, name string) error {
	mine := k == j.c.Kind
	t := j.dataTable(name)
	st, err := j.db.Inspect(ctx, t.Table())
	if err != nil {
		return experiment.Scrubbed(j.target.Target, err)
	}
	if !st.Exists {
		return nil
	}
	if !st.CreatedByDbprobe {
		if !mine {
			return nil
		}
		note := ""
		if st.OwnershipNote != "" {
			note = " (" + st.OwnershipNote + ")"
		}
		return badinput.New("%s has a table %s that dbprobe did not create%s; dbprobe storage uses that name and never drops a table it did not create: rename or drop it yourself", j.where, name, note)
	}
	why := ""
	if mine && name == j.filledName() {
		ok, mismatch := j.reusable(ctx, t)
		if ok {
			return nil
		}
		why = "; it does not fit this run (" + mismatch + "), so it is refilled"
	}
	if err := j.db.(driver.TableFiller).DropDataTable(ctx, t); err != nil {
		return fmt.Errorf("dropping the table %s an earlier run left: %w", name, experiment.Scrubbed(j.target.Target, err))
	}
	fmt.Fprintf(j.c.Stderr, "dbprobe: dropped table %s, which an earlier dbprobe storage %s left (kept with --keep, or stopped before it could drop it)%s\n", name, k, why)
	return nil
}

// reusable checks a kept table, dbprobe's, against what this run would
// fill it with: its rows counted on the server and its size on disk per
// row against the payload. It returns whether it fits and, if not, why.
// A table that fits is this run's, used as filled.
func (j *job) reusable(ctx context.Context, t driver.DataTable) (bool, string) {
	scanner, ok := j.db.(driver.TableScanner)
	if !ok {
		return false, j.caps.Database + " cannot count its rows on the server"
	}
	want := j.fillRows(t, j.filledSize())
	res, err := scanner.ScanTable(ctx, t, 0, 1)
	if err != nil {
		return false, "counting its rows failed: " + j.target.ScrubError(err)
	}
	if res.Rows != want {
		return false, fmt.Sprintf("it has %s rows, this run fills %s for --size %s and --payload %d", result.Grouped(res.Rows), result.Grouped(want), SizeText(j.filledSize()), t.PayloadBytes)
	}
	size, err := j.db.(driver.TableSizer).TableSize(ctx, t)
	if err != nil {
		return false, "sizing it failed: " + j.target.ScrubError(err)
	}
	// Its rows' payload, from its size: at least the payload and id of
	// each row. No upper bound: a small table's extents (InnoDB's) make
	// twice its rows' bytes, and the row count already pins the width
	// the size was filled at.
	row := float64(t.PayloadBytes + 8)
	if per := float64(size.Bytes) / float64(want); per < row {
		return false, fmt.Sprintf("%s on disk is %.0f bytes a row, not the %d-byte payload this run fills", SizeText(size.Bytes), per, t.PayloadBytes)
	}
	j.reused, j.reusedRows = &t, want
	fmt.Fprintf(j.c.Stderr, "dbprobe: using table %s again, which an earlier dbprobe storage %s kept (--keep): its %s rows and %s on disk are what this run would fill (--size %s, --payload %d)\n",
		t.Name, j.c.Kind, result.Grouped(want), SizeText(size.Bytes), SizeText(j.filledSize()), t.PayloadBytes)
	return true, ""
}

// fillRows is the rows fill puts in t for size bytes.
func (j *job) fillRows(t driver.DataTable, size int64) int64 {
	return max(1, size/int64(t.PayloadBytes+8))
}

// spaceFactor is how many times --size the experiment writes on the
// database's file system at most: logcopy holds the source and its copy,
// and writes the copy's log too; write holds its source (a chunk) and the
// target.
func (j *job) spaceFactor() float64 {
	switch j.c.Kind {
	case LogCopy:
		return 3
	case Write:
		return 2
	}
	return 1.2
}

// checkSpace refuses a --size the file system of a database on this
// machine has no room for.
func (j *job) checkSpace() error {
	if !j.local || j.dataDir == "" {
		return nil
	}
	fs, err := experiment.FileSystemOf(j.dataDir)
	if err != nil {
		return nil
	}
	need := float64(j.c.Size) * j.spaceFactor()
	if float64(fs.Free) < need {
		return badinput.New("--size %s: dbprobe storage %s needs about %s on the file system of %s's data (%s on %s), which has %s free; give a smaller --size or free space there",
			SizeText(j.c.Size), j.c.Kind, SizeText(int64(need)), j.where, j.dataDir, fs.Mount, SizeText(int64(fs.Free)))
	}
	return nil
}

// create creates t, empty, and records that this run made it. A user
// who may not create tables is told what dbprobe storage needs, not the
// driver's advice for a key-value run.
func (j *job) create(ctx context.Context, t driver.DataTable) error {
	if err := j.db.(driver.TableFiller).CreateDataTable(ctx, t); err != nil {
		if words, ok := refusedPrivilege(err); ok {
			return badinput.New("%s refused to create the table %s: %s; dbprobe storage %s works on tables of its own (and records them in dbprobe's marker table): grant the user CREATE (and DROP) on the schema or database it connects to, or run as a user who has it",
				j.where, t.Name, j.target.ScrubError(errors.New(words)), j.c.Kind)
		}
		return j.statementError("creating the table "+t.Name, err)
	}
	j.made = append(j.made, t)
	return nil
}

// fill creates t and fills it with rows on the server up to about size
// bytes of rows, and returns its rows.
func (j *job) fill(ctx context.Context, t driver.DataTable, size int64) (int64, error) {
	if j.reused != nil && j.reused.Name == t.Name {
		// A kept table that holds these rows: this run's from now on,
		// dropped at its end unless --keep.
		j.made = append(j.made, t)
		return j.reusedRows, nil
	}
	if err := j.create(ctx, t); err != nil {
		return 0, err
	}
	rows := j.fillRows(t, size)
	fmt.Fprintf(j.c.Stderr, "dbprobe: filling %s with %s rows (%s) on the server\n", t.Name, result.Grouped(rows), SizeText(size))
	n, err := j.db.(driver.TableFiller).FillTable(ctx, t, 1, rows)
	if err != nil {
		return n, j.statementError("filling the table "+t.Name, err)
	}
	// The fill's after-effects are seen to now, not in the measured part:
	// the first reader of PostgreSQL's fresh rows sets their hint bits
	// and writes every page back, which made a scan's first pass run at
	// a third of the later ones' rate (bench/RESULTS.md).
	if settler, ok := j.db.(driver.Settler); ok {
		how, err := settler.Settle(ctx, t)
		if err != nil {
			return n, j.statementError("settling the table "+t.Name+" after its fill", err)
		}
		j.notes = append(j.notes, fmt.Sprintf("table %s: settled after the fill, before the measured part: %s", t.Name, how))
	} else {
		j.notes = append(j.notes, fmt.Sprintf("table %s: not settled after the fill (dbprobe has no settle step for %s): the fill's after-effects (hint bits, dirty pages, statistics) may land in the measured part", t.Name, j.caps.Database))
	}
	return n, nil
}

// sized reads t's size on disk.
func (j *job) sized(ctx context.Context, t driver.DataTable) (driver.TableSize, error) {
	s, err := j.db.(driver.TableSizer).TableSize(ctx, t)
	if err != nil {
		return s, j.statementError("sizing the table "+t.Name, err)
	}
	return s, nil
}

// filledTable fills t with --size of rows and sizes it, as the read,
// scan and logcopy workloads start, and records both as the run's table;
// the size is returned for the summary to say how it was taken.
func (j *job) filledTable(ctx context.Context, t driver.DataTable) (driver.TableSize, error) {
	rows, err := j.fill(ctx, t, j.c.Size)
	if err != nil {
		return driver.TableSize{}, err
	}
	size, err := j.sized(ctx, t)
	if err != nil {
		return size, err
	}
	j.sum.Table = result.StorageTable{Name: t.Name, Bytes: size.Bytes, How: size.How, Rows: rows, PayloadBytes: t.PayloadBytes}
	return size, nil
}

// refusedPrivilege returns the server's own words when err is its
// refusal of a privilege: bad input carrying them (driver.PermissionDenied).
func refusedPrivilege(err error) (string, bool) {
	var sc *driver.Scrubbed
	if !badinput.Is(err) || !errors.As(err, &sc) {
		return "", false
	}
	l := strings.ToLower(sc.Msg)
	if !strings.Contains(l, "permission") && !strings.Contains(l, "denied") && !strings.Contains(l, "privilege") {
		return "", false
	}
	return sc.Msg, true
}

// statementError says what failed, in the database's words, with the
// advice a full disk or a refused privilege calls for: bad input when the
// user must fix it.
func (j *job) statementError(doing string, err error) error {
	if errors.Is(err, context.Canceled) || badinput.Is(err) {
		return experiment.Scrubbed(j.target.Target, err)
	}
	words := experiment.FailureWords(experiment.Scrubbed(j.target.Target, err))
	label := driver.Label(err)
	switch {
	case experiment.LooksFull(label, err.Error()):
		space, _ := experiment.SpaceNote(j.dataDir)
		if space == "" {
			space = "the database's storage is full"
		}
		return fmt.Errorf("%w: %s: %s: %s; free space there or give a smaller --size", ErrRunFailed, doing, words, space)
	case experiment.FaultAdvice(label, err.Error()) != "":
		return badinput.New("%s: %s: %s", doing, words, experiment.FaultAdvice(label, err.Error()))
	}
	return fmt.Errorf("%s: %w", doing, experiment.Scrubbed(j.target.Target, err))
}

// dropMade drops the tables this run made, unless --keep: at the end, and
// after Ctrl-C or a failure, on a context of its own. A stopped run calls
// it before its stop line, which says from what it returns what became of
// the tables; the deferred call then finds nothing left to do.
func (j *job) dropMade(ctx context.Context) dropOutcome {
	var out dropOutcome
	if len(j.made) == 0 {
		return out
	}
	if j.c.Keep {
		for _, t := range j.made {
			out.kept = append(out.kept, t.Name)
		}
		noun := "table"
		if len(out.kept) > 1 {
			noun = "tables"
		}
		fmt.Fprintf(j.c.Stderr, "dbprobe: kept %s %s (--keep); the next dbprobe storage %s uses the table it fills again if it fits, and any dbprobe storage run drops the rest before it starts\n", noun, strings.Join(out.kept, ", "), j.c.Kind)
		j.made = nil
		return out
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for i := len(j.made) - 1; i >= 0; i-- {
		t := j.made[i]
		if err := j.db.(driver.TableFiller).DropDataTable(dctx, t); err != nil {
			out.left = append(out.left, t.Name)
			fmt.Fprintf(j.c.Stderr, "dbprobe: could not drop the table %s this run made: %s; the next dbprobe storage %s drops it, or drop it yourself\n", t.Name, j.target.ScrubError(err), j.c.Kind)
			continue
		}
		out.dropped = append(out.dropped, t.Name)
	}
	j.made = nil
	return out
}

// dropOutcome is what dropMade did with the tables this run made, by
// name.
type dropOutcome struct {
	dropped, left, kept []string
}

// text says it for a stop line, "" when the run made no table: a table
// is said dropped only once its drop succeeded, and one left behind is
// named with the statement that drops it.
func (d dropOutcome) text() string {
	var parts []string
	if len(d.kept) > 0 {
		noun, _ := tablesWords(d.kept)
		parts = append(parts, fmt.Sprintf("%s %s kept (--keep)", noun, strings.Join(d.kept, ", ")))
	}
	if len(d.dropped) > 0 {
		noun, _ := tablesWords(d.dropped)
		parts = append(parts, fmt.Sprintf("%s %s dropped", noun, strings.Join(d.dropped, ", ")))
	}
	if len(d.left) > 0 {
		drops := make([]string, len(d.left))
		for i, name := range d.left {
			drops[i] = "DROP TABLE " + name
		}
		noun, pronoun := tablesWords(d.left)
		parts = append(parts, fmt.Sprintf("%s %s could not be dropped: drop %s yourself (%s), or let the next dbprobe storage run see to %[3]s",
			noun, strings.Join(d.left, ", "), pronoun, strings.Join(drops, "; ")))
	}
	return strings.Join(parts, "; ")
}

// tablesWords are "the table" and "it", or "the tables" and "them", for
// names.
func tablesWords(names []string) (noun, pronoun string) {
	if len(names) == 1 {
		return "the table", "it"
	}
	return "the tables", "them"
}

// dropOne drops one table this run made, between passes.
func (j *job) dropOne(ctx context.Context, t driver.DataTable) error {
	if err := j.db.(driver.TableFiller).DropDataTable(ctx, t); err != nil {
		return j.statementError("dropping the table "+t.Name, err)
	}
	for i, m := range j.made {
		if m.Name == t.Name {
			j.made = append(j.made[:i], j.made[i+1:]...)
			break
		}
	}
	return nil
}

// header describes the run: the database and the settings that change
// its storage rates, every flag and its source, and the notes.
func (j *job) header() result.Header {
	h := result.Header{
		Experiment:  result.ExperimentStorage,
		Phase:       j.c.Kind.String(),
		Command:     j.c.CommandLine,
		StartedAt:   time.Now(),
		Target:      j.target.Redacted(),
		Environment: experiment.Environment(),
		Database:    result.Database{Driver: j.info.Driver, Library: j.info.Library, ServerVersion: j.info.ServerVersion, Placement: j.info.Placement.String()},
	}
	for _, s := range j.info.Settings {
		h.Database.Settings = append(h.Database.Settings, result.Setting{Key: s.Name, Value: s.Value})
	}
	for _, s := range j.c.Flags {
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
	}
	h.Settings = append(h.Settings, result.Setting{Key: "threadcount", Value: strconv.Itoa(j.threadsNow()), Source: "derived"})
	for _, k := range j.needs() {
		if k == driver.CapFill && j.c.Kind == Bulk {
			// bulk creates its table empty and loads it: no fill.
			continue
		}
		h.Notes = append(h.Notes, fmt.Sprintf("%s: %s", k, j.caps.Support(k).Note))
	}
	h.Notes = append(h.Notes, "sizes and rates are in decimal units: 1 GB = 10^9 bytes, 1 MB = 10^6 bytes")
	h.Notes = append(h.Notes, j.notes...)
	return h
}

// threadsNow is the threads of the run's first step, for the header.
func (j *job) threadsNow() int {
	if j.c.Kind == Read || j.c.Kind == Bulk || j.c.Kind == Cache {
		return j.c.Threads[0]
	}
	return 1
}

// startPhase writes the header and starts the monitor and the evidence
// readers: the measured part begins.
func (j *job) startPhase(ctx context.Context, evidencePath string) error {
	mon, notes := experiment.StartMonitor(ctx, j.c.Monitor, j.db, j.target.Target, j.c.Kind.String(), j.outs)
	j.mon = mon
	j.ev = openEvidence(ctx, j.db, evidencePath)
	if j.ev.device == "" && j.local {
		j.notes = append(j.notes, "device figures: none: "+j.ev.why)
	}
	if j.ev.mon == nil {
		j.notes = append(j.notes, "database counters: none: "+j.caps.Database+" has no monitor here, so the proof has the device's figures only")
	}
	j.dev = startDeviceSampler(j.ev.device)
	h := j.header()
	h.Notes = append(h.Notes, notes...)
	j.wallFrom = time.Now()
	return j.outs.Header(h)
}

// series names of the runner's plan: one per experiment, and its
// failures.
func (j *job) plan(op string, count int64, split runner.Split, worker func(i int) runner.Worker) runner.Plan {
	return runner.Plan{
		Series:  []runner.Series{{Name: op, CountsOK: true, Retryable: true}, {Name: op + "-FAILED"}},
		Cleanup: runner.NoSeries,
		Count:   count,
		Split:   split,
		Worker:  worker,
	}
}

// opOf is the runner Op of a plan made by plan.
func opOf(name string) runner.Op {
	return runner.Op{Name: name, OK: 0, Failed: 1, IntendedOK: runner.NoSeries, IntendedFailed: runner.NoSeries}
}

// execute runs one measured execution of plan with threads workers,
// ending after limit (0: at the plan's count), and keeps its ticks as
// spans of unitBytes per unit. It returns the outcome; a failure that
// stopped it is kept for the summary (j.stopped).
func (j *job) execute(ctx context.Context, plan runner.Plan, threads, batch int, limit time.Duration, unitBytes func() float64) (*runner.Outcome, error) {
	ropts := runner.Options{
		Phase:            runner.Run,
		Threads:          threads,
		MaxExecutionTime: limit,
		BatchSize:        batch,
		DrainTimeout:     max(j.c.DrainTimeout, time.Nanosecond),
		Histograms:       true,
	}
	experiment.PhaseWiring{Phase: j.c.Kind.String(), Outputs: j.outs, Monitor: j.mon, Log: j.log, Target: j.target, StatusInterval: j.c.StatusInterval}.Wire(&ropts)
	// The runner keeps its histograms for merging the executions' series.
	ropts.Histograms = true
	var ticks []runner.Tick
	onTick := ropts.OnTick
	ropts.OnTick = func(t runner.Tick) {
		ticks = append(ticks, runner.Tick{Start: t.Start, End: t.End, Ops: t.Ops})
		if j.tickHook != nil {
			j.tickHook(t)
		}
		if onTick != nil {
			onTick(t)
		}
	}
	onStart := ropts.OnStart
	ropts.OnStart = func(start, origin time.Time) {
		if j.origin.IsZero() {
			j.origin = start
		}
		if j.startHook != nil {
			j.startHook()
		}
		// Each realignment ends the monitor's interval early: passes of a
		// few milliseconds, one after another, gave a sample each (993 in
		// a 2 s scan), each a round of queries on the database being
		// measured. An execution right after a shorter one than the
		// monitor's interval keeps the monitor's cadence; after a long
		// one (a step of its own) or a pause (a fill, a warm-up, making
		// the table cold) the intervals start on it.
		every := j.monitorInterval()
		if j.executed.IsZero() || j.executed.Sub(j.began) >= every || start.Sub(j.executed) >= every {
			onStart(start, origin)
		}
		j.began = start
	}
	out, err := runner.Execute(ctx, plan, ropts)
	j.executed = time.Now()
	if err != nil {
		return nil, experiment.Scrubbed(j.target.Target, err)
	}
	per := unitBytes()
	for _, t := range ticks {
		j.spans = append(j.spans, span{start: t.Start, end: t.End, bytes: float64(t.Ops) * per})
	}
	j.series = append(j.series, out.Series)
	j.ops += out.Ops
	j.runTime += out.RunTime
	for k, v := range out.Errors {
		j.errs[k] += v
	}
	// An execution the experiment ended itself (ownStop) was not
	// interrupted.
	j.intr = j.intr || (out.Interrupted && (j.ownStop == nil || !j.ownStop()))
	if out.Stopped != nil && j.stopped == nil {
		j.stopped = out.Stopped
	}
	j.lastOut = out
	return out, nil
}

// monitorInterval is the monitor's interval: --monitor-interval, or the
// monitor's default.
func (j *job) monitorInterval() time.Duration {
	if j.c.Monitor.Interval > 0 {
		return j.c.Monitor.Interval
	}
	return monitor.DefaultInterval
}

// halted reports whether the run must stop starting executions: an
// interrupt, or a failure that stopped the last one.
func (j *job) halted(ctx context.Context) bool {
	return ctx.Err() != nil || j.stopped != nil || (j.lastOut != nil && j.lastOut.Failed > 0)
}

// around calls the test hook around a step's counter readings.
func (j *job) around(label string, after bool) {
	if j.c.around != nil {
		j.c.around(label, after)
	}
}

// clockOrigin is the time the device's and the monitor's seconds count
// from: the measured part's start, or the run's when nothing was
// measured.
func (j *job) clockOrigin() time.Time {
	if j.origin.IsZero() {
		return j.wallFrom
	}
	return j.origin
}

// step records a step's window for the monitor's figures of it.
func (j *job) stepWindow(index int, start, end time.Time) {
	j.steps = append(j.steps, stepWindow{index: index, start: start, end: end})
}

// finish stops the monitor, completes the summary from what was measured
// and writes it; it returns the error of a run a failure stopped.
func (j *job) finish(ctx context.Context) error {
	if j.mon != nil {
		j.mon.EndMonitor(j.lastOut)
	}
	if j.ev != nil {
		defer j.ev.close()
	}
	j.sum.Device = j.dev.end(j.sum.Device, j.clockOrigin())
	st := &j.sum
	st.Experiment = j.c.Kind.String()
	st.PerSecond, st.Consistency = perSecond(j.spans, j.origin)
	st.PerMinute, st.MinuteConsistency = perMinute(st.PerSecond)
	if st.Seconds > 0 {
		st.Rate = float64(st.Bytes) / st.Seconds
		st.RowsPerSec = float64(st.Rows) / st.Seconds
	}
	if j.pointed() {
		j.byPoint()
	}
	j.stepFigures()
	j.amplification()
	var intervals []monitor.Interval
	if j.mon != nil {
		intervals = j.mon.Intervals()
	}
	if j.verdict != nil {
		j.verdict(intervals)
	}
	// A write's log running full of changes not yet checkpointed is said
	// whatever else the verdict found: it is another wall than the log's
	// device.
	st.CheckpointAge = j.checkpointAge(intervals, j.c.Monitor.Off)
	if line := checkpointVerdict(j.c.Kind, st.CheckpointAge); line != "" {
		st.Verdict += "; " + line
	}
	for _, e := range j.c.Expect {
		if j.c.Kind == Cache && st.Cache != nil {
			st.Expect = append(st.Expect, cacheExpect(e, st.Cache.Estimate))
			continue
		}
		st.Expect = append(st.Expect, j.judge(e)...)
	}
	st.Cost = runCost(j.c.Price, time.Since(j.wallFrom).Seconds(), st.Bytes)
	sum := result.Summary{
		Phase:       j.c.Kind.String(),
		RunTime:     j.runTime,
		Ops:         j.ops,
		Series:      mergeSeries(j.series),
		Errors:      j.errs,
		Interrupted: j.intr,
		Storage:     st,
	}
	if j.runTime > 0 {
		sum.Throughput = float64(j.ops) / j.runTime.Seconds()
	}
	sum.Notes = append(sum.Notes, overallNote(j.c.Kind))
	if j.intr {
		sum.Notes = append(sum.Notes, experiment.InterruptNote(j.stops, j.c.DrainTimeout)+"; the figures cover what was measured before it")
	}
	var stopped error
	if j.stopped != nil {
		// The tables go before the stop line is written, so that it says
		// what became of them rather than what should.
		left := j.dropMade(ctx).text()
		rec, _ := experiment.Stopped(j.stopped, j.db, j.target.Target, experiment.StopContext{
			Phase: j.c.Kind.String(), Progress: fmt.Sprintf("after %s of %s", result.BytesText(st.Bytes), j.c.Kind),
			Left: left, DataDir: j.dataDir})
		sum.Stopped = rec
		stopped = &experiment.PhaseStopped{Text: rec.Text, UserFix: badinput.Is(j.stopped.Err), Failed: ErrRunFailed}
	}
	if j.mon != nil {
		sum.Notes = append(sum.Notes, j.mon.LateNotes()...)
	}
	if err := j.outs.Summary(sum); err != nil {
		return err
	}
	return stopped
}

// amplification adds, for an experiment that writes a table, what each
// byte of it cost the log and the device, and the checkpoints meanwhile,
// summed over the steps (the time between them, a copy dropped, left
// out).
func (j *job) amplification() {
	if !j.c.Kind.writesTable() || len(j.sum.Steps) == 0 {
		return
	}
	a := &result.WriteAmplification{Device: j.ev.device}
	for i, s := range j.sum.Steps {
		add := func(sum *int64, v int64) {
			if i == 0 {
				*sum = v
			} else if *sum < 0 || v < 0 {
				*sum = -1
			} else {
				*sum += v
			}
		}
		a.TableBytes += s.Bytes
		add(&a.LogBytes, s.LogBytes)
		add(&a.DeviceBytes, s.DeviceWriteBytes)
		add(&a.Checkpoints, s.Checkpoints)
	}
	if a.TableBytes <= 0 {
		return
	}
	if a.LogBytes >= 0 {
		a.LogPerByte = round3(float64(a.LogBytes) / float64(a.TableBytes))
	}
	if a.DeviceBytes >= 0 {
		a.DevicePerByte = round3(float64(a.DeviceBytes) / float64(a.TableBytes))
	}
	a.CheckpointsHow = "the database's " + driver.CounterCheckpoints + " counter"
	if a.Checkpoints < 0 {
		a.CheckpointsHow = j.caps.Database + " does not count them here"
		// The database's monitor says why, and how to have them counted.
		if j.ev != nil && j.ev.mon != nil {
			for _, u := range j.ev.mon.Unavailable() {
				if why, ok := strings.CutPrefix(u, "checkpoints: "); ok {
					a.CheckpointsHow += " (" + why + ")"
				}
			}
		}
	}
	j.sum.Amplification = a
}

// judge holds a promise against what was measured: at each point when
// the experiment ran at several (an average over different --threads is
// no one's rate), else over the measured part. A log promise is held
// against the log's rate, whatever the experiment's own rate counts; where
// the log was not counted it is "not measured", with why, and no ratio.
func (j *job) judge(e Expectation) []result.ExpectCheck {
	steps := j.sum.Steps
	if !j.pointed() {
		if e.Key != "log" {
			return []result.ExpectCheck{e.check(j.sum.Rate)}
		}
		var bytes int64
		var secs float64
		for _, s := range steps {
			if s.LogBytes < 0 {
				return []result.ExpectCheck{e.notMeasured(j.logUncounted())}
			}
			bytes += s.LogBytes
			secs += s.Seconds
		}
		if secs <= 0 {
			return []result.ExpectCheck{e.notMeasured("nothing was measured")}
		}
		return []result.ExpectCheck{e.check(float64(bytes) / secs)}
	}
	var out []result.ExpectCheck
	for _, s := range steps {
		var c result.ExpectCheck
		switch {
		case e.Key == "log" && s.LogBytes < 0:
			c = e.notMeasured(j.logUncounted())
		case e.Key == "log":
			c = e.check(s.LogRate)
		default:
			c = e.check(s.Rate)
		}
		c.Point = s.Label
		out = append(out, c)
	}
	if len(out) == 0 {
		out = append(out, e.notMeasured("nothing was measured"))
	}
	return out
}

// opUnits is what [OVERALL] Throughput counts per second in each
// experiment, a unit that otherwise differs unsaid; opOfKind names the
// series of its statements.
var (
	opUnits  = map[Kind]string{Scan: "chunks scanned", Read: "rows fetched", Write: "INSERT … SELECT chunks", Bulk: "rows loaded", LogCopy: "table copies", Cache: "lookups by key"}
	opOfKind = map[Kind]string{Scan: "[SCAN-CHUNK]", Read: "[READ-RANGE]", Write: "[WRITE-CHUNK]", Bulk: "[BULK-BATCH]", LogCopy: "[COPY]", Cache: "[CACHE-READ]"}
)

// logUncounted says why the log's bytes were not counted.
func (j *job) logUncounted() string {
	if j.ev == nil || j.ev.mon == nil {
		return j.caps.Database + " has no monitor here, so dbprobe reads no log counter"
	}
	return j.caps.Database + " keeps no count of its log bytes (no " + driver.CounterLogBytes + " counter)"
}

// pointed reports whether the experiment ran at several points: read or
// bulk at several --threads, logcopy at several --dop (a database that
// copies serially runs one). Their figures are each point's; the
// headline is the fastest point's.
func (j *job) pointed() bool {
	switch j.c.Kind {
	case Read, Bulk, LogCopy:
		return len(j.sum.Steps) > 1
	}
	return false
}

// byPoint splits the per-second series by the step each second fell in,
// gives each step the spread of its own seconds, and makes the fastest
// step the headline: its rate and its spread.
func (j *job) byPoint() {
	st := &j.sum
	best := -1
	for i, s := range st.Steps {
		if best < 0 || s.Rate > st.Steps[best].Rate {
			best = i
		}
	}
	if best < 0 {
		return
	}
	groups := make([][]span, len(st.Steps))
	for _, sp := range j.spans {
		mid := sp.start.Add(sp.end.Sub(sp.start) / 2)
		for _, w := range j.steps {
			if w.index < len(groups) && !mid.Before(w.start) && !mid.After(w.end) {
				groups[w.index] = append(groups[w.index], sp)
				break
			}
		}
	}
	var points []result.RatePoint
	for i := range st.Steps {
		ps, c := perSecond(groups[i], j.origin)
		for k := range ps {
			ps[k].Point = st.Steps[i].Label
		}
		points = append(points, ps...)
		st.Steps[i].Consistency = c
	}
	st.PerSecond = points
	st.PerMinute, st.MinuteConsistency = nil, nil
	st.Rate = st.Steps[best].Rate
	if st.Steps[best].Seconds > 0 {
		st.RowsPerSec = float64(st.Steps[best].Rows) / st.Steps[best].Seconds
	}
	st.Consistency = st.Steps[best].Consistency
	st.Headline = st.Steps[best].Label
}

// stepFigures adds to each step the monitor's figures of its window: the
// host's busy cores (a database on this machine) and the client's CPU.
func (j *job) stepFigures() {
	if j.mon == nil {
		return
	}
	intervals := j.mon.Intervals()
	for _, w := range j.steps {
		if w.index >= len(j.sum.Steps) {
			continue
		}
		s := &j.sum.Steps[w.index]
		var busy, client, weights float64
		var haveBusy bool
		for _, iv := range intervals {
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
			if mid.Before(w.start) || mid.After(w.end) {
				continue
			}
			wgt := iv.End.Sub(iv.Start).Seconds()
			if idle, ok := iv.Metrics["host.cpu.idle%"]; ok && j.local {
				busy += (100 - idle - iv.Metrics["host.cpu.iowait%"]) * wgt
				haveBusy = true
			}
			client += iv.Metrics["client.cpu%"] * wgt
			weights += wgt
		}
		if weights == 0 {
			continue
		}
		if haveBusy {
			s.HostCores = round3(busy / weights / 100 * float64(hostCPUs()))
		}
		s.ClientCPU = round3(client / weights)
	}
}

// mergeSeries merges the executions' series of the same name into one
// each: their histograms exactly, their statuses and retries added up.
func mergeSeries(all [][]measure.Summary) []measure.Summary {
	var order []string
	merged := map[string]*measure.Merger{}
	base := map[string]*measure.Summary{}
	for _, list := range all {
		for _, s := range list {
			b, ok := base[s.Name]
			if !ok {
				order = append(order, s.Name)
				c := measure.Summary{Name: s.Name}
				if s.Retries != nil {
					var zero int64
					c.Retries = &zero
				}
				base[s.Name], merged[s.Name] = &c, &measure.Merger{}
				b = &c
			}
			_ = merged[s.Name].Add(s)
			for _, st := range s.Statuses {
				addStatus(b, st)
			}
			if s.Retries != nil && b.Retries != nil {
				*b.Retries += *s.Retries
			}
			b.Overflow += s.Overflow
		}
	}
	out := make([]measure.Summary, 0, len(order))
	for _, name := range order {
		b := base[name]
		merged[name].Describe(b, measure.DefaultPercentiles)
		out = append(out, *b)
	}
	return out
}

func addStatus(s *measure.Summary, st measure.StatusCount) {
	for i := range s.Statuses {
		if s.Statuses[i].Status == st.Status {
			s.Statuses[i].Count += st.Count
			return
		}
	}
	s.Statuses = append(s.Statuses, st)
}

// overallNote says what [OVERALL] counts for kind, and where the
// experiment's own figures are: a rate, or for cache, which measures
// sizes and hit shares, those.
func overallNote(kind Kind) string {
	whose := "the storage rate is"
	if kind == Cache {
		whose = "the working sets' hit shares and the estimate are"
	}
	return fmt.Sprintf("[OVERALL] Throughput(ops/sec) is %s per second (%s Operations counts its statements); %s [%s]'s", opUnits[kind], opOfKind[kind], whose, strings.ToUpper(kind.String()))
}
