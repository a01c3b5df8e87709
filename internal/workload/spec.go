package workload

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Spec is a core workload, typed and validated: the YCSB properties that
// shape what runs.
type Spec struct {
	RecordCount    int64
	OperationCount int64
	// InsertStart and InsertCount are the slice of key numbers this client
	// loads (and its run phase requests), so several clients can share a load.
	InsertStart int64
	InsertCount int64
	// InsertStride and InsertOffset give a run's inserts key numbers of
	// their own when several clients run it: the k-th insert of this
	// client takes recordcount + k×InsertStride + InsertOffset, so no two
	// clients insert the same key (fleet.Slice.Run). 0 or 1 is a lone
	// client, whose inserts take recordcount, recordcount+1, …
	InsertStride, InsertOffset int64

	FieldCount              int
	FieldLength             int
	MinFieldLength          int
	FieldLengthDistribution LengthDistribution
	// FieldLengthHistogram is the histogram lengths are drawn from with
	// FieldLengthDistribution HistogramLength, read from the file the
	// fieldlengthhistogram property names; nil otherwise.
	FieldLengthHistogram *Histogram
	FieldNamePrefix      string
	ReadAllFields        bool
	WriteAllFields       bool

	// Proportions are indexed by Operation and sum to 1.
	Proportions [numOperations]float64

	RequestDistribution   Distribution
	HotspotDataFraction   float64
	HotspotOpnFraction    float64
	ExponentialPercentile float64
	ExponentialFrac       float64

	InsertOrder InsertOrder
	ZeroPadding int

	MinScanLength          int
	MaxScanLength          int
	ScanLengthDistribution LengthDistribution

	Table         string
	DataIntegrity bool
}

// proportionTolerance is how far the proportions may sum from 1: workload
// files write them with a few decimals (0.33+0.33+0.34).
const proportionTolerance = 1e-3

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// ValidIdentifier reports whether s is a plain SQL identifier that every
// database accepts unquoted: a letter or underscore, then letters, digits
// and underscores, at most 63 characters.
func ValidIdentifier(s string) bool { return identifier.MatchString(s) }

// MaxCount bounds recordcount, operationcount, insertstart and insertcount:
// 10^15 is more than any run reaches, and key numbers made from their sums
// (the keys inserts add, the key space a chooser draws from) then stay far
// from overflowing.
const MaxCount = 1e15

// Validate checks the spec; each error names the property and what to do.
func (s *Spec) Validate() error {
	switch {
	case s.RecordCount <= 0:
		return fmt.Errorf("recordcount=%d: it must be at least 1 (the number of records loaded)", s.RecordCount)
	case s.OperationCount < 0:
		return fmt.Errorf("operationcount=%d must not be negative", s.OperationCount)
	case s.InsertStart < 0:
		return fmt.Errorf("insertstart=%d must not be negative", s.InsertStart)
	case s.InsertCount <= 0:
		return fmt.Errorf("insertcount=%d: it must be at least 1 (insertcount defaults to recordcount - insertstart)", s.InsertCount)
	case s.RecordCount > MaxCount:
		return tooMany("recordcount", s.RecordCount)
	case s.OperationCount > MaxCount:
		return tooMany("operationcount", s.OperationCount)
	case s.InsertStart > MaxCount:
		return tooMany("insertstart", s.InsertStart)
	case s.InsertCount > MaxCount:
		return tooMany("insertcount", s.InsertCount)
	case s.InsertStride < 0 || s.InsertOffset < 0 || s.InsertOffset >= max(s.InsertStride, 1):
		return fmt.Errorf("insert key offset %d is not below the number of clients %d", s.InsertOffset, s.InsertStride)
	case s.FieldCount < 1 || s.FieldCount > 1000:
		return fmt.Errorf("fieldcount=%d: it must be between 1 and 1000", s.FieldCount)
	case s.FieldLength < 1:
		return fmt.Errorf("fieldlength=%d: it must be at least 1", s.FieldLength)
	case s.MinFieldLength < 1 || s.MinFieldLength > s.FieldLength:
		return fmt.Errorf("minfieldlength=%d: it must be between 1 and fieldlength=%d", s.MinFieldLength, s.FieldLength)
	case s.MinScanLength < 1 || s.MinScanLength > s.MaxScanLength:
		return fmt.Errorf("minscanlength=%d, maxscanlength=%d: scan lengths must satisfy 1 <= minscanlength <= maxscanlength", s.MinScanLength, s.MaxScanLength)
	case s.ZeroPadding < 1 || s.ZeroPadding > 64:
		return fmt.Errorf("zeropadding=%d: it must be between 1 and 64", s.ZeroPadding)
	case !inUnit(s.HotspotDataFraction) || !inUnit(s.HotspotOpnFraction):
		return fmt.Errorf("hotspotdatafraction=%g, hotspotopnfraction=%g: both must be between 0 and 1", s.HotspotDataFraction, s.HotspotOpnFraction)
	case !(s.ExponentialPercentile > 0 && s.ExponentialPercentile < 100):
		return fmt.Errorf("exponential.percentile=%g: it must be between 0 and 100 (exclusive)", s.ExponentialPercentile)
	case !(s.ExponentialFrac > 0):
		return fmt.Errorf("exponential.frac=%g: it must be greater than 0", s.ExponentialFrac)
	case !ValidIdentifier(s.Table):
		return fmt.Errorf("table=%s is not a plain identifier; use ASCII letters, digits and _ (starting with a letter or _), at most 63 characters", shownName(s.Table))
	case !ValidIdentifier(s.FieldNamePrefix + strconv.Itoa(s.FieldCount-1)):
		return fmt.Errorf("fieldnameprefix=%s does not make plain column names; use ASCII letters, digits and _, at most 63 characters with the field number", shownName(s.FieldNamePrefix))
	case s.FieldLengthDistribution == HistogramLength && s.FieldLengthHistogram == nil:
		return fmt.Errorf("fieldlengthdistribution=histogram needs a histogram file (fieldlengthhistogram=FILE)")
	case s.DataIntegrity && s.FieldLengthDistribution != ConstantLength:
		return fmt.Errorf("dataintegrity=true needs fieldlengthdistribution=constant (YCSB's rule: verified values must have a known length)")
	}
	sum := 0.0
	for i, p := range s.Proportions {
		if !inUnit(p) {
			return fmt.Errorf("%s=%g: a proportion must be between 0 and 1", ProportionProperty(Operation(i)), p)
		}
		sum += p
	}
	if math.Abs(sum-1) > proportionTolerance {
		return fmt.Errorf("readproportion+updateproportion+insertproportion+scanproportion+readmodifywriteproportion = %g; they must sum to 1", sum)
	}
	return nil
}

func tooMany(property string, n int64) error {
	return fmt.Errorf("%s=%d is more than dbprobe counts (at most %d, which keeps key numbers within range); give a smaller number", property, n, int64(MaxCount))
}

// shownName quotes a refused name in ASCII and cuts it short, so that
// control characters, look-alike letters or a very long name keep the
// message one readable line.
func shownName(s string) string {
	const most = 72
	if len(s) > most {
		return strconv.QuoteToASCII(s[:most]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

func inUnit(f float64) bool { return f >= 0 && f <= 1 && !math.IsNaN(f) }

// ProportionProperty returns the property that sets an operation's share.
func ProportionProperty(o Operation) string {
	return [...]string{"readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion"}[o]
}

// MaxFieldLength returns the longest value a field can be given: the
// histogram's longest length with fieldlengthdistribution=histogram, which
// ignores fieldlength as YCSB does, and fieldlength otherwise. It sizes the
// field columns.
func (s *Spec) MaxFieldLength() int {
	if s.FieldLengthDistribution == HistogramLength && s.FieldLengthHistogram != nil {
		return s.FieldLengthHistogram.MaxLength()
	}
	return s.FieldLength
}

// FieldNames returns the field column names: FIELD0 … FIELDn-1 with the
// default prefix, upper-cased as in the Azure SQL test's schema.
func (s *Spec) FieldNames() []string {
	names := make([]string, s.FieldCount)
	for i := range names {
		names[i] = upper(s.FieldNamePrefix) + strconv.Itoa(i)
	}
	return names
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// UsedOperations returns the operations with a non-zero proportion.
func (s *Spec) UsedOperations() []Operation {
	var ops []Operation
	for _, o := range Operations {
		if s.Proportions[o] > 0 {
			ops = append(ops, o)
		}
	}
	return ops
}

// InsertKey is the key number of the insert numbered seq in the run's
// sequence (recordcount, recordcount+1, … as the inserts are handed out):
// seq itself for a lone client, and this client's own key numbers when
// several share the run (InsertStride). Numbers below recordcount, the
// loaded records, are their own key numbers.
func (s *Spec) InsertKey(seq int64) int64 {
	if s.InsertStride <= 1 || seq < s.RecordCount {
		return seq
	}
	return s.RecordCount + (seq-s.RecordCount)*s.InsertStride + s.InsertOffset
}

// insertSeq is InsertKey's inverse for a key number it returned.
func (s *Spec) insertSeq(key int64) int64 {
	if s.InsertStride <= 1 || key < s.RecordCount {
		return key
	}
	return s.RecordCount + (key-s.RecordCount-s.InsertOffset)/s.InsertStride
}
