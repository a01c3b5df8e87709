package replica

import (
	"crypto/rand"
	"fmt"
)

// StampLen is the width of a version stamp: '@', a five-letter epoch that
// tells this run's stamps from another's, and the version in ten base-36
// digits. The
// rest of the field keeps its random bytes, so values keep YCSB's length.
const StampLen = 1 + epochLen + versionDigits

const (
	epochLen      = 5
	versionDigits = 10
	stampMark     = '@'
	// maxVersion is the highest version ten base-36 digits hold: 36^10-1,
	// about 3.6·10^15, more updates than any run makes.
	maxVersion = 3_656_158_440_062_975
)

const digits = "0123456789abcdefghijklmnopqrstuvwxyz"

// Epoch tells one run's stamps from every other's: five lower-case
// letters.
type Epoch [epochLen]byte

// NewEpoch returns a random epoch.
func NewEpoch() (Epoch, error) {
	var e Epoch
	var b [epochLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return e, fmt.Errorf("replica: a random epoch: %w", err)
	}
	for i, c := range b {
		e[i] = 'a' + c%26
	}
	return e, nil
}

// Stamp writes the stamp of version v into dst[:StampLen]; dst must be at
// least that long and v at most maxVersion (a higher one wraps).
func Stamp(dst []byte, e Epoch, v uint64) {
	dst[0] = stampMark
	copy(dst[1:], e[:])
	for i := StampLen - 1; i > epochLen; i-- {
		dst[i] = digits[v%36]
		v /= 36
	}
}

// StampKind is what the start of a value says about its version.
type StampKind int

// The kinds of value a read returns.
const (
	// Unstamped is a value no run stamped: the load's, version 0.
	Unstamped StampKind = iota
	// Own is a value this run stamped.
	Own
	// Foreign is a value another run (another client) stamped: its
	// version means nothing here.
	Foreign
)

// ReadStamp reads the stamp at the start of a value.
func ReadStamp(value []byte, e Epoch) (StampKind, uint64) {
	if len(value) < StampLen || value[0] != stampMark {
		return Unstamped, 0
	}
	var v uint64
	for _, c := range value[1+epochLen : StampLen] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'z':
			d = c - 'a' + 10
		default:
			return Unstamped, 0
		}
		v = v*36 + uint64(d)
	}
	for i, c := range value[1 : 1+epochLen] {
		if c < 'a' || c > 'z' {
			return Unstamped, 0
		}
		if c != e[i] {
			return Foreign, v
		}
	}
	return Own, v
}
