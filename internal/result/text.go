package result

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// WriteText writes a phase's summary in the format of YCSB's text
// exporter, line for line:
//
//	[OVERALL], RunTime(ms), 10110
//	[OVERALL], Throughput(ops/sec), 98.91196834817013
//	[READ], Operations, 500
//	[READ], AverageLatency(us), 33.88
//	[READ], MinLatency(us), 14
//	[READ], MaxLatency(us), 900
//	[READ], 95thPercentileLatency(us), 120
//	[READ], Return=OK, 500
//
// RunTime is whole milliseconds, truncated, as YCSB's difference of
// millisecond clocks. Doubles are printed as Java prints them. Throughput
// is printed as given: when the caller divides by a zero run time, that is
// "Infinity" (or "NaN" with no operations), exactly what YCSB prints in
// that case, and what Java, Python and Go all parse as floats.
//
// A series that recorded only failure statuses (every operation failed, its
// latencies going to its -FAILED series) is printed as YCSB prints it:
// Operations 0, AverageLatency 0.0, Min, Max and every percentile 0 — the
// percentiles being those the other series report — then its Return lines.
// Scripts that expect every row of a series then still find them, and
// Operations 0 says what the zeros mean.
//
// With a retry policy (RetryLimit > 0) each operation series ends with a
// "[UPDATE], Retries, N" line: attempts repeated after a retryable failure;
// a line per error code follows it, sorted by code, when anything was
// retried: "[UPDATE], Retries(40001), 2401". They come after the lines
// YCSB has, so a parser that reads those finds them where it did.
// Failures are counted per code as well as in total: "Return=ERROR, 5" is
// followed by "Return=ERROR(41302), 5".
//
// What YCSB has no line for follows as comments, which YCSB parsers skip:
// one "# overflow:" line per series with values above the histogram range,
// the error counts, the warm-up, an interruption, what ended the phase,
// why it was stopped early ("# stopped:"), and the Notes.
//
// A stress run's summary (Stress) adds lines in YCSB's shape after the
// series (writeStressLines), and its statements and plans as comments; a
// storage run's (Storage) its rates (writeStorageLines), and its
// evidence and verdict as comments.
func WriteText(w io.Writer, s Summary) error {
	bw := bufio.NewWriter(w)
	line := func(metric, measurement, value string) {
		bw.WriteString("[" + field(metric) + "], " + field(measurement) + ", " + value + "\n")
	}
	line("OVERALL", "RunTime(ms)", strconv.FormatInt(s.RunTime.Milliseconds(), 10))
	line("OVERALL", "Throughput(ops/sec)", javaDouble(s.Throughput))

	// The percentiles a status-only series reports as zeros, like YCSB.
	var shape []float64
	for _, ser := range s.Series {
		if len(ser.Percentiles) > 0 {
			for _, p := range ser.Percentiles {
				shape = append(shape, p.Percentile)
			}
			break
		}
	}

	for _, ser := range s.Series {
		line(ser.Name, "Operations", strconv.FormatInt(ser.Count, 10))
		line(ser.Name, "AverageLatency(us)", javaDouble(ser.MeanMicros))
		line(ser.Name, "MinLatency(us)", strconv.FormatInt(ser.MinMicros, 10))
		line(ser.Name, "MaxLatency(us)", strconv.FormatInt(ser.MaxMicros, 10))
		if ser.Count == 0 && len(ser.Percentiles) == 0 {
			for _, p := range shape {
				line(ser.Name, ordinal(p)+"PercentileLatency(us)", "0")
			}
		}
		for _, p := range ser.Percentiles {
			line(ser.Name, ordinal(p.Percentile)+"PercentileLatency(us)", strconv.FormatInt(p.Micros, 10))
		}
		for _, st := range ser.Statuses {
			line(ser.Name, "Return="+st.Status, strconv.FormatInt(st.Count, 10))
		}
		if ser.Retries != nil && (s.RetryLimit > 0 || *ser.Retries > 0) {
			line(ser.Name, "Retries", strconv.FormatInt(*ser.Retries, 10))
			for _, code := range slices.Sorted(maps.Keys(ser.RetriesByCode)) {
				line(ser.Name, "Retries("+code+")", strconv.FormatInt(ser.RetriesByCode[code], 10))
			}
		}
	}

	if s.Stress != nil {
		writeStressLines(bw, s.Stress)
	}
	if s.Storage != nil {
		writeStorageLines(bw, s.Storage)
	}
	if s.Replica != nil {
		writeReplicaLines(bw, s.Replica)
	}

	for _, ser := range s.Series {
		if ser.Overflow > 0 {
			fmt.Fprintf(bw, "# overflow: [%s] %s above %s, counted as %d us: its maximum and top percentiles are at least that\n",
				oneLine(ser.Name), count(ser.Overflow, "value"), shortDuration(time.Duration(measure.HighestMicros)*time.Microsecond), measure.HighestMicros)
		}
	}
	if len(s.Errors) > 0 {
		codes := slices.Sorted(maps.Keys(s.Errors))
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = oneLine(c) + "=" + strconv.FormatInt(s.Errors[c], 10)
		}
		bw.WriteString("# errors: " + strings.Join(parts, ", ") + "\n")
	}
	if s.Warmup > 0 {
		bw.WriteString("# warm-up: " + shortDuration(s.Warmup) + " excluded from the figures above\n")
	}
	if s.Interrupted {
		bw.WriteString("# interrupted: the figures cover only what finished before the stop\n")
	}
	if s.Ending != nil && s.Ending.Text != "" {
		bw.WriteString("# ended: " + oneLine(s.Ending.Text) + "\n")
	}
	if s.Stopped != nil && s.Stopped.Text != "" {
		bw.WriteString("# stopped: " + oneLine(s.Stopped.Text) + "\n")
	}
	if s.Recovered {
		bw.WriteString("# recovered: the run wrote no summary; this one is rebuilt from its intervals by dbprobe recover\n")
	}
	writeAvailability(bw, s.Availability)
	if s.Diagnosis != nil {
		bw.WriteString("# bottleneck: " + oneLine(s.Diagnosis.Verdict) + "\n")
	}
	if s.Stress != nil {
		writeStressNotes(bw, s.Stress)
	}
	if s.Storage != nil {
		writeStorageNotes(bw, s.Storage)
	}
	if s.Replica != nil {
		writeReplicaNotes(bw, s.Replica)
	}
	for _, n := range s.Notes {
		bw.WriteString("# note: " + oneLine(n) + "\n")
	}
	return bw.Flush()
}

// settingValueWidth caps the column the sources are aligned on, so one long
// value (a SQL text, a path) does not push every other source off screen.
const settingValueWidth = 32

// WriteHeader writes the run header printed on stdout before the results:
// dbprobe and the machine, the phase, the target, the database, every
// effective setting with where it came from, and the notes. Every line
// starts with "# " so YCSB parsers skip it; settings are aligned because
// people read this block to check which value (the request distribution
// above all) really applied.
func WriteHeader(w io.Writer, h Header) error {
	bw := bufio.NewWriter(w)
	put := func(format string, args ...any) {
		bw.WriteString("# " + oneLine(fmt.Sprintf(format, args...)) + "\n")
	}
	e := h.Environment
	env := []string{}
	if e.Go != "" {
		env = append(env, e.Go)
	}
	if e.OS != "" || e.Arch != "" {
		env = append(env, e.OS+"/"+e.Arch)
	}
	if e.CPUs > 0 {
		env = append(env, count(int64(e.CPUs), "CPU"))
	}
	if e.GOMAXPROCS > 0 {
		env = append(env, "GOMAXPROCS "+strconv.Itoa(e.GOMAXPROCS))
	}
	if e.Hostname != "" {
		env = append(env, "host "+e.Hostname)
	}
	version := e.Dbprobe
	if version == "" {
		version = "(unknown version)"
	}
	if len(env) > 0 {
		put("dbprobe %s (%s)", version, strings.Join(env, ", "))
	} else {
		put("dbprobe %s", version)
	}
	put("phase: %s", h.Phase)
	if !h.StartedAt.IsZero() {
		put("started: %s", h.StartedAt.Format("2006-01-02 15:04:05.000 -07:00"))
	}
	if h.RunID != "" {
		// The same id labels the exported series, so a line in Grafana
		// or InfluxDB leads back to this output.
		put("run id: %s (the run_id of its Prometheus series, InfluxDB lines and JSON result)", h.RunID)
	}
	if h.Command != "" {
		put("command: %s", h.Command)
	}
	if h.Target != "" {
		put("target: %s", h.Target)
	}
	if d := h.Database; d.Driver != "" || d.Library != "" || d.ServerVersion != "" {
		parts := []string{}
		if d.Driver != "" {
			parts = append(parts, d.Driver)
		}
		if d.Library != "" {
			parts = append(parts, "library "+d.Library)
		}
		if d.ServerVersion != "" {
			parts = append(parts, "server "+d.ServerVersion)
		}
		put("database: %s", strings.Join(parts, ", "))
		writeSettings(bw, "#   ", d.Settings)
	}
	if len(h.Settings) > 0 {
		put("settings:")
		writeSettings(bw, "#   ", h.Settings)
	}
	for _, n := range h.Notes {
		put("note: %s", n)
	}
	return bw.Flush()
}

// writeSettings writes "key = value (source)" lines with the "=" and the
// sources aligned.
func writeSettings(bw *bufio.Writer, prefix string, settings []Setting) {
	width := utf8.RuneCountInString
	keyW, valW := 0, 0
	for _, s := range settings {
		keyW = max(keyW, width(oneLine(s.Key)))
		if v := width(oneLine(s.Value)); v <= settingValueWidth {
			valW = max(valW, v)
		}
	}
	for _, s := range settings {
		k, v := oneLine(s.Key), oneLine(s.Value)
		l := prefix + k + strings.Repeat(" ", keyW-width(k)) + " = " + v
		if s.Source != "" {
			l += strings.Repeat(" ", max(valW-width(v), 0)) + "  (" + oneLine(s.Source) + ")"
		}
		bw.WriteString(strings.TrimRight(l, " ") + "\n")
	}
}

// field keeps a name (a series, a status from a driver) from breaking a
// YCSB line, which parsers split on ", " into exactly three parts.
func field(s string) string {
	return strings.ReplaceAll(oneLine(s), ", ", ",")
}

// oneLine keeps a value on its line: a newline inside a note or a setting
// would start a line without "# " and break every YCSB parser reading the
// output.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// shortDuration drops the zero tails time.Duration.String leaves
// ("1h0m0s" → "1h", "2m0s" → "2m").
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
