package stress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// Config is what dbprobe stress asks for. The command in internal/cli
// fills it from its flags; Validate checks it before anything connects.
type Config struct {
	// Scripts are the --sql files, each with its weight.
	Scripts []ScriptFile
	// Setup and Teardown are files run once, before and after the
	// measurement; SessionSetup a file run on every connection as it
	// opens. "" for none.
	Setup, Teardown, SessionSetup string
	// Threads run the iterations, each on its own connection.
	Threads int
	// Iterations is how many iterations each thread runs (as
	// SQLQueryStress counts: Threads×Iterations in all); 0 for no count.
	Iterations int64
	// Duration ends the run after this long; 0 for no limit.
	Duration time.Duration
	// Rate paces the iterations at this many a second in all (open loop);
	// 0 runs closed loop.
	Rate float64
	// Delay is a pause between two iterations of a thread.
	Delay time.Duration
	// Warmup excludes the run's first part from the figures.
	Warmup time.Duration
	// Transaction runs each iteration's statements as one transaction.
	Transaction bool
	// Protocol is how statements are sent.
	Protocol Protocol
	// ConnectPerIteration opens a new connection for every iteration.
	ConnectPerIteration bool
	// ParamsQuery is a query run once at the start whose rows give
	// parameter values by column name; ParamsCSV a CSV file with a
	// header; ParamsOrder how their rows are dealt out.
	ParamsQuery string
	ParamsCSV   string
	ParamsOrder Order
	// Params are --param NAME=DIST:LO:HI, drawn per iteration.
	Params []ParamSpec
	// Explain analyzes each statement once at the end.
	Explain bool

	// Mix is a built-in workload run instead of --sql files (oltp.go):
	// its table has Rows rows of RowBytes payload bytes, dropped at the
	// end unless Keep.
	Mix      Mix
	Rows     int64
	RowBytes int
	Keep     bool
	// Placement is a directory for the tables dbprobe creates, and
	// PlacementTemp one for the database's temporary files
	// (placement.go); "" for the database's own places.
	Placement, PlacementTemp string

	Retries          int
	RetryBackoff     time.Duration
	RetryMaxBackoff  time.Duration
	OpTimeout        time.Duration
	OnError          runner.OnError
	ReconnectTimeout time.Duration
	DrainTimeout     time.Duration
	// TeardownTimeout bounds --teardown after an interrupt or a failure,
	// when the run's own context is gone.
	TeardownTimeout time.Duration

	// Seed seeds the workers' random sources; SeedGiven says the user
	// chose it (else the clock's is used).
	Seed      uint64
	SeedGiven bool

	Target         experiment.TargetConfig
	Outputs        experiment.OutputConfig
	Monitor        experiment.MonitorConfig
	StatusInterval time.Duration
	// CommandLine is the command as typed, its secrets hidden; Flags are
	// every flag with its value and source, for the header.
	CommandLine string
	Flags       []config.Setting
	// Stdout takes the text results, Stderr messages and status lines.
	Stdout, Stderr io.Writer
	// Quiet is --quiet: no line on Stderr for the first failure of each
	// code (the summary counts them all).
	Quiet bool
}

// Protocol is how a statement goes to the server.
type Protocol int

// The protocols.
const (
	// Prepared prepares each statement on the server once per connection
	// and runs it with bound parameters.
	Prepared Protocol = iota
	// Simple sends the text each time, the client library putting the
	// parameters in (pgbench -M simple).
	Simple
)

// String names the protocol as --protocol takes it.
func (p Protocol) String() string {
	switch p {
	case Prepared:
		return "prepared"
	case Simple:
		return "simple"
	}
	return fmt.Sprintf("Protocol(%d)", int(p))
}

// ParseProtocol reads --protocol.
func ParseProtocol(s string) (Protocol, error) {
	switch strings.ToLower(s) {
	case "prepared":
		return Prepared, nil
	case "simple":
		return Simple, nil
	}
	return 0, badinput.New("--protocol %q: give prepared (statements prepared on the server, the default) or simple (the text sent each time, as pgbench -M simple)", s)
}

// Order is how the rows of --params-query and --params-csv are dealt out
// to the iterations.
type Order int

// The orders.
const (
	// RoundRobin gives iteration i row i modulo the rows, as
	// SQLQueryStress does.
	RoundRobin Order = iota
	// Random gives each iteration a row drawn at random, from the
	// worker's seeded source.
	Random
)

// String names the order as --params-order takes it.
func (o Order) String() string {
	switch o {
	case RoundRobin:
		return "round-robin"
	case Random:
		return "random"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// orderWords says how rows are dealt out, for a sentence: "round-robin",
// "at random".
func orderWords(o Order) string {
	if o == Random {
		return "at random"
	}
	return o.String()
}

// ParseOrder reads --params-order.
func ParseOrder(s string) (Order, error) {
	switch strings.ToLower(s) {
	case "round-robin":
		return RoundRobin, nil
	case "random":
		return Random, nil
	}
	return 0, badinput.New("--params-order %q: give round-robin (iteration i takes row i, cycling) or random", s)
}

// ScriptFile is one --sql file and its weight among the others.
type ScriptFile struct {
	Path   string
	Weight float64
}

// ParseScriptArg reads one --sql: FILE or FILE@WEIGHT, the weight a
// positive number (an iteration picks a file with probability its weight
// over the sum). A FILE that itself holds an @ is taken whole when what
// follows the last @ is not a number and the whole name is a file.
func ParseScriptArg(s string) (ScriptFile, error) {
	if s == "" {
		return ScriptFile{}, badinput.New("--sql needs a file name: --sql FILE or --sql FILE@WEIGHT")
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return ScriptFile{Path: s, Weight: 1}, nil
	}
	path, w := s[:at], s[at+1:]
	weight, err := strconv.ParseFloat(w, 64)
	if err != nil {
		if _, serr := os.Stat(s); serr == nil {
			return ScriptFile{Path: s, Weight: 1}, nil
		}
		return ScriptFile{}, badinput.New("--sql %s: the weight %q after @ is not a number; give FILE@WEIGHT with a positive weight, e.g. %s@3", s, w, path)
	}
	if !(weight > 0) || weight > 1e9 {
		return ScriptFile{}, badinput.New("--sql %s: the weight %s must be a positive number (up to 1e9), e.g. %s@3", s, w, path)
	}
	if path == "" {
		return ScriptFile{}, badinput.New("--sql %s: no file name before the @", s)
	}
	return ScriptFile{Path: path, Weight: weight}, nil
}

// Validate checks what can be checked before connecting.
func (c *Config) Validate() error {
	switch {
	case len(c.Scripts) == 0 && c.Mix == MixNone:
		return badinput.New("dbprobe stress needs at least one --sql FILE (the statements each iteration runs) or a built-in --mix (%s)", strings.Join(MixNames(), ", "))
	case c.Threads < 1:
		return badinput.New("--threads %d: give 1 or more", c.Threads)
	case c.Iterations < 0:
		return badinput.New("--iterations %d must not be negative", c.Iterations)
	case c.Duration < 0:
		return badinput.New("--duration %s must not be negative", c.Duration)
	case c.Iterations == 0 && c.Duration == 0:
		return badinput.New("no --iterations count and no --duration: the run would never end; give --iterations N (per thread) or --duration D")
	case c.Rate < 0:
		return badinput.New("--target %g must not be negative (0 runs closed loop)", c.Rate)
	case c.Delay < 0:
		return badinput.New("--delay %s must not be negative", c.Delay)
	case c.Delay > 0 && c.Rate > 0:
		return badinput.New("--delay and --target both pace the iterations; give one: --target for a rate in all (open loop), --delay for a pause after each iteration")
	case c.Warmup < 0:
		return badinput.New("--warmup %s must not be negative", c.Warmup)
	case c.Warmup > 0 && c.Duration > 0 && c.Warmup >= c.Duration:
		return badinput.New("--warmup %s is not shorter than --duration %s: nothing would be measured", c.Warmup, c.Duration)
	case c.Retries < 0:
		return badinput.New("--retries %d must not be negative", c.Retries)
	case c.DrainTimeout < 0:
		return badinput.New("--drain-timeout %s must not be negative (0 cancels statements in flight at once)", c.DrainTimeout)
	case c.Iterations > 0 && c.Iterations > (1<<62)/int64(c.Threads):
		return badinput.New("--iterations %d × --threads %d is too many iterations to count", c.Iterations, c.Threads)
	}
	seen := map[string]bool{}
	for _, p := range c.Params {
		if seen[p.Name] {
			return badinput.New("--param %s is given twice; give each parameter once", p.Name)
		}
		seen[p.Name] = true
	}
	if err := c.validateMix(); err != nil {
		return err
	}
	if err := c.validatePlacement(); err != nil {
		return err
	}
	return c.Monitor.Validate()
}
