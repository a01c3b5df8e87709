package export

import (
	"encoding/csv"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
)

// CSVTimeLayout is the time column's layout: UTC, with a space rather than
// RFC 3339's T and Z, since that is the form spreadsheets read as a date
// and time.
const CSVTimeLayout = "2006-01-02 15:04:05.000"

// CSVSeriesColumns are a series' columns, after its name ("READ count"),
// before its percentiles.
var CSVSeriesColumns = []string{"count", "mean_us", "max_us"}

// IntervalsCSV writes the per-second series of every phase of f as one
// CSV table in wide form: one row per interval, with the columns time_utc
// (the interval's end), elapsed_s, phase, warmup, ops and ops_per_s, then
// for each series, in the order the result first names them, "S count",
// "S mean_us", "S max_us" and one "S pP_us" per percentile the result
// holds for it ("READ p99.9_us"). Wide form is what a spreadsheet charts
// without a pivot table: select the time column and a column, and insert
// a chart. A series that recorded nothing in an interval has its count, 0,
// and empty latency cells, since a latency of 0 would be a figure nobody
// measured; a series the phase does not have is all empty. It returns the
// number of rows.
func IntervalsCSV(w io.Writer, f *result.File) (int, error) {
	type seriesCols struct {
		name        string
		percentiles []float64
	}
	var cols []*seriesCols
	byName := map[string]*seriesCols{}
	for _, p := range f.Phases {
		for _, iv := range p.Intervals {
			for _, s := range iv.Series {
				c := byName[s.Name]
				if c == nil {
					c = &seriesCols{name: s.Name}
					byName[s.Name] = c
					cols = append(cols, c)
				}
				for _, pc := range s.Percentiles {
					if !slices.Contains(c.percentiles, pc.Percentile) {
						c.percentiles = append(c.percentiles, pc.Percentile)
					}
				}
			}
		}
	}
	header := []string{"time_utc", "elapsed_s", "phase", "warmup", "ops", "ops_per_s"}
	for _, c := range cols {
		slices.Sort(c.percentiles)
		for _, k := range CSVSeriesColumns {
			header = append(header, c.name+" "+k)
		}
		for _, p := range c.percentiles {
			header = append(header, c.name+" "+PercentileColumn(p))
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return 0, err
	}
	rows := 0
	for _, p := range f.Phases {
		for _, iv := range p.Intervals {
			row := []string{
				iv.End.UTC().Format(CSVTimeLayout), seconds(iv.Elapsed), iv.Phase, strconv.FormatBool(iv.Warmup),
				strconv.FormatInt(iv.Ops, 10), number(iv.OpsPerSec),
			}
			for _, c := range cols {
				i := slices.IndexFunc(iv.Series, func(s measure.Summary) bool { return s.Name == c.name })
				if i < 0 {
					row = append(row, make([]string, len(CSVSeriesColumns)+len(c.percentiles))...)
					continue
				}
				s := iv.Series[i]
				row = append(row, strconv.FormatInt(s.Count, 10))
				if s.Count == 0 {
					row = append(row, make([]string, len(CSVSeriesColumns)-1+len(c.percentiles))...)
					continue
				}
				row = append(row, number(s.MeanMicros), strconv.FormatInt(s.MaxMicros, 10))
				for _, pc := range c.percentiles {
					cell := ""
					for _, sp := range s.Percentiles {
						if sp.Percentile == pc {
							cell = strconv.FormatInt(sp.Micros, 10)
						}
					}
					row = append(row, cell)
				}
			}
			if err := cw.Write(row); err != nil {
				return rows, err
			}
			rows++
		}
	}
	cw.Flush()
	return rows, cw.Error()
}

// MonitorCSV writes the monitor's samples of every phase of f as one CSV
// table: one row per sample, with the columns time_utc (the sample's
// end), elapsed_s (from the phase's start, as in IntervalsCSV, so the two
// tables line up), phase, then one column per figure the monitor took in
// any phase, by its name ("db.xact_commit/s", "host.cpu.user%"), sorted.
// A figure a sample does not have is an empty cell. It returns the number
// of rows.
func MonitorCSV(w io.Writer, f *result.File) (int, error) {
	names := map[string]bool{}
	for _, p := range f.Phases {
		for _, m := range p.Monitor {
			for k := range m.Metrics {
				names[k] = true
			}
		}
	}
	metrics := slices.Sorted(maps.Keys(names))
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"time_utc", "elapsed_s", "phase"}, metrics...)); err != nil {
		return 0, err
	}
	rows := 0
	for _, p := range f.Phases {
		start := phaseStart(p)
		for _, m := range p.Monitor {
			row := []string{m.End.UTC().Format(CSVTimeLayout), seconds(m.End.Sub(start)), m.Phase}
			for _, k := range metrics {
				cell := ""
				if v, ok := m.Metrics[k]; ok {
					cell = number(v)
				}
				row = append(row, cell)
			}
			if err := cw.Write(row); err != nil {
				return rows, err
			}
			rows++
		}
	}
	cw.Flush()
	return rows, cw.Error()
}

// phaseStart is when the phase's runner started, which its intervals'
// elapsed times count from; the header's time for a phase without one.
func phaseStart(p result.Phase) time.Time {
	if len(p.Intervals) > 0 {
		iv := p.Intervals[0]
		return iv.End.Add(-iv.Elapsed)
	}
	return p.Header.StartedAt
}

// PercentileColumn names a percentile's column: p99.9_us for 99.9, so
// that 99.9 and 9.99 never share a name.
func PercentileColumn(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64) + "_us"
}

// seconds writes a duration in seconds, to the millisecond.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// number writes a figure to four decimals, without an exponent, which
// some spreadsheets read as text; NaN and infinities, which no
// spreadsheet reads, are empty cells.
func number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	r := math.Round(v*1e4) / 1e4
	if r == 0 {
		r = 0 // not -0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// StorageColumns are the columns of StorageCSV.
var StorageColumns = []string{"elapsed_s", "experiment", "point", "seconds", "bytes", "rate_bytes_per_s", "rate", "rate_unit", "fell"}

// HasStorage reports whether f holds a dbprobe storage result, whose
// series is its per-second rate rather than the runner's intervals.
func HasStorage(f *result.File) bool {
	for _, p := range f.Phases {
		if p.Summary != nil && p.Summary.Storage != nil {
			return true
		}
	}
	return false
}

// StorageCSV writes the per-second rate series of every storage phase of
// f: one row per second, with elapsed_s (seconds from the measured part's
// start to the second's end, as the JSON's storage.per_second has it),
// experiment, point (the --threads or --dop step the second belongs to,
// "threads 4", "DOP 2"; empty for an experiment run at one point),
// seconds (the span measured: a first or last second is cut short), the
// bytes moved, the rate in bytes per second, and again in the unit the
// text gives it in (rate, rate_unit: GB/min for scan and read, MB/min for
// write, MB/s for bulk and logcopy), and fell (true for a second below
// 90% of its point's median). The runner's intervals of a storage run
// count chunks and table copies, units that differ per experiment, so
// they are not what this table holds. It returns the number of rows.
func StorageCSV(w io.Writer, f *result.File) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(StorageColumns); err != nil {
		return 0, err
	}
	rows := 0
	for _, p := range f.Phases {
		if p.Summary == nil || p.Summary.Storage == nil {
			continue
		}
		st := p.Summary.Storage
		for _, pt := range st.PerSecond {
			rate, unit := result.RateIn(st.Experiment, pt.Rate)
			row := []string{strconv.FormatFloat(pt.Elapsed, 'f', 3, 64), st.Experiment, pt.Point, strconv.FormatFloat(pt.Seconds, 'f', 3, 64),
				strconv.FormatInt(pt.Bytes, 10), number(pt.Rate), number(rate), unit, strconv.FormatBool(pt.Fell)}
			if err := cw.Write(row); err != nil {
				return rows, err
			}
			rows++
		}
	}
	cw.Flush()
	return rows, cw.Error()
}
