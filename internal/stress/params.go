package stress

import (
	sqldriver "database/sql/driver"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/keygen"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Distribution is how a --param draws its values.
type Distribution int

// The distributions, each a keygen generator.
const (
	// Uniform draws every integer of LO…HI alike.
	Uniform Distribution = iota
	// Zipfian draws YCSB's scrambled zipfian over LO…HI: a few values
	// often, scattered over the range.
	Zipfian
	// Sequential hands out LO, LO+1, … HI, then LO again, shared by every
	// thread.
	Sequential
)

// String names the distribution as --param takes it.
func (d Distribution) String() string {
	switch d {
	case Uniform:
		return "uniform"
	case Zipfian:
		return "zipfian"
	case Sequential:
		return "sequential"
	}
	return fmt.Sprintf("Distribution(%d)", int(d))
}

// ParseDistribution reads a --param's distribution.
func ParseDistribution(s string) (Distribution, error) {
	for d := Uniform; d <= Sequential; d++ {
		if strings.EqualFold(s, d.String()) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown distribution %q: give uniform, zipfian or sequential", s)
}

// ParamSpec is one --param: a parameter drawn per iteration.
type ParamSpec struct {
	Name   string
	Dist   Distribution
	Lo, Hi int64
}

// String writes the spec as --param takes it.
func (p ParamSpec) String() string {
	return fmt.Sprintf("%s=%s:%d:%d", p.Name, p.Dist, p.Lo, p.Hi)
}

// ParseParam reads --param NAME=DIST:LO:HI (e.g. id=uniform:1:1000000).
func ParseParam(s string) (ParamSpec, error) {
	bad := func(why string, args ...any) error {
		return badinput.New("--param %s: %s; give NAME=DIST:LO:HI, e.g. id=uniform:1:1000000 (DIST uniform, zipfian or sequential)", s, fmt.Sprintf(why, args...))
	}
	name, spec, ok := strings.Cut(s, "=")
	if !ok {
		return ParamSpec{}, bad("no =")
	}
	name = strings.TrimPrefix(strings.TrimSpace(name), ":")
	if !isParamName(name) {
		return ParamSpec{}, bad("%q is not a parameter name (letters, digits and _, not starting with a digit)", name)
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return ParamSpec{}, bad("%q is not DIST:LO:HI", spec)
	}
	d, err := ParseDistribution(parts[0])
	if err != nil {
		return ParamSpec{}, bad("%v", err)
	}
	lo, err1 := strconv.ParseInt(parts[1], 10, 64)
	hi, err2 := strconv.ParseInt(parts[2], 10, 64)
	switch {
	case err1 != nil || err2 != nil:
		return ParamSpec{}, bad("LO and HI must be integers")
	case hi < lo:
		return ParamSpec{}, bad("HI %d is below LO %d", hi, lo)
	case d == Zipfian && (hi-lo+1 <= 0 || hi-lo+1 > math.MaxInt64/2):
		return ParamSpec{}, bad("the range is too large for zipfian")
	}
	return ParamSpec{Name: name, Dist: d, Lo: lo, Hi: hi}, nil
}

func isParamName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// source gives values to some of the parameters: the rows of a query or a
// CSV file, or one generator.
type source interface {
	// names are the parameters it gives, in the order of its values.
	names() []string
	// dealer returns worker w's dealer, its random source seeded from
	// seed and w.
	dealer(w int, seed uint64) dealer
}

// dealer puts the values of iteration i into dst, one per name of its
// source. One worker's; not safe for concurrent use.
type dealer func(i int64, dst []any)

// rows are parameter values by row: what --params-query and --params-csv
// give.
type rows struct {
	cols  []string
	vals  [][]any
	order Order
	// from says where the rows came from, for messages.
	from string
}

func (r *rows) names() []string { return r.cols }

func (r *rows) dealer(w int, seed uint64) dealer {
	n := int64(len(r.vals))
	if r.order == Random {
		rng := rand.New(rand.NewPCG(seed+uint64(w), rowStream))
		return func(_ int64, dst []any) { copy(dst, r.vals[rng.Int64N(n)]) }
	}
	return func(i int64, dst []any) { copy(dst, r.vals[i%n]) }
}

// The random streams of a worker, apart from each other and from the
// runner's retry jitter, though seeded with the same seed+worker.
const (
	rowStream    = 0x726f7773
	scriptStream = 0x73637269
	paramStream  = 0x706172616d
)

// generator is one --param.
type generator struct {
	spec ParamSpec
	// shared is the one chooser every worker shares (sequential, so
	// that together they visit each value once per lap); nil for those
	// made per worker.
	shared keygen.Chooser
}

func newGenerator(p ParamSpec) *generator {
	g := &generator{spec: p}
	if p.Dist == Sequential {
		g.shared = keygen.NewSequential(p.Lo, p.Hi)
	}
	return g
}

func (g *generator) names() []string { return []string{g.spec.Name} }

func (g *generator) dealer(w int, seed uint64) dealer {
	// Each parameter its own stream, so that adding one does not change
	// another's values.
	h := uint64(0)
	for _, c := range g.spec.Name {
		h = h*31 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed+uint64(w), paramStream^h))
	ch := g.shared
	switch g.spec.Dist {
	case Uniform:
		ch = keygen.NewUniform(g.spec.Lo, g.spec.Hi)
	case Zipfian:
		ch = keygen.NewScrambledZipfian(g.spec.Lo, g.spec.Hi)
	}
	return func(_ int64, dst []any) { dst[0] = ch.Next(rng) }
}

// readCSV reads --params-csv: a header row of parameter names, then rows
// of values, each a string (see Value types in doc.go). A row with fewer
// or more fields than the header is bad input naming the file and line.
func readCSV(path string, order Order) (*rows, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badinput.New("--params-csv %s: cannot read it: %v", path, experimentShort(err))
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // checked here, to name the line in our words
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, badinput.New("--params-csv %s is empty: its first line must name the parameters, e.g. id,name", path)
	}
	if err != nil {
		return nil, badinput.New("--params-csv %s: %v", path, err)
	}
	out := &rows{order: order, from: "--params-csv " + path}
	for k, h := range header {
		h = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), ":")
		if !isParamName(h) {
			return nil, badinput.New("--params-csv %s line 1: column %d, %q, is not a parameter name (letters, digits and _): the first line must name the parameters", path, k+1, h)
		}
		out.cols = append(out.cols, h)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, badinput.New("--params-csv %s: %v", path, err)
		}
		if len(rec) != len(header) {
			return nil, badinput.New("--params-csv %s line %d has %s, the header %d (%s): give every row a value for each column",
				path, line, result.Plural(len(rec), "field"), len(header), strings.Join(out.cols, ","))
		}
		vals := make([]any, len(rec))
		for k, v := range rec {
			vals[k] = v
		}
		out.vals = append(out.vals, vals)
	}
	if len(out.vals) == 0 {
		return nil, badinput.New("--params-csv %s has a header and no rows: give at least one row of values", path)
	}
	return out, nil
}

// normalize turns a value a driver read (a --params-query row) into one
// every SQLConn binds: nil, int64, float64, string, []byte, bool or
// time.Time. Integers of every width are int64, floats float64; bytes
// that are UTF-8 text are a string, since MySQL returns VARCHAR as bytes
// and bytes bound back would be a BLOB on SQLite, never equal to TEXT.
// Anything else (a PostgreSQL numeric, a UUID) is its text, which the
// server converts back to the parameter's type.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, bool, time.Time:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return append([]byte(nil), x...)
	case float32:
		return float64(x)
	case sqldriver.Valuer:
		// pgx's numeric and the like give their text this way.
		if v, err := x.Value(); err == nil {
			return normalize(v)
		}
	case [16]byte:
		// A UUID, as pgx reads one.
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	}
	return fmt.Sprint(v)
}

// checkColumns refuses the columns of a --params-query that no :name can
// refer to, as the database named them (PostgreSQL "?column?" for an
// expression without an alias, MySQL the expression's text), and a name
// given twice.
func checkColumns(database string, cols []string) error {
	seen := map[string]int{}
	for i, c := range cols {
		if !isParamName(c) {
			return badinput.New("--params-query: %s names column %d %q, which no :name can refer to: give it a name with AS, e.g. SELECT lower(email) AS email FROM …", database, i+1, c)
		}
		if k, dup := seen[c]; dup {
			return badinput.New("--params-query: columns %d and %d are both named %s: give each column its own name with AS", k+1, i+1, c)
		}
		seen[c] = i
	}
	return nil
}
