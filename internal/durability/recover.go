package durability

import (
	"fmt"
	"io"
	"strconv"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// FromResult rebuilds the report of a check from its phase of a JSON
// result: its header, its cycle records and its summary. It fails when
// the header does not say which database and durability ran (a file
// edited by hand, or written by another tool): without them the check
// cannot be judged nor its report printed as the check printed it.
func FromResult(h result.Header, cycles []result.Cycle, s result.Summary) (*Report, error) {
	set := map[string]string{}
	for _, st := range h.Settings {
		set[st.Key] = st.Value
	}
	r := &Report{
		Database:    set["database"],
		Server:      h.Database.ServerVersion,
		CrashAfter:  set["crash-after"],
		Results:     cycles,
		Interrupted: s.Interrupted,
	}
	if r.Server == "" || h.Database.Placement != driver.PlacementServer.String() {
		// As the check names an SQLite file: by its library, which
		// carries SQLite's version.
		r.Server = h.Database.Library
	}
	r.Cycles, _ = strconv.Atoi(set["cycles"])
	r.Writers, _ = strconv.Atoi(set["writers"])
	r.Seed, _ = strconv.ParseUint(set["seed"], 10, 64)
	if d := s.Durability; d != nil {
		r.Acknowledged, r.Lost, r.TailCycles, r.ScatteredCycles = d.Acknowledged, d.Lost, d.TailCycles, d.ScatteredCycles
	}
	db, err := ParseDatabase(set["database"])
	if err != nil {
		return nil, fmt.Errorf("the header's database setting: %w", err)
	}
	dur, err := driver.ParseDurability(set["durability"])
	if err != nil {
		return nil, fmt.Errorf("the header's durability setting: %w", err)
	}
	r.Database, r.Durability = db.String(), dur
	var settings []driver.Setting
	for _, st := range h.Database.Settings {
		settings = append(settings, driver.Setting{Name: st.Key, Value: st.Value})
	}
	r.Settings = durabilitySettings(db, settings)
	r.Caveat = Caveat(db, dur)
	return r, nil
}

// Finish completes the summary of a check that dbprobe recover rebuilt
// from its cycles with what only the check judges: whether it passed,
// the verdict and the caveat. It is a result.Finish; a summary of
// another experiment is left alone.
func Finish(p result.Phase, s *result.Summary) {
	if s.Durability == nil {
		return
	}
	r, err := FromResult(p.Header, p.Cycles, *s)
	if err != nil {
		s.Durability.Passed = false
		s.Durability.Verdict = "not judged: " + err.Error()
		return
	}
	s.Durability.Passed, s.Durability.Verdict = r.Verdict()
	s.Durability.Caveat = r.Caveat
}

// WriteText writes a check's report as the check prints it: the header
// line and settings, a line per cycle, the total and the caveat; then
// notes, one "note:" line each.
func WriteText(w io.Writer, r *Report, notes []string) error {
	writeHeader(w, r)
	for _, c := range r.Results {
		writeCycle(w, c)
	}
	writeTotal(w, r)
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}
