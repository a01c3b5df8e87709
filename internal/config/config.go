package config

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// Config is the typed configuration of a load or run.
type Config struct {
	Workload workload.Spec
	// Threads is the number of workers, each with its own connection.
	Threads int
	// Target is the total operations per second to pace at (open loop);
	// 0 runs closed loop, as fast as the database answers.
	Target float64
	// MaxExecutionTime ends the phase after this long; 0 means no limit.
	MaxExecutionTime time.Duration
	// StatusInterval is how often -s prints a status line.
	StatusInterval time.Duration
	// BatchSize is how many records the load phase inserts per transaction.
	BatchSize int
	// Percentiles are the percentiles printed per operation.
	Percentiles []float64
	// TableType, Durability, DurabilityScope and OpPath are the database
	// knobs; each driver maps them to its own settings or refuses them.
	TableType       driver.TableType
	Durability      driver.Durability
	DurabilityScope driver.DurabilityScope
	OpPath          driver.OpPath
	// BucketCount sizes the hash index of a SQL Server memory-optimized
	// table: recordcount rounded up to a power of two unless set.
	BucketCount int64
	// Retries is how many times an operation that failed with a retryable
	// error is repeated (0, YCSB's behaviour, never repeats).
	Retries int
	// RetryBackoff is the wait before the first retry; later waits double
	// up to RetryMaxBackoff.
	RetryBackoff, RetryMaxBackoff time.Duration
	// OpTimeout bounds each operation (a load batch counts as one); 0
	// leaves operations unbounded, as YCSB does.
	OpTimeout time.Duration
	// OnError is what a phase does at a failure more attempts cannot fix
	// (a full disk, a read-only database): stop, the default, or continue.
	OnError runner.OnError
	// ReconnectTimeout bounds how long a phase without a duration waits
	// for a database that stopped answering; 0 waits as long as it takes.
	ReconnectTimeout time.Duration
	// Settings lists every effective setting and where it came from.
	Settings []Setting
	// Notes are one-line remarks for the header: properties that were
	// recognised but do not apply, and unknown ones.
	Notes []string
}

// Setting is one effective value and its source.
type Setting struct {
	Key, Value, Source string
}

// property is a key dbprobe understands.
type property struct {
	key, def string
	// ignored, when set, says why a YCSB key has no effect in dbprobe.
	ignored string
}

// known lists the properties in the order the header prints them. The
// defaults are YCSB's CoreWorkload defaults, except where a comment says.
var known = []property{
	{key: "workload", def: "site.ycsb.workloads.CoreWorkload"},
	{key: "recordcount", def: "1000"}, // YCSB's own files set 1000; its code has no default
	{key: "operationcount", def: "1000"},
	{key: "threadcount", def: "1"},
	{key: "target", def: "0"},
	{key: "maxexecutiontime", def: "0"},
	{key: "requestdistribution", def: "uniform"},
	{key: "readproportion", def: "0.95"},
	{key: "updateproportion", def: "0.05"},
	{key: "insertproportion", def: "0"},
	{key: "scanproportion", def: "0"},
	{key: "readmodifywriteproportion", def: "0"},
	{key: "fieldcount", def: "10"},
	{key: "fieldlength", def: "100"},
	{key: "minfieldlength", def: "1"},
	{key: "fieldlengthdistribution", def: "constant"},
	// Read only with fieldlengthdistribution=histogram; a relative path is
	// from the working directory, as YCSB's FileReader takes it.
	{key: "fieldlengthhistogram", def: "hist.txt"},
	{key: "fieldnameprefix", def: "field"},
	{key: "readallfields", def: "true"},
	{key: "writeallfields", def: "false"},
	{key: "insertorder", def: "hashed"},
	{key: "insertstart", def: "0"},
	{key: "insertcount", def: ""}, // recordcount - insertstart
	{key: "zeropadding", def: "1"},
	{key: "hotspotdatafraction", def: "0.2"},
	{key: "hotspotopnfraction", def: "0.8"},
	{key: "exponential.percentile", def: "95"},
	{key: "exponential.frac", def: "0.8571428571"},
	{key: "minscanlength", def: "1"},
	{key: "maxscanlength", def: "1000"},
	{key: "scanlengthdistribution", def: "uniform"},
	{key: "table", def: "usertable"},
	{key: "dataintegrity", def: "false"},
	// YCSB's JDBC binding inserts one row per statement by default; loading
	// a million rows that way is a million commits, so dbprobe batches.
	{key: "db.batchsize", def: "1000"},
	{key: "status.interval", def: "10"},
	{key: "hdrhistogram.percentiles", def: "50,95,99,99.9"},
	// dbprobe's own keys: the database knobs and the retry policy.
	{key: "tabletype", def: "disk"},
	{key: "durability", def: "server"},
	{key: "durability.scope", def: "database"},
	{key: "oppath", def: "statement"},
	{key: "bucketcount", def: ""}, // derived from recordcount
	{key: "retries", def: "0"},
	{key: "retry.backoff", def: "1ms"},
	{key: "retry.maxbackoff", def: "100ms"},
	{key: "op.timeout", def: "0s"},
	{key: "onerror", def: "stop"},
	// A server restarted by hand or by its supervisor answers again
	// within seconds (crash recovery included, on the test machines);
	// one that has not answered in a minute needs someone to act.
	{key: "reconnect.timeout", def: "60s"},

	{key: "db", ignored: "the database is chosen with --db"},
	{key: "db.driver", ignored: "JDBC binding setting; the database is chosen with --db"},
	{key: "db.url", ignored: "JDBC binding setting; give the URL with --db"},
	{key: "db.user", ignored: "JDBC binding setting; give the user in the --db URL"},
	{key: "db.passwd", ignored: "JDBC binding setting; give the password in the --db URL, DBPROBE_PASSWORD or --password-file"},
	{key: "jdbc.fetchsize", ignored: "JDBC binding setting"},
	{key: "jdbc.autocommit", ignored: "JDBC binding setting; dbprobe commits every operation"},
	{key: "jdbc.batchupdateapi", ignored: "JDBC binding setting; dbprobe's load uses each database's bulk path"},
	{key: "exporter", ignored: "results are printed in YCSB's text format; use --out for JSON"},
	{key: "exportfile", ignored: "use --out FILE for the JSON result"},
	{key: "measurementtype", ignored: "dbprobe always records HDR histograms"},
	{key: "measurement.interval", ignored: "intended-start latency is reported whenever target is set"},
	{key: "measurement.trackjvm", ignored: "dbprobe is not a JVM"},
	{key: "histogram.buckets", ignored: "dbprobe always records HDR histograms"},
	{key: "timeseries.granularity", ignored: "the JSON result keeps a per-second series"},
	{key: "hdrhistogram.fileoutput", ignored: "the JSON result keeps the histograms' figures"},
	{key: "hdrhistogram.output.path", ignored: "use --out"},
	{key: "reportlatencyforeacherror", ignored: "failed operations are measured as OP-FAILED and counted per error"},
	{key: "latencytrackederrors", ignored: "failed operations are measured as OP-FAILED and counted per error"},
	{key: "dotransactions", ignored: "the phase is chosen by the command: load, run or ycsb"},
	{key: "core_workload_insertion_retry_limit", ignored: "use retries=N (--retries), which repeats any operation that failed with a retryable error"},
	{key: "core_workload_insertion_retry_interval", ignored: "use retry.backoff (--retry-backoff): retries back off exponentially with jitter"},
}

var knownIndex = func() map[string]int {
	m := make(map[string]int, len(known))
	for i, p := range known {
		m[p.key] = i
	}
	return m
}()

// IsProperty reports whether key is a property dbprobe uses (one it
// knows and does not ignore), so that a command taking a property's name
// (sweep --vary recordcount=…) can refuse one that would change nothing.
func IsProperty(key string) bool {
	i, ok := knownIndex[key]
	return ok && known[i].ignored == ""
}

// closestProperty is the property dbprobe uses whose name is nearest
// key, at most two edits away (a letter left out, added, changed, or
// two swapped), "" when none is: a typo'd -p recrodcount=… is otherwise
// ignored with a note that does not say what was meant.
func closestProperty(key string) string {
	best, bestD := "", 3
	lk := strings.ToLower(key)
	for _, p := range known {
		if p.ignored != "" {
			continue
		}
		if d := editDistance(lk, strings.ToLower(p.key)); d < bestD {
			best, bestD = p.key, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// coreWorkloadClasses are the values of "workload" that mean the core workload.
var coreWorkloadClasses = map[string]bool{
	"site.ycsb.workloads.CoreWorkload":      true,
	"com.yahoo.ycsb.workloads.CoreWorkload": true,
}

// Resolve turns the properties into a typed, validated Config. strict makes
// an unknown property an error instead of a note.
func Resolve(p *Properties, strict bool) (*Config, error) {
	r := resolver{p: p}
	c := &Config{}
	for _, k := range p.Keys() {
		i, ok := knownIndex[k]
		switch {
		case !ok:
			v, src, _ := p.Get(k)
			guess := ""
			if g := closestProperty(k); g != "" {
				guess = "; did you mean " + g + "?"
			}
			if strict {
				return nil, badinput.New("unknown property %s=%s (from %s)%s; remove it, or drop --strict to ignore it", k, redactValue(k, v), src, guess)
			}
			c.Notes = append(c.Notes, fmt.Sprintf("unknown property %s=%s (from %s) ignored%s", k, redactValue(k, v), src, guess))
		case known[i].ignored != "":
			v, src, _ := p.Get(k)
			c.Notes = append(c.Notes, fmt.Sprintf("property %s=%s (from %s) not used: %s", k, redactValue(k, v), src, known[i].ignored))
		}
	}

	if w := r.str("workload"); !coreWorkloadClasses[w] {
		return nil, badinput.New("workload=%s is not supported; dbprobe runs YCSB's core workload (site.ycsb.workloads.CoreWorkload)", w)
	}
	s := &c.Workload
	s.RecordCount = r.int64("recordcount")
	s.OperationCount = r.int64("operationcount")
	s.InsertStart = r.int64("insertstart")
	if _, _, set := p.Get("insertcount"); set {
		s.InsertCount = r.int64("insertcount")
	} else {
		s.InsertCount = s.RecordCount - s.InsertStart
		r.derived("insertcount", strconv.FormatInt(s.InsertCount, 10), "derived: recordcount - insertstart")
	}
	s.FieldCount = r.int("fieldcount")
	s.FieldLength = r.int("fieldlength")
	s.MinFieldLength = r.int("minfieldlength")
	s.FieldLengthDistribution = parseEnum(&r, "fieldlengthdistribution", workload.ParseFieldLengthDistribution)
	histogramFile := r.str("fieldlengthhistogram")
	if s.FieldLengthDistribution == workload.HistogramLength && r.err == nil {
		h, err := readHistogram(histogramFile, r.source("fieldlengthhistogram"))
		if err != nil {
			return nil, err
		}
		s.FieldLengthHistogram = h
		shown := histogramFile
		if abs, err := filepath.Abs(histogramFile); err == nil && abs != histogramFile {
			shown += " (" + abs + ")"
		}
		c.Notes = append(c.Notes, fmt.Sprintf("fieldlengthhistogram %s: %v; fieldlength and minfieldlength do not apply, as in YCSB", shownPath(shown), h))
	}
	s.FieldNamePrefix = r.str("fieldnameprefix")
	s.ReadAllFields = r.bool("readallfields")
	s.WriteAllFields = r.bool("writeallfields")
	for _, o := range workload.Operations {
		s.Proportions[o] = r.float(workload.ProportionProperty(o))
	}
	s.RequestDistribution = parseEnum(&r, "requestdistribution", workload.ParseDistribution)
	s.HotspotDataFraction = r.float("hotspotdatafraction")
	s.HotspotOpnFraction = r.float("hotspotopnfraction")
	s.ExponentialPercentile = r.float("exponential.percentile")
	s.ExponentialFrac = r.float("exponential.frac")
	s.InsertOrder = parseEnum(&r, "insertorder", workload.ParseInsertOrder)
	s.ZeroPadding = r.int("zeropadding")
	s.MinScanLength = r.int("minscanlength")
	s.MaxScanLength = r.int("maxscanlength")
	s.ScanLengthDistribution = parseEnum(&r, "scanlengthdistribution", workload.ParseScanLengthDistribution)
	s.Table = r.str("table")
	s.DataIntegrity = r.bool("dataintegrity")

	c.Threads = r.int("threadcount")
	c.Target = r.float("target")
	c.MaxExecutionTime = r.seconds("maxexecutiontime")
	if c.MaxExecutionTime > 0 && s.OperationCount > 0 && !p.UserSet("operationcount") {
		// Every built-in workload file sets operationcount=1000, which
		// ends a run in milliseconds: a duration asked for would never be
		// reached. A count the user chose still stands beside the duration.
		r.gaveWay("operationcount", fmt.Sprintf("gives way to maxexecutiontime=%s (%s): the run is bounded by time", c.MaxExecutionTime, r.source("maxexecutiontime")))
		s.OperationCount = 0
	}
	c.StatusInterval = r.seconds("status.interval")
	c.BatchSize = r.int("db.batchsize")
	c.Percentiles = r.percentiles("hdrhistogram.percentiles")
	c.TableType = parseEnum(&r, "tabletype", driver.ParseTableType)
	c.Durability = parseEnum(&r, "durability", driver.ParseDurability)
	c.DurabilityScope = parseEnum(&r, "durability.scope", driver.ParseDurabilityScope)
	c.OpPath = parseEnum(&r, "oppath", driver.ParseOpPath)
	if _, _, set := p.Get("bucketcount"); set {
		c.BucketCount = r.int64("bucketcount")
	} else {
		c.BucketCount = nextPowerOfTwo(min(s.RecordCount, 1<<30))
		r.derived("bucketcount", strconv.FormatInt(c.BucketCount, 10), "derived: recordcount rounded up to a power of two (SQL Server memory-optimized tables)")
	}
	c.Retries = r.int("retries")
	c.RetryBackoff = r.duration("retry.backoff")
	c.RetryMaxBackoff = r.duration("retry.maxbackoff")
	c.OpTimeout = r.duration("op.timeout")
	c.OnError = parseEnum(&r, "onerror", runner.ParseOnError)
	c.ReconnectTimeout = r.duration("reconnect.timeout")
	if r.err != nil {
		return nil, r.err
	}
	if err := s.Validate(); err != nil {
		return nil, badinput.New("%v", err)
	}
	switch {
	case c.Threads < 1:
		return nil, badinput.New("threadcount=%d: at least 1 thread is needed (--threads N)", c.Threads)
	case c.Threads > 100000:
		return nil, badinput.New("threadcount=%d is more than dbprobe runs (at most 100000)", c.Threads)
	case c.Target < 0 || math.IsNaN(c.Target) || math.IsInf(c.Target, 0):
		return nil, badinput.New("target=%g: give operations per second, or 0 for no limit", c.Target)
	case c.MaxExecutionTime < 0:
		return nil, badinput.New("maxexecutiontime must not be negative; give seconds, or 0 for no limit")
	case c.StatusInterval <= 0:
		return nil, badinput.New("status.interval must be at least 1 second")
	case c.BucketCount < 1 || c.BucketCount > 1<<30:
		return nil, badinput.New("bucketcount=%d: SQL Server takes 1 to 1073741824 buckets (--bucket-count N)", c.BucketCount)
	case c.Retries < 0 || c.Retries > 1000:
		return nil, badinput.New("retries=%d: give 0 (never repeat, as YCSB) up to 1000 (--retries N)", c.Retries)
	case c.RetryBackoff <= 0 || c.RetryMaxBackoff < c.RetryBackoff:
		return nil, badinput.New("retry.backoff=%s and retry.maxbackoff=%s: the first wait must be positive and at most the longest", c.RetryBackoff, c.RetryMaxBackoff)
	case c.OpTimeout < 0:
		return nil, badinput.New("op.timeout=%s must not be negative; give a duration such as 500ms, or 0 for no limit (--op-timeout)", c.OpTimeout)
	case c.ReconnectTimeout < 0:
		return nil, badinput.New("reconnect.timeout=%s must not be negative; give how long a load or a run by count waits for a database that stopped answering, such as 60s, or 0 to wait as long as it takes (--reconnect-timeout)", c.ReconnectTimeout)
	case c.BatchSize < 1:
		// YCSB's JDBC binding treats a batch size of 0 or less as no
		// batching, which is a batch of one; the header shows the 1 in force.
		for i, st := range r.settings {
			if st.Key == "db.batchsize" {
				r.settings[i].Value = "1"
				r.settings[i].Source += "; " + strconv.Itoa(c.BatchSize) + " asks for no batching, as in YCSB"
			}
		}
		c.BatchSize = 1
	}
	c.Settings = r.settings
	return c, nil
}

// resolver reads typed values, keeping the first error and the settings.
type resolver struct {
	p        *Properties
	err      error
	settings []Setting
}

func (r *resolver) raw(key string) string {
	v, src, ok := r.p.Get(key)
	if !ok {
		v, src = known[knownIndex[key]].def, SourceDefault
	}
	r.settings = append(r.settings, Setting{key, redactValue(key, v), src})
	return v
}

// gaveWay sets a setting already read to 0, saying why, and keeping the
// value it had and where that came from.
func (r *resolver) gaveWay(key, why string) {
	for i, st := range r.settings {
		if st.Key == key {
			r.settings[i].Value = "0"
			r.settings[i].Source = fmt.Sprintf("%s; its %s %s", st.Source, st.Value, why)
		}
	}
}

// source returns where a property's value comes from.
func (r *resolver) source(key string) string {
	if _, src, ok := r.p.Get(key); ok {
		return src
	}
	return SourceDefault
}

// readHistogram reads the field length histogram file path, which the
// property fieldlengthhistogram from source names.
func readHistogram(path, source string) (*workload.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badinput.New("fieldlengthhistogram=%s (from %s): cannot read it: %s; fieldlengthdistribution=histogram draws field lengths from this file (a relative path is from the working directory, as in YCSB)",
			shownPath(path), source, shortIOError(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, badinput.New("fieldlengthhistogram=%s (from %s) is a directory; name the histogram file", shownPath(path), source)
	}
	h, err := workload.ParseHistogram(f)
	if err != nil {
		return nil, badinput.New("fieldlengthhistogram=%s (from %s): %v", shownPath(path), source, err)
	}
	return h, nil
}

func (r *resolver) derived(key, value, source string) {
	r.settings = append(r.settings, Setting{key, value, source})
}

func (r *resolver) fail(key, v, want string) {
	if r.err == nil {
		_, src, ok := r.p.Get(key)
		if !ok {
			src = SourceDefault
		}
		r.err = badinput.New("%s=%s (from %s) is not %s", key, ShownValue(v), src, want)
	}
}

func (r *resolver) str(key string) string { return r.raw(key) }

func (r *resolver) int64(key string) int64 {
	v := r.raw(key)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(key, v, "a whole number")
	}
	return n
}

func (r *resolver) int(key string) int {
	n := r.int64(key)
	if n > math.MaxInt32 || n < math.MinInt32 {
		r.fail(key, strconv.FormatInt(n, 10), "a whole number within ±2147483647")
	}
	return int(n)
}

func (r *resolver) float(key string) float64 {
	v := r.raw(key)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		r.fail(key, v, "a number")
	}
	return f
}

func (r *resolver) bool(key string) bool {
	v := r.raw(key)
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(key, v, "true or false")
	return false
}

// maxSeconds is the most whole seconds a time.Duration holds.
const maxSeconds = int64(math.MaxInt64 / time.Second)

// seconds reads a YCSB duration in whole seconds, also accepting Go
// durations such as 90s or 5m.
func (r *resolver) seconds(key string) time.Duration {
	v := r.raw(key)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		// A time.Duration holds ±292 years; more seconds would wrap
		// around to a short or negative time.
		if n > maxSeconds || n < -maxSeconds {
			r.fail(key, v, fmt.Sprintf("a number of seconds within ±%d", maxSeconds))
			return 0
		}
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail(key, v, "a number of seconds (or a duration such as 90s)")
	}
	return d
}

// duration reads a Go duration such as 2ms or 1s.
func (r *resolver) duration(key string) time.Duration {
	v := r.raw(key)
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail(key, v, "a duration such as 2ms or 1s")
	}
	return d
}

// nextPowerOfTwo returns the smallest power of two at least n (1 for n < 1).
func nextPowerOfTwo(n int64) int64 {
	p := int64(1)
	for p < n && p < 1<<62 {
		p <<= 1
	}
	return p
}

// parseEnum reads a typed enum with its parser, which names the choices.
func parseEnum[T any](r *resolver, key string, parse func(string) (T, error)) T {
	v, err := parse(r.raw(key))
	if err != nil && r.err == nil {
		r.err = badinput.New("%v", err)
	}
	return v
}

func (r *resolver) percentiles(key string) []float64 {
	v := r.raw(key)
	var out []float64
	for _, part := range strings.Split(v, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f <= 0 || f > 100 {
			r.fail(key, v, "a comma-separated list of percentiles between 0 and 100")
			return nil
		}
		out = append(out, f)
	}
	return out
}

// redactValue hides the value of a key that holds a secret, and shows any
// other as shownValue does.
func redactValue(key, value string) string {
	if SecretKey(key) {
		return Redacted
	}
	return ShownValue(urlRedacted(value))
}

// urlRedacted hides the password of a URL given as a property's value
// (db.url=jdbc:postgresql://h/db?user=u&password=…): the value is shown
// as driver.RedactURL shows a URL when it may hold one.
func urlRedacted(value string) string {
	if strings.Contains(value, ":") && (strings.Contains(value, "@") || strings.Contains(strings.ToLower(value), "passw")) {
		return driver.RedactURL(value)
	}
	return value
}

// Redacted stands for a secret's value wherever one would be shown.
const Redacted = "xxxxx"

// SecretKey reports whether a property's value is a secret (db.passwd,
// password, a token), never to be shown.
func SecretKey(key string) bool { return driver.SecretKey(key) }

// RedactAssignment hides the value of a -p key=value whose key holds a
// secret, and leaves any other text as it is.
func RedactAssignment(kv string) string {
	k, v, ok := strings.Cut(kv, "=")
	switch {
	case !ok:
		return kv
	case SecretKey(k):
		return k + "=" + Redacted
	}
	return k + "=" + urlRedacted(v)
}

// shownPath is a file path as a message or the header shows it: whole,
// since a path cut short names no file, and quoted in ASCII when it holds
// anything but printable ASCII, so that it stays on its line.
func shownPath(p string) string {
	if utf8.ValidString(p) && !strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) || r > unicode.MaxASCII }) {
		return p
	}
	return strconv.QuoteToASCII(p)
}

// maxShown is the most bytes of a value a message repeats.
const maxShown = 80

// ShownValue is a value as a message or the header repeats it: as written
// when it is short plain text, else cut short and quoted in ASCII, so that
// a newline, a control or look-alike character, or a huge value cannot
// break the one line a message is.
func ShownValue(v string) string {
	plain := utf8.ValidString(v) && !strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) || r > unicode.MaxASCII })
	if plain && len(v) <= maxShown {
		return v
	}
	cut := ""
	if len(v) > maxShown {
		v, cut = v[:maxShown], "…"
	}
	return strconv.QuoteToASCII(v) + cut
}
