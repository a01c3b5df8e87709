package durability

import (
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Phase is the phase name of a check in the JSON result.
const Phase = "check"

// Output is where a check writes its JSON result, as it goes: the header
// once the database is up, a cycle record as each cycle is checked, the
// summary at the end. A check killed on the way keeps the cycles it
// checked, and dbprobe recover totals them.
type Output struct {
	// W receives the records; nil writes none.
	W *result.Writer
	// Header is the caller's part of the header record: the command line
	// (secrets redacted), the settings and where they came from, the
	// environment. Run adds the experiment, the phase, the start and the
	// database it started.
	Header result.Header
}

// header writes the header record: the caller's part, and the database
// as its driver found it.
func (o Output) header(start time.Time, info driver.Info) error {
	if o.W == nil {
		return nil
	}
	h := o.Header
	h.Experiment = result.ExperimentDurability
	h.Phase = Phase
	h.StartedAt = start
	h.Database = result.Database{Driver: info.Driver, Library: info.Library, ServerVersion: info.ServerVersion, Placement: info.Placement.String()}
	for _, s := range info.Settings {
		h.Database.Settings = append(h.Database.Settings, result.Setting{Key: s.Name, Value: s.Value})
	}
	return wrap(o.W.Header(h))
}

// wrap says which output failed: the check stops on it, since the user
// asked for the file.
func wrap(err error) error {
	if err != nil {
		return fmt.Errorf("writing the JSON result: %w", err)
	}
	return nil
}

// cycle writes a cycle record.
func (o Output) cycle(c result.Cycle) error {
	if o.W == nil {
		return nil
	}
	return wrap(o.W.Cycle(c))
}

// summary writes the summary record: the totals and the verdict.
func (o Output) summary(r *Report, runTime time.Duration) error {
	if o.W == nil {
		return nil
	}
	return wrap(o.W.Summary(r.summary(runTime)))
}

// summary is the report's summary record.
func (r *Report) summary(runTime time.Duration) result.Summary {
	passed, verdict := r.Verdict()
	return result.Summary{
		Phase: Phase, RunTime: runTime, Interrupted: r.Interrupted,
		Durability: &result.DurabilitySummary{
			Cycles: len(r.Results), Acknowledged: r.Acknowledged, Lost: r.Lost,
			TailCycles: r.TailCycles, ScatteredCycles: r.ScatteredCycles,
			Passed: passed, Verdict: verdict, Caveat: r.Caveat,
		},
	}
}
