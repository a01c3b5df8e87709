package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/export"
	"github.com/dbprobe/dbprobe/internal/result"
)

// OutputConfig says where an experiment's events go besides the text on
// stdout.
type OutputConfig struct {
	// Out is --out: the JSON result file.
	Out string
	// InfluxOut is --influx-out: InfluxDB line protocol.
	InfluxOut string
	// MetricsAddr is --metrics-addr: the Prometheus endpoint.
	MetricsAddr string
	// MetricsRemote is --metrics-allow-remote: MetricsAddr may be an
	// address other machines reach.
	MetricsRemote bool
	// MetricsLinger is --metrics-linger: how long /metrics stays up after
	// the last phase, so that a scrape after the end takes its last counts.
	MetricsLinger time.Duration
	// Hlog is --hlog: the HdrHistogram interval log.
	Hlog string
	// Status is -s: status lines on stderr.
	Status bool
	// Progress is the live progress line on a terminal (Console), nil
	// when there is none.
	Progress *result.Progress
}

// StatusEvery is how often the runner is to report status: every
// interval (status.interval) for -s, every second for the live line,
// never (0) otherwise.
func (c OutputConfig) StatusEvery(interval time.Duration) time.Duration {
	switch {
	case c.Status:
		return interval
	case c.Progress != nil:
		return ProgressInterval
	}
	return 0
}

// Outputs are an experiment's open outputs, and what they keep.
type Outputs struct {
	*result.Outputs
	config OutputConfig
	// Kept says a JSON result keeps the intervals' histograms and the
	// monitor's samples; Ticks, that an output takes the intervals;
	// Histograms, that an output needs the intervals' encoded HDR
	// histograms (the JSON result, the .hlog; runner.Options.Histograms).
	Kept, Ticks, Histograms bool
	// RunID names this run in every exported series and in the JSON
	// result's headers, so that the figures of two runs are never mixed.
	RunID string

	ctx        context.Context
	stderr     io.Writer
	metricsURL string // where /metrics is served; "" when it is not
	phaseSeen  bool   // a Header went out: there are figures to linger for

	// The monitor starts before its phase's header, which carries the
	// monitor's notes, and its first interval can end first (250 ms on
	// a loaded machine): a sample written then came before any header
	// and made the JSON result unreadable. Samples wait in held until
	// the header is out (inPhase).
	monMu   sync.Mutex
	inPhase bool
	held    []result.MonitorSample
}

// OpenOutputs opens the text output and those c asks for, each behind
// result.Output; tags label the exported series (the driver), with the
// run id (NewRunID) added as run_id. On a second interrupt the JSON
// result is closed between two records, so it ends with a whole one
// however the process then ends.
func OpenOutputs(ctx context.Context, c OutputConfig, stdout, stderr io.Writer, tags map[string]string, in *Interrupts) (*Outputs, error) {
	o := &Outputs{Outputs: &result.Outputs{}, config: c, RunID: NewRunID(time.Now()), ctx: ctx, stderr: stderr}
	tags = maps.Clone(tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags["run_id"] = o.RunID
	o.Add("stdout", result.NewText(stdout, stderr, c.Status))
	// The .hlog is opened first: it empties nothing until a phase starts,
	// so a refusal of --out after it destroys nothing.
	if c.Hlog != "" {
		if err := checkHlogPath(c); err != nil {
			return nil, err
		}
		h, err := export.CreateHlog(c.Hlog)
		if err != nil {
			return nil, badinput.New("cannot write --hlog %s: %v", c.Hlog, ShortError(err))
		}
		// Closed between two lines, so the log ends with a whole one.
		in.AtAbandon(func() { h.Close() })
		o.Add("--hlog "+c.Hlog, h)
		o.Ticks, o.Histograms = true, true
	}
	if c.Progress != nil {
		o.Add("progress", c.Progress)
	}
	if c.Out != "" {
		w, err := result.Create(c.Out)
		if err != nil {
			o.Close()
			return nil, badinput.New("cannot write --out %s: %v", c.Out, ShortError(errors.Unwrap(err)))
		}
		in.AtAbandon(func() { w.Close() })
		o.Add(c.Out, w)
		o.Kept, o.Ticks, o.Histograms = true, true, true
	}
	if c.InfluxOut != "" {
		x, err := export.CreateInflux(c.InfluxOut, tags)
		if err != nil {
			o.Close()
			return nil, badinput.New("cannot write --influx-out %s: %v", c.InfluxOut, ShortError(err))
		}
		o.Add(c.InfluxOut, x)
		o.Ticks = true
	}
	if c.MetricsAddr != "" {
		p := export.NewPrometheus(tags)
		addr, err := p.Serve(ctx, c.MetricsAddr, c.MetricsRemote)
		if err != nil {
			o.Close()
			return nil, err
		}
		o.metricsURL = fmt.Sprintf("http://%s/metrics", addr)
		fmt.Fprintf(stderr, "dbprobe: Prometheus metrics at %s while the run goes\n", o.metricsURL)
		o.Add("--metrics-addr", p)
		// The latency histograms are made from the intervals' HDR
		// histograms as the runner hands them (measure.Summary.HDR), not
		// their encoding, which costs the ticker about a millisecond per
		// series a second.
		o.Ticks = true
	}
	return o, nil
}

// checkHlogPath refuses an --hlog that would write over another output
// of the same run, or stdout.
func checkHlogPath(c OutputConfig) error {
	if c.Hlog == "-" {
		return badinput.New("--hlog - : stdout carries the text results; give a file name, e.g. --hlog run.hlog")
	}
	for _, other := range []struct{ flag, path string }{{"--out", c.Out}, {"--influx-out", c.InfluxOut}} {
		if other.path != "" && samePath(c.Hlog, other.path) {
			return badinput.New("--hlog %s is also %s: give each output its own file", c.Hlog, other.flag)
		}
	}
	return nil
}

// samePath says a and b name one file: the same path, or two names of an
// existing file.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// Close closes every output. With --metrics-linger, /metrics first stays
// up that long after the last phase (a first Ctrl-C ends the wait), since
// a scrape only every 15 s would otherwise miss the run's last seconds.
func (o *Outputs) Close() error {
	if o.metricsURL != "" && o.phaseSeen && o.config.MetricsLinger > 0 && o.ctx.Err() == nil {
		fmt.Fprintf(o.stderr, "dbprobe: serving the final metrics at %s for %s more (--metrics-linger; Ctrl-C ends it)\n", o.metricsURL, o.config.MetricsLinger)
		select {
		case <-time.After(o.config.MetricsLinger):
		case <-o.ctx.Done():
		}
	}
	return o.Outputs.Close()
}

// Header starts a phase in every output, with the run id, then passes
// on the monitor's samples that came before it.
func (o *Outputs) Header(h result.Header) error {
	o.phaseSeen = true
	h.RunID = o.RunID
	o.monMu.Lock()
	defer o.monMu.Unlock()
	if err := o.Outputs.Header(h); err != nil {
		return err
	}
	o.inPhase = true
	for _, m := range o.held {
		o.Outputs.Monitor(m)
	}
	o.held = nil
	return nil
}

// Monitor passes a monitor sample on once its phase's header is out, and
// holds it until then.
func (o *Outputs) Monitor(m result.MonitorSample) error {
	o.monMu.Lock()
	defer o.monMu.Unlock()
	if !o.inPhase {
		o.held = append(o.held, m)
		return nil
	}
	return o.Outputs.Monitor(m)
}

// Summary ends a phase in every output; the next phase's samples wait
// for its header.
func (o *Outputs) Summary(s result.Summary) error {
	o.monMu.Lock()
	o.inPhase = false
	o.monMu.Unlock()
	return o.Outputs.Summary(s)
}

// NewRunID returns a run id: the start time in UTC to the second and four
// random hex digits, e.g. 20261125T194012Z-3fa9, so that ids sort by time
// and two runs started in the same second still differ.
func NewRunID(now time.Time) string {
	return fmt.Sprintf("%s-%04x", now.UTC().Format("20060102T150405Z"), rand.Uint32()&0xffff)
}

// samplesNote says where the monitor's samples go, for the header.
func (o *Outputs) samplesNote() string {
	switch {
	case o.Kept:
		return "the samples are in the JSON result (--out)"
	case o.config.InfluxOut != "":
		return "the samples are in --influx-out " + o.config.InfluxOut + "; --out FILE also keeps them in a JSON result"
	case o.config.MetricsAddr != "":
		return "the samples are served at --metrics-addr while the run goes, and not kept: --out FILE keeps them in a JSON result"
	}
	return "the samples are not kept: --out FILE keeps them in a JSON result"
}
