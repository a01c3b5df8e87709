package sweep

import (
	"math/rand/v2"
	"strings"
)

// Setting is one key=value: a varied setting of a variant, or a
// table-shaping setting of a shape. Value is as shown (a URL's password
// hidden); the command lines carry the real one.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Variant is one point of the sweep: one value of each --vary.
type Variant struct {
	// ID numbers the variants from 1 in the cross product's order (the
	// first --vary slowest).
	ID int
	// Settings are the varied keys with this variant's values, in the
	// order of the --vary flags.
	Settings []Setting
	// Args is the experiment's command line for a run of this variant,
	// without the program name and without --out, which the sweep adds.
	Args []string
	// Shape is the index in Config.Shapes of the table it runs on.
	Shape int
}

// Name is the variant's settings as "threads=4 durability=full".
func (v Variant) Name() string {
	parts := make([]string, len(v.Settings))
	for i, s := range v.Settings {
		parts[i] = s.Key + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

// Shape is a distinct table-shaping setting (table type, record count,
// table name, field count and length, database): the variants that share
// it share one load of the table.
type Shape struct {
	// Settings are the shaping settings that tell it from the other
	// shapes; empty when the sweep varies none.
	Settings []Setting
	// Load is the command line of the load that fills the table, without
	// the program name and --out; nil when the experiment makes its own
	// table (stress, storage) or the sweep was told to use the table as
	// it is.
	Load []string
}

// Slot is one run in the order: a variant and its repetition.
type Slot struct {
	// Variant is the index in Config.Variants; Rep counts from 1.
	Variant, Rep int
}

// Order is the order the runs go in, printed before the first starts.
// The variants of one shape are interleaved: each round runs every one of
// them once, in an order shuffled from seed, so that nothing that drifts
// with time (a cache warming, bloat, autovacuum, a neighbour's load)
// lands on one variant; a round does not start with the variant the
// previous ended on. Shapes run one after the other, in a shuffled order,
// because interleaving them would mean loading the table again at every
// change of shape, or keeping several tables at once under names the
// experiment did not ask for.
func Order(variants []Variant, shapes int, reps int, seed uint64) []Slot {
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	byShape := make([][]int, shapes)
	for i, v := range variants {
		byShape[v.Shape] = append(byShape[v.Shape], i)
	}
	var out []Slot
	last := -1
	for _, sh := range rng.Perm(shapes) {
		vs := byShape[sh]
		for rep := 1; rep <= reps; rep++ {
			perm := rng.Perm(len(vs))
			if len(perm) > 1 && vs[perm[0]] == last {
				k := 1 + rng.IntN(len(perm)-1)
				perm[0], perm[k] = perm[k], perm[0]
			}
			for _, p := range perm {
				out = append(out, Slot{Variant: vs[p], Rep: rep})
				last = vs[p]
			}
		}
	}
	return out
}
