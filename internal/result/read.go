package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// File is a JSON result read back: the phases in the order they ran.
type File struct {
	Phases []Phase
	// Truncated says the file ended in the middle of a record: the run was
	// killed while writing it. The records before it are complete and kept.
	Truncated bool
}

// Phase is one phase of a result file: its header, the intervals measured,
// and the summary, which is nil when the run stopped before writing it.
type Phase struct {
	Header    Header
	Intervals []Interval
	// Monitor holds the monitor's samples, one per interval.
	Monitor []MonitorSample
	// Cycles holds a durability check's crash cycles.
	Cycles  []Cycle
	Summary *Summary
}

// ErrUnsupportedSchema is returned (wrapped) by Read for a result written
// with a schema version this dbprobe does not read.
var ErrUnsupportedSchema = errors.New("unsupported result schema version")

// schemaError is a header's schema version that Read does not read. Its
// message names the versions it reads, so that the user knows whether a
// newer dbprobe would.
type schemaError struct{ version int }

func (e schemaError) Error() string {
	vs := make([]string, len(readVersions))
	for i, v := range readVersions {
		vs[i] = strconv.Itoa(v)
	}
	list := strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
	msg := fmt.Sprintf("schema version %d: this dbprobe reads versions %s", e.version, list)
	if e.version > SchemaVersion {
		msg += "; use a newer dbprobe"
	}
	return msg
}

func (e schemaError) Is(target error) bool { return target == ErrUnsupportedSchema }

// Read reads a JSON result written by Writer. It accepts a last line cut
// short (a killed run) and reports it in File.Truncated; any other damage
// (a line that is not a record, a record out of place, an unknown schema
// version) is an error naming the line, and no File. It reads schema
// versions 1 and 2; a version 1 header reads as ExperimentYCSB. Records of
// a type it does not know are skipped, so files from a newer dbprobe that
// only adds records remain readable.
func Read(r io.Reader) (*File, error) {
	br := bufio.NewReader(r)
	f := &File{}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("result: reading line %d: %w", n, err)
		}
		complete := err == nil // the writer ends every record with its newline
		if !complete && !json.Valid(line) && cutShort(line) {
			// A record cut by a kill (or the zeros a crash can leave at the
			// end of a file): keep what came before.
			f.Truncated = true
			return f, nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if err := f.add(line); err != nil {
				return nil, fmt.Errorf("result: line %d: %w", n, err)
			}
		}
		if !complete {
			return f, nil
		}
	}
}

// add decodes one line and adds it to the file.
func (f *File) add(line []byte) error {
	var probe struct {
		Type          string `json:"type"`
		SchemaVersion *int   `json:"schema_version"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return fmt.Errorf("not a JSON record: %w", err)
	}
	var cur *Phase
	if len(f.Phases) > 0 {
		cur = &f.Phases[len(f.Phases)-1]
	}
	switch probe.Type {
	case typeHeader:
		if probe.SchemaVersion == nil {
			return errors.New("header without schema_version")
		}
		v := *probe.SchemaVersion
		if !slices.Contains(readVersions, v) {
			return schemaError{v}
		}
		var rec headerRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("bad header record: %w", err)
		}
		switch {
		case v == 1:
			// Version 1 had one experiment, YCSB, and no "experiment".
			rec.Experiment = ExperimentYCSB
		case rec.Experiment == "":
			return fmt.Errorf(`header of schema version %d without "experiment"`, v)
		}
		f.Phases = append(f.Phases, Phase{Header: Header{
			Experiment:  rec.Experiment,
			Phase:       rec.Phase,
			Command:     rec.Command,
			RunID:       rec.RunID,
			StartedAt:   rec.StartedAt,
			Target:      rec.Target,
			Settings:    rec.Settings,
			Notes:       rec.Notes,
			Environment: rec.Environment,
			Database:    rec.Database,
			Client:      rec.Client,
		}})
	case typeInterval:
		if cur == nil {
			return errors.New("record out of place: interval before any header")
		}
		if cur.Summary != nil {
			return fmt.Errorf("record out of place: interval after the summary of phase %q", cur.Header.Phase)
		}
		var rec intervalRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("bad interval record: %w", err)
		}
		cur.Intervals = append(cur.Intervals, Interval{
			Phase:     rec.Phase,
			Start:     rec.Start,
			End:       rec.End,
			Elapsed:   time.Duration(rec.ElapsedMS),
			Ops:       rec.Ops,
			OpsPerSec: float64(rec.OpsPerSec),
			Warmup:    rec.Warmup,
			Series:    rec.Series,
		})
	case typeMonitor:
		if cur == nil {
			return errors.New("record out of place: monitor sample before any header")
		}
		if cur.Summary != nil {
			return fmt.Errorf("record out of place: monitor sample after the summary of phase %q", cur.Header.Phase)
		}
		var rec monitorRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("bad monitor record: %w", err)
		}
		cur.Monitor = append(cur.Monitor, MonitorSample{Phase: rec.Phase, Start: rec.Start, End: rec.End, Metrics: rec.Metrics})
	case typeCycle:
		if cur == nil {
			return errors.New("record out of place: cycle before any header")
		}
		if cur.Summary != nil {
			return fmt.Errorf("record out of place: cycle after the summary of phase %q", cur.Header.Phase)
		}
		var rec cycleRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("bad cycle record: %w", err)
		}
		cur.Cycles = append(cur.Cycles, Cycle{
			Phase:                 rec.Phase,
			Number:                rec.Cycle,
			Start:                 rec.Start,
			End:                   rec.End,
			CrashAfter:            time.Duration(rec.CrashAfterMS),
			Acknowledged:          rec.Acknowledged,
			Lost:                  rec.Lost,
			Pattern:               rec.Pattern,
			LostWindow:            time.Duration(rec.LostWindowMS),
			FirstLostPosition:     rec.FirstLostPosition,
			UnacknowledgedPresent: rec.UnacknowledgedPresent,
			EarlierLost:           rec.EarlierLost,
			Recovery:              time.Duration(rec.RecoveryMS),
		})
	case typeSummary:
		if cur == nil {
			return errors.New("record out of place: summary before any header")
		}
		if cur.Summary != nil {
			return fmt.Errorf("record out of place: second summary for phase %q", cur.Header.Phase)
		}
		switch cur.Header.Experiment {
		case ExperimentYCSB, ExperimentStress, ExperimentStorage:
		case ExperimentDurability:
			var rec durabilitySummaryRecord
			if err := json.Unmarshal(line, &rec); err != nil {
				return fmt.Errorf("bad summary record: %w", err)
			}
			cur.Summary = &Summary{
				Phase:       rec.Phase,
				RunTime:     time.Duration(rec.RunTimeMS),
				Interrupted: rec.Interrupted,
				Recovered:   rec.Recovered,
				Notes:       rec.Notes,
				Durability: &DurabilitySummary{
					Cycles:          rec.Cycles,
					Acknowledged:    rec.Acknowledged,
					Lost:            rec.Lost,
					TailCycles:      rec.TailCycles,
					ScatteredCycles: rec.ScatteredCycles,
					Passed:          rec.Passed,
					Verdict:         rec.Verdict,
					Caveat:          rec.Caveat,
				},
			}
			return nil
		default:
			// A kind from a newer dbprobe: its summary's fields are its
			// own, and only that the phase ended is known here.
			var rec struct {
				Phase string `json:"phase"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				return fmt.Errorf("bad summary record: %w", err)
			}
			cur.Summary = &Summary{Phase: rec.Phase}
			return nil
		}
		var rec summaryRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("bad summary record: %w", err)
		}
		cur.Summary = &Summary{
			Phase:        rec.Phase,
			RunTime:      time.Duration(rec.RunTimeMS),
			Ops:          rec.Ops,
			Throughput:   float64(rec.Throughput),
			Series:       rec.Series,
			Errors:       rec.Errors,
			Interrupted:  rec.Interrupted,
			Recovered:    rec.Recovered,
			Warmup:       time.Duration(rec.WarmupMS),
			RetryLimit:   rec.RetryLimit,
			Notes:        rec.Notes,
			Diagnosis:    rec.Diagnosis,
			Availability: rec.Availability,
			Ending:       rec.Ending,
			Stopped:      rec.Stopped,
			Stress:       rec.Stress,
			Storage:      rec.Storage,
			Merge:        rec.Merge,
			Replica:      rec.Replica,
			Shards:       rec.Shards,
		}
	case "":
		return errors.New(`record without a "type"`)
	default:
		// A record type added by a newer writer: not ours to judge.
	}
	return nil
}

// cutShort reports whether a last line that is not JSON is what a kill or
// a crash leaves: the start of a record, or the zeros a file system can
// leave where the last write was going. Anything else is damage, which
// Read reports rather than passes over.
func cutShort(line []byte) bool {
	return len(line) > 0 && (line[0] == '{' || line[0] == 0)
}
