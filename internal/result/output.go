package result

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Output receives what an experiment produces, event by event: a phase's
// header, its per-second intervals, the monitor's samples, status lines,
// and its summary. The text on stdout, the JSON result, InfluxDB line
// protocol and the Prometheus endpoint are each one Output; adding an
// output is one new type, not edits in the commands. An output ignores the
// events it has no use for.
//
// Interval, Monitor and Status may come from different goroutines than
// Header and Summary (the runner's ticker, the monitor's loop): an Output
// must be safe for that.
type Output interface {
	// Header starts a phase.
	Header(Header) error
	// Interval is one interval of the runner's series.
	Interval(Interval) error
	// Monitor is one interval of the monitor's samples.
	Monitor(MonitorSample) error
	// Status is a progress report (-s, or the live line on a terminal).
	Status(Status) error
	// Summary ends a phase.
	Summary(Summary) error
	// Close flushes what is buffered; called once, after the last phase.
	Close() error
}

// Status is what a status line shows: the interval since the previous one.
type Status struct {
	Now      time.Time
	Elapsed  time.Duration
	TotalOps int64
	// Total is the count the phase is bounded by, 0 when it is bounded by
	// time alone.
	Total     int64
	OpsPerSec float64
	// Remaining estimates the time left; negative when unknown.
	Remaining time.Duration
	Series    []measure.Summary
}

// Ignore implements every Output method as doing nothing, for an output to
// embed and override the events it uses.
type Ignore struct{}

// Header does nothing.
func (Ignore) Header(Header) error { return nil }

// Interval does nothing.
func (Ignore) Interval(Interval) error { return nil }

// Monitor does nothing.
func (Ignore) Monitor(MonitorSample) error { return nil }

// Status does nothing.
func (Ignore) Status(Status) error { return nil }

// Summary does nothing.
func (Ignore) Summary(Summary) error { return nil }

// Close does nothing.
func (Ignore) Close() error { return nil }

// Outputs hands every event to each of its outputs in turn. An output that
// fails a Header or a Summary fails the call at once; one that fails an
// Interval, a Monitor or a Status keeps the run going, and its first error
// is returned by the next Summary (the figures it missed are lost to that
// output only).
type Outputs struct {
	mu   sync.Mutex
	list []namedOutput
	late error // the first failed Interval, Monitor or Status
}

type namedOutput struct {
	name string
	out  Output
}

// Add appends an output; name says which one failed in an error ("--out
// result.jsonl").
func (o *Outputs) Add(name string, out Output) {
	o.list = append(o.list, namedOutput{name, out})
}

// Header sends h to every output.
func (o *Outputs) Header(h Header) error {
	return o.each(func(out Output) error { return out.Header(h) })
}

// Interval sends iv to every output.
func (o *Outputs) Interval(iv Interval) error {
	o.keep(o.each(func(out Output) error { return out.Interval(iv) }))
	return nil
}

// Monitor sends m to every output.
func (o *Outputs) Monitor(m MonitorSample) error {
	o.keep(o.each(func(out Output) error { return out.Monitor(m) }))
	return nil
}

// Status sends s to every output.
func (o *Outputs) Status(s Status) error {
	o.keep(o.each(func(out Output) error { return out.Status(s) }))
	return nil
}

// Summary sends s to every output, then returns the first error of any
// event since the last Summary.
func (o *Outputs) Summary(s Summary) error {
	err := o.each(func(out Output) error { return out.Summary(s) })
	o.mu.Lock()
	late := o.late
	o.late = nil
	o.mu.Unlock()
	if err != nil {
		return err
	}
	return late
}

// Close closes every output, and returns the first error.
func (o *Outputs) Close() error {
	var errs []error
	for _, n := range o.list {
		if err := n.out.Close(); err != nil {
			errs = append(errs, fmt.Errorf("writing %s: %w", n.name, err))
		}
	}
	return errors.Join(errs...)
}

func (o *Outputs) each(call func(Output) error) error {
	var first error
	for _, n := range o.list {
		if err := call(n.out); err != nil && first == nil {
			first = fmt.Errorf("writing %s: %w", n.name, err)
		}
	}
	return first
}

func (o *Outputs) keep(err error) {
	if err == nil {
		return
	}
	o.mu.Lock()
	if o.late == nil {
		o.late = err
	}
	o.mu.Unlock()
}

// Text is the Output of stdout in YCSB's text format (the header and the
// summaries) and of status lines on stderr, when status is set.
type Text struct {
	Ignore
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	status bool
}

// NewText returns the text output; status lines go to stderr only when
// status is set (-s).
func NewText(stdout, stderr io.Writer, status bool) *Text {
	return &Text{stdout: stdout, stderr: stderr, status: status}
}

// Header prints the header.
func (t *Text) Header(h Header) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return WriteHeader(t.stdout, h)
}

// Status prints YCSB's status line on stderr.
func (t *Text) Status(s Status) error {
	if !t.status {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintln(t.stderr, StatusLine(s.Now, s.Elapsed, s.TotalOps, s.OpsPerSec, s.Remaining, s.Series))
	return err
}

// Summary prints the summary.
func (t *Text) Summary(s Summary) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return WriteText(t.stdout, s)
}
