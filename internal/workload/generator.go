package workload

import (
	"math/rand/v2"
	"strconv"

	"github.com/dbprobe/dbprobe/internal/keygen"
)

// Shared is the state the workers of one run share: the key choosers that
// keep no per-call state and the sequence of keys inserted during the run.
type Shared struct {
	spec *Spec
	// inserts hands out run-phase insert key numbers from recordcount on;
	// reads only target keys whose insert was acknowledged.
	inserts *keygen.Acknowledged
	chooser keygen.Chooser // nil for latest, which is per worker
	expo    bool
}

// NewShared prepares the run-phase state of a spec. The zipfian key space
// includes room for the inserts the run is expected to make, as YCSB's does,
// so that new keys do not shift which keys are popular.
func NewShared(spec *Spec) *Shared {
	s := &Shared{spec: spec, inserts: keygen.NewAcknowledged(spec.RecordCount)}
	lo, hi := spec.InsertStart, spec.InsertStart+spec.InsertCount-1
	switch spec.RequestDistribution {
	case Uniform:
		s.chooser = keygen.NewUniform(lo, hi)
	case Zipfian:
		expectedNewKeys := int64(float64(spec.OperationCount) * spec.Proportions[Insert] * 2.0)
		s.chooser = keygen.NewScrambledZipfian(lo, hi+1+expectedNewKeys)
	case Hotspot:
		s.chooser = keygen.NewHotspot(lo, hi, spec.HotspotDataFraction, spec.HotspotOpnFraction)
	case Sequential:
		s.chooser = keygen.NewSequential(lo, hi)
	case Exponential:
		s.chooser = keygen.NewExponential(spec.ExponentialPercentile, float64(spec.RecordCount)*spec.ExponentialFrac)
		s.expo = true
	}
	return s
}

// Op is one operation to run. Its slices belong to the Generator and are
// reused by the next call to Next.
type Op struct {
	Kind   Operation
	KeyNum int64
	Key    []byte
	// ReadFields are the fields a read, scan or read-modify-write reads;
	// nil means all of them.
	ReadFields []int
	// WriteFields and Values are what an update or read-modify-write
	// writes; an insert writes Values for every field.
	WriteFields []int
	Values      [][]byte
	ScanLength  int
}

// Generator makes one worker's operations. It is not safe for concurrent
// use: each worker has its own, with its own random source.
type Generator struct {
	spec    *Spec
	shared  *Shared
	rng     *rand.Rand
	chooser keygen.Chooser
	// cumulative[i] is the sum of the proportions of operations 0…i.
	cumulative [numOperations]float64
	fieldLen   keygen.Chooser
	scanLen    keygen.Chooser
	fieldNames []string

	keyBuf   []byte
	oneRead  [1]int
	oneWrite [1]int
	allWrite []int
	values   [][]byte
	// random is printable ASCII that values are sliced from: a value costs
	// no copy and no allocation, and is not compressible.
	random []byte
}

// randomBytes is the size of a generator's pool of random value bytes.
const randomBytes = 1 << 16

// NewGenerator returns the generator of one worker seeded from seed.
func NewGenerator(spec *Spec, shared *Shared, seed uint64) *Generator {
	g := &Generator{
		spec:       spec,
		shared:     shared,
		rng:        rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)),
		chooser:    shared.chooser,
		fieldNames: make([]string, spec.FieldCount),
		keyBuf:     make([]byte, 0, 64),
		values:     make([][]byte, spec.FieldCount),
		allWrite:   make([]int, spec.FieldCount),
	}
	if spec.RequestDistribution == Latest {
		g.chooser = keygen.NewLatest(shared.inserts)
	}
	sum := 0.0
	for i := range g.cumulative {
		sum += spec.Proportions[i]
		g.cumulative[i] = sum
	}
	for i := range g.cumulative {
		g.cumulative[i] /= sum
	}
	switch spec.FieldLengthDistribution {
	case UniformLength:
		g.fieldLen = keygen.NewUniform(int64(spec.MinFieldLength), int64(spec.FieldLength))
	case ZipfianLength:
		g.fieldLen = keygen.NewZipfian(int64(spec.MinFieldLength), int64(spec.FieldLength), zipfianConstant)
	case HistogramLength:
		g.fieldLen = spec.FieldLengthHistogram
	}
	if spec.ScanLengthDistribution == ZipfianLength {
		g.scanLen = keygen.NewZipfian(int64(spec.MinScanLength), int64(spec.MaxScanLength), zipfianConstant)
	} else {
		g.scanLen = keygen.NewUniform(int64(spec.MinScanLength), int64(spec.MaxScanLength))
	}
	for i := range g.allWrite {
		g.allWrite[i] = i
		// YCSB's field names, not the column names, feed verified values.
		g.fieldNames[i] = spec.FieldNamePrefix + strconv.Itoa(i)
	}
	g.random = make([]byte, randomBytes+spec.MaxFieldLength())
	for i := range g.random {
		g.random[i] = byte(' ' + g.rng.IntN('~'-' '+1))
	}
	if spec.DataIntegrity {
		for i := range g.values {
			g.values[i] = make([]byte, 0, spec.FieldLength)
		}
	}
	return g
}

// zipfianConstant is YCSB's zipfian skew for lengths drawn from a zipfian.
const zipfianConstant = 0.99

// Next fills op with the next operation of the mix.
func (g *Generator) Next(op *Op) {
	u := g.rng.Float64()
	kind := Operation(0)
	for kind < numOperations-1 && u >= g.cumulative[kind] {
		kind++
	}
	// Skip operations with no share that a rounding error could land on.
	for g.spec.Proportions[kind] == 0 && kind > 0 {
		kind--
	}
	op.Kind = kind
	op.ReadFields, op.WriteFields, op.ScanLength = nil, nil, 0
	if kind == Insert {
		op.KeyNum = g.spec.InsertKey(g.shared.inserts.Next())
		op.Key = g.key(op.KeyNum)
		op.Values = g.buildValues(op.Key, g.allWrite)
		return
	}
	op.KeyNum = g.nextKeyNum()
	op.Key = g.key(op.KeyNum)
	switch kind {
	case Read:
		op.ReadFields = g.readFields()
	case Update:
		op.WriteFields = g.writeFields()
		op.Values = g.buildValues(op.Key, op.WriteFields)
	case Scan:
		op.ReadFields = g.readFields()
		op.ScanLength = int(g.scanLen.Next(g.rng))
	case ReadModifyWrite:
		op.ReadFields = g.readFields()
		op.WriteFields = g.writeFields()
		op.Values = g.buildValues(op.Key, op.WriteFields)
	}
}

// Acknowledge tells the shared insert sequence that an insert finished
// (whatever its outcome, as YCSB does), so reads may target it.
func (g *Generator) Acknowledge(keyNum int64) {
	g.shared.inserts.Acknowledge(g.spec.insertSeq(keyNum))
}

// nextKeyNum draws a key number among those already inserted.
func (g *Generator) nextKeyNum() int64 {
	last := g.shared.inserts.Last()
	if g.shared.expo {
		for {
			if k := last - g.chooser.Next(g.rng); k >= 0 {
				return g.spec.InsertKey(k)
			}
		}
	}
	for {
		if k := g.chooser.Next(g.rng); k <= last {
			return g.spec.InsertKey(k)
		}
	}
}

func (g *Generator) key(keyNum int64) []byte {
	g.keyBuf = keygen.AppendKey(g.keyBuf[:0], keyNum, g.spec.InsertOrder == Hashed, g.spec.ZeroPadding)
	return g.keyBuf
}

func (g *Generator) readFields() []int {
	if g.spec.ReadAllFields {
		return nil
	}
	g.oneRead[0] = g.rng.IntN(g.spec.FieldCount)
	return g.oneRead[:]
}

func (g *Generator) writeFields() []int {
	if g.spec.WriteAllFields {
		return g.allWrite
	}
	g.oneWrite[0] = g.rng.IntN(g.spec.FieldCount)
	return g.oneWrite[:]
}

// Record fills the key and every field's value of a record to load.
func (g *Generator) Record(keyNum int64) (key []byte, values [][]byte) {
	key = g.key(keyNum)
	return key, g.buildValues(key, g.allWrite)
}

// buildValues returns one value per listed field, in g.values[:len(fields)].
func (g *Generator) buildValues(key []byte, fields []int) [][]byte {
	out := g.values[:len(fields)]
	for i, f := range fields {
		n := g.fieldLength()
		if g.spec.DataIntegrity {
			out[i] = deterministicValue(out[i][:0], key, g.fieldNames[f], n)
			continue
		}
		start := g.rng.IntN(randomBytes)
		out[i] = g.random[start : start+n : start+n]
	}
	return out
}

func (g *Generator) fieldLength() int {
	if g.fieldLen == nil {
		return g.spec.FieldLength
	}
	return int(g.fieldLen.Next(g.rng))
}

// Verify reports whether values read for key hold what dataintegrity
// wrote: fields lists the fields read, nil for all.
func (g *Generator) Verify(key []byte, fields []int, values [][]byte) bool {
	var want [128]byte
	check := func(f int, got []byte) bool {
		return string(deterministicValue(want[:0], key, g.fieldNames[f], g.spec.FieldLength)) == string(got)
	}
	if fields == nil {
		if len(values) != g.spec.FieldCount {
			return false
		}
		for f, v := range values {
			if !check(f, v) {
				return false
			}
		}
		return true
	}
	for i, f := range fields {
		if i >= len(values) || !check(f, values[i]) {
			return false
		}
	}
	return true
}

// deterministicValue appends the value dataintegrity expects for a field
// of a key: "key:field", then ":" followed by the Java String hash of
// everything so far (that ":" included), repeated until n bytes, cut at n. It is YCSB's rule, so that data
// loaded by either tool verifies in the other.
func deterministicValue(dst []byte, key []byte, field string, n int) []byte {
	start := len(dst)
	dst = append(dst, key...)
	dst = append(dst, ':')
	dst = append(dst, field...)
	for len(dst)-start < n {
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(javaStringHash(dst[start:])), 10)
	}
	return dst[:start+n]
}

// javaStringHash is Java's String.hashCode over ASCII text.
func javaStringHash(b []byte) int32 {
	var h int32
	for _, c := range b {
		h = 31*h + int32(c)
	}
	return h
}
