package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/result"
)

// hlogComments are the comments that open every .hlog dbprobe writes, after
// the format version: what the values are and how the lines are tagged,
// for whoever opens the file without dbprobe's help.
var hlogComments = []string{
	"[dbprobe interval histograms: values are latencies in microseconds]",
	"[Interval_Max is the interval's maximum divided by 1000000 (the log writer's max-value unit ratio): seconds]",
	"[Tag=PHASE/OPERATION (load/INSERT, run/READ, run/Intended-READ); warm-up intervals are tagged PHASE-warmup/OPERATION]",
	"[e.g. HistogramLogProcessor -i FILE -tag run/READ -outputValueUnitRatio 1000 prints milliseconds]",
}

// HlogTag is the tag of a series' lines in the .hlog: the phase and the
// series, so that the load and run phases of one command share a file and
// HdrHistogram's tools pick one of them (-tag run/READ). A warm-up
// interval is tagged apart (run-warmup/READ), as the summary leaves it
// out, so that adding up a tag's lines gives the summary's count.
func HlogTag(phase, series string, warmup bool) string {
	if warmup {
		phase += "-warmup"
	}
	return phase + "/" + series
}

// Hlog writes the runner's per-interval histograms as an HdrHistogram
// interval log (.hlog, log format 1.3), the format HdrHistogram's own
// tools read (HistogramLogProcessor, HistogramLogAnalyzer, the readers of
// every HdrHistogram port): one line per interval and series, tagged with
// HlogTag, each holding the interval's histogram in compressed V2
// encoding. Values are microseconds, as everywhere in dbprobe.
//
// Timestamps are seconds since a base time, the first phase's start
// truncated to the second (the log writer writes #[BaseTime] in whole
// seconds, so a finer base would shift every line on reading).
type Hlog struct {
	result.Ignore
	mu      sync.Mutex // Interval comes from the runner's ticker, Header from the command
	w       io.Writer
	log     *hdr.HistogramLogWriter
	started bool
	err     error

	// file is the file CreateHlog opened; created says it did not exist
	// before, so a run that never started a phase removes it again.
	file    *os.File
	created bool
}

// NewHlog returns an Hlog writing to w.
func NewHlog(w io.Writer) *Hlog {
	return &Hlog{w: w, log: hdr.NewHistogramLogWriter(w)}
}

// CreateHlog returns an Hlog writing to the file at path, which Close
// closes. The file is opened for writing at once, so a path that cannot be
// written is known before the run, but an existing file is only emptied
// when the first phase starts: a run refused before it leaves the file as
// it was (and one that never existed is removed).
func CreateHlog(path string) (*Hlog, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	h := NewHlog(f)
	h.file, h.created = f, errors.Is(statErr, fs.ErrNotExist)
	return h, nil
}

// Header starts the log at the first phase: format version, legend, start
// and base time; a later phase gets a comment line with its start.
func (h *Hlog) Header(hd result.Header) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if !h.started {
		h.started = true
		if err := h.truncate(); err != nil {
			h.err = err
			return err
		}
		base := hd.StartedAt.Truncate(time.Second)
		h.log.SetBaseTime(base.UnixMilli())
		h.try(h.log.OutputLogFormatVersion())
		for _, c := range hlogComments {
			h.try(h.log.OutputComment(c))
		}
		h.try(h.log.OutputStartTime(base.UnixMilli()))
		h.try(h.log.OutputBaseTime(base.UnixMilli()))
		h.try(h.log.OutputLegend())
	}
	// The reader takes any comment that holds "#[StartTime: " for one, so
	// the phase's own line is worded apart.
	h.try(h.log.OutputComment(fmt.Sprintf("[dbprobe %s phase started %s]", hd.Phase, hd.StartedAt.UTC().Format(time.RFC3339Nano))))
	return h.err
}

// truncate empties the file CreateHlog opened, now that a phase starts;
// a device or a pipe (--hlog /dev/stderr) is written as it is.
func (h *Hlog) truncate() error {
	if h.file == nil || !isRegular(h.file) {
		return nil
	}
	if err := h.file.Truncate(0); err != nil {
		return fmt.Errorf("emptying the .hlog: %w", err)
	}
	return nil
}

func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// Interval writes one line per series that recorded a value in the
// interval. A series of failure statuses only has no histogram and no
// line.
func (h *Hlog) Interval(iv result.Interval) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if !h.started {
		h.err = errors.New("writing the .hlog: an interval before the phase's header")
		return h.err
	}
	start, end := iv.Start.UnixMilli(), iv.End.UnixMilli()
	if base := h.log.BaseTime(); start < base {
		// A negative offset is not a number the log's readers accept.
		start = base
	}
	for _, s := range iv.Series {
		if s.Count == 0 {
			continue
		}
		if s.Histogram == "" {
			h.err = fmt.Errorf("writing the .hlog: series %s of the interval ending %s carries no histogram", s.Name, iv.End.Format(time.RFC3339))
			return h.err
		}
		hist, err := hdr.Decode([]byte(s.Histogram))
		if err != nil {
			h.err = fmt.Errorf("writing the .hlog: series %s: %w", s.Name, err)
			return h.err
		}
		hist.SetTag(HlogTag(iv.Phase, s.Name, iv.Warmup))
		hist.SetStartTimeMs(start)
		hist.SetEndTimeMs(end)
		if err := h.log.OutputIntervalHistogram(hist); err != nil {
			h.err = fmt.Errorf("writing the .hlog: %w", err)
			return h.err
		}
	}
	return nil
}

// try keeps the first error of a write.
func (h *Hlog) try(err error) {
	if err != nil && h.err == nil {
		h.err = fmt.Errorf("writing the .hlog: %w", err)
	}
}

// Err returns the first error writing; once there is one, nothing more is
// written.
func (h *Hlog) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Close returns the first error writing and closes the file CreateHlog
// opened; a file it created for a run that never started a phase is
// removed. A writer given to NewHlog is the caller's to close.
func (h *Hlog) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.err
	if h.file != nil {
		if cerr := h.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing the .hlog: %w", cerr)
		}
		if h.created && !h.started {
			os.Remove(h.file.Name())
		}
		h.file = nil
	}
	return err
}
