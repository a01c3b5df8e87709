package compare

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/report/stats"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Alpha is the level at which a difference is shown: an adjusted p-value
// below it is a difference. Power is the probability with which the
// "would detect" sentences' shifts are found.
const (
	Alpha = 0.05
	Power = 0.8
	// Level is the confidence asked of the shift's interval.
	Level = 0.95
)

// File is one run's result: a result file read back, and the path that
// names it in messages ("a1.jsonl"; a caller without a file gives a
// label).
type File struct {
	Path   string
	Result *result.File
}

// Side is one side of a comparison: a name ("A") and its runs, a result
// file each.
type Side struct {
	Name  string
	Files []File
}

// Options says what to compare and how to judge it.
type Options struct {
	// Force compares results of different experiments or workloads.
	Force bool
	// MinEffect is the smallest relative change that counts as a
	// difference (0.02 for 2%): a shift shown but smaller is reported as
	// no difference that matters.
	MinEffect float64
	// Phase is the phase compared ("run"); empty for the last phase of
	// A's first file.
	Phase string
	// Metrics restricts the metrics compared, by name ("throughput",
	// "p99.read"); empty for all. Fewer metrics lose less to the Holm
	// correction.
	Metrics []string
	// FailIf are the conditions that fail a CI pipeline (--fail-if).
	FailIf []Condition
}

// Comparison is the outcome of Run.
type Comparison struct {
	Experiment string `json:"experiment"`
	Phase      string `json:"phase"`
	// A and B say what each side is.
	A SideInfo `json:"a"`
	B SideInfo `json:"b"`
	// Differences are the settings that differ between the sides.
	Differences []Difference `json:"settings_that_differ"`
	// Metrics are in the order they are printed: throughput, rates,
	// latencies by operation, server costs.
	Metrics []*Metric `json:"metrics"`
	// MinEffect is Options.MinEffect.
	MinEffect float64 `json:"min_effect"`
	// Notes say what was done with the files: cut short, a summary
	// rebuilt, a metric missing from some runs, a difference forced.
	Notes []string `json:"notes,omitempty"`
	// Checks are the --fail-if conditions as judged.
	Checks []Check `json:"fail_if,omitempty"`
	// CutShort lists the files that were cut short or whose phase had no
	// summary: compared as far as they are complete.
	CutShort []string `json:"cut_short,omitempty"`

	// runsA and runsB are how many runs each side compared.
	runsA, runsB int
}

// SideInfo is a side as the comparison saw it.
type SideInfo struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// Tripped reports whether a --fail-if condition tripped.
func (c *Comparison) Tripped() bool {
	for _, ch := range c.Checks {
		if ch.Tripped {
			return true
		}
	}
	return false
}

// Load reads result files as one side's runs. A file that cannot be read
// or is not a result is bad input naming it; a file cut short is kept
// (Run says so).
func Load(name string, paths []string) (Side, error) {
	s := Side{Name: name}
	for _, p := range paths {
		f, err := readSummaries(p)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return Side{}, badinput.New("cannot read %s: %v", p, pe.Err)
			}
			return Side{}, badinput.New("%s is not a dbprobe result (the JSON --out of a run): %v", p, err)
		}
		s.Files = append(s.Files, File{Path: p, Result: f})
	}
	return s, nil
}

// Run compares side B against side A. Results of different experiments
// or workloads are refused with bad input (one line naming the setting),
// unless opts.Force; so is a side without runs, a phase missing from a
// file, and a --fail-if or --metrics naming a metric neither side has.
func Run(a, b Side, opts Options) (*Comparison, error) {
	c, n, err := prepare(a, b, opts)
	if err != nil {
		return nil, err
	}
	judge(c.Metrics, opts.MinEffect, n)
	finish(c, opts, n, 1)
	return c, nil
}

// RunAgainst compares each of others against base as Run does, with the
// Holm correction over every metric of every comparison: k variants held
// against one baseline are k tests of each metric, and correcting within
// each comparison alone would find a "difference" by chance in one of
// them far more often than 5% of the time. The verdicts say how many
// tests the correction is over.
func RunAgainst(base Side, others []Side, opts Options) ([]*Comparison, error) {
	var cs []*Comparison
	var all []*Metric
	var names []sides
	for _, o := range others {
		c, n, err := prepare(base, o, opts)
		if err != nil {
			return nil, fmt.Errorf("%s against %s: %w", o.Name, base.Name, err)
		}
		cs = append(cs, c)
		n.family = len(others) > 1
		for _, m := range c.Metrics {
			all = append(all, m)
			names = append(names, n)
		}
	}
	judgeFamily(all, opts.MinEffect, names)
	for _, c := range cs {
		finish(c, opts, sides{a: c.A.Name, b: c.B.Name}, len(cs))
	}
	return cs, nil
}

// prepare does all of Run but the judging: the sides checked, the
// settings that differ, each metric's statistics before the correction.
func prepare(a, b Side, opts Options) (*Comparison, sides, error) {
	if a.Name == "" {
		a.Name = "A"
	}
	if b.Name == "" {
		b.Name = "B"
	}
	n := sides{a: a.Name, b: b.Name}
	for _, s := range []Side{a, b} {
		if len(s.Files) == 0 {
			return nil, n, badinput.New("side %s has no result files; give dbprobe compare A1 A2 … -- B1 B2 …", s.Name)
		}
	}
	c := &Comparison{MinEffect: opts.MinEffect, A: info(a), B: info(b)}
	phase := opts.Phase
	if phase == "" {
		ps := a.Files[0].Result.Phases
		if len(ps) == 0 {
			return nil, n, badinput.New("%s holds no phase: the run wrote nothing but its start", a.Files[0].Path)
		}
		phase = ps[len(ps)-1].Header.Phase
	}
	c.Phase = phase
	if err := sameExperiment(a, b, opts.Force, &c.Notes); err != nil {
		return nil, n, err
	}
	runsA, err := phases(a, phase, opts.Force, c)
	if err != nil {
		return nil, n, err
	}
	runsB, err := phases(b, phase, opts.Force, c)
	if err != nil {
		return nil, n, err
	}
	c.Experiment = runsA[0].phase.Header.Experiment
	if err := sameWork(append(append([]run{}, runsA...), runsB...), opts.Force, &c.Notes); err != nil {
		return nil, n, err
	}
	c.Differences = differences(runsA, runsB, &c.Notes)

	valsA, valsB := extract(runsA), extract(runsB)
	names := metricNames(valsA, valsB)
	wanted, err := selectMetrics(names, opts)
	if err != nil {
		return nil, n, err
	}
	for _, name := range wanted {
		m := newMetric(name, valsA, valsB, runsA, runsB, &c.Notes)
		c.Metrics = append(c.Metrics, m)
	}
	c.runsA, c.runsB = len(runsA), len(runsB)
	return c, n, nil
}

// finish adds the note that the correction leaves no metric a chance,
// and the --fail-if checks; comparisons is how many comparisons the
// correction is over with each of them.
func finish(c *Comparison, opts Options, n sides, comparisons int) {
	// blind says why no condition can trip however large the change: ""
	// when one can.
	var blind string
	if tests := len(c.Metrics) * comparisons; tests > 1 {
		if best := stats.MinP(c.runsA, c.runsB) * float64(tests); best >= Alpha && stats.MinP(c.runsA, c.runsB) < Alpha {
			blind = fmt.Sprintf("with %s, the Holm correction over %d metrics leaves no p-value below %s", n.runs(c.runsA, c.runsB), tests, pText(math.Min(1, best)))
			what := fmt.Sprintf("%d metrics", tests)
			if comparisons > 1 {
				what = fmt.Sprintf("%d metrics over %d comparisons", len(c.Metrics), comparisons)
			}
			c.Notes = append(c.Notes, fmt.Sprintf("with %s and these runs, the smallest p-value the Holm correction leaves is %s: no metric can show a difference; add runs, or compare fewer metrics (--metrics throughput)", what, pText(math.Min(1, best))))
		}
	}
	for _, cond := range opts.FailIf {
		c.Checks = append(c.Checks, cond.check(c.Metrics, n, blind))
	}
}

// sameExperiment refuses files of different experiments, before a
// phase missing from one of them is complained of: a storage scan's file
// has no "run" phase because it is another experiment, and that is what
// the user needs to hear. A file's experiment is its last phase's.
func sameExperiment(a, b Side, force bool, notes *[]string) error {
	var firstPath, first string
	for _, s := range []Side{a, b} {
		for _, f := range s.Files {
			ps := f.Result.Phases
			if len(ps) == 0 {
				continue
			}
			e := ps[len(ps)-1].Header.Experiment
			if first == "" {
				firstPath, first = f.Path, e
				continue
			}
			if e != first {
				msg := fmt.Sprintf("%s is a %s result and %s a %s result", firstPath, first, f.Path, e)
				if !force {
					return badinput.New("%s: compare refuses different experiments (--force compares them anyway)", msg)
				}
				*notes = append(*notes, "forced: "+msg)
				return nil
			}
		}
	}
	return nil
}

func info(s Side) SideInfo {
	si := SideInfo{Name: s.Name}
	for _, r := range s.Files {
		si.Files = append(si.Files, r.Path)
	}
	return si
}

// run is one run's phase with its summary, rebuilt when the run was
// killed before writing it.
type run struct {
	path  string
	side  string
	phase result.Phase
}

// phases picks the named phase of every run of a side. The last phase of
// that name counts (a file holds one run, and a phase name once); a
// phase without summary is rebuilt as dbprobe recover would, and said so.
func phases(s Side, name string, force bool, c *Comparison) ([]run, error) {
	notes := &c.Notes
	var out []run
	for _, r := range s.Files {
		var p *result.Phase
		var have []string
		for i := range r.Result.Phases {
			ph := &r.Result.Phases[i]
			have = append(have, ph.Header.Phase)
			if ph.Header.Phase == name {
				p = ph
			}
		}
		if r.Result.Truncated {
			c.CutShort = append(c.CutShort, r.Path)
			*notes = append(*notes, fmt.Sprintf("%s was cut short (its run was killed while writing it): its complete records are used", r.Path))
		}
		if p == nil && len(have) > 0 {
			last := &r.Result.Phases[len(have)-1]
			switch {
			case force:
				*notes = append(*notes, fmt.Sprintf("forced: %s has no phase %q: its last phase, %s, is compared instead", r.Path, name, last.Header.Phase))
				p = last
			case last.Header.Experiment == result.ExperimentStorage:
				// A storage experiment's phase is its kind: another
				// phase name is another experiment (scan against read).
				return nil, badinput.New("the workload differs: %s ran storage %s and another file storage %s; compare refuses different workloads (--force compares them anyway)", r.Path, last.Header.Phase, name)
			}
		}
		if p == nil {
			what := "no phase"
			if len(have) > 0 {
				what = "phases " + strings.Join(have, ", ")
			}
			return nil, badinput.New("%s has no phase %q (it has %s); compare the same phase on both sides, or name it with --phase", r.Path, name, what)
		}
		ph := *p
		if ph.Summary == nil {
			s, err := result.RecoverSummary(ph)
			if err != nil {
				return nil, badinput.New("%s: phase %s has no summary and it cannot be rebuilt: %v", r.Path, name, err)
			}
			ph.Summary = &s
			if !r.Result.Truncated {
				c.CutShort = append(c.CutShort, r.Path)
			}
			*notes = append(*notes, fmt.Sprintf("%s: phase %s has no summary (the run was killed): rebuilt from its %d complete intervals, as dbprobe recover does", r.Path, name, len(ph.Intervals)))
		}
		out = append(out, run{path: r.Path, side: s.Name, phase: ph})
	}
	return out, nil
}

// shortPath is a path as the text shows it: its base name when the
// base names of a list are distinct, which they usually are.
func shortPaths(paths []string) []string {
	seen := map[string]bool{}
	out := make([]string, len(paths))
	for i, p := range paths {
		b := filepath.Base(p)
		if seen[b] {
			return paths
		}
		seen[b] = true
		out[i] = b
	}
	return out
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
