package stress

import (
	"math/rand/v2"
	"slices"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Work is what a stress run's iterations do: the scripts they choose
// from, the parameters those take, and for each iteration which script
// runs with which values. It is the one seam between what runs and how
// it is run: the --sql files with their parameter sources are one Work
// (files); the built-in OLTP mix is another, whose choice and values are
// a pure function of the iteration number, over a table it creates and
// drops (Prepare and Finish are where a Work does that).
type Work interface {
	// Scripts are the scripts an iteration chooses from.
	Scripts() []*Script
	// Params names every parameter the Work gives a value for.
	Params() []string
	// Chooser returns worker w's chooser, its random sources (if any)
	// seeded from seed and w.
	Chooser(w int, seed uint64) Chooser
}

// Chooser picks what one iteration runs. It belongs to one worker and is
// not safe for concurrent use.
type Chooser interface {
	// Choose returns the index in Scripts of the script iteration i runs,
	// and puts the value of each of Params into values, in that order.
	// With --iterations M, thread t runs the iterations t×M … (t+1)×M−1;
	// without, its k-th iteration is k×threads+t: every number once.
	Choose(i int64, values []any) int
}

// files is the Work of --sql files and their parameter sources.
type files struct {
	scripts []*Script
	sources []source
	params  []string
	// cum are the scripts' cumulative weights, for a weighted draw.
	cum []float64
}

// newFiles builds the Work of scripts and sources; two sources giving the
// same parameter are bad input.
func newFiles(scripts []*Script, sources []source) (*files, error) {
	f := &files{scripts: scripts, sources: sources}
	from := map[string]string{}
	for _, s := range sources {
		for _, n := range s.names() {
			if _, dup := from[n]; dup {
				return nil, badinput.New("parameter :%s is given twice (by %s and by %s): give each parameter one source", n, from[n], describe(s))
			}
			from[n] = describe(s)
			f.params = append(f.params, n)
		}
	}
	total := 0.0
	for _, s := range scripts {
		total += s.Weight
		f.cum = append(f.cum, total)
	}
	return f, nil
}

// describe names a source in messages.
func describe(s source) string {
	switch x := s.(type) {
	case *rows:
		return x.from
	case *generator:
		return "--param " + x.spec.String()
	}
	return "a source"
}

func (f *files) Scripts() []*Script { return f.scripts }
func (f *files) Params() []string   { return f.params }

// Chooser returns a chooser that draws the script by weight and deals
// each source's values.
func (f *files) Chooser(w int, seed uint64) Chooser {
	c := &filesChooser{f: f, rng: rand.New(rand.NewPCG(seed+uint64(w), scriptStream))}
	for _, s := range f.sources {
		c.dealers = append(c.dealers, s.dealer(w, seed))
		c.widths = append(c.widths, len(s.names()))
	}
	return c
}

type filesChooser struct {
	f       *files
	rng     *rand.Rand
	dealers []dealer
	widths  []int
}

func (c *filesChooser) Choose(i int64, values []any) int {
	at := 0
	for k, d := range c.dealers {
		d(i, values[at:at+c.widths[k]])
		at += c.widths[k]
	}
	cum := c.f.cum
	if len(cum) == 1 {
		return 0
	}
	x := c.rng.Float64() * cum[len(cum)-1]
	k, _ := slices.BinarySearch(cum, x)
	// BinarySearch finds the first weight at or above x; x equal to a
	// boundary belongs to the script after it.
	for k < len(cum)-1 && cum[k] <= x {
		k++
	}
	return k
}
