package stress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// phaseName is the phase of a stress run in its header, records and
// messages.
const phaseName = "stress"

// ErrRunFailed marks a stress run that was stopped early by a failure or
// an unreachable database: exit code 1.
var ErrRunFailed = errors.New("stress run failed")

// defaultTeardownTimeout bounds --teardown when the run's context is gone
// (Ctrl-C, a failure), so that a hung server does not hold the command.
const defaultTeardownTimeout = time.Minute

// job is one stress run, resolved and connected.
type job struct {
	c      *Config
	stops  *experiment.Interrupts
	log    *slog.Logger
	seed   uint64
	target *experiment.Target
	db     driver.DB
	caps   driver.Capabilities
	sql    driver.SQLRunner
	outs   *experiment.Outputs
	// session are --session-setup's statements, on every connection.
	session []string
	// setup and teardown are their files' statements.
	setup, teardown []driver.ScriptStatement
	csv             *rows
	work            Work
	shared          *shared
	// mix is the --mix's Work and table, nil for --sql files; placed what
	// --placement and --placement-temp made (placement.go).
	mix    *oltp
	placed placed
	// plans are each statement's plan at the start, by script and
	// statement; first, by script, the values it first runs with, with
	// which they were taken (firstValues).
	plans [][]*driver.Plan
	first [][]any
	notes []string
	// endNotes are notes made after the header was written, for the
	// summary.
	endNotes []string
	dataDir  string
}

// Run runs the stress experiment: setup, the measured iterations, and
// teardown. A first Ctrl-C drains the iterations in flight, prints the
// summary and runs --teardown; a second one returns at once.
func Run(ctx context.Context, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return experiment.RunInterruptible(ctx, c.Outputs.Out, func(stops *experiment.Interrupts) error { return run(c, stops) })
}

func run(c *Config, stops *experiment.Interrupts) (err error) {
	ctx := stops.Context()
	j := &job{c: c, stops: stops, seed: c.Seed}
	j.log = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if !c.SeedGiven {
		j.seed = uint64(time.Now().UnixNano())
	}
	// What can be read without the database is read first: a missing
	// file costs no connection.
	if err := j.readFiles(); err != nil {
		return err
	}
	tc := c.Target
	tc.DefaultFile = "stress.db"
	tc.DefaultIn, tc.DefaultInFlag = c.placementDefaultIn()
	if j.target, err = experiment.ResolveTarget(tc, c.Stderr); err != nil {
		return err
	}
	defer j.target.Cleanup(c.Stderr)
	j.target.RemoveAtAbandon(stops)
	// What the driver says before anything is opened: a database without
	// SQL text is refused by its scheme, and sessions dbprobe's process
	// cannot open the files of, before a file is created.
	if p, ok := driver.ProfileOf(j.target.Target); ok {
		if err := p.Need(driver.CapSQL); err != nil {
			return err
		}
	}
	if err := experiment.CheckFiles(j.target, fmt.Sprintf("--threads %d", c.Threads), "lower --threads", c.Threads+1); err != nil {
		return err
	}
	if j.db, err = j.target.Open(ctx, driver.Options{Sessions: c.Threads + 1}); err != nil {
		return err
	}
	defer j.db.Close()
	experiment.RestoreAtAbandon(j.db, stops, c.Stderr)
	if err := j.capabilities(); err != nil {
		return err
	}
	j.dataDir = experiment.DataDirectory(ctx, j.db, j.target.Target)
	// One more connection than the threads: the one that checks the
	// statements before and explains them after.
	if err := experiment.CheckConnections(ctx, j.db, j.target.Target, fmt.Sprintf("--threads %d", c.Threads), "lower --threads",
		c.Threads+1, experiment.MonitorConnections(c.Monitor, j.db)); err != nil {
		return err
	}
	if err := j.split(); err != nil {
		return err
	}
	// What dbprobe makes on the server goes at the end, whatever happens:
	// the mix's table, then the Locations (placement.go).
	defer func() {
		if cerr := j.cleanup(ctx); cerr != nil {
			if err == nil {
				err = cerr
			} else {
				fmt.Fprintf(c.Stderr, "dbprobe: %v\n", cerr)
			}
		}
	}()
	// What an earlier run left goes first — the mix's table, then the
	// Locations it was in — so that this run's are made afresh.
	if err := j.dropLeftoverTable(ctx); err != nil {
		return err
	}
	if err := j.place(ctx); err != nil {
		return err
	}
	if j.outs, err = experiment.OpenOutputs(ctx, c.Outputs, c.Stdout, c.Stderr, map[string]string{"driver": j.db.Info().Driver}, stops); err != nil {
		return err
	}
	defer func() {
		if cerr := j.outs.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if len(j.setup) > 0 {
		// Teardown runs once setup has started, whatever happens next: a
		// setup that failed half-way may have made something.
		defer func() {
			if terr := j.runTeardown(ctx); terr != nil && err == nil {
				err = terr
			}
		}()
		if err := j.runScript(ctx, "--setup", c.Setup, j.setup); err != nil {
			return err
		}
	} else if len(j.teardown) > 0 {
		defer func() {
			if terr := j.runTeardown(ctx); terr != nil && err == nil {
				err = terr
			}
		}()
	}
	if err := j.prepareWork(ctx); err != nil {
		return err
	}
	return j.measure(ctx)
}

// readFiles reads every file the run names and the CSV, before anything
// connects.
func (j *job) readFiles() error {
	c := j.c
	for _, f := range c.Scripts {
		if _, err := readScript("--sql", f.Path); err != nil {
			return err
		}
	}
	for _, f := range []struct{ flag, path string }{{"--setup", c.Setup}, {"--teardown", c.Teardown}, {"--session-setup", c.SessionSetup}} {
		if f.path == "" {
			continue
		}
		if _, err := readScript(f.flag, f.path); err != nil {
			return err
		}
	}
	if c.ParamsCSV != "" {
		var err error
		if j.csv, err = readCSV(c.ParamsCSV, c.ParamsOrder); err != nil {
			return err
		}
	}
	return nil
}

// capabilities refuses, in one line, a database that cannot run SQL text
// or what the flags ask of it.
func (j *job) capabilities() error {
	j.caps = driver.Describe(j.db)
	need := []driver.Capability{driver.CapSQL}
	if j.c.Protocol == Simple {
		need = append(need, driver.CapSimpleProtocol)
	}
	if err := j.caps.Need(need...); err != nil {
		return err
	}
	sql, ok := j.db.(driver.SQLRunner)
	if !ok {
		return badinput.New("%s runs no SQL text", j.caps.Database)
	}
	j.sql = sql
	return nil
}

// split cuts every file into statements by the database's rules.
func (j *job) split() error {
	c := j.c
	if c.SessionSetup != "" {
		st, err := loadStatements(j.sql, "--session-setup", c.SessionSetup)
		if err != nil {
			return err
		}
		for _, s := range st {
			j.session = append(j.session, s.Text)
		}
	}
	var err error
	if c.Setup != "" {
		if j.setup, err = loadStatements(j.sql, "--setup", c.Setup); err != nil {
			return err
		}
	}
	if c.Teardown != "" {
		if j.teardown, err = loadStatements(j.sql, "--teardown", c.Teardown); err != nil {
			return err
		}
	}
	scripts, err := loadScripts(j.sql, c.Scripts)
	if err != nil {
		return err
	}
	j.work = &files{scripts: scripts}
	return nil
}

// givenText names the parameters each source gives, for the refusal of
// one none gives: " (--params-query gives :id, :name)"; "" when there is
// no source.
func givenText(sources []source) string {
	var parts []string
	for _, s := range sources {
		parts = append(parts, describe(s)+" gives :"+strings.Join(s.names(), ", :"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// caseHint says that a source gives a parameter of the same name but
// another case; "" when none does.
func caseHint(name string, given []string) string {
	for _, g := range given {
		if strings.EqualFold(g, name) {
			return fmt.Sprintf(" (:%s is given: names are case-sensitive, and a database may fold a column's name to lower or upper case)", g)
		}
	}
	return ""
}

// options are how every connection of the run talks to the server.
func (j *job) options() driver.SQLOptions {
	return driver.SQLOptions{Simple: j.c.Protocol == Simple, Setup: j.sessionSetup()}
}

// sessionSetup are the statements every connection runs as it opens:
// where its temporary files go (--placement-temp), then --session-setup.
func (j *job) sessionSetup() []string {
	if len(j.placed.tempSetup) == 0 {
		return j.session
	}
	return append(slices.Clone(j.placed.tempSetup), j.session...)
}

// control opens the connection that runs setup, teardown and the checks:
// with the session's settings, and as text where the database can (some
// statements, MySQL's CREATE TRIGGER, cannot be prepared).
func (j *job) control(ctx context.Context, asText bool) (driver.SQLConn, error) {
	o := driver.SQLOptions{Setup: j.sessionSetup(), Simple: asText && j.caps.OK(driver.CapSimpleProtocol)}
	conn, err := j.sql.SQLConn(ctx, o)
	if err != nil {
		if len(j.session) > 0 && !badinput.Is(err) {
			return nil, badinput.New("--session-setup %s: %s: %v", j.c.SessionSetup, j.caps.Database, j.target.ScrubError(err))
		}
		return nil, experiment.Scrubbed(j.target.Target, err)
	}
	return conn, nil
}

// runScript runs a --setup or --teardown file's statements in order, each
// on its own; the first failure stops it, named by file and line.
func (j *job) runScript(ctx context.Context, flag, path string, stmts []driver.ScriptStatement) error {
	conn, err := j.control(ctx, true)
	if err != nil {
		return err
	}
	defer conn.Close()
	execer, direct := conn.(driver.Execer)
	for _, s := range stmts {
		if direct {
			// As written, unprepared: a server may refuse to prepare
			// what a setup holds (MySQL's CREATE TRIGGER).
			if _, err := execer.Exec(ctx, s.Text); err != nil {
				return j.statementError(flag, path, s.Line, err)
			}
			continue
		}
		st, err := conn.Prepare(ctx, s.Text)
		if err == nil {
			if len(st.Params()) > 0 {
				st.Close()
				return badinput.New("%s %s line %d: the statement has parameters (:%s); %s runs statements without values", flag, path, s.Line, strings.Join(st.Params(), ", :"), flag)
			}
			_, err = conn.Run(ctx, st, nil, nil)
			st.Close()
		}
		if err != nil {
			return j.statementError(flag, path, s.Line, err)
		}
	}
	return nil
}

// statementError names a statement the database refused: the file, the
// line and the database's own message. A syntax error or a missing
// object is the user's to fix; a lost connection is not.
func (j *job) statementError(flag, path string, line int, err error) error {
	msg := strings.Join(strings.Fields(j.target.ScrubError(err)), " ")
	if driver.IsConnLost(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s line %d: %s", flag, path, line, msg)
	}
	if badinput.Is(err) {
		// dbprobe's own refusal (a parameter with nothing to bind it).
		return badinput.New("%s %s line %d: %s", flag, path, line, msg)
	}
	return badinput.New("%s %s line %d: %s says: %s", flag, path, line, j.caps.Database, msg)
}

// runTeardown runs --teardown after the run, even one interrupted or
// failed: its context is the run's when live, else a new one bounded by
// TeardownTimeout.
func (j *job) runTeardown(ctx context.Context) error {
	if len(j.teardown) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		fmt.Fprintf(j.c.Stderr, "dbprobe: running --teardown %s\n", j.c.Teardown)
	}
	ctx, cancel := j.afterRun(ctx)
	defer cancel()
	return j.runScript(ctx, "--teardown", j.c.Teardown, j.teardown)
}

// afterRun is the context for what must still happen after the run, also
// one interrupted or failed: ctx while it is live, else one of its own
// (keeping ctx's values) bounded by TeardownTimeout, so that Ctrl-C does
// not leave the database holding what the run made. cancel releases it.
func (j *job) afterRun(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	timeout := j.c.TeardownTimeout
	if timeout <= 0 {
		timeout = defaultTeardownTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}

// prepareWork gathers the parameters' sources, has the database check
// every statement, and takes each one's plan with the first iteration's
// values: nothing is measured before every statement passed.
func (j *job) prepareWork(ctx context.Context) error {
	c := j.c
	var sources []source
	conn, err := j.control(ctx, false)
	if err != nil {
		return err
	}
	defer conn.Close()
	if c.ParamsQuery != "" {
		r, err := j.paramsQuery(ctx, conn)
		if err != nil {
			return err
		}
		sources = append(sources, r)
	}
	if j.csv != nil {
		sources = append(sources, j.csv)
	}
	// The generators are made twice: the run's, and those the plans are
	// taken with, so that taking them draws nothing from the run's (a
	// sequential one would start the run past LO).
	generators := func() []source {
		var out []source
		for _, p := range c.Params {
			out = append(out, newGenerator(p))
		}
		return out
	}
	var w, replay Work
	if c.Mix != MixNone {
		w, err = j.prepareMix(ctx)
		replay = w
	} else {
		scripts := j.work.Scripts()
		w, err = newFiles(scripts, append(slices.Clone(sources), generators()...))
		if err == nil {
			replay, err = newFiles(scripts, append(slices.Clone(sources), generators()...))
		}
	}
	if err != nil {
		return err
	}
	j.work = w
	index := map[string]int{}
	for i, n := range w.Params() {
		index[n] = i
	}
	j.first = firstValues(replay, j.seed, c.Threads, c.Iterations)
	used := map[string]bool{}
	explainer, _ := conn.(driver.Explainer)
	for s, sc := range w.Scripts() {
		j.plans = append(j.plans, make([]*driver.Plan, len(sc.Statements)))
		for k, st := range sc.Statements {
			prepared, err := conn.Prepare(ctx, st.Text)
			if err != nil {
				return j.statementError("--sql", sc.Path, st.Line, err)
			}
			args := make([]any, 0, len(prepared.Params()))
			for _, n := range prepared.Params() {
				i, ok := index[n]
				if !ok {
					prepared.Close()
					return badinput.New("--sql %s line %d: parameter :%s is given no value%s%s; give it with --param %s=uniform:1:1000, a column of --params-csv or of --params-query",
						sc.Path, st.Line, n, caseHint(n, w.Params()), givenText(append(slices.Clone(sources), generators()...)), n)
				}
				used[n] = true
				args = append(args, j.first[s][i])
			}
			if explainer != nil && j.caps.OK(driver.CapExplain) {
				p, err := explainer.Explain(ctx, prepared, args, false)
				switch {
				case errors.Is(err, driver.ErrNoPlan):
					// Checked by Prepare; it has no plan to keep.
					j.notes = append(j.notes, fmt.Sprintf("plan [%s]: none: %s shows no plan for this kind of statement", st.Label, j.caps.Database))
				case err != nil:
					prepared.Close()
					return j.statementError("--sql", sc.Path, st.Line, err)
				default:
					j.plans[s][k] = &p
				}
			}
			prepared.Close()
		}
	}
	for _, n := range w.Params() {
		if !used[n] {
			j.notes = append(j.notes, fmt.Sprintf("parameter :%s is given but no statement uses it", n))
		}
	}
	if !j.caps.OK(driver.CapExplain) {
		j.notes = append(j.notes, fmt.Sprintf("plans: %s has no %s here (%s): none are kept", j.caps.Database, driver.CapExplain, j.caps.Support(driver.CapExplain).Note))
	}
	j.shared = &shared{
		db: j.sql, opts: j.options(), work: w,
		lay:         newLayout(w.Scripts(), c.Transaction, c.ConnectPerIteration),
		transaction: c.Transaction, fresh: c.ConnectPerIteration, delay: c.Delay,
		perThread: c.Iterations, threads: c.Threads, seed: j.seed, index: index,
	}
	j.shared.opts.Fresh = c.ConnectPerIteration
	return nil
}

// maxFirstDraws bounds the iterations firstValues replays.
const maxFirstDraws = 4096

// firstValues replays the start of a run of w — the first iteration of
// each thread (the first 64), then the second of each, … — and returns,
// for each script, the values it first runs with: its plan is taken with
// what it will really get (the mix's UPDATE its first key, not the
// SELECT's). A script not drawn within maxFirstDraws iterations takes
// the first iteration's values. w must be a Work of its own, whose
// generators the run does not draw from.
func firstValues(w Work, seed uint64, threads int, perThread int64) [][]any {
	n := len(w.Scripts())
	first := make([][]any, n)
	p := shared{perThread: perThread, threads: threads}
	choosers := make([]Chooser, min(threads, 64))
	for t := range choosers {
		choosers[t] = w.Chooser(t, seed)
	}
	var earliest []any
	found, draws := 0, 0
	for k := int64(0); found < n && draws < maxFirstDraws && (perThread == 0 || k < perThread); k++ {
		for t, ch := range choosers {
			values := make([]any, len(w.Params()))
			s := ch.Choose(p.iteration(t, k), values)
			draws++
			if earliest == nil {
				earliest = values
			}
			if first[s] == nil {
				first[s] = values
				found++
			}
		}
	}
	for s := range first {
		if first[s] == nil {
			first[s] = earliest
		}
	}
	return first
}

// paramsQuery runs --params-query once and keeps its rows, each column
// a parameter named as the database names the column.
func (j *job) paramsQuery(ctx context.Context, conn driver.SQLConn) (*rows, error) {
	q := j.c.ParamsQuery
	st, err := conn.Prepare(ctx, q)
	if err != nil {
		return nil, badinput.New("--params-query: %s says: %s", j.caps.Database, strings.Join(strings.Fields(j.target.ScrubError(err)), " "))
	}
	defer st.Close()
	if len(st.Params()) > 0 {
		return nil, badinput.New("--params-query has parameters (:%s): it runs once, before any value is known; give it without", strings.Join(st.Params(), ", :"))
	}
	r := &rows{order: j.c.ParamsOrder, from: "--params-query"}
	out, err := conn.Run(ctx, st, nil, func(row []any) error {
		vals := make([]any, len(row))
		for i, v := range row {
			vals[i] = normalize(v)
		}
		r.vals = append(r.vals, vals)
		return nil
	})
	if err != nil {
		return nil, badinput.New("--params-query: %s says: %s", j.caps.Database, strings.Join(strings.Fields(j.target.ScrubError(err)), " "))
	}
	if out.Columns == nil {
		return nil, badinput.New("--params-query returns no rows: give a SELECT whose columns are the parameters (SELECT id, name FROM …)")
	}
	if err := checkColumns(j.caps.Database, out.Columns); err != nil {
		return nil, err
	}
	r.cols = out.Columns
	if len(r.vals) == 0 {
		return nil, badinput.New("--params-query returned no rows: it must give at least one row of parameter values")
	}
	j.notes = append(j.notes, fmt.Sprintf("--params-query gave %s rows of %s, dealt out %s", result.Grouped(int64(len(r.vals))), strings.Join(r.cols, ", "), orderWords(j.c.ParamsOrder)))
	return r, nil
}

// measure runs the iterations beside the monitor and writes the header
// and the summary.
func (j *job) measure(ctx context.Context) error {
	c := j.c
	p := j.shared
	costs := newCostWindow(j)
	mon, monitorNotes := experiment.StartMonitor(ctx, c.Monitor, j.db, j.target.Target, phaseName, j.outs)
	defer mon.Stop()
	header := j.header()
	header.Notes = append(header.Notes, monitorNotes...)
	header.Notes = append(header.Notes, costs.notes()...)
	if err := j.outs.Header(header); err != nil {
		return err
	}
	ropts := runner.Options{
		Phase:            runner.Run,
		Threads:          c.Threads,
		Target:           c.Rate,
		MaxExecutionTime: c.Duration,
		Warmup:           c.Warmup,
		Seed:             j.seed,
		DrainTimeout:     max(c.DrainTimeout, time.Nanosecond), // the runner reads 0 as its default
		Retry:            runner.RetryPolicy{Max: c.Retries, Backoff: c.RetryBackoff, MaxBackoff: c.RetryMaxBackoff},
		OpTimeout:        c.OpTimeout,
		OnError:          c.OnError,
		ReconnectTimeout: c.ReconnectTimeout,
	}
	experiment.PhaseWiring{Phase: phaseName, Outputs: j.outs, Monitor: mon, Log: j.log, Target: j.target, StatusInterval: c.StatusInterval}.Wire(&ropts)
	// The first failure of each code, as dbprobe's other lines are
	// written, rather than the log's: --quiet leaves it out.
	var firstMu sync.Mutex
	ropts.OnFirstError = func(op, code string, err error) {
		if c.Quiet {
			return
		}
		firstMu.Lock()
		defer firstMu.Unlock()
		fmt.Fprintf(c.Stderr, "dbprobe: [%s] failed with %s: %s; later failures with this code are only counted\n", op, code, strings.Join(strings.Fields(j.target.ScrubError(err)), " "))
	}
	onStart := ropts.OnStart
	ropts.OnStart = func(start, origin time.Time) {
		p.warmEnd.Store(measureFrom(start, c.Warmup))
		onStart(start, origin)
		costs.start(ctx, start, c.Warmup)
	}
	workers := make([]*worker, c.Threads)
	plan := runner.Plan{
		Series:  p.lay.series,
		Cleanup: runner.NoSeries,
		Count:   c.Iterations * int64(c.Threads),
		Split:   runner.PerWorker,
		Worker: func(i int) runner.Worker {
			workers[i] = newWorker(p, i)
			return workers[i]
		},
	}
	out, err := runner.Execute(ctx, plan, ropts)
	mon.EndMonitor(out)
	if err != nil {
		return j.openError(err)
	}
	sum := experiment.Summary(phaseName, out, c.Retries, mon)
	sum.Ending = j.ending(out)
	if out.Interrupted {
		sum.Notes = append(sum.Notes, experiment.InterruptNote(j.stops, c.DrainTimeout))
	}
	sum.Stress = j.stressSummary(ctx, out, workers, costs)
	sum.Notes = append(sum.Notes, costs.lateNotes...)
	sum.Notes = append(sum.Notes, j.endNotes...)
	sum.Notes = append(sum.Notes, j.mixRates(mon, out)...)
	var stopped error
	faults := experiment.Faults{Failing: experiment.Failing(out, j.target.Target, "iterations")}
	if sum.Availability != nil {
		faults.Outages = sum.Availability.Outages
	}
	if out.Stopped != nil {
		progress := fmt.Sprintf("after %s iterations", result.Grouped(out.Ops))
		sum.Stopped, faults.Stopped = experiment.Stopped(out.Stopped, j.db, j.target.Target,
			experiment.StopContext{Phase: phaseName, Progress: progress, DataDir: j.dataDir})
		stopped = &experiment.PhaseStopped{Text: sum.Stopped.Text, UserFix: badinput.Is(out.Stopped.Err), Failed: ErrRunFailed}
	}
	sum.Diagnosis = mon.Diagnose(out.Start, out.End, c.Threads, faults)
	if out.WarmupUnfinished {
		sum.Notes = append(sum.Notes, "the run ended before its warm-up did: nothing was measured")
	}
	if err := j.outs.Summary(sum); err != nil {
		return err
	}
	return stopped
}

// openError says what kept the workers from starting: a statement that
// did not prepare on a worker's connection, a session setup refused.
func (j *job) openError(err error) error {
	err = experiment.Scrubbed(j.target.Target, err)
	if len(j.session) > 0 && !driver.IsConnLost(err) && !badinput.Is(err) && !errors.Is(err, context.Canceled) {
		return badinput.New("opening the workers' connections (with --session-setup %s): %v", j.c.SessionSetup, err)
	}
	return err
}

// ending says which bound ended the run, with the figures.
func (j *job) ending(out *runner.Outcome) *result.Ending {
	c := j.c
	e := &result.Ending{By: out.EndedBy.String()}
	// Iterations, not attempts: a statement retried five times and
	// failed once is one failed iteration, as [ITERATION]'s Return=ERROR
	// counts it; the attempts repeated are said apart.
	n := failedIterations(out)
	failed := ""
	if n > 0 {
		failed = fmt.Sprintf(" (%d failed)", n)
	}
	switch out.EndedBy {
	case runner.EndedByInterrupt:
		e.Text = fmt.Sprintf("interrupted after %d iterations%s", out.Ops, failed)
	case runner.EndedByError:
		e.Text = fmt.Sprintf("stopped after %d iterations%s by a failure more attempts cannot fix (%s; --on-error stop)", out.Ops, failed, experiment.FailureWords(out.Stopped.Err))
	case runner.EndedByUnreachable:
		e.Text = fmt.Sprintf("stopped after %d iterations%s: the database did not answer for %s (--reconnect-timeout)", out.Ops, failed, experiment.SecondsText(c.ReconnectTimeout))
	case runner.EndedByTime:
		e.Text = fmt.Sprintf("--duration %s ran out after %d iterations%s", c.Duration, out.Ops, failed)
		if c.Iterations > 0 {
			e.Text += fmt.Sprintf(", before the %d of --iterations %d × --threads %d", c.Iterations*int64(c.Threads), c.Iterations, c.Threads)
		}
	default:
		e.Text = fmt.Sprintf("all %d iterations done (--iterations %d × --threads %d)", c.Iterations*int64(c.Threads), c.Iterations, c.Threads)
		if n > 0 {
			e.Text += fmt.Sprintf("; %d of them failed", n)
		}
	}
	if out.Retries > 0 {
		e.Text += fmt.Sprintf("; %d failed attempts were retried (--retries %d)", out.Retries, c.Retries)
	}
	return e
}

// failedIterations counts the measured iterations that failed: the
// failure statuses of the ITERATION series.
func failedIterations(out *runner.Outcome) int64 {
	var n int64
	for _, s := range out.Series {
		if s.Name != result.IterationSeries {
			continue
		}
		for _, st := range s.Statuses {
			if st.Status != "OK" {
				n += st.Count
			}
		}
	}
	return n
}

// header describes the run: the database, every flag and its source, the
// statements, and the notes.
func (j *job) header() result.Header {
	c := j.c
	info := j.db.Info()
	h := result.Header{
		Experiment:  result.ExperimentStress,
		Phase:       phaseName,
		Command:     c.CommandLine,
		StartedAt:   time.Now(),
		Target:      j.target.Redacted(),
		Environment: experiment.Environment(),
		Database:    result.Database{Driver: info.Driver, Library: info.Library, ServerVersion: info.ServerVersion, Placement: info.Placement.String()},
	}
	for _, s := range info.Settings {
		if s.KeyValue {
			// How the key-value sessions commit, which is not how the
			// statements here run (the note below says that).
			continue
		}
		h.Database.Settings = append(h.Database.Settings, result.Setting{Key: s.Name, Value: s.Value})
	}
	for _, s := range c.Flags {
		if c.Mix == MixNone && (s.Key == "rows" || s.Key == "row-bytes") {
			// They shape the mix's table, and there is none.
			continue
		}
		if s.Key == "seed" {
			s.Value = strconv.FormatUint(j.seed, 10)
			if s.Source == config.SourceDefault {
				s.Source = "default (clock)"
			}
		}
		h.Settings = append(h.Settings, result.Setting{Key: s.Key, Value: s.Value, Source: s.Source})
	}
	mode := "closed loop (each thread starts its next iteration when the last one returns)"
	if c.Rate > 0 {
		mode = fmt.Sprintf("open loop at %g iterations/s in all; latency from each iteration's intended start is reported as Intended-ITERATION", c.Rate)
	}
	h.Settings = append(h.Settings,
		result.Setting{Key: "ends", Value: j.bounds(), Source: "derived"},
		result.Setting{Key: "mode", Value: mode, Source: "derived"},
		result.Setting{Key: "threadcount", Value: strconv.Itoa(c.Threads), Source: "derived"},
	)
	how := "each statement on its own (autocommit), retried on its own; an iteration stops at its first failed statement"
	if c.Transaction {
		how = "the statements of an iteration in one transaction (COMMIT is timed apart); a failure rolls it back, and --retries repeats the whole iteration"
	}
	h.Notes = append(h.Notes, "iterations: "+how)
	h.Notes = append(h.Notes, fmt.Sprintf("SQL text: %s runs it as %s; each thread on a connection of its own", j.caps.Database, j.caps.Support(driver.CapSQL).Note))
	if j.mix != nil {
		h.Notes = append(h.Notes, "[OVERALL] counts iterations: Throughput(ops/sec) is iterations per second; an iteration of --mix is one statement, its series named by its kind ([OLTP-SELECT] …), its text in the summary")
	} else {
		h.Notes = append(h.Notes, "[OVERALL] counts iterations: Throughput(ops/sec) is iterations per second; each statement's series is labelled by its file and place ([FILE.SQL-N]), its text is in the summary")
	}
	for _, sc := range j.work.Scripts() {
		if j.mix != nil {
			break
		}
		share := ""
		if len(j.work.Scripts()) > 1 {
			share = fmt.Sprintf(" (weight %g)", sc.Weight)
		}
		h.Notes = append(h.Notes, fmt.Sprintf("script %s%s: %s", sc.Path, share, result.Plural(len(sc.Statements), "statement")))
	}
	if c.ConnectPerIteration {
		h.Notes = append(h.Notes, "--connect-per-iteration: every iteration opens a new connection, runs its session setup and prepares its statements, timed as CONNECT and inside ITERATION")
	}
	if c.Warmup > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("warm-up: the first %s are excluded from the figures, rows and server costs", c.Warmup))
	}
	for _, p := range c.Params {
		if p.Dist == Zipfian {
			h.Notes = append(h.Notes, fmt.Sprintf("--param %s: zipfian is YCSB's scrambled zipfian (constant 0.99): popular values are scattered over %d…%d", p.Name, p.Lo, p.Hi))
		}
	}
	h.Notes = append(h.Notes, j.notes...)
	return h
}

// bounds says in advance what will end the run.
func (j *job) bounds() string {
	c := j.c
	count := ""
	if c.Iterations > 0 {
		count = fmt.Sprintf("%d iterations (--iterations %d per thread × --threads %d)", c.Iterations*int64(c.Threads), c.Iterations, c.Threads)
	}
	switch {
	case count != "" && c.Duration > 0:
		return "after " + count + " or --duration " + c.Duration.String() + ", whichever comes first"
	case count != "":
		return "after " + count
	}
	return "after --duration " + c.Duration.String()
}
