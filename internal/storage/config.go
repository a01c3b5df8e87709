package storage

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/config"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/price"
)

// Kind is one of the storage experiments.
type Kind int

// The experiments.
const (
	// Scan reads a cold table on the server: the storage read rate.
	Scan Kind = iota
	// Read streams a table's rows into the client with N threads.
	Read
	// Write copies rows in large INSERT … SELECT chunks.
	Write
	// Bulk loads rows through the database's bulk API with N writers.
	Bulk
	// LogCopy copies a table on the server at a degree of parallelism:
	// the transaction log's write rate.
	LogCopy
	// Cache reads working sets of growing size by key at random: how
	// much the database's own cache holds (cache.go).
	Cache
	// lastKind is the last experiment, for loops over them all.
	lastKind = Cache
)

var kindNames = [...]string{"scan", "read", "write", "bulk", "logcopy", "cache"}

// String names the experiment as its subcommand does.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// writesTable reports whether the experiment writes a table, so that its
// log and device bytes per byte written, and its checkpoints, mean
// something.
func (k Kind) writesTable() bool { return k == Write || k == Bulk || k == LogCopy }

// expectKey is the --expect key of the experiment's rate.
func (k Kind) expectKey() string {
	if k == LogCopy {
		return "log"
	}
	return k.String()
}

// Defaults. The payload is wide enough that a table's index is a few
// percent of it, so that its size on disk is its rows', and narrow
// enough that several rows share a page on every database.
const (
	DefaultSize     = 1_000_000_000
	DefaultDuration = 60 * time.Second
	DefaultChunk    = 100_000_000
	DefaultPayload  = 1000
	DefaultBatch    = 1000
	// minSize is the smallest table an experiment takes: a few chunks of
	// its fill, so that its rate is not a round trip's.
	minSize = 1_000_000
)

// Config is what dbprobe storage asks for. The command in internal/cli
// fills it from its flags; Validate checks it before anything connects.
type Config struct {
	Kind Kind
	// Size is --size in bytes: of the table scanned, read, copied, or of
	// the rows written or loaded. 0 takes DefaultSize, or for scan twice
	// the database's own cache when that is larger (cacheFactor).
	Size int64
	// Duration is --duration: an experiment repeats its pass until it is
	// up (write and bulk stop at Size or at it, whichever first).
	Duration time.Duration
	// Chunk is --chunk in bytes: the rows one INSERT … SELECT of write
	// copies.
	Chunk int64
	// chunkDefault says Chunk was not given and is DefaultChunk, so that
	// clamping it to --size does not read as the user's --chunk.
	chunkDefault bool
	// Threads are --threads: read and bulk run once per value, in order.
	Threads []int
	// Dops are --dop: logcopy copies at each degree, in order.
	Dops []int
	// NoCopy is --no-copy: bulk loads by multi-row INSERT statements
	// instead of the bulk API.
	NoCopy bool
	// Batch is --batch: the rows of one bulk write.
	Batch int
	// Payload is --payload: each row's payload width in bytes.
	Payload int
	// Keep is --keep: the tables stay after the run.
	Keep bool
	// Expect are --expect's promised rates, by key.
	Expect []Expectation
	// Price is --price, nil without it.
	Price *price.Rate
	// RestartCmd is --restart-cmd, run through sh -c between the fill
	// and the first pass of scan to empty the database's own cache;
	// Restart, when not nil, is called instead (tests restart their own
	// server).
	RestartCmd string
	Restart    func(ctx context.Context) error
	// NoCold is --warm: scan reads the table as the fill left it,
	// without making it cold (to see the cache's rate, or to check the
	// not-physical verdict).
	NoCold bool
	// MaxSize is --max-size (cache): the largest working set read; 0
	// takes the default, the smaller of 4 GB and twice the database's
	// cache, 256 MB at least.
	MaxSize int64
	// SettleLimit is --settle-limit (cache): the longest one working set
	// is read while its hit share has not settled; 0 takes
	// DefaultSettleLimit.
	SettleLimit time.Duration
	// Window is how long one reading of the hit share lasts (cache); 0
	// takes cacheWindow. Tests shorten it.
	Window time.Duration
	// RequireCold is --require-cold: refuse, before anything is made, a
	// scan that dbprobe cannot make cold (a database on another machine;
	// one whose table files it cannot name, without root).
	RequireCold bool

	DrainTimeout time.Duration

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

	// sizeDefault says --size was not given: scan then sizes its table
	// from the database's cache (cachedSize); minDefault, when not 0,
	// stands for DefaultSize as its floor (tests).
	sizeDefault bool
	minDefault  int64

	// around, when set, is called just before and just after the
	// counters of each step are read: a test reads the database's own
	// positions there to check the counters against.
	around func(label string, after bool)
}

// Validate checks what can be checked before connecting.
func (c *Config) Validate() error {
	flag := "--threads"
	list := c.Threads
	if c.Kind == LogCopy {
		flag, list = "--dop", c.Dops
	}
	switch {
	case c.Kind == Cache && c.Size != 0:
		return badinput.New("dbprobe storage cache takes --max-size, not --size: the working sets double up to it")
	case c.Kind != Cache && (c.MaxSize != 0 || c.SettleLimit != 0):
		return badinput.New("--max-size and --settle-limit apply to dbprobe storage cache only")
	case c.MaxSize != 0 && c.MaxSize < minCacheMax:
		return badinput.New("--max-size %s is too small: give %s or more, so that the working sets can double a few times", SizeText(c.MaxSize), SizeText(minCacheMax))
	case c.SettleLimit < 0:
		return badinput.New("--settle-limit %s must not be negative", c.SettleLimit)
	case c.Kind == Cache && len(c.Threads) > 1:
		return badinput.New("dbprobe storage cache takes one --threads value (the readers of every working set), not a list")
	case c.Size != 0 && c.Size < minSize:
		return badinput.New("--size %s is too small: give 1MB or more (default 1GB), so that a rate is not a round trip's", SizeText(c.Size))
	case c.Duration < 0:
		return badinput.New("--duration %s must not be negative", c.Duration)
	case c.Chunk < 0 || (c.Kind == Write && c.Chunk != 0 && c.Chunk < minSize):
		return badinput.New("--chunk %s is too small: give 1MB or more (default 100MB)", SizeText(c.Chunk))
	case c.Payload < 0:
		return badinput.New("--payload %d must not be negative", c.Payload)
	case c.Batch < 0:
		return badinput.New("--batch %d must not be negative", c.Batch)
	case c.DrainTimeout < 0:
		return badinput.New("--drain-timeout %s must not be negative", c.DrainTimeout)
	case c.NoCopy && c.Kind != Bulk:
		return badinput.New("--no-copy applies to dbprobe storage bulk only")
	case c.NoCold && c.Kind != Scan:
		return badinput.New("--warm applies to dbprobe storage scan only")
	case c.RestartCmd != "" && c.Kind != Scan:
		return badinput.New("--restart-cmd applies to dbprobe storage scan only: it empties the database's cache before a cold read")
	case c.RequireCold && c.Kind != Scan:
		return badinput.New("--require-cold applies to dbprobe storage scan only")
	case c.RequireCold && c.NoCold:
		return badinput.New("--require-cold and --warm contradict each other")
	case c.RestartCmd != "" && c.NoCold:
		return badinput.New("--restart-cmd and --warm contradict each other: the first makes the table cold, the second keeps it warm")
	}
	for _, n := range list {
		if n < 1 || n > 1024 {
			return badinput.New("%s %d: give values from 1 to 1024", flag, n)
		}
	}
	for _, e := range c.Expect {
		if e.Key != c.Kind.expectKey() && !(c.Kind == Write && e.Key == "log") && !(c.Kind == Bulk && e.Key == "log") {
			return badinput.New("--expect %s=%s: dbprobe storage %s measures %s; give --expect %s=…", e.Key, e.Text, c.Kind, c.Kind.expectKey(), c.Kind.expectKey())
		}
	}
	return c.Monitor.Validate()
}

// withDefaults fills what the flags left at zero.
func (c Config) withDefaults() Config {
	if c.Size == 0 {
		c.Size, c.sizeDefault = DefaultSize, true
		if c.minDefault > 0 {
			c.Size = c.minDefault
		}
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Chunk == 0 {
		c.Chunk, c.chunkDefault = DefaultChunk, true
	}
	if c.Payload == 0 {
		c.Payload = DefaultPayload
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if len(c.Threads) == 0 {
		c.Threads = []int{1}
		if c.Kind == Cache {
			c.Threads = []int{DefaultCacheThreads}
		}
	}
	if c.SettleLimit == 0 {
		c.SettleLimit = DefaultSettleLimit
	}
	if c.Window == 0 {
		c.Window = cacheWindow
	}
	if len(c.Dops) == 0 {
		c.Dops = []int{1}
	}
	return c
}

// sizeUnits are the units --size, --chunk and the rates of --expect take:
// decimal, as storage is sold (1 GB = 10^9 bytes); the binary ones for
// those who mean them.
var sizeUnits = []struct {
	suffix string
	bytes  float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15},
	{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15},
	{"b", 1},
}

// ParseSize reads a size: a number and a unit (500MB, 2GB, 1.5GiB, 1e9);
// a bare number is bytes. flag names it in the message.
func ParseSize(flag, s string) (int64, error) {
	v, ok := parseBytes(s)
	if !ok || v < 1 || v > 1<<60 {
		return 0, badinput.New("%s %q: give a size such as 500MB, 2GB or 1.5GiB (decimal units: 1 GB = 10^9 bytes)", flag, s)
	}
	return int64(v), nil
}

// parseBytes reads a number with an optional unit of sizeUnits.
func parseBytes(s string) (float64, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.bytes
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	// A number that overflows once scaled (1e300GB) is not a size.
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || math.IsInf(v*scale, 0) {
		return 0, false
	}
	return v * scale, true
}

// SizeText says bytes in decimal units for messages: 1.5GB, 100MB.
func SizeText(n int64) string {
	v := float64(n)
	for _, u := range []struct {
		s string
		b float64
	}{{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if v >= u.b {
			return strconv.FormatFloat(v/u.b, 'g', 4, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseList reads a comma-separated list of positive integers: --threads
// 1,2,4,8, --dop 1,2,4,8.
func ParseList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, badinput.New("%s %q: give a number from 1 to 1024, or a list such as 1,2,4,8", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}
