package result

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/measure"
)

// Progress is the Output of the live progress line on a terminal: one
// line on stderr, redrawn in place at every Status event (carriage return,
// the line, clear to the end of the line), never wider than the terminal
// so that it never wraps. It shows the phase, the time elapsed, the
// operations done (of the total when the phase has one), the time left,
// the last status interval's ops/s and p99 per operation, and the errors
// of the phase so far.
//
// Everything else written to the terminal goes through Guard, which
// clears the line first, so the header and summary on stdout and the
// messages on stderr are never mixed with it.
type Progress struct {
	Ignore
	mu    sync.Mutex
	w     io.Writer
	width func() int
	// shown says a line is on the terminal, to be cleared before anything
	// else is written; done, that the progress is over.
	shown, done bool
	phase       string
	errors      int64
}

// NewProgress returns a progress line written to w, a terminal whose
// width in columns width returns (asked at each redraw, so that a resized
// terminal is followed).
func NewProgress(w io.Writer, width func() int) *Progress {
	return &Progress{w: w, width: width}
}

// eraseLine returns the cursor to the line's start and clears the line.
const eraseLine = "\r\x1b[K"

// Header starts the phase's line.
func (p *Progress) Header(h Header) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.errors = h.Phase, 0
	return p.draw(p.phase + " starting")
}

// Status redraws the line with s.
func (p *Progress) Status(s Status) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ser := range s.Series {
		for _, st := range ser.Statuses {
			// A failure counts once: as ERROR or NOT_FOUND, not again
			// in its per-code line ERROR(40001).
			if st.Status != "OK" && !strings.Contains(st.Status, "(") {
				p.errors += st.Count
			}
		}
	}
	return p.draw(ProgressLine(p.phase, s, p.errors, p.width()-1))
}

// Summary ends the phase: the line is cleared (the summary follows).
func (p *Progress) Summary(Summary) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clear()
}

// Close clears the line for good: a late Status no longer draws it.
func (p *Progress) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	return p.clear()
}

// Guard returns a writer to w that clears the progress line before each
// write. Give it every writer to the same terminal: stderr, and stdout
// when it is the terminal too.
func (p *Progress) Guard(w io.Writer) io.Writer { return guarded{p, w} }

type guarded struct {
	p *Progress
	w io.Writer
}

func (g guarded) Write(b []byte) (int, error) {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	if err := g.p.clear(); err != nil {
		return 0, err
	}
	return g.w.Write(b)
}

// draw replaces the line on the terminal with line.
func (p *Progress) draw(line string) error {
	if p.done {
		return nil
	}
	_, err := io.WriteString(p.w, "\r"+line+"\x1b[K")
	p.shown = true
	return err
}

// clear erases the line when one is shown.
func (p *Progress) clear() error {
	if !p.shown {
		return nil
	}
	p.shown = false
	_, err := io.WriteString(p.w, eraseLine)
	return err
}

// ProgressLine is the progress line of s in at most width columns:
//
//	run 12s  45,120/100,000 ops 45%  15s left  3,812 ops/s  READ p99 1.2ms  UPDATE p99 2.5ms  0 errors
//
// Under --target the p99s are those from the intended start (Intended-READ).
// Fields that do not fit are left out, the least telling first (the
// p99s but the worst, the time left, the worst p99, ops/s, then the
// errors), so that the line never wraps; a
// width too narrow for the phase, the time and the operations done cuts
// the line.
func ProgressLine(phase string, s Status, errors int64, width int) string {
	type field struct {
		text string
		rank int // lower is kept longer
	}
	fields := []field{{phase + " " + clock(s.Elapsed), 0}}
	done := Grouped(s.TotalOps)
	if s.Total > 0 {
		done += "/" + Grouped(s.Total) + " ops"
		fields = append(fields, field{done, 0})
		pct := min(100, s.TotalOps*100/s.Total)
		fields[len(fields)-1].text += " " + strconv.FormatInt(pct, 10) + "%"
	} else {
		fields = append(fields, field{done + " ops", 0})
	}
	if s.Remaining >= 0 {
		fields = append(fields, field{clock(s.Remaining) + " left", 3})
	}
	fields = append(fields, field{Grouped(int64(s.OpsPerSec+0.5)) + " ops/s", 2})
	// Open loop, the latency from the intended start is the one a stall
	// cannot hide, so it replaces the service time; when the line is
	// narrow, the worst operation's p99 is the one kept.
	intended := slices.ContainsFunc(s.Series, func(m measure.Summary) bool { return strings.HasPrefix(m.Name, "Intended-") })
	worst, worstMicros := -1, int64(-1)
	for _, ser := range s.Series {
		if strings.HasSuffix(ser.Name, "-FAILED") || strings.HasPrefix(ser.Name, "Intended-") != intended {
			continue
		}
		for _, pc := range ser.Percentiles {
			if pc.Percentile == 99 {
				fields = append(fields, field{ser.Name + " p99 " + micros(pc.Micros), 4})
				if pc.Micros > worstMicros {
					worst, worstMicros = len(fields)-1, pc.Micros
				}
			}
		}
	}
	if worst >= 0 {
		fields[worst].rank = 2
	}
	errText := Grouped(errors) + " errors"
	if errors == 1 {
		errText = "1 error"
	}
	fields = append(fields, field{errText, 1})

	join := func() string {
		parts := make([]string, 0, len(fields))
		for _, f := range fields {
			parts = append(parts, f.text)
		}
		return strings.Join(parts, "  ")
	}
	line := join()
	for utf8.RuneCountInString(line) > width {
		drop := -1
		for i, f := range fields {
			if f.rank > 0 && (drop < 0 || f.rank >= fields[drop].rank) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		fields = append(fields[:drop], fields[drop+1:]...)
		line = join()
	}
	if width > 0 && utf8.RuneCountInString(line) > width {
		line = string([]rune(line)[:width])
	}
	if width <= 0 {
		line = ""
	}
	return line
}

// clock words a duration as a clock does, to the second: 45s, 3m05s,
// 2h07m03s.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}

// micros words a latency in microseconds with its unit: 850us, 1.2ms,
// 3.40s.
func micros(us int64) string {
	switch {
	case us < 1000:
		return strconv.FormatInt(us, 10) + "us"
	case us < 1_000_000:
		return strconv.FormatFloat(float64(us)/1e3, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(float64(us)/1e6, 'f', 2, 64) + "s"
}

// Plural is n and noun, with an s unless n is 1: "1 field", "3 fields".
func Plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}

// Grouped writes n with a comma between thousands, as the progress line
// and a stop line say counts: 1,234,567.
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
