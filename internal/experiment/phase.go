package experiment

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// RunInterruptible runs an experiment's phases (run) under the
// interrupts. A first Ctrl-C or SIGTERM cancels the Interrupts' context:
// the phase drains and the command ends with its summary. A second one
// returns at once, leaving run's goroutine to die with the process, which
// only cmd/dbprobe may end. out is the JSON result file, for the message.
func RunInterruptible(ctx context.Context, out string, run func(*Interrupts) error) error {
	stops := WatchInterrupts(ctx)
	defer stops.Stop()
	done := make(chan error, 1)
	go func() { done <- run(stops) }()
	select {
	case err := <-done:
		if sig := stops.Signal(); sig != nil {
			return &Interrupted{Signal: sig, Out: out, Err: err}
		}
		return err
	case <-stops.Abandoned():
		return &Interrupted{Signal: stops.Signal(), Abandoned: true, Out: out}
	}
}

// PhaseWiring is what a phase's runner.Options are connected to: the
// outputs that take its intervals and status lines, the monitor whose
// intervals end on the runner's, and the log its first errors go to.
type PhaseWiring struct {
	Phase   string
	Outputs *Outputs
	Monitor *Monitoring
	Log     *slog.Logger
	Target  *Target
	// StatusInterval is how often -s prints a status line.
	StatusInterval time.Duration
}

// Wire sets opts' callbacks: the monitor aligned on the runner's start,
// the first error of each code logged, status lines and intervals sent
// to the outputs that take them, and histograms kept when an output needs
// them.
func (w PhaseWiring) Wire(opts *runner.Options) {
	outs, mon := w.Outputs, w.Monitor
	opts.Histograms = outs.Histograms
	opts.OnStart = func(_, origin time.Time) {
		// The runner's intervals end on whole seconds from its start.
		mon.Align(origin)
	}
	opts.OnFirstError = func(op, code string, err error) {
		w.Log.Warn("operation failed; later failures with this code are only counted", "op", op, "code", code, "error", w.Target.ScrubError(err))
	}
	if every := outs.config.StatusEvery(w.StatusInterval); every > 0 {
		opts.StatusInterval = every
		opts.OnStatus = func(s runner.Status) {
			outs.Status(result.Status{Now: s.Now, Elapsed: s.Elapsed, TotalOps: s.TotalOps, Total: s.Total, OpsPerSec: s.OpsPerSec, Remaining: s.Remaining, Series: s.Series})
		}
	}
	if outs.Ticks {
		phase := w.Phase
		opts.OnTick = func(t runner.Tick) {
			iv := result.Interval{Phase: phase, Start: t.Start, End: t.End, Elapsed: t.Elapsed, Ops: t.Ops, Warmup: t.Warmup, Series: t.Series}
			if d := t.End.Sub(t.Start).Seconds(); d > 0 {
				iv.OpsPerSec = float64(t.Ops) / d
			}
			outs.Interval(iv)
		}
	}
}

// EndMonitor stops the monitor once the phase has ended, so that its last
// interval comes before the summary; it does not wait on a database that
// was not answering when the phase ended.
func (m *Monitoring) EndMonitor(out *runner.Outcome) {
	if out != nil && (out.EndedBy == runner.EndedByUnreachable || (len(out.Outages) > 0 && out.Outages[len(out.Outages)-1].Ongoing)) {
		m.Abandon()
	} else {
		m.Stop()
	}
}

// Summary is a phase's summary from what the runner measured: its
// figures, its outages and reconnections, and what the monitor lost.
func Summary(phase string, out *runner.Outcome, retryLimit int, mon *Monitoring) result.Summary {
	sum := result.Summary{
		Phase:       phase,
		RunTime:     out.RunTime,
		Ops:         out.Ops,
		Throughput:  out.Throughput,
		Series:      out.Series,
		Errors:      out.Errors,
		Interrupted: out.Interrupted,
		Warmup:      out.Warmup,
		RetryLimit:  retryLimit,
	}
	if len(out.Outages) > 0 || out.Reconnects > 0 {
		sum.Availability = &result.Availability{Reconnects: out.Reconnects}
		for _, o := range out.Outages {
			sum.Availability.Outages = append(sum.Availability.Outages, result.Outage{Start: o.Start, End: o.End, Failed: o.Failed, Ongoing: o.Ongoing})
		}
	}
	sum.Notes = append(sum.Notes, mon.LateNotes()...)
	return sum
}

// InterruptNote says what stopped a phase early and how long operations
// in flight were given.
func InterruptNote(in *Interrupts, drain time.Duration) string {
	by := "stopped early"
	if sig := in.Signal(); sig != nil {
		by = "stopped by " + SignalName(sig)
	}
	return fmt.Sprintf("%s: no operation started after it; those in flight had up to %s (--drain-timeout) to finish, and any still running then was cancelled and counted as failed", by, drain)
}

// FailureWords says a failure as the error counts name it, then in the
// database's words: "ERROR(13 SQLITE_FULL) database or disk is full".
func FailureWords(err error) string {
	if err == nil {
		return "no error"
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if l := driver.Label(err); l != "" {
		return "ERROR(" + l + ") " + msg
	}
	return msg
}

// PhaseStopped is the error of a phase stopped early: its one line is the
// command's last, with exit status 1 as for any phase that failed, or 2
// when the cause is the user's to fix (a privilege the user lacks), as
// when the same failure is found before the phase. Failed is the
// experiment's own "phase failed" error, which it wraps.
type PhaseStopped struct {
	Text    string
	UserFix bool
	Failed  error
}

func (e *PhaseStopped) Error() string { return e.Text }

// Unwrap returns Failed, and bad input when the cause is the user's.
func (e *PhaseStopped) Unwrap() []error {
	if e.UserFix {
		return []error{e.Failed, badinput.New("%s", e.Text)}
	}
	return []error{e.Failed}
}

// StopContext is what a stop line says around the cause: the phase's
// name, how far it got, and what it left behind.
type StopContext struct {
	// Phase names the phase ("load", "run", "stress").
	Phase string
	// Progress says how far it got: "after 9,000 of 100,000 rows".
	Progress string
	// Left is what it left behind, "" for nothing: "the table usertable
	// is incomplete (left as it is)".
	Left string
	// DataDir is the database's data directory on this machine, "" when
	// unknown, for the free space of a full disk.
	DataDir string
}

// Stopped describes a phase the runner stopped early: the record for the
// result, whose Text is the command's last line, and the cause in words
// for the verdict.
//
// A fatal failure: "load stopped: ERROR(13 SQLITE_FULL) database or disk
// is full, after 9,000 of 100,000 rows; the table usertable is incomplete
// (left as it is); /tmp/x on /mnt/small (ext4) has 0 B free now: free
// space there, then load again".
//
// A database that did not come back: "PostgreSQL at 127.0.0.1:5432 has not
// answered for 60 s since 13:23:32: the load stops, after 9,000 of 100,000
// rows; the table usertable is incomplete (left as it is); bring the
// server back (or wait longer with --reconnect-timeout), then load again".
func Stopped(s *runner.Stop, db driver.DB, target driver.Target, c StopContext) (*result.Stopped, string) {
	err := Scrubbed(target, s.Err)
	rec := &result.Stopped{Op: s.Op, At: s.At, Code: driver.Label(s.Err)}
	if err != nil {
		rec.Cause = strings.Join(strings.Fields(err.Error()), " ")
	}
	again := "then " + c.Phase + " again"
	space, low := SpaceNote(c.DataDir)
	var parts []string
	var words string
	switch s.Cause {
	case runner.StopUnreachable:
		rec.Reason, rec.Since = result.StopUnreachable, s.Since
		where := Where(db, target)
		words = fmt.Sprintf("%s did not answer for %s", where, SecondsText(s.Waited))
		parts = append(parts, fmt.Sprintf("%s has not answered for %s since %s: the %s stops, %s",
			where, SecondsText(s.Waited), s.Since.Format("15:04:05"), c.Phase, c.Progress))
		if c.Left != "" {
			parts = append(parts, c.Left)
		}
		// The file system is named only when it is nearly full, the likely
		// cause: a server that died for another reason has room to spare,
		// and its free space would only distract.
		if space != "" && low {
			parts = append(parts, space+": free space there and restart the server, "+again)
		} else {
			parts = append(parts, "bring the server back (or wait longer with --reconnect-timeout), "+again)
		}
	default:
		rec.Reason = result.StopFatal
		words = FailureWords(err)
		parts = append(parts, fmt.Sprintf("%s stopped: %s, %s", c.Phase, words, c.Progress))
		if c.Left != "" {
			parts = append(parts, c.Left)
		}
		// The data's file system is named only for a full disk: beside a
		// read-only database or a refused permission it would mislead.
		full := low || LooksFull(rec.Code, rec.Cause)
		advice := FaultAdvice(rec.Code, rec.Cause)
		switch {
		case space != "" && full:
			parts = append(parts, space+": free space there, "+again)
		case full:
			parts = append(parts, "free space where the database keeps its files, "+again)
		case advice != "":
			parts = append(parts, advice+", "+again)
		default:
			parts = append(parts, "fix what the error says, "+again)
		}
	}
	rec.Text = strings.Join(parts, "; ")
	return rec, words
}

// Failing says, for the verdict, the failures more attempts cannot fix
// that a phase went on past (--on-error continue): "91,000 rows failed
// with ERROR(13 SQLITE_FULL) database or disk is full"; "" when none.
// what names the units ("rows", "operations").
func Failing(out *runner.Outcome, target driver.Target, what string) string {
	if out.Fatal == 0 || out.Stopped != nil {
		return ""
	}
	return fmt.Sprintf("%s %s failed with %s", result.Grouped(out.Fatal), what, FailureWords(Scrubbed(target, out.FirstFatal)))
}
