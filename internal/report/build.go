package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
)

// Input is one result file to report on.
type Input struct {
	// Name is the file as the user gave it; it names the result when
	// nothing in the settings tells several apart.
	Name string
	File *result.File
}

// run is one phase of one input, with what the report needs to draw it.
type run struct {
	in    int // index of its input
	phase result.Phase
	// summary is the phase's summary, or the one rebuilt from its
	// intervals when the run wrote none (recovered true).
	summary   *result.Summary
	recovered bool
	// start is when the phase's clock started: the zero of every x axis.
	start time.Time
	// label names the run among several: what differs, or the file.
	label string
}

// Build makes the report of one or more results: with several, first
// the overlays (one chart, one line per result, labelled by the settings
// that differ), then a section per phase of each result in the order
// given, drawn as its experiment calls for (a YCSB or stress run's
// throughput, latencies and waits; a storage run's rate; a durability
// check's cycles). A phase cut short is drawn from what it holds and the
// report's notices say so. Build takes only what the files hold: a
// figure a result does not keep is left out, never guessed.
func Build(inputs []Input) *Report {
	r := &Report{Title: title(inputs)}
	var runs []*run
	for i, in := range inputs {
		if in.File.Truncated {
			r.Notices = append(r.Notices, fmt.Sprintf("%s was cut short: its last line was cut (the run was killed or is still going); this report shows the records before it.", in.Name))
		}
		for _, p := range in.File.Phases {
			ru := &run{in: i, phase: p, summary: p.Summary, start: phaseStart(p)}
			if p.Summary == nil {
				ru.recovered = true
				if len(p.Intervals) > 0 && p.Header.Experiment != result.ExperimentDurability {
					if s, err := result.RecoverSummary(p); err == nil {
						ru.summary = &s
					}
				}
				what := "its figures are added up from the intervals it wrote"
				if ru.summary == nil {
					what = "it has no summary to show"
				}
				r.Notices = append(r.Notices, fmt.Sprintf("%s: phase %s has no summary (the run stopped before writing it): %s; dbprobe recover %s completes the file.", in.Name, p.Header.Phase, what, in.Name))
			}
			runs = append(runs, ru)
		}
	}
	labelRuns(inputs, runs)
	if len(inputs) > 1 {
		for _, s := range overlaySections(runs) {
			r.Add(s)
		}
	}
	for _, ru := range runs {
		r.Add(runSection(inputs[ru.in], ru, len(inputs) > 1))
	}
	return r
}

// title names the report after what it shows.
func title(inputs []Input) string {
	if len(inputs) == 1 {
		return "dbprobe report: " + filepath.Base(inputs[0].Name)
	}
	return "dbprobe report: " + strconv.Itoa(len(inputs)) + " results"
}

// phaseStart is when a phase's clock started: an interval's end minus
// its elapsed time, or the header's start when it has none.
func phaseStart(p result.Phase) time.Time {
	if len(p.Intervals) > 0 {
		iv := p.Intervals[0]
		return iv.End.Add(-iv.Elapsed)
	}
	return p.Header.StartedAt
}

// runSection is the section of one phase.
func runSection(in Input, ru *run, several bool) Section {
	h := ru.phase.Header
	kind := h.Experiment + " " + h.Phase
	if h.Phase == h.Experiment {
		kind = h.Experiment
	}
	if st := storageOf(ru); st != nil {
		kind = "storage " + st.Experiment
	}
	titleText := "Phase " + h.Phase + " of " + filepath.Base(in.Name)
	if several && ru.label != "" && ru.label != filepath.Base(in.Name) {
		titleText += " (" + ru.label + ")"
	}
	s := Section{Title: titleText, Kind: kind}
	s.Blocks = append(s.Blocks, Paragraph{Text: runSentence(ru)})
	if ru.summary != nil {
		s.Blocks = append(s.Blocks, outcomeBlocks(ru)...)
	}
	var body []Block
	switch {
	case h.Experiment == result.ExperimentDurability:
		body = append(body, durabilityBlocks(ru)...)
	case storageOf(ru) != nil:
		body = append(body, storageBlocks(ru)...)
		body = append(body, latencyBlocks(ru, false)...)
	default:
		body = append(body, latencyBlocks(ru, true)...)
	}
	if ru.summary != nil && ru.summary.Stress != nil {
		body = append(body, stressBlocks(ru.summary.Stress)...)
	}
	body = append(body, monitorBlocks(ru)...)
	body = append(body, settingsBlocks(ru)...)
	if several {
		// Beside the overlays, each run's own figures are folded away:
		// the page opens on what the runs have in common, and a long run's
		// charts are drawn only when its section is opened.
		return withBlocks(s, Group{Title: "This run's figures, charts and settings", Blocks: body, Collapsed: true})
	}
	return withBlocks(s, body...)
}

func withBlocks(s Section, bs ...Block) Section {
	s.Blocks = append(s.Blocks, bs...)
	return s
}

// runSentence says in one sentence what ran and what it gave.
func runSentence(ru *run) string {
	h := ru.phase.Header
	var b strings.Builder
	b.WriteString("The " + h.Phase + " phase")
	if !h.StartedAt.IsZero() {
		b.WriteString(", started " + h.StartedAt.Format("2006-01-02 15:04:05 -07:00"))
	}
	if d := h.Database; d.Driver != "" {
		b.WriteString(", on " + d.Driver)
		if d.ServerVersion != "" {
			b.WriteString(" " + d.ServerVersion)
		}
	}
	s := ru.summary
	switch {
	case s == nil:
		b.WriteString(": no summary and no interval to rebuild one from.")
	case s.Durability != nil:
		fmt.Fprintf(&b, ": %d crash cycles, %d acknowledged writes, %d lost, in %s s.", s.Durability.Cycles, s.Durability.Acknowledged, s.Durability.Lost, strconv.FormatFloat(s.RunTime.Seconds(), 'f', 1, 64))
	case s.Storage != nil && s.Storage.Cache != nil:
		fmt.Fprintf(&b, ": %d working-set sizes read in %s s.", len(s.Storage.Cache.Points), strconv.FormatFloat(s.Storage.Seconds, 'f', 1, 64))
	case s.Storage != nil:
		st := s.Storage
		fmt.Fprintf(&b, ": %s over %s s (%s", result.RateText(rateKind(st.Experiment), st.Rate), strconv.FormatFloat(st.Seconds, 'f', 1, 64), result.BytesText(st.Bytes))
		if st.Headline != "" {
			b.WriteString("; the rate is that of " + st.Headline)
		}
		b.WriteString(").")
	case h.Experiment == result.ExperimentStress:
		// Its runner counts iterations; [OVERALL]'s throughput is theirs.
		fmt.Fprintf(&b, ": %s iterations in %d ms, %s a second.", result.Grouped(s.Ops), s.RunTime.Milliseconds(), result.Double(s.Throughput))
	default:
		fmt.Fprintf(&b, ": %s operations in %d ms, %s ops/s.", result.Grouped(s.Ops), s.RunTime.Milliseconds(), result.Double(s.Throughput))
	}
	if ru.recovered && s != nil {
		b.WriteString(" The run wrote no summary: these figures are added up from its intervals.")
	}
	return b.String()
}

// rateKind is the RateText kind of a storage experiment: logcopy's rate
// is a log rate.
func rateKind(experiment string) string {
	if experiment == "logcopy" {
		return "log"
	}
	return experiment
}

func storageOf(ru *run) *result.StorageSummary {
	if ru.summary == nil {
		return nil
	}
	return ru.summary.Storage
}

// outcomeBlocks are the verdicts and notes of a phase's summary.
func outcomeBlocks(ru *run) []Block {
	s := ru.summary
	var out []Block
	if s.Diagnosis != nil && s.Diagnosis.Verdict != "" {
		out = append(out, Verdict{Label: "Bottleneck", Text: s.Diagnosis.Verdict})
	}
	if s.Storage != nil && s.Storage.Verdict != "" {
		out = append(out, Verdict{Label: "Verdict", Text: s.Storage.Verdict})
	}
	if s.Durability != nil {
		out = append(out, Verdict{Label: "Verdict", Text: s.Durability.Verdict, Bad: !s.Durability.Passed})
	}
	if s.Stopped != nil && s.Stopped.Text != "" {
		out = append(out, Verdict{Label: "Stopped", Text: s.Stopped.Text, Bad: true})
	}
	var notes []string
	if s.Ending != nil && s.Ending.Text != "" {
		notes = append(notes, "Ended: "+s.Ending.Text+".")
	}
	if s.Warmup > 0 {
		notes = append(notes, "Warm-up: "+s.Warmup.String()+" excluded from the figures (shaded on the charts).")
	}
	if s.Interrupted {
		notes = append(notes, "Interrupted: the figures cover only what finished before the stop.")
	}
	if len(notes) > 0 {
		out = append(out, Paragraph{Text: strings.Join(notes, " ")})
	}
	for _, n := range s.Notes {
		out = append(out, Paragraph{Text: "Note: " + n})
	}
	return out
}

// settingsBlocks are what ran, against what, where, and how to run it
// again.
func settingsBlocks(ru *run) []Block {
	h := ru.phase.Header
	var out []Block
	if h.Command != "" {
		out = append(out, Code{Caption: "The command that ran it (run it again to reproduce; secrets were never written):", Text: h.Command})
	}
	e := h.Environment
	env := Table{Caption: "Run and client machine", Head: []string{"what", "value"}, Numeric: []bool{false, false}}
	add := func(k, v string) {
		if v != "" {
			env.Rows = append(env.Rows, []string{k, v})
		}
	}
	add("run id", h.RunID)
	if !h.StartedAt.IsZero() {
		add("started", h.StartedAt.Format("2006-01-02 15:04:05.000 -07:00"))
	}
	add("target", h.Target)
	add("dbprobe", e.Dbprobe)
	add("Go", e.Go)
	if e.OS != "" {
		add("OS/arch", e.OS+"/"+e.Arch)
	}
	if e.CPUs > 0 {
		add("CPUs", strconv.Itoa(e.CPUs))
	}
	if e.GOMAXPROCS > 0 {
		add("GOMAXPROCS", strconv.Itoa(e.GOMAXPROCS))
	}
	add("host", e.Hostname)
	d := h.Database
	add("database driver", d.Driver)
	add("database library", d.Library)
	add("database server", d.ServerVersion)
	add("database placement", d.Placement)
	var blocks []Block
	if len(env.Rows) > 0 {
		blocks = append(blocks, env)
	}
	if len(d.Settings) > 0 {
		blocks = append(blocks, settingsTable("The database's settings, as the server reported them", d.Settings))
	}
	if len(h.Settings) > 0 {
		blocks = append(blocks, settingsTable("Every effective setting and where its value came from", h.Settings))
	}
	for _, n := range h.Notes {
		blocks = append(blocks, Paragraph{Text: "Note: " + n})
	}
	if ru.summary != nil && ru.summary.Durability == nil {
		var text bytes.Buffer
		result.WriteHeader(&text, h)         // writes to memory: cannot fail
		result.WriteText(&text, *ru.summary) // idem
		blocks = append(blocks, Code{Caption: "The text output of this phase", Text: text.String(), Collapsed: true})
	}
	out = append(out, Group{Title: "Settings and environment", Blocks: blocks, Collapsed: true})
	return out
}

func settingsTable(caption string, settings []result.Setting) Table {
	t := Table{Caption: caption, Head: []string{"setting", "value", "source"}, Numeric: []bool{false, false, false}}
	for _, s := range settings {
		t.Rows = append(t.Rows, []string{s.Key, s.Value, s.Source})
	}
	return t
}
