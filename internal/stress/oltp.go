package stress

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// Mix is a built-in workload dbprobe stress runs instead of --sql files.
type Mix int

// The mixes.
const (
	// MixNone runs the --sql files.
	MixNone Mix = iota
	// MixOLTP is the repeatable insert/update/select/delete loop over a
	// table of wide rows (oltpStep).
	MixOLTP
)

var mixNames = [...]string{"", "oltp"}

// String names the mix as --mix takes it; "" for none.
func (m Mix) String() string {
	if m < 0 || int(m) >= len(mixNames) {
		return fmt.Sprintf("Mix(%d)", int(m))
	}
	return mixNames[m]
}

// MixNames lists the built-in mixes, as --mix takes them.
func MixNames() []string { return slices.Clone(mixNames[1:]) }

// ParseMix reads --mix.
func ParseMix(s string) (Mix, error) {
	for m, n := range mixNames {
		if m > 0 && strings.EqualFold(s, n) {
			return Mix(m), nil
		}
	}
	return MixNone, badinput.New("--mix %q is not a built-in mix; give one of: %s (the repeatable SELECT/INSERT/UPDATE/DELETE loop over a table of wide rows)", s, strings.Join(MixNames(), ", "))
}

// The OLTP mix's defaults: the study's table of a million char(2000)
// rows, and 100,000 iterations per thread.
const (
	DefaultMixRows       = 1_000_000
	DefaultMixRowBytes   = 2000
	DefaultMixIterations = 100_000
)

// oltpTableName is the mix's table. One fixed name lets a later run find
// the table a killed run left behind; dbprobe's marker table says whether
// the table of that name is dbprobe's.
const oltpTableName = "dbprobe_oltp"

// maxMixCount bounds --rows and the iterations of a mix: a SELECT's key
// is i×10, which must fit in a BIGINT.
const maxMixCount = 1_000_000_000_000_000

// oltpKind is what one iteration of the mix does.
type oltpKind int

// The kinds, in the order of the mix's scripts and series.
const (
	oltpSelect oltpKind = iota
	oltpInsert
	oltpUpdate
	oltpDelete
	numOLTPKinds
)

var oltpKindNames = [numOLTPKinds]string{"SELECT", "INSERT", "UPDATE", "DELETE"}

// oltpStep is the mix's pattern: what iteration i does, and on which key.
// SELECT, UPDATE and DELETE keys are the (i×10, i×6, i×3). An
// INSERT's key is −i: the table's ids run 1…rows and every other key is
// ≥ 0, so an inserted row is never read, updated or deleted by another
// iteration and no two inserts (no two i) share a key, whatever the
// threads' timing. SELECT (i×10) and UPDATE (i×6, i even) keys are even
// and DELETE keys (i×3, i odd) odd, so a delete never removes a row a
// SELECT or UPDATE looks for: every iteration finds the same rows in
// every run, and two placements do exactly the same work.
func oltpStep(i int64) (oltpKind, int64) {
	switch {
	case i%4 == 0:
		return oltpSelect, i * 10
	case i%3 == 0:
		return oltpInsert, -i
	case i%2 == 0:
		return oltpUpdate, i * 6
	}
	return oltpDelete, i * 3
}

// oltp is the Work of the OLTP mix: four one-statement scripts over its
// table, chosen by oltpStep.
type oltp struct {
	table   driver.DataTable
	rows    int64
	scripts []*Script
	// payloads are the values INSERT and UPDATE write, one per kind (a
	// row of the table's width, as a char(n) column holds it); SELECT and
	// DELETE take none.
	payloads [numOLTPKinds]string
	// created says dbprobe made the table in this run: it is dropped at
	// the end (unless --keep).
	created bool
}

// newOLTP returns the mix over a table of c.Rows rows of c.RowBytes, in
// where (nil for the database's default place).
func newOLTP(c *Config, where *driver.Location) *oltp {
	m := &oltp{table: driver.DataTable{Name: oltpTableName, PayloadBytes: c.RowBytes, Where: where}, rows: c.Rows}
	t := m.table.Name
	texts := [numOLTPKinds]string{
		"SELECT id, payload FROM " + t + " WHERE id = :id",
		"INSERT INTO " + t + " (id, payload) VALUES (:id, :payload)",
		"UPDATE " + t + " SET payload = :payload WHERE id = :id",
		"DELETE FROM " + t + " WHERE id = :id",
	}
	rules := [numOLTPKinds]string{"i mod 4 = 0", "else i mod 3 = 0", "else i mod 2 = 0", "else"}
	for k := range numOLTPKinds {
		name := "OLTP-" + oltpKindNames[k]
		m.scripts = append(m.scripts, &Script{Path: "--mix oltp (" + rules[k] + ")", Name: name, Weight: 1,
			Statements: []Statement{{Label: name, Text: texts[k]}}})
	}
	// Letters that differ from the fill's, so that a row written by the
	// mix shows as such.
	m.payloads[oltpInsert] = strings.Repeat("i", c.RowBytes)
	m.payloads[oltpUpdate] = strings.Repeat("u", c.RowBytes)
	m.payloads[oltpSelect] = m.payloads[oltpInsert]
	m.payloads[oltpDelete] = m.payloads[oltpInsert]
	return m
}

func (m *oltp) Scripts() []*Script { return m.scripts }
func (m *oltp) Params() []string   { return []string{"id", "payload"} }

// Chooser returns the mix's chooser, the same for every worker: what an
// iteration does is a function of its number alone.
func (m *oltp) Chooser(int, uint64) Chooser { return oltpChooser{m} }

type oltpChooser struct{ m *oltp }

func (c oltpChooser) Choose(i int64, values []any) int {
	k, key := oltpStep(i)
	values[0], values[1] = key, c.m.payloads[k]
	return int(k)
}

// oltpCounts are, for iterations lo…hi of the mix on a table of ids
// 1…rows, how many of each kind run and how many of those find their row
// (an INSERT always adds one). It counts by residue modulo 12, the cycle
// of the pattern, so that it costs nothing whatever the range.
func oltpCounts(lo, hi, rows int64) (runs, hits [numOLTPKinds]int64) {
	// inRange counts the i ≡ r (mod 12) in lo…hi.
	inRange := func(r, lo, hi int64) int64 {
		if hi < lo {
			return 0
		}
		below := func(x int64) int64 { // i ≡ r in 0…x−1, x ≥ 0
			return (x + 11 - r) / 12
		}
		return below(hi+1) - below(lo)
	}
	for r := range int64(12) {
		k, _ := oltpStep(r)
		runs[k] += inRange(r, lo, hi)
		// The last i whose key is still an id of the table.
		var last int64
		switch k {
		case oltpSelect:
			last = rows / 10
		case oltpInsert:
			last = hi
		case oltpUpdate:
			last = rows / 6
		case oltpDelete:
			last = rows / 3
		}
		first := lo
		if k == oltpSelect {
			first = max(lo, 1) // key 0 is no id
		}
		hits[k] += inRange(r, first, min(hi, last))
	}
	return runs, hits
}

// validateMix checks the mix's flags before anything connects.
func (c *Config) validateMix() error {
	if c.Mix == MixNone {
		if c.Keep {
			return badinput.New("--keep keeps the table of --mix oltp at the end; without --mix dbprobe creates no table")
		}
		return nil
	}
	switch {
	case len(c.Scripts) > 0:
		return badinput.New("--mix %s runs its own statements and --sql yours: give one of them", c.Mix)
	case c.ParamsQuery != "" || c.ParamsCSV != "" || len(c.Params) > 0:
		return badinput.New("--mix %s takes its keys from the iteration number; --param, --params-csv and --params-query give values to --sql files: drop them", c.Mix)
	case c.Rows < 1 || c.Rows > maxMixCount:
		return badinput.New("--rows %d: give 1 to %d", c.Rows, int64(maxMixCount))
	case c.Iterations > 0 && c.Iterations > maxMixCount/int64(max(c.Threads, 1)):
		return badinput.New("--iterations %d × --threads %d is more than the %d iterations --mix %s can number (a SELECT's key is i×10, a BIGINT)", c.Iterations, c.Threads, int64(maxMixCount), c.Mix)
	}
	if err := (driver.DataTable{Name: oltpTableName, PayloadBytes: c.RowBytes}).Check(); err != nil {
		return badinput.New("--row-bytes %d: %v", c.RowBytes, err)
	}
	return nil
}

// prepareMix makes the mix's table (dropLeftoverTable has dropped one an
// earlier run left), fills it on the server, and says its size and where
// it lives in the header's notes.
func (j *job) prepareMix(ctx context.Context) (*oltp, error) {
	c := j.c
	if err := j.caps.Need(driver.CapFill); err != nil {
		return nil, err
	}
	filler, ok := j.db.(driver.TableFiller)
	if !ok {
		return nil, badinput.New("%s has no %s", j.caps.Database, driver.CapFill)
	}
	// Again: --setup, which ran since, may have made a table of that name.
	if err := j.dropLeftoverTable(ctx); err != nil {
		return nil, err
	}
	m := newOLTP(c, j.placed.table)
	j.mix = m
	name := m.table.Name
	if err := filler.CreateDataTable(ctx, m.table); err != nil {
		err = experiment.Scrubbed(j.target.Target, err)
		if m.table.Where != nil && badinput.Is(err) {
			// A database that takes the directory per table (MySQL's DATA
			// DIRECTORY) finds it wanting only now.
			return nil, badinput.New("--placement %s: %v", c.Placement, err)
		}
		return nil, err
	}
	m.created = true
	// The payload's total says up front why a fill takes a while: the
	// defaults make 2 GB.
	fmt.Fprintf(j.c.Stderr, "dbprobe: filling %s with %s rows of %d bytes (%s of payload) on the server\n", name, result.Grouped(c.Rows), c.RowBytes, result.BytesText(int64(c.Rows)*int64(c.RowBytes)))
	n, err := filler.FillTable(ctx, m.table, 1, c.Rows)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("filling %s: interrupted after %s rows", name, result.Grouped(n))
		}
		return nil, fmt.Errorf("filling %s: %w", name, experiment.Scrubbed(j.target.Target, err))
	}
	if n != c.Rows {
		return nil, fmt.Errorf("filling %s: the database inserted %d rows, not %d", name, n, c.Rows)
	}
	// The fill's after-effects (a WAL to copy, dirty pages, rows to
	// vacuum) are seen to now, not inside the measured part.
	if settler, ok := j.db.(driver.Settler); ok {
		how, err := settler.Settle(ctx, m.table)
		if err != nil {
			return nil, fmt.Errorf("settling %s after the fill: %w", name, experiment.Scrubbed(j.target.Target, err))
		}
		j.notes = append(j.notes, fmt.Sprintf("table %s: settled after the fill, before the measured part: %s", name, how))
	} else {
		j.notes = append(j.notes, fmt.Sprintf("table %s: not settled after the fill (dbprobe has no settle step for %s): the fill's after-effects (dirty pages, statistics) may land in the measured part", name, j.caps.Database))
	}
	j.notes = append(j.notes, m.describe(c)...)
	j.notes = append(j.notes, j.tableNotes(ctx, m)...)
	return m, nil
}

// dropLeftoverTable drops the mix's table an earlier run left — only
// because dbprobe's marker table says dbprobe created it — before the
// Locations an earlier run left go (placement.go) and before anything of
// this run is made: a run starts from the same rows every time. A table
// of that name dbprobe did not create is bad input, and nothing is made.
func (j *job) dropLeftoverTable(ctx context.Context) error {
	c := j.c
	if c.Mix == MixNone {
		return nil
	}
	if err := j.caps.Need(driver.CapFill); err != nil {
		return err
	}
	filler, ok := j.db.(driver.TableFiller)
	if !ok {
		return badinput.New("%s has no %s", j.caps.Database, driver.CapFill)
	}
	t := driver.DataTable{Name: oltpTableName, PayloadBytes: c.RowBytes}
	st, err := j.db.Inspect(ctx, t.Table())
	if err != nil {
		return experiment.Scrubbed(j.target.Target, err)
	}
	if !st.Exists {
		return nil
	}
	if !st.CreatedByDbprobe {
		why := ""
		if st.OwnershipNote != "" {
			why = " (" + st.OwnershipNote + ")"
		}
		return badinput.New("--mix %s: a table %s exists that dbprobe did not create%s; dbprobe never writes into or drops a table it did not create: rename or drop it yourself, or run against another database", c.Mix, t.Name, why)
	}
	// A table dbprobe created and a run did not drop (--keep, or a run
	// that was killed) holds rows an earlier mix changed.
	if err := filler.DropDataTable(ctx, t); err != nil {
		return fmt.Errorf("dropping the table %s an earlier run left: %w", t.Name, experiment.Scrubbed(j.target.Target, err))
	}
	note := fmt.Sprintf("table %s: an earlier run left it (--keep, or a run that was killed); dbprobe's marker table records creating it, so it was dropped and made afresh", t.Name)
	fmt.Fprintln(c.Stderr, "dbprobe: "+note)
	j.notes = append(j.notes, note)
	return nil
}

// describe says, for the header, what the mix does and, for a run of a
// known count, how many of each kind will run and find their row.
func (m *oltp) describe(c *Config) []string {
	out := []string{
		fmt.Sprintf("--mix oltp: iteration i runs, by the first rule that holds: i mod 4 = 0 a SELECT of id i×10; i mod 3 = 0 an INSERT of id −i; i mod 2 = 0 an UPDATE of id i×6; else a DELETE of id i×3 (thread t runs i = t×M … (t+1)×M−1 with --iterations M); each is one statement, its series [OLTP-SELECT], [OLTP-INSERT], [OLTP-UPDATE], [OLTP-DELETE]"),
		fmt.Sprintf("--mix oltp: INSERT ids are −i, below the table's ids 1…%s and every other key, so no two threads collide and no other iteration touches an inserted row: every run finds the same rows", result.Grouped(m.rows)),
	}
	if c.Iterations > 0 {
		var runs, hits [numOLTPKinds]int64
		for t := range int64(c.Threads) {
			r, h := oltpCounts(t*c.Iterations, (t+1)*c.Iterations-1, m.rows)
			for k := range numOLTPKinds {
				runs[k] += r[k]
				hits[k] += h[k]
			}
		}
		var parts []string
		for k := range numOLTPKinds {
			p := fmt.Sprintf("%s %s", result.Grouped(runs[k]), oltpKindNames[k])
			if oltpKind(k) != oltpInsert {
				p += fmt.Sprintf(" (%s of them on an id in the table)", result.Grouped(hits[k]))
			}
			parts = append(parts, p)
		}
		out = append(out, "--mix oltp: the run's iterations: "+strings.Join(parts, ", ")+"; ids beyond the table find no row, as the pattern has it")
	}
	return out
}

// dropMix drops the mix's table at the end, also after Ctrl-C or a
// failure, unless --keep; before its Location goes.
func (j *job) dropMix(ctx context.Context) error {
	m := j.mix
	if m == nil || !m.created {
		return nil
	}
	if j.c.Keep {
		fmt.Fprintf(j.c.Stderr, "dbprobe: --keep: table %s stays; the next --mix run drops it and makes it afresh\n", m.table.Name)
		return nil
	}
	filler := j.db.(driver.TableFiller)
	if err := filler.DropDataTable(ctx, m.table); err != nil {
		return fmt.Errorf("dropping table %s (dbprobe's, made for --mix): %w; drop it by hand", m.table.Name, experiment.Scrubbed(j.target.Target, err))
	}
	m.created = false
	return nil
}

// mixRates are the summary's notes of what the database read and wrote
// during the measured part, from the monitor's standard counters.
func (j *job) mixRates(mon *experiment.Monitoring, out *runner.Outcome) []string {
	if j.mix == nil || mon == nil {
		return nil
	}
	var parts []string
	for _, r := range []struct{ metric, what string }{
		{"db.device_read_bytes/s", "read from its files"},
		{"db.device_write_bytes/s", "wrote to its data files"},
		{"db.log_bytes/s", "wrote to its log"},
	} {
		if v, ok := mon.Mean(out.Start, out.End, r.metric); ok {
			parts = append(parts, fmt.Sprintf("%s %.2f MB/s (%s)", r.what, v/1e6, strings.TrimPrefix(strings.TrimSuffix(r.metric, "/s"), "db.")))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{"--mix oltp: over the measured part the database " + strings.Join(parts, ", ") + ", by the monitor's averages (MB = 10^6 bytes)"}
}
