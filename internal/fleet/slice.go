package fleet

import (
	"fmt"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// MaxCount is the most clients one run may have: more than any cluster
// here drives, and few enough that a mistyped count is caught.
const MaxCount = 10000

// Slice is one client's place among the clients of a run. The zero Slice
// is not valid; One is a run of one client.
type Slice struct {
	// Index is the client's number, 0 to Count-1 (--client-index).
	Index int
	// Count is how many clients the run has (--client-count).
	Count int
}

// One is the slice of a run of a single client: all of the work.
var One = Slice{Index: 0, Count: 1}

// Several reports whether the run has more than one client.
func (s Slice) Several() bool { return s.Count > 1 }

// Validate refuses an index out of range or a count below 1, in the
// terms of the flags.
func (s Slice) Validate() error {
	switch {
	case s.Count < 1 || s.Count > MaxCount:
		return badinput.New("--client-count %d: give the number of clients of the run, 1 to %d", s.Count, MaxCount)
	case s.Index < 0 || s.Index >= s.Count:
		return badinput.New("--client-index %d is out of range for --client-count %d: give 0 to %d, a different one to each client", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// Share returns the part of total that falls to the client: its first
// item and how many. The first total%Count clients take one more than the
// others, so the parts differ by at most one and add up to total.
func (s Slice) Share(total int64) (first, n int64) {
	c, i := int64(s.Count), int64(s.Index)
	base, rem := total/c, total%c
	n = base
	if i < rem {
		n++
	}
	return i*base + min(i, rem), n
}

// Load is a load phase's spec for this client: its own contiguous range
// of record numbers within insertstart … insertstart+insertcount-1, as
// YCSB's insertstart and insertcount give each client when they are set
// by hand. It refuses a run with more clients than records.
func (s Slice) Load(spec workload.Spec) (workload.Spec, error) {
	if !s.Several() {
		return spec, nil
	}
	if int64(s.Count) > spec.InsertCount {
		return spec, badinput.New("--client-count %d is more than the %d records to load (insertcount): some clients would load nothing; use fewer clients", s.Count, spec.InsertCount)
	}
	first, n := s.Share(spec.InsertCount)
	spec.InsertStart += first
	spec.InsertCount = n
	return spec, nil
}

// Run is a run phase's spec for this client: its share of
// operationcount (0, a run bounded by time alone, stays 0), and inserts
// that take the key numbers recordcount + k×Count + Index, so that no two
// clients ever insert the same key. Reads, updates and scans still choose
// among every loaded record.
func (s Slice) Run(spec workload.Spec) (workload.Spec, error) {
	if !s.Several() {
		return spec, nil
	}
	if spec.OperationCount > 0 {
		if int64(s.Count) > spec.OperationCount {
			return spec, badinput.New("--client-count %d is more than the %d operations of the run (operationcount): some clients would do nothing; use fewer clients or more operations", s.Count, spec.OperationCount)
		}
		_, spec.OperationCount = s.Share(spec.OperationCount)
	}
	spec.InsertStride = int64(s.Count)
	spec.InsertOffset = int64(s.Index)
	return spec, nil
}

// Target is the client's share of the whole run's target rate: an equal
// part, so that the clients together pace at the rate asked for.
func (s Slice) Target(total float64) float64 {
	if !s.Several() {
		return total
	}
	return total / float64(s.Count)
}

// Seed is the client's seed from the run's: clients given the same --seed
// must not draw the same keys, so each one's is moved by its index times
// the 64-bit golden ratio, which keeps the workers' seeds (seed + worker)
// of different clients apart.
func (s Slice) Seed(seed uint64) uint64 {
	return seed + uint64(s.Index)*0x9E3779B97F4A7C15
}

// Describe says in a line what the client does of a phase, for the
// header: "client 1 of 3: records 334 to 666 (insertstart 334, insertcount 333)".
func (s Slice) Describe(load bool, spec workload.Spec, target float64) string {
	d := fmt.Sprintf("client %d of %d: ", s.Index, s.Count)
	if load {
		d += fmt.Sprintf("records %d to %d (insertstart %d, insertcount %d)", spec.InsertStart, spec.InsertStart+spec.InsertCount-1, spec.InsertStart, spec.InsertCount)
	} else {
		if spec.OperationCount > 0 {
			d += fmt.Sprintf("%d operations (its share of operationcount); ", spec.OperationCount)
		}
		d += fmt.Sprintf("its inserts take key numbers %d + %d×k + %d; reads, updates and scans choose among all records", spec.RecordCount, spec.InsertStride, spec.InsertOffset)
	}
	if target > 0 {
		d += fmt.Sprintf("; target %g ops/s, its share", target)
	}
	return d
}
