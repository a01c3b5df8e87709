package export

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dbprobe/dbprobe/internal/result"
)

// Influx writes a run's figures as InfluxDB line protocol, one line per
// measurement and interval, with nanosecond timestamps. Lines come out in a
// fixed order (tags and fields sorted by key, series in the order given) so
// that the same figures always give the same bytes.
type Influx struct {
	result.Ignore
	mu   sync.Mutex // Interval and Monitor come from different goroutines
	w    io.Writer
	file *os.File // closed by Close when CreateInflux opened it
	tags map[string]string
	err  error
	buf  bytes.Buffer
}

// NewInflux returns an Influx writing to w. Every line carries tags (a run
// id, the driver…) besides its own; a tag with an empty key or value is
// left out, since line protocol has no way to write it. Tags named phase
// or op are replaced by the ones each line sets itself.
func NewInflux(w io.Writer, tags map[string]string) *Influx {
	kept := make(map[string]string, len(tags))
	for k, v := range tags {
		if k != "" && v != "" {
			kept[k] = v
		}
	}
	return &Influx{w: w, tags: kept}
}

// Err returns the first error writing to the writer; once there is one,
// nothing more is written.
func (x *Influx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// CreateInflux returns an Influx writing to a new file at path, which
// Close closes.
func CreateInflux(path string, tags map[string]string) (*Influx, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	x := NewInflux(f, tags)
	x.file = f
	return x, nil
}

// Close returns the first error writing, and closes the file CreateInflux
// opened; a writer given to NewInflux is the caller's to close.
func (x *Influx) Close() error {
	err := x.Err()
	if x.file != nil {
		if cerr := x.file.Close(); err == nil {
			err = cerr
		}
		x.file = nil
	}
	return err
}

// Interval writes one interval of the runner's series: measurement dbprobe_ops
// with fields ops and ops_per_sec, and one dbprobe_latency line per series
// (tag op) with its count, mean, percentiles (p99.9 is field p99_9_us) and
// maximum in microseconds. A series with nothing recorded in the interval
// has only its count, since a latency of 0 would be a figure nobody
// measured.
func (x *Influx) Interval(iv result.Interval) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return x.err
	}
	x.buf.Reset()
	ts := iv.End.UnixNano()
	x.line("dbprobe_ops", iv.Phase, "", []field{{"ops", float64(iv.Ops)}, {"ops_per_sec", iv.OpsPerSec}}, ts)
	for _, s := range iv.Series {
		fields := []field{{"count", float64(s.Count)}}
		if s.Count > 0 {
			fields = append(fields, field{"mean_us", s.MeanMicros})
			for _, p := range s.Percentiles {
				fields = append(fields, field{percentileField(p.Percentile), float64(p.Micros)})
			}
			fields = append(fields, field{"max_us", float64(s.MaxMicros)})
		}
		x.line("dbprobe_latency", iv.Phase, s.Name, fields, ts)
	}
	x.flush()
	return x.err
}

// Monitor writes one interval of the monitor's figures: a name is split at
// its first dot into the measurement (dbprobe_ and the part before it:
// dbprobe_db, dbprobe_host, dbprobe_client) and the field key (the rest,
// "xact_commit/s"). A name without a dot goes to measurement dbprobe.
func (x *Influx) Monitor(iv result.MonitorSample) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return x.err
	}
	x.buf.Reset()
	byMeasurement := map[string][]field{}
	for name, v := range iv.Metrics {
		source, key, ok := strings.Cut(name, ".")
		measurement := "dbprobe_" + source
		if !ok {
			measurement, key = "dbprobe", name
		}
		byMeasurement[measurement] = append(byMeasurement[measurement], field{key, v})
	}
	ts := iv.End.UnixNano()
	for _, m := range slices.Sorted(maps.Keys(byMeasurement)) {
		fields := byMeasurement[m]
		slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
		x.line(m, iv.Phase, "", fields, ts)
	}
	x.flush()
	return x.err
}

type field struct {
	key   string
	value float64
}

// line appends one line to the buffer. Fields line protocol cannot hold
// (an empty key, NaN, ±Inf) are left out, and so is a line left with none.
func (x *Influx) line(measurement, phase, op string, fields []field, ts int64) {
	var fs []field
	for _, f := range fields {
		if f.key != "" && !math.IsNaN(f.value) && !math.IsInf(f.value, 0) {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return
	}
	tags := make(map[string]string, len(x.tags)+2)
	for k, v := range x.tags {
		tags[k] = v
	}
	delete(tags, "phase")
	delete(tags, "op")
	if phase != "" {
		tags["phase"] = phase
	}
	if op != "" {
		tags["op"] = op
	}
	b := &x.buf
	b.WriteString(escapeMeasurement(measurement))
	// Sorted tags are what InfluxDB recommends: it sorts them itself
	// otherwise, and the output is reproducible.
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		b.WriteByte(',')
		b.WriteString(escapeKey(k))
		b.WriteByte('=')
		b.WriteString(escapeKey(tags[k]))
	}
	for i, f := range fs {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(escapeKey(f.key))
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(f.value, 'g', -1, 64))
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(ts, 10))
	b.WriteByte('\n')
}

// flush writes the buffer in one call, so that a file never holds half of
// one call's lines interleaved with another's.
func (x *Influx) flush() {
	if x.buf.Len() == 0 {
		return
	}
	if _, err := x.w.Write(x.buf.Bytes()); err != nil {
		x.err = fmt.Errorf("writing InfluxDB line protocol: %w", err)
	}
}

// percentileField names a percentile's field by its decimal digits with
// "_" for the point: 99 → p99_us, 99.9 → p99_9_us, 9.99 → p9_99_us. Two
// percentiles never share a name, as they did when the point was dropped
// (99.9 and 9.99 were both p999_us).
func percentileField(p float64) string {
	return "p" + strings.ReplaceAll(strconv.FormatFloat(p, 'f', -1, 64), ".", "_") + "_us"
}

// Line protocol escapes with a backslash: commas and spaces everywhere,
// equals signs in tag keys, tag values and field keys. A backslash before
// anything else is itself, as InfluxData's parser reads it; one at the
// end of a name would escape the separator after it and cannot be
// written, so it becomes "/". Control characters (a line break included)
// cannot be written at all, so they become spaces.
var (
	measurementEscaper = strings.NewReplacer(",", `\,`, " ", `\ `)
	keyEscaper         = strings.NewReplacer(",", `\,`, " ", `\ `, "=", `\=`)
)

func escapeMeasurement(s string) string { return measurementEscaper.Replace(writable(s)) }
func escapeKey(s string) string         { return keyEscaper.Replace(writable(s)) }

// writable replaces what line protocol cannot hold: control characters
// by spaces, a trailing backslash by "/".
func writable(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if base, ok := strings.CutSuffix(s, `\`); ok {
		return base + "/"
	}
	return s
}
