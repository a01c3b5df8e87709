package result

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// StorageSummary is what a storage experiment (dbprobe storage scan,
// read, write, bulk, logcopy) reports beside the runner's series: its
// rate, what the rate's bytes are, the rate's series and spread, the
// evidence behind it and the verdict. Rates are in bytes per second;
// the text says them in decimal units (1 GB = 10^9 bytes).
type StorageSummary struct {
	// Experiment is "scan", "read", "write", "bulk" or "logcopy".
	Experiment string `json:"experiment"`
	// Table is the table the experiment worked on, as the database sized
	// it.
	Table StorageTable `json:"table"`
	// BytesAre says what the rate's bytes are: "the table's size on disk
	// as the database reports it", "row payload received by the client".
	BytesAre string `json:"bytes_are"`
	// Bytes and Seconds are what the overall rate is over: the time spent
	// moving them, the time between passes (making the table cold again,
	// dropping a copy) left out. Rate is Bytes / Seconds at one point; at
	// several it is the Headline point's (its step's Bytes / Seconds).
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate_bytes_per_s"`
	// Headline, when the experiment ran at several points (--threads
	// 1,2,4, --dop 1,2), is the label of the point Rate, RowsPerSec and
	// Consistency are of ("threads 4", the fastest): an average over
	// different settings is no one's rate. Bytes, Seconds and Rows stay
	// over every point.
	Headline string `json:"headline,omitempty"`
	// Rows are the rows moved, and RowsPerSec their rate; 0 where rows
	// are not what is counted.
	Rows       int64   `json:"rows,omitempty"`
	RowsPerSec float64 `json:"rows_per_s,omitempty"`
	// PerSecond is the rate of each second of the measured part;
	// PerMinute of each minute.
	PerSecond []RatePoint `json:"per_second"`
	PerMinute []RatePoint `json:"per_minute,omitempty"`
	// Consistency is the spread of the per-second rates (and of the
	// per-minute ones when there are two or more).
	Consistency       *Consistency `json:"consistency,omitempty"`
	MinuteConsistency *Consistency `json:"minute_consistency,omitempty"`
	// Steps are the parts of an experiment run at different settings:
	// read and bulk at each --threads value, logcopy at each --dop, scan
	// at each pass.
	Steps []StorageStep `json:"steps,omitempty"`
	// Cold says what was done to make the table cold before the reads,
	// and what could not be done.
	Cold []string `json:"cold,omitempty"`
	// Proof is the database's and the host's own count of what was read
	// (scan) or written (write, bulk, logcopy).
	Proof *StorageProof `json:"proof,omitempty"`
	// Amplification is what writing the table cost the log and the
	// device (write, bulk, logcopy).
	Amplification *WriteAmplification `json:"write_amplification,omitempty"`
	// CheckpointAge is the peak of the log the database held past its
	// last checkpoint while it wrote (write, bulk, logcopy).
	CheckpointAge *CheckpointAge `json:"checkpoint_age,omitempty"`
	// Device is the block device that holds the table's files, when the
	// database is on this machine, over the measured part.
	Device *DeviceFigures `json:"device,omitempty"`
	// Verdict says in a sentence what the figures mean: "physical: …",
	// "not physical: …", "log-bound: 48 MB/s at DOP 2, 4 and 8; …".
	Verdict string `json:"verdict"`
	// Expect holds measured ÷ promised for each --expect that applies.
	Expect []ExpectCheck `json:"expect,omitempty"`
	// Cost is the run's price with --price.
	Cost *RunCost `json:"cost,omitempty"`
	// Cache is the cache experiment's figures (dbprobe storage cache):
	// each working set's hit share and latency, and the estimate.
	Cache *CacheFigures `json:"cache,omitempty"`
}

// StorageTable is a table a storage experiment made.
type StorageTable struct {
	Name string `json:"name"`
	// Bytes is its size on disk as the database reports it, and How
	// where that came from ("pg_total_relation_size").
	Bytes int64  `json:"bytes"`
	How   string `json:"how,omitempty"`
	Rows  int64  `json:"rows"`
	// PayloadBytes is each row's payload width.
	PayloadBytes int `json:"payload_bytes"`
	// File is the file that holds its rows on the database's host, when
	// the database says.
	File string `json:"file,omitempty"`
}

// RatePoint is the rate of one second or one minute of the measured
// part.
type RatePoint struct {
	// Elapsed is the end of the span, from the measured part's start.
	Elapsed float64 `json:"elapsed_s"`
	// Seconds is how long the span was: a first or last second is cut
	// short.
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	Rate    float64 `json:"rate_bytes_per_s"`
	// Fell marks a second below 90% of the median (of its point's
	// seconds).
	Fell bool `json:"fell,omitempty"`
	// Point is the step it belongs to when the experiment ran at several
	// points ("threads 4", "DOP 2"), "" otherwise.
	Point string `json:"point,omitempty"`
}

// Consistency is the spread of a series of rates.
type Consistency struct {
	// Points is how many spans it is over.
	Points int     `json:"points"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation: standard deviation ÷ mean.
	CV float64 `json:"cv"`
	// BelowShare is the share of spans below 90% of the median.
	BelowShare float64 `json:"below_90pct_share"`
}

// StorageStep is one part of a storage experiment: a pass of a scan, a
// thread count of read or bulk, a degree of logcopy.
type StorageStep struct {
	// Label names it: "pass 2", "threads 4", "DOP 8".
	Label   string  `json:"label"`
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	Rate    float64 `json:"rate_bytes_per_s"`
	Rows    int64   `json:"rows,omitempty"`
	// LogBytes is the transaction log written during it, from the
	// database's counters; -1 when they do not count it.
	LogBytes int64   `json:"log_bytes"`
	LogRate  float64 `json:"log_rate_bytes_per_s,omitempty"`
	// PhysicalBytes is what the database read into its cache
	// (physical reads × page size, or its own byte count); -1 when not
	// counted. DeviceReadBytes and DeviceWriteBytes are the table's
	// device's, -1 when not seen.
	PhysicalBytes    int64 `json:"physical_bytes"`
	DeviceReadBytes  int64 `json:"device_read_bytes"`
	DeviceWriteBytes int64 `json:"device_write_bytes"`
	// Checkpoints is the checkpoints the database ran during it, from
	// its counters; -1 when it does not count them.
	Checkpoints int64 `json:"checkpoints"`
	// HostCores is the host's busy CPU in cores during it (a database on
	// this machine); ClientCPU this process's, in percent of one core.
	HostCores float64 `json:"host_cores,omitempty"`
	ClientCPU float64 `json:"client_cpu_pct,omitempty"`
	// Degree is the degree of parallelism the copy ran at (logcopy):
	// PostgreSQL's workers launched plus the leader, SQL Server's MAXDOP.
	Degree int `json:"degree,omitempty"`
	// Cold says what made it cold (scan).
	Cold []string `json:"cold,omitempty"`
	// How says what ran, in the database's words.
	How string `json:"how,omitempty"`
	// Verdict is the step's own, where it has one (read's limit).
	Verdict string `json:"verdict,omitempty"`
	// Consistency is the spread of its own seconds, when the experiment
	// ran at several points.
	Consistency *Consistency `json:"consistency,omitempty"`
}

// StorageProof is the database's and the host's count of the bytes
// behind a rate, beside the bytes the rate counts.
type StorageProof struct {
	// Bytes is what the rate counts over the measured part.
	Bytes int64 `json:"bytes"`
	// DatabaseBytes is what the database says it read from storage
	// (scan) or wrote to its log (write, bulk, logcopy): Counter names
	// it. -1 when it does not count it.
	DatabaseBytes int64  `json:"database_bytes"`
	Counter       string `json:"counter,omitempty"`
	// DeviceBytes is what the table's block device read (scan) or wrote
	// (the others) in /proc/diskstats; -1 when not seen (a remote
	// database, a file system without a block device).
	DeviceBytes int64  `json:"device_bytes"`
	Device      string `json:"device,omitempty"`
	// Physical says the bytes came from storage, not from a cache (scan).
	Physical bool `json:"physical"`
}

// WriteAmplification is what each byte of table written cost: the log
// the database wrote for it and what the device wrote (the log, the data
// files, the checkpoints that write the changed pages again), and the
// checkpoints during the run.
type WriteAmplification struct {
	// TableBytes is the table's bytes written (the rate's).
	TableBytes int64 `json:"table_bytes"`
	// LogBytes is the database's log bytes, -1 when not counted;
	// LogPerByte is LogBytes ÷ TableBytes.
	LogBytes   int64   `json:"log_bytes"`
	LogPerByte float64 `json:"log_per_byte,omitempty"`
	// DeviceBytes is what Device wrote (every process's writes), -1 when
	// not seen; DevicePerByte is DeviceBytes ÷ TableBytes.
	DeviceBytes   int64   `json:"device_bytes"`
	Device        string  `json:"device,omitempty"`
	DevicePerByte float64 `json:"device_per_byte,omitempty"`
	// Checkpoints is the checkpoints during the run, -1 when the database
	// does not count them; CheckpointsHow says where the count came from
	// or why there is none.
	Checkpoints    int64  `json:"checkpoints"`
	CheckpointsHow string `json:"checkpoints_how,omitempty"`
}

// CheckpointAge is the database's checkpoint age at its peak over the
// measured part: the bytes of log written past the last checkpoint,
// changes the data files do not have yet, against the most the log may
// hold before writes wait on a checkpoint. Near that most, the database
// flushes pages to make room and the writes wait on it however fast the
// log's device is: the log is too small for the rate.
type CheckpointAge struct {
	// PeakBytes is the highest age sampled, MaxBytes the most it may
	// reach at that sample (0 when the database does not say), and
	// Share PeakBytes ÷ MaxBytes: a little above 1 while writes wait at
	// the most, which the database holds them to, not a hard end.
	PeakBytes int64   `json:"peak_bytes"`
	MaxBytes  int64   `json:"max_bytes"`
	Share     float64 `json:"share,omitempty"`
	// PeakAt is when the peak was sampled, in seconds from the measured
	// part's start, and Point the step it was in ("DOP 2"), when the
	// experiment ran at several.
	PeakAt float64 `json:"peak_at_s"`
	Point  string  `json:"point,omitempty"`
	// Samples is how many of the monitor's intervals it is over; Metric
	// the monitor's metric that holds the series.
	Samples int    `json:"samples"`
	Metric  string `json:"metric,omitempty"`
	// Full is Share at FullCheckpointShare or above: the writes were
	// held back by the database's checkpoints. Setting names the setting
	// that makes the log larger.
	Full    bool   `json:"full,omitempty"`
	Setting string `json:"setting,omitempty"`
	// NotSampled says why there is no figure; "" when there is one.
	NotSampled string `json:"not_sampled,omitempty"`
}

// FullCheckpointShare is the share of its maximum from which a
// checkpoint age says the writes waited on checkpoints: InnoDB flushes
// ever harder as the age grows past innodb_adaptive_flushing_lwm (10%
// of the log by default), flushes as fast as it can from 7/8 of the
// maximum, and stops every write at the maximum; three quarters is well
// into that, where the log's size, not its device, sets the pace.
const FullCheckpointShare = 0.75

// Text says the figure in a line: "peak 70.0 MB of at most 87.0 MB
// (80% of the log un-checkpointed) at 12 s".
func (c *CheckpointAge) Text() string {
	if c.NotSampled != "" {
		return "not sampled: " + c.NotSampled
	}
	at := fmt.Sprintf("at %.1f s", c.PeakAt)
	if c.Point != "" {
		at += " (" + c.Point + ")"
	}
	if c.MaxBytes <= 0 {
		return fmt.Sprintf("peak %s %s, over %s (%s); the database does not say the most it may reach", BytesText(c.PeakBytes), at, Plural(c.Samples, "sample"), c.Metric)
	}
	return fmt.Sprintf("peak %s of at most %s (%.0f%% of the log un-checkpointed) %s, over %s (%s)", BytesText(c.PeakBytes), BytesText(c.MaxBytes), 100*c.Share, at, Plural(c.Samples, "sample"), c.Metric)
}

// DeviceFigures are a block device's figures over the measured part,
// from /proc/diskstats.
type DeviceFigures struct {
	Name            string  `json:"name"`
	ReadBytes       int64   `json:"read_bytes"`
	WriteBytes      int64   `json:"write_bytes"`
	IOPS            float64 `json:"iops"`
	AvgRequestBytes float64 `json:"avg_request_bytes"`
	AwaitMs         float64 `json:"await_ms"`
	UtilPct         float64 `json:"util_pct"`
	// PerSecond are the same figures second by second over the measured
	// part, and Bursts the busiest second against the median one.
	PerSecond []DeviceSecond `json:"per_second,omitempty"`
	Bursts    *DeviceBursts  `json:"bursts,omitempty"`
}

// DeviceSecond is a block device's figures over about one second, as
// iostat -x gives them.
type DeviceSecond struct {
	// Elapsed is the second's end from the measured part's start, and
	// Seconds its length.
	Elapsed float64 `json:"elapsed_s"`
	Seconds float64 `json:"seconds"`
	// ReadRate and WriteRate are bytes per second.
	ReadRate        float64 `json:"read_bytes_per_s"`
	WriteRate       float64 `json:"write_bytes_per_s"`
	IOPS            float64 `json:"iops"`
	AvgRequestBytes float64 `json:"avg_request_bytes"`
	AwaitMs         float64 `json:"await_ms"`
	UtilPct         float64 `json:"util_pct"`
}

// DeviceBursts holds a device's busiest second against its median one:
// a rate that a burst allowance or a cache in front of the device gives
// for a while shows as a maximum well above the sustained median.
type DeviceBursts struct {
	// Seconds is how many whole seconds it is over.
	Seconds int `json:"seconds"`
	// MedianRate and MaxRate are bytes read and written per second;
	// MaxAt is when the busiest second ended.
	MedianRate float64 `json:"median_bytes_per_s"`
	MaxRate    float64 `json:"max_bytes_per_s"`
	MaxAt      float64 `json:"max_at_s"`
	MedianIOPS float64 `json:"median_iops"`
	MaxIOPS    float64 `json:"max_iops"`
	// MedianAwaitMs and MaxAwaitMs are await's.
	MedianAwaitMs float64 `json:"median_await_ms"`
	MaxAwaitMs    float64 `json:"max_await_ms"`
	// SaturatedShare is the share of seconds at 100% utilisation.
	SaturatedShare float64 `json:"saturated_share"`
}

// ExpectCheck is one promised rate held against the measured one. For
// the cache experiment's promise (Key "cache") Promised and Measured are
// bytes, not bytes per second: the size promised and the middle of the
// measured bracket.
type ExpectCheck struct {
	// Key is the --expect key: scan, read, write, bulk, log.
	Key      string  `json:"key"`
	Promised float64 `json:"promised_bytes_per_s"`
	// PromisedText is the promise as given ("14GB/min").
	PromisedText string  `json:"promised_text"`
	Measured     float64 `json:"measured_bytes_per_s"`
	Ratio        float64 `json:"ratio"`
	Held         bool    `json:"held"`
	Verdict      string  `json:"verdict"`
	// Point is the point judged ("threads 4") when the experiment ran at
	// several: each is judged on its own.
	Point string `json:"point,omitempty"`
	// NotMeasured says why the rate was not measured (the database counts
	// no log bytes); Measured and Ratio are then 0 and mean nothing.
	NotMeasured string `json:"not_measured,omitempty"`
}

// RunCost is what a run cost at --price.
type RunCost struct {
	// PerHour is the price per hour it was computed from, and Given the
	// price as given ("2.5/hour", "1800/month").
	PerHour float64 `json:"per_hour"`
	Given   string  `json:"given"`
	// Run is the cost of the run's wall time; PerGB the cost per GB (10^9
	// bytes) moved.
	Run   float64 `json:"run"`
	PerGB float64 `json:"per_gb"`
}

// The rate units of the text: GB/min for reads, MB/s for logs and bulk
// loads, MB/min for writes, as the price lists say them.
const (
	gb = 1e9
	mb = 1e6
)

// RateText says a rate in the unit a storage figure is usually given in
// for its kind ("scan", "read", "write", "bulk", "log").
func RateText(kind string, bytesPerSec float64) string {
	switch kind {
	case "scan", "read":
		return strconv.FormatFloat(bytesPerSec*60/gb, 'f', 2, 64) + " GB/min"
	case "write":
		return strconv.FormatFloat(bytesPerSec*60/mb, 'f', 0, 64) + " MB/min"
	}
	return strconv.FormatFloat(bytesPerSec/mb, 'f', 1, 64) + " MB/s"
}

// rateUnit is the label and scale of RateText's unit, for YCSB-shaped
// lines.
func rateUnit(kind string) (string, float64) {
	switch kind {
	case "scan", "read":
		return "Rate(GB/min)", 60 / gb
	case "write":
		return "Rate(MB/min)", 60 / mb
	}
	return "Rate(MB/s)", 1 / mb
}

// RateIn is a rate in the unit the text gives an experiment's rate in
// ("scan" in GB/min, "logcopy" in MB/s), and that unit.
func RateIn(experiment string, bytesPerSec float64) (float64, string) {
	label, scale := rateUnit(rateKind(experiment))
	return bytesPerSec * scale, strings.TrimSuffix(strings.TrimPrefix(label, "Rate("), ")")
}

// headlineStep is the step Headline names, nil when the experiment ran
// at one point.
func (st *StorageSummary) headlineStep() *StorageStep {
	if st.Headline == "" || len(st.Steps) < 2 {
		return nil
	}
	for i := range st.Steps {
		if st.Steps[i].Label == st.Headline {
			return &st.Steps[i]
		}
	}
	return nil
}

// writeStorageLines writes a storage run's figures in YCSB's shape:
//
//	[SCAN], Rate(GB/min), 1.53
//	[SCAN], Bytes, 2147483648
//	[SCAN], Seconds, 84.2
//	[SCAN], MedianRate(GB/min), 1.55
func writeStorageLines(bw *bufio.Writer, st *StorageSummary) {
	name := strings.ToUpper(st.Experiment)
	line := func(metric, measurement, value string) {
		bw.WriteString("[" + field(metric) + "], " + field(measurement) + ", " + value + "\n")
	}
	if st.Cache != nil {
		// Its figures are sizes and hit shares, not a rate.
		writeCacheLines(bw, st.Cache)
		writeExpectLines(bw, st.Expect)
		return
	}
	unit, scale := rateUnit(st.Experiment)
	fixed := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	line(name, unit, fixed(st.Rate*scale))
	// At several points the rate is the headline point's: the bytes,
	// seconds and rows beside it are that point's too, so that they
	// recompute to it, and every point's together follow as AllPoints.
	bytes, seconds, rows := st.Bytes, st.Seconds, st.Rows
	head := st.headlineStep()
	if head != nil {
		bytes, seconds, rows = head.Bytes, head.Seconds, head.Rows
	}
	line(name, "Bytes", strconv.FormatInt(bytes, 10))
	line(name, "Seconds", fixed(seconds))
	if rows > 0 {
		line(name, "Rows", strconv.FormatInt(rows, 10))
		line(name, "RowsPerSec", fixed(st.RowsPerSec))
	}
	if head != nil {
		line(name, "AllPointsBytes", strconv.FormatInt(st.Bytes, 10))
		line(name, "AllPointsSeconds", fixed(st.Seconds))
		if st.Rows > 0 {
			line(name, "AllPointsRows", strconv.FormatInt(st.Rows, 10))
		}
	}
	if c := st.Consistency; c != nil {
		base := strings.TrimSuffix(unit, ")")
		base = base[strings.IndexByte(base, '(')+1:]
		line(name, "MedianRate("+base+")", fixed(c.Median*scale))
		line(name, "MinRate("+base+")", fixed(c.Min*scale))
		line(name, "MaxRate("+base+")", fixed(c.Max*scale))
		line(name, "RateCV", fixed(c.CV))
		line(name, "SecondsBelow90PctOfMedian(%)", fixed(100*c.BelowShare))
	}
	for i, s := range st.Steps {
		if i == maxTextSteps && len(st.Steps) > maxTextSteps+1 {
			break
		}
		label := name + " " + strings.ToUpper(s.Label)
		line(label, unit, fixed(s.Rate*scale))
		if s.LogBytes >= 0 && s.Seconds > 0 {
			line(label, "LogRate(MB/s)", fixed(s.LogRate/mb))
		}
	}
	if p := st.Proof; p != nil {
		if p.DatabaseBytes >= 0 {
			// What the database counted differs: read from storage for a
			// scan, written to its log for the others.
			what := "DatabaseLogBytes"
			if st.Experiment == "scan" || st.Experiment == "read" {
				what = "DatabasePhysicalReadBytes"
			}
			line(name, what, strconv.FormatInt(p.DatabaseBytes, 10))
		}
		if p.DeviceBytes >= 0 {
			line(name, "DeviceBytes", strconv.FormatInt(p.DeviceBytes, 10))
		}
	}
	writeExpectLines(bw, st.Expect)
}

// writeExpectLines writes each promise's measured ÷ promised.
func writeExpectLines(bw *bufio.Writer, expect []ExpectCheck) {
	for _, e := range expect {
		if e.NotMeasured != "" {
			continue
		}
		label := "EXPECT " + strings.ToUpper(e.Key)
		if e.Point != "" {
			label += " " + strings.ToUpper(e.Point)
		}
		bw.WriteString("[" + field(label) + "], " + field("MeasuredOverPromised") + ", " + strconv.FormatFloat(e.Ratio, 'f', 3, 64) + "\n")
	}
}

// writeStorageNotes writes, as comments, what the rate is over and the
// evidence behind it, then the verdict.
func writeStorageNotes(bw *bufio.Writer, st *StorageSummary) {
	put := func(format string, args ...any) {
		bw.WriteString("# " + oneLine(fmt.Sprintf(format, args...)) + "\n")
	}
	t := st.Table
	put("table: %s, %s on disk (%s), %s rows of %d-byte payload%s", t.Name, BytesText(t.Bytes), t.How, Grouped(t.Rows), t.PayloadBytes, fileText(t.File))
	if st.Cache != nil {
		writeCacheNotes(put, st.Cache)
		for _, e := range st.Expect {
			put("expect %s=%s: %s", e.Key, e.PromisedText, e.Verdict)
		}
		if c := st.Cost; c != nil {
			put("cost at %s: %.4f for the run", c.Given, c.Run)
		}
		put("verdict: %s", st.Verdict)
		return
	}
	if st.Headline != "" {
		put("%s: %s at %s, the fastest of %d points (each one's rate is on its line below); all points together: %s over %.1f s; the bytes are %s", st.Experiment, RateText(rateKind(st.Experiment), st.Rate), st.Headline, len(st.Steps), BytesText(st.Bytes), st.Seconds, st.BytesAre)
	} else {
		put("%s: %s over %.1f s = %s; the bytes are %s", st.Experiment, BytesText(st.Bytes), st.Seconds, RateText(rateKind(st.Experiment), st.Rate), st.BytesAre)
	}
	if st.Rows > 0 && st.Headline != "" {
		put("rows: %s over all points; %s rows/s at %s", Grouped(st.Rows), strconv.FormatFloat(st.RowsPerSec, 'f', 0, 64), st.Headline)
	} else if st.Rows > 0 {
		put("rows: %s at %s rows/s", Grouped(st.Rows), strconv.FormatFloat(st.RowsPerSec, 'f', 0, 64))
	}
	of := ""
	if st.Headline != "" {
		of = " of " + st.Headline
	}
	if c := st.Consistency; c != nil && c.Points < MinSpreadSeconds {
		put("per second%s: %s, too short to judge the spread (give a longer --duration)", of, Plural(c.Points, "whole second"))
	} else if c != nil {
		put("per second%s (%d s): median %s, min %s, max %s, CV %.2f, %.0f%% of seconds below 90%% of the median%s",
			of, c.Points, RateText(rateKind(st.Experiment), c.Median), RateText(rateKind(st.Experiment), c.Min), RateText(rateKind(st.Experiment), c.Max), c.CV, 100*c.BelowShare, fellText(st.PerSecond))
	}
	if c := st.MinuteConsistency; c != nil {
		put("per minute (%d): median %s, min %s, max %s, CV %.2f", c.Points, RateText(rateKind(st.Experiment), c.Median), RateText(rateKind(st.Experiment), c.Min), RateText(rateKind(st.Experiment), c.Max), c.CV)
	}
	// A run within one minute has no minutes to compare: its one
	// "minute" is the run itself, said above.
	if len(st.PerMinute) > 1 {
		for _, m := range st.PerMinute {
			put("minute %d: %s over %.0f s measured", int(m.Elapsed/60), RateText(rateKind(st.Experiment), m.Rate), m.Seconds)
		}
	}
	for i, s := range st.Steps {
		if i == maxTextSteps && len(st.Steps) > maxTextSteps+1 {
			what := "points"
			if st.Experiment == "scan" {
				what = "passes"
			}
			put("… and %d more %s, in the JSON result (dbprobe storage --out FILE keeps it)", len(st.Steps)-maxTextSteps, what)
			break
		}
		parts := []string{fmt.Sprintf("%s in %s = %s", BytesText(s.Bytes), stepSeconds(s.Seconds), RateText(rateKind(st.Experiment), s.Rate))}
		if s.Rows > 0 {
			parts = append(parts, Grouped(s.Rows)+" rows")
		}
		if s.LogBytes >= 0 {
			parts = append(parts, fmt.Sprintf("log %s = %s", BytesText(s.LogBytes), RateText("log", s.LogRate)))
		}
		if s.PhysicalBytes >= 0 {
			parts = append(parts, "database read "+BytesText(s.PhysicalBytes))
		}
		if s.DeviceReadBytes >= 0 {
			parts = append(parts, fmt.Sprintf("device read %s, wrote %s", BytesText(s.DeviceReadBytes), BytesText(s.DeviceWriteBytes)))
		}
		if s.HostCores > 0 {
			parts = append(parts, fmt.Sprintf("host CPU %.2f cores", s.HostCores))
		}
		if s.ClientCPU > 0 {
			parts = append(parts, fmt.Sprintf("client CPU %.0f%% of a core", s.ClientCPU))
		}
		if s.Degree > 0 {
			parts = append(parts, fmt.Sprintf("degree %d run", s.Degree))
		}
		if len(s.Cold) > 0 {
			parts = append(parts, "cold: "+strings.Join(s.Cold, "; "))
		}
		if s.How != "" {
			parts = append(parts, s.How)
		}
		if c := s.Consistency; c != nil && c.Points >= MinSpreadSeconds {
			parts = append(parts, fmt.Sprintf("per second CV %.2f over %d s", c.CV, c.Points))
		}
		if s.Verdict != "" {
			parts = append(parts, s.Verdict)
		}
		put("%s: %s", s.Label, strings.Join(parts, ", "))
	}
	for _, c := range st.Cold {
		put("cold: %s", c)
	}
	if p := st.Proof; p != nil {
		db, dev := "not counted by the database", "not seen (no block device of this machine holds the files)"
		if p.DatabaseBytes >= 0 {
			db = fmt.Sprintf("%s (%s)", BytesText(p.DatabaseBytes), p.Counter)
		}
		if p.DeviceBytes >= 0 {
			dev = fmt.Sprintf("%s (/proc/diskstats of %s, every process's IO on it)", BytesText(p.DeviceBytes), p.Device)
		}
		put("proof: the rate counts %s; the database says %s; the device says %s", BytesText(p.Bytes), db, dev)
	}
	if a := st.Amplification; a != nil {
		log, dev, ck := "log not counted by the database", "the device not seen", "checkpoints: "+a.CheckpointsHow
		// From the bytes, not the ratios the JSON keeps to 3 decimals:
		// rounding twice made the same figure differ by 0.01 from the verdict's.
		perByte := func(n int64, rounded float64) float64 {
			if a.TableBytes > 0 {
				return float64(n) / float64(a.TableBytes)
			}
			return rounded
		}
		if a.LogBytes >= 0 {
			log = fmt.Sprintf("%.2f bytes of log (%s)", perByte(a.LogBytes, a.LogPerByte), BytesText(a.LogBytes))
		}
		if a.DeviceBytes >= 0 {
			dev = fmt.Sprintf("%.2f bytes written by the device %s (%s, every process's writes)", perByte(a.DeviceBytes, a.DevicePerByte), a.Device, BytesText(a.DeviceBytes))
		}
		if a.Checkpoints >= 0 {
			ck = fmt.Sprintf("%s during the run (%s)", Plural(a.Checkpoints, "checkpoint"), a.CheckpointsHow)
		}
		// A bulk load's bytes are the rows sent, not the table's size on
		// disk, which indexes and free space make larger.
		per := "per byte of table written"
		if st.Experiment == "bulk" {
			per = "per byte loaded (ids and payloads sent)"
		}
		put("write amplification: %s (%s), %s and %s; %s", per, BytesText(a.TableBytes), log, dev, ck)
	}
	if c := st.CheckpointAge; c != nil {
		put("checkpoint age: %s", c.Text())
	}
	if d := st.Device; d != nil {
		put("device %s: read %s, wrote %s, %.0f IO/s, %s per request, await %.2f ms, utilisation %.0f%%",
			d.Name, BytesText(d.ReadBytes), BytesText(d.WriteBytes), d.IOPS, BytesText(int64(d.AvgRequestBytes)), d.AwaitMs, d.UtilPct)
		if b := d.Bursts; b != nil {
			burst := "the median second moved nothing"
			if b.MedianRate > 0 {
				burst = fmt.Sprintf("%.2f× the median", b.MaxRate/b.MedianRate)
			}
			put("device %s per second (%d s): read+write median %s, busiest %s at %.0f s (%s); IO/s median %.0f, max %.0f; await median %.2f ms, max %.2f ms; 100%% busy in %.0f%% of seconds",
				d.Name, b.Seconds, RateText("log", b.MedianRate), RateText("log", b.MaxRate), b.MaxAt, burst, b.MedianIOPS, b.MaxIOPS, b.MedianAwaitMs, b.MaxAwaitMs, 100*b.SaturatedShare)
		}
	}
	for _, e := range st.Expect {
		at := ""
		if e.Point != "" {
			at = " at " + e.Point
		}
		if e.NotMeasured != "" {
			put("expect %s=%s%s: not measured (%s)", e.Key, e.PromisedText, at, e.NotMeasured)
			continue
		}
		put("expect %s=%s%s: measured %s, %.2f× the promise: %s", e.Key, e.PromisedText, at, RateText(e.Key, e.Measured), e.Ratio, e.Verdict)
	}
	if c := st.Cost; c != nil {
		put("cost at %s: %.4f for the run, %.4f per GB moved", c.Given, c.Run, c.PerGB)
	}
	if st.Verdict != "" {
		put("verdict: %s", st.Verdict)
	}
}

// MinSpreadSeconds is the fewest whole seconds a spread (CV, min, max)
// is said over: one or two seconds have no spread worth a figure.
const MinSpreadSeconds = 3

// maxTextSteps is how many steps the text lists: a scan of a small
// table may make hundreds of passes, which the JSON result keeps.
const maxTextSteps = 12

// rateKind is the unit family of an experiment's rate.
func rateKind(experiment string) string {
	if experiment == "logcopy" {
		return "log"
	}
	return experiment
}

// fileText names the table's file, when known.
func fileText(file string) string {
	if file == "" {
		return ""
	}
	return ", file " + file
}

// fellText lists the first seconds whose rate fell below 90% of the
// median.
func fellText(points []RatePoint) string {
	var fell []string
	for _, p := range points {
		if p.Fell {
			fell = append(fell, strconv.FormatFloat(p.Elapsed, 'f', 1, 64))
		}
	}
	if len(fell) == 0 {
		return ""
	}
	more := ""
	if len(fell) > 10 {
		more = fmt.Sprintf(" and %d more", len(fell)-10)
		fell = fell[:10]
	}
	return "; the rate fell at s " + strings.Join(fell, ", ") + more
}

// BytesText says a byte count in decimal units, as storage rates are
// sold: 0 B, 950 B, 12.3 MB, 1.50 GB.
func BytesText(n int64) string {
	v := float64(n)
	switch {
	case v >= 1e12:
		return strconv.FormatFloat(v/1e12, 'f', 2, 64) + " TB"
	case v >= gb:
		return strconv.FormatFloat(v/gb, 'f', 2, 64) + " GB"
	case v >= mb:
		return strconv.FormatFloat(v/mb, 'f', 1, 64) + " MB"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " kB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// stepSeconds is a step's time as its line prints it: seconds to the
// hundredth, or under a tenth of a second milliseconds to the tenth, so
// that the bytes over the time printed give the rate printed beside them
// (a 9.3 ms pass printed as "0.01 s" read 8% off its own rate).
func stepSeconds(s float64) string {
	if s < 0.1 {
		return fmt.Sprintf("%.1f ms", 1000*s)
	}
	return fmt.Sprintf("%.2f s", s)
}
