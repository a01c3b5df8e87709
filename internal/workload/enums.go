package workload

import (
	"fmt"
	"strings"
)

// Operation is one kind of transaction of the core workload.
type Operation int

// The core workload's operations, in the order of their proportions.
const (
	Read Operation = iota
	Update
	Insert
	Scan
	ReadModifyWrite
	numOperations
)

// Operations lists every operation in proportion order.
var Operations = []Operation{Read, Update, Insert, Scan, ReadModifyWrite}

var operationNames = [...]string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}

// String returns the name YCSB prints for the operation.
func (o Operation) String() string {
	if o >= 0 && o < numOperations {
		return operationNames[o]
	}
	return fmt.Sprintf("operation(%d)", int(o))
}

// Distribution is how keys are chosen for requests.
type Distribution int

// The request distributions of the core workload.
const (
	Uniform Distribution = iota
	Zipfian
	Latest
	Hotspot
	Sequential
	Exponential
)

var distributionNames = [...]string{"uniform", "zipfian", "latest", "hotspot", "sequential", "exponential"}

// String returns the property value naming the distribution.
func (d Distribution) String() string { return nameOf(distributionNames[:], int(d)) }

// ParseDistribution parses a requestdistribution value.
func ParseDistribution(s string) (Distribution, error) {
	i, err := parseName("requestdistribution", s, distributionNames[:])
	return Distribution(i), err
}

// LengthDistribution is how field lengths or scan lengths are drawn.
type LengthDistribution int

// The length distributions.
const (
	ConstantLength LengthDistribution = iota
	UniformLength
	ZipfianLength
	// HistogramLength draws field lengths from a histogram file
	// (fieldlengthhistogram); see Histogram.
	HistogramLength
)

var lengthNames = [...]string{"constant", "uniform", "zipfian", "histogram"}

// String returns the property value naming the distribution.
func (d LengthDistribution) String() string { return nameOf(lengthNames[:], int(d)) }

// ParseFieldLengthDistribution parses fieldlengthdistribution.
func ParseFieldLengthDistribution(s string) (LengthDistribution, error) {
	i, err := parseName("fieldlengthdistribution", s, lengthNames[:])
	return LengthDistribution(i), err
}

// ParseScanLengthDistribution parses scanlengthdistribution, which YCSB
// allows to be uniform or zipfian only.
func ParseScanLengthDistribution(s string) (LengthDistribution, error) {
	i, err := parseName("scanlengthdistribution", s, lengthNames[UniformLength:HistogramLength])
	return LengthDistribution(i + 1), err
}

// InsertOrder is whether key numbers are hashed before they are named.
type InsertOrder int

// The insert orders.
const (
	Hashed InsertOrder = iota
	Ordered
)

var insertOrderNames = [...]string{"hashed", "ordered"}

// String returns the property value naming the order.
func (o InsertOrder) String() string { return nameOf(insertOrderNames[:], int(o)) }

// ParseInsertOrder parses insertorder.
func ParseInsertOrder(s string) (InsertOrder, error) {
	i, err := parseName("insertorder", s, insertOrderNames[:])
	return InsertOrder(i), err
}

func nameOf(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("unknown(%d)", i)
}

func parseName(property, s string, names []string) (int, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for i, n := range names {
		if v == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s=%s is not known; use one of %s", property, s, strings.Join(names, ", "))
}
