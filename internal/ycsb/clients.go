package ycsb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/fleet"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// Clients is a command's place among the clients of a run of several
// (--client-index, --client-count, --start-at, --monitor-client).
type Clients struct {
	// Slice is the client's index and the run's count; the zero value is
	// a lone client.
	Slice fleet.Slice
	// StartAt is when the first phase's measurement starts; zero starts
	// it as soon as the client is ready.
	StartAt time.Time
	// MonitorClient is the client that monitors the database; -1 none.
	MonitorClient int
}

// slice is the client's slice, a lone client's when none was given.
func (j *job) slice() fleet.Slice {
	if j.c.Clients.Slice.Count == 0 {
		return fleet.One
	}
	return j.c.Clients.Slice
}

// resolveClients checks the client flags and works out each phase's
// slice before anything is connected, so that a bad one changes nothing.
func (j *job) resolveClients() error {
	s := j.slice()
	if err := s.Validate(); err != nil {
		return err
	}
	j.specs = map[runner.Phase]workload.Spec{}
	for _, ph := range j.c.Phases {
		var err error
		if ph == runner.Load {
			j.specs[ph], err = s.Load(j.cfg.Workload)
		} else {
			j.specs[ph], err = s.Run(j.cfg.Workload)
		}
		if err != nil {
			return err
		}
	}
	if !s.Several() {
		return nil // a lone client may still start at a set time
	}
	if m := j.c.Clients.MonitorClient; m < -1 || m >= s.Count {
		return badinput.New("--monitor-client %d is out of range for --client-count %d: give 0 to %d, or -1 for no monitor", m, s.Count, s.Count-1)
	}
	if j.loads && j.c.DropExisting {
		return badinput.New("--drop-existing with --client-count %d: the clients would drop the table under one another's load; drop it once beforehand (one dbprobe load --drop-existing, or load into a new table with -p table=NAME)", s.Count)
	}
	if s.Index != j.c.Clients.MonitorClient {
		j.c.Monitor.Off = true
	}
	j.seed = s.Seed(j.seed)
	return nil
}

// phaseSpec is the workload of a phase as this client runs it.
func (j *job) phaseSpec(ph runner.Phase) *workload.Spec {
	s := j.specs[ph]
	return &s
}

// phaseTarget is this client's share of the target rate.
func (j *job) phaseTarget() float64 { return j.slice().Target(j.cfg.Target) }

// clientMonitors is how many connections the run's monitor opens: one,
// on the client that monitors, when the database can be monitored.
func (j *job) clientMonitors() int {
	if j.c.Clients.MonitorClient < 0 {
		return 0
	}
	on := j.c.Monitor
	on.Off = false
	return experiment.MonitorConnections(on, j.db)
}

// checkClients checks, before a phase, that the server takes every
// client's connections, and measures the client's clock against the
// server's. It returns the header's client record and its notes.
func (j *job) checkClients(ctx context.Context, ph runner.Phase) (*result.Client, []string, error) {
	s := j.slice()
	if !s.Several() {
		return nil, nil, nil
	}
	var notes []string
	warn, err := fleet.Capacity(ctx, j.db, experiment.Where(j.db, j.target.Target), s, j.cfg.Threads, j.clientMonitors())
	if err != nil {
		return nil, nil, err
	}
	if warn != "" {
		fmt.Fprintf(j.c.Stderr, "dbprobe: warning: %s\n", warn)
		notes = append(notes, "warning: "+warn)
	}
	spec := j.phaseSpec(ph)
	c := &result.Client{
		Index: s.Index, Count: s.Count,
		Slice:    s.Describe(ph == runner.Load, *spec, j.phaseTarget()),
		Target:   j.phaseTarget(),
		StartAt:  j.c.Clients.StartAt,
		Monitors: !j.c.Monitor.Off,
	}
	if ph == runner.Load {
		c.InsertStart, c.InsertCount = spec.InsertStart, spec.InsertCount
	} else {
		c.Operations, c.InsertStride, c.InsertOffset = spec.OperationCount, spec.InsertStride, spec.InsertOffset
	}
	notes = append(notes, c.Slice)
	if ph == runner.Run && j.loads {
		c.StartAt = time.Time{}
		notes = append(notes, "this client's run started when its own load ended, not with the other clients': run dbprobe load and dbprobe run as two commands, each with its --start-at, so that the clients' runs are measured together")
	}
	off, ok, err := fleet.MeasureOffset(ctx, j.db)
	switch {
	case err != nil:
		notes = append(notes, "the database server's clock could not be read: "+experiment.ShortError(experiment.Scrubbed(j.target.Target, err)))
	case ok:
		c.Clock = &result.ClockOffset{OffsetMicros: off.Offset.Microseconds(), RTTMicros: off.RTT.Microseconds(), Query: off.Query, At: off.At.Round(0)}
		notes = append(notes, fmt.Sprintf("clock: the database server's is %s this client's (%s, round trip %s)",
			offsetWords(off.Offset), off.Query, off.RTT.Round(time.Microsecond)))
	}
	return c, notes, nil
}

func offsetWords(d time.Duration) string {
	d = d.Round(time.Microsecond)
	switch {
	case d > 0:
		return d.String() + " ahead of"
	case d < 0:
		return (-d).String() + " behind"
	}
	return "the same as"
}

// tablePoll is how often a client waits for the table client 0 creates.
const tablePoll = 200 * time.Millisecond

// awaitTable waits, in a load by a client other than the first, until
// the first client has created the table (two clients creating it at
// once would fail one of them). It gives up after timeout.
func (j *job) awaitTable(ctx context.Context, timeout time.Duration) (driver.TableState, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := j.db.Inspect(ctx, j.table)
		if err != nil {
			return st, experiment.Scrubbed(j.target.Target, fmt.Errorf("inspecting table %s: %w", j.table.Name, err))
		}
		if st.Exists && st.CreatedByDbprobe {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, badinput.New("table %s was not created by client 0 within %s: start client 0 too (it creates the table), or create the table with a load of client 0 first", j.table.Name, timeout)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(tablePoll):
		}
	}
}

// clientMonitorNotes says why a client of several does not monitor: the
// monitor's own note would name --no-monitor, which nobody gave.
func (j *job) clientMonitorNotes(notes []string) []string {
	s := j.slice()
	if !s.Several() || s.Index == j.c.Clients.MonitorClient {
		return notes
	}
	why := fmt.Sprintf("monitor: off in this client: client %d samples the database for the run (--monitor-client)", j.c.Clients.MonitorClient)
	if j.c.Clients.MonitorClient < 0 {
		why = "monitor: off in every client (--monitor-client -1)"
	}
	out := []string{why}
	for _, n := range notes {
		if !strings.HasPrefix(n, "monitor: off") {
			out = append(out, n)
		}
	}
	return out
}
