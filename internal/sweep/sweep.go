package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/price"
)

// Exec runs one dbprobe command (args without the program name) with its
// standard output and error going to stdout and stderr. The first
// cancellation of ctx asks it to stop as Ctrl-C does (drain, write the
// summary); abandon closing asks a second time (stop at once). The
// returned error carries the exit status: an *exec.ExitError, or any
// error with an ExitCode() int method.
type Exec func(ctx context.Context, abandon <-chan struct{}, args []string, stdout, stderr io.Writer) error

// Config is what a sweep runs: the variants, each a complete experiment
// command line the caller has checked, and how to order and repeat them.
type Config struct {
	// Experiment names the experiment command ("run", "storage scan").
	Experiment string
	// Command is the sweep's command line, secrets hidden.
	Command string
	Vary    []Vary
	// Variants and Shapes are the cross product of the --vary values and
	// the distinct tables they need.
	Variants []Variant
	Shapes   []Shape
	Reps     int
	Seed     uint64
	// Cooldown is waited before every run but the first; Between, run
	// through sh -c before every run but the first (after the cooldown),
	// is a command of the user's: a checkpoint, a restart.
	Cooldown time.Duration
	Between  string
	// BetweenShown is Between as the summary shows it, secrets hidden.
	BetweenShown string
	// Out is the summary's path; each run's result and text go beside it.
	Out    string
	Prices []price.Selected
	// Baseline is the ID of the variant the others are compared against
	// at the end; 0 for the first.
	Baseline int
	// Redact shows a command line with its secrets hidden.
	Redact func(args []string) string
	// Exec runs a run or a load; nil runs Exe as a child process.
	Exec Exec
	// Exe is the dbprobe binary the runs are started from.
	Exe            string
	Stdout, Stderr io.Writer
}

// Run runs the sweep: the order printed first, each shape's load before
// its first run, the runs with the cooldown and --between before each
// but the first, the summary rewritten after each run, the recap table
// at the end. A first Ctrl-C stops the run in progress as its own Ctrl-C
// would (it keeps its summary), runs no more, and keeps every finished
// run; the error is then an *experiment.Interrupted. A run that ends in
// bad input stops the sweep (its siblings would too); a run that fails
// otherwise is recorded and the sweep goes on, returning an error at the
// end.
func Run(ctx context.Context, c *Config) error {
	if c.Exec == nil {
		c.Exec = ChildExec(c.Exe)
	}
	if c.Redact == nil {
		c.Redact = func(a []string) string { return strings.Join(a, " ") }
	}
	in := experiment.WatchInterrupts(ctx)
	defer in.Stop()
	ctx = in.Context()

	order := Order(c.Variants, len(c.Shapes), c.Reps, c.Seed)
	s := &Summary{
		Type: SummaryType, SchemaVersion: SchemaVersion, Command: c.Command, Experiment: c.Experiment,
		Status: StatusRunning, StartedAt: time.Now(), Seed: c.Seed, Reps: c.Reps,
		CooldownMS: ms(c.Cooldown), Between: c.BetweenShown, Vary: c.Vary, Baseline: c.Baseline,
	}
	dir := filepath.Dir(c.Out)
	stem := strings.TrimSuffix(c.Out, filepath.Ext(c.Out))
	width := len(fmt.Sprint(len(order)))
	if len(c.Shapes) > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d table shapes run one after the other, each loaded once: variants of different shapes are not interleaved with each other, so a drift between shapes is not spread over them", len(c.Shapes)))
	}
	for i, sh := range c.Shapes {
		s.Shapes = append(s.Shapes, ShapeRecord{ID: i + 1, Settings: sh.Settings})
	}
	for _, v := range c.Variants {
		s.Variants = append(s.Variants, VariantRecord{ID: v.ID, Name: v.Name(), Settings: v.Settings, Shape: v.Shape + 1, Command: c.Redact(v.Args)})
	}
	for i, sl := range order {
		base := fmt.Sprintf("%s.run-%0*d", stem, width, i+1)
		s.Runs = append(s.Runs, RunRecord{Position: i + 1, Variant: c.Variants[sl.Variant].ID, Rep: sl.Rep,
			Path: rel(dir, base+".jsonl"), Text: rel(dir, base+".txt"), Status: StatusNotRun})
	}
	printOrder(c.Stdout, c, s, order)
	if err := s.WriteFile(c.Out); err != nil {
		return fmt.Errorf("sweep: writing %s: %w", c.Out, err)
	}

	var failed []int
	var stop error
	shape := -1
	var prevLast time.Time
	for i, sl := range order {
		if ctx.Err() != nil {
			break
		}
		v := c.Variants[sl.Variant]
		if v.Shape != shape {
			shape = v.Shape
			prevLast = time.Time{}
			if err := load(ctx, in, c, s, shape, stem); err != nil {
				stop = err
				break
			}
			if ctx.Err() != nil {
				break
			}
		}
		r := &s.Runs[i]
		var betweenDur time.Duration
		if i > 0 {
			if c.Cooldown > 0 {
				select {
				case <-time.After(c.Cooldown):
				case <-ctx.Done():
				}
			}
			if c.Between != "" && ctx.Err() == nil {
				t0 := time.Now()
				if err := between(ctx, c, r.Position, v); err != nil {
					stop = fmt.Errorf("sweep: --between before run %d failed: %w; runs finished before it: %d, kept in %s", r.Position, err, i, c.Out)
					break
				}
				betweenDur = time.Since(t0)
				r.BetweenMS = ms(betweenDur)
			}
			if ctx.Err() != nil {
				break
			}
		}
		path := filepath.Join(dir, r.Path)
		if filepath.IsAbs(r.Path) {
			path = r.Path
		}
		textPath := strings.TrimSuffix(path, ".jsonl") + ".txt"
		args := append(append([]string(nil), v.Args...), "--out", path)
		r.Start = time.Now()
		code, msg, err := runOne(ctx, in, c, args, textPath)
		r.End = time.Now()
		r.ExitCode = code
		if err != nil && code < 0 {
			stop = fmt.Errorf("sweep: run %d: %w", r.Position, err)
			r.Status, r.Error = StatusFailed, err.Error()
			break
		}
		m, rerr := ReadRun(path)
		if rerr == nil {
			if s.Kind == "" && m.Complete {
				s.Kind = m.Kind
			}
			r.Metrics, r.Limit, r.Verdict = m.Metrics, m.Limit, m.Verdict
			r.First, r.Last = m.First, m.End
			if !prevLast.IsZero() && !m.First.IsZero() {
				gap := m.First.Sub(prevLast)
				r.GapMS = ms(gap)
				if o := gap - c.Cooldown - betweenDur; o > 0 {
					r.OverheadMS = ms(o)
				}
			}
		}
		switch {
		case code == 0 && rerr == nil && m.Complete && !m.Interrupted:
			r.Status = StatusOK
			prevLast = m.End
		case ctx.Err() != nil || m.Interrupted:
			r.Status = StatusInterrupted
			if rerr == nil && m.Complete {
				// What it measured until the stop is kept, marked: its
				// figures are over less time than the others'.
				r.Error = "interrupted: its summary covers the part before the stop"
			}
		default:
			r.Status = StatusFailed
			r.Error = msg
			if r.Error == "" && rerr != nil {
				r.Error = rerr.Error()
			}
			failed = append(failed, r.Position)
			prevLast = time.Time{}
		}
		fmt.Fprintln(c.Stderr, progressLine(s, r, len(order)))
		analyze(s, c.Variants, c.Prices)
		if err := s.WriteFile(c.Out); err != nil {
			return fmt.Errorf("sweep: writing %s: %w", c.Out, err)
		}
		if code == 2 {
			stop = badinput.New("sweep: run %d (%s) stopped on bad input (exit 2): %s", r.Position, v.Name(), msg)
			break
		}
	}
	s.EndedAt = time.Now()
	done := 0
	for _, r := range s.Runs {
		if r.Status == StatusOK {
			done++
		}
	}
	switch {
	case ctx.Err() != nil:
		s.Status = StatusInterrupted
	case stop != nil || len(failed) > 0:
		s.Status = StatusFailed
	default:
		s.Status = StatusComplete
	}
	analyze(s, c.Variants, c.Prices)
	if err := s.WriteFile(c.Out); err != nil {
		return fmt.Errorf("sweep: writing %s: %w", c.Out, err)
	}
	if err := WriteRecap(c.Stdout, s); err != nil {
		return err
	}
	if p, err := ComparePairs(s, filepath.Dir(c.Out)); err != nil {
		fmt.Fprintf(c.Stdout, "# not compared against the baseline: %s\n", err)
	} else if p != nil {
		if err := WritePairwise(c.Stdout, p); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.Stdout, "# summary: %s (status %s); each run's result and text beside it\n", c.Out, s.Status)
	if ctx.Err() != nil {
		fmt.Fprintf(c.Stderr, "dbprobe sweep: interrupted: %d of %d runs finished, kept in %s with their results beside it; the rest did not run\n", done, len(order), c.Out)
		return &experiment.Interrupted{Signal: in.Signal(), Out: c.Out}
	}
	if stop != nil {
		return stop
	}
	if len(failed) > 0 {
		return fmt.Errorf("sweep: %d of %d runs failed (positions %s): their text output beside %s says why", len(failed), len(order), intsText(failed), c.Out)
	}
	return nil
}

// load fills shape's table, when it has a load.
func load(ctx context.Context, in *experiment.Interrupts, c *Config, s *Summary, shape int, stem string) error {
	sh := c.Shapes[shape]
	if sh.Load == nil {
		return nil
	}
	path := fmt.Sprintf("%s.load-%d.jsonl", stem, shape+1)
	lr := &LoadRecord{Command: c.Redact(sh.Load), Path: rel(filepath.Dir(c.Out), path), Text: rel(filepath.Dir(c.Out), strings.TrimSuffix(path, ".jsonl")+".txt"), Start: time.Now()}
	s.Shapes[shape].Load = lr
	fmt.Fprintf(c.Stderr, "# loading the table of shape %d%s: %s\n", shape+1, fixedText(sh.Settings), lr.Command)
	code, msg, err := runOne(ctx, in, c, append(append([]string(nil), sh.Load...), "--out", path), strings.TrimSuffix(path, ".jsonl")+".txt")
	lr.End = time.Now()
	switch {
	case err == nil:
		lr.Status = StatusOK
		return nil
	case ctx.Err() != nil:
		lr.Status, lr.Error = StatusInterrupted, msg
		return nil
	case code == 2:
		lr.Status, lr.Error = StatusFailed, msg
		return badinput.New("sweep: the load of shape %d stopped on bad input (exit 2): %s", shape+1, msg)
	}
	lr.Status, lr.Error = StatusFailed, msg
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("sweep: the load of shape %d failed: %s; see %s", shape+1, msg, lr.Text)
}

// runOne runs a command with its text output to textPath, and returns
// its exit status and the last line it wrote on stderr (its error, for a
// dbprobe command). The status is −1 when it could not be started.
func runOne(ctx context.Context, in *experiment.Interrupts, c *Config, args []string, textPath string) (int, string, error) {
	f, err := os.Create(textPath)
	if err != nil {
		return -1, "", err
	}
	defer f.Close()
	tail := &lastLine{w: c.Stderr}
	err = c.Exec(ctx, in.Abandoned(), args, f, tail)
	if err == nil {
		return 0, "", nil
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Killed (the OOM killer, kill -9, a crash): a failed run,
			// not a reason to stop the sweep.
			return 128 + int(ws.Signal()), "killed by " + ws.Signal().String(), err
		}
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode(), strings.TrimPrefix(tail.last(), "dbprobe: "), err
	}
	return -1, tail.last(), err
}

// between runs --between through sh -c, its output on the sweep's
// stderr, with the next run's position and variant in its environment.
func between(ctx context.Context, c *Config, pos int, v Variant) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Between)
	cmd.Stdout, cmd.Stderr = c.Stderr, c.Stderr
	cmd.Env = append(os.Environ(), fmt.Sprintf("DBPROBE_SWEEP_POSITION=%d", pos), "DBPROBE_SWEEP_VARIANT="+v.Name())
	return cmd.Run()
}

// ChildExec runs each command as a child process of exe.
//
// A child process, rather than the command run inside the sweep's own
// process, because every experiment is written as a command that owns
// its process: it installs its own Ctrl-C handling (the first signal
// drains, the second abandons), sets process-wide state (the monitor's
// view of dbprobe's own CPU, SQLite's in-process database, server
// settings put back at exit) and ends a failure with an exit status. A
// child keeps those whole, so that a run in a sweep is exactly the
// command line it records, a run that crashes or hangs costs that run
// and not the sweep, and each run's figures start from a fresh process,
// as the user's own runs would. The price is a process start per run:
// tens of milliseconds, measured with the rest of the time between runs
// (bench/RESULTS.md). The child gets its own process group, so that a
// Ctrl-C at the terminal reaches the sweep alone, which passes exactly
// one to the child (a second would make it abandon its summary).
func ChildExec(exe string) Exec {
	return func(ctx context.Context, abandon <-chan struct{}, args []string, stdout, stderr io.Writer) error {
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		ownProcessGroup(cmd)
		if err := cmd.Start(); err != nil {
			return err
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				_ = cmd.Process.Signal(os.Interrupt)
			case <-done:
				return
			}
			select {
			case <-abandon:
				_ = cmd.Process.Signal(os.Interrupt)
			case <-done:
			}
		}()
		err := cmd.Wait()
		close(done)
		return err
	}
}

// lastLine passes writes on and keeps the last complete line.
type lastLine struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte
	cur  []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	for _, b := range p {
		if b == '\n' {
			if len(bytes.TrimSpace(l.cur)) > 0 {
				l.line = append(l.line[:0], l.cur...)
			}
			l.cur = l.cur[:0]
			continue
		}
		l.cur = append(l.cur, b)
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lastLine) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(bytes.TrimSpace(l.cur)) > 0 {
		return strings.TrimSpace(string(l.cur))
	}
	return strings.TrimSpace(string(l.line))
}

func printOrder(w io.Writer, c *Config, s *Summary, order []Slot) {
	fmt.Fprintf(w, "# sweep: %d variants × %d runs = %d runs of dbprobe %s, in this order (seed %d):\n", len(c.Variants), c.Reps, len(order), c.Experiment, c.Seed)
	shape := -1
	for i, sl := range order {
		v := c.Variants[sl.Variant]
		if v.Shape != shape {
			shape = v.Shape
			if c.Shapes[shape].Load != nil {
				fmt.Fprintf(w, "#   load of shape %d%s\n", shape+1, fixedText(c.Shapes[shape].Settings))
			}
		}
		fmt.Fprintf(w, "#   %*d. variant %d (%s), run %d of %d\n", len(fmt.Sprint(len(order))), i+1, v.ID, v.Name(), sl.Rep, c.Reps)
	}
}

func progressLine(s *Summary, r *RunRecord, total int) string {
	v := s.Variants[r.Variant-1]
	line := fmt.Sprintf("# run %d of %d (%s): %s", r.Position, total, v.Name, r.Status)
	if r.Status == StatusOK || r.Metrics != nil {
		key, _ := headline(s.Kind)
		rows := rowsFor(s.Kind)
		label := key
		for _, row := range rows {
			if row.Key == key {
				label = row.Label
			}
		}
		line += fmt.Sprintf(", %s %s", metricText(key, r.Metrics[key], hasKey(r.Metrics, key), rateKind(s.Experiment)), label)
	}
	if r.Error != "" {
		line += ": " + r.Error
	}
	return line
}

func hasKey(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func intsText(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}
