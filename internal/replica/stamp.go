package replica

import (
	"crypto/rand"
	"fmt"
	"time"
)

// StampLen is the width of a version stamp: '@', the run's epoch, and
// the version in ten base-36 digits. The rest of the field keeps its
// random bytes, so values keep YCSB's length.
const StampLen = 1 + EpochLen + versionDigits

const (
	// EpochLen is an epoch's width: six base-36 digits of the run's start
	// (seconds from epochBase) and four random ones, which tell apart
	// runs started in the same second.
	EpochLen      = epochTime + 4
	epochTime     = 6
	versionDigits = 10
	stampMark     = '@'
	// maxVersion is the highest version ten base-36 digits hold: 36^10-1,
	// about 3.6·10^15, more updates than any run makes.
	maxVersion = 3_656_158_440_062_975
)

// epochBase is the zero of epochs' start times; six base-36 digits of
// seconds from it last until 2093.
var epochBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const digits = "0123456789abcdefghijklmnopqrstuvwxyz"

// Epoch tells one run's stamps from every other's, and says when the run
// started: ten base-36 digits. It also names the run's heartbeat table,
// so that a later run can tell whether this one was still going when it
// started (see Tracker).
type Epoch [EpochLen]byte

// NewEpoch returns the epoch of a run that starts at start.
func NewEpoch(start time.Time) (Epoch, error) {
	var e Epoch
	var b [EpochLen - epochTime]byte
	if _, err := rand.Read(b[:]); err != nil {
		return e, fmt.Errorf("replica: a random epoch: %w", err)
	}
	s := uint64(max(start.Sub(epochBase)/time.Second, 0))
	for i := epochTime - 1; i >= 0; i-- {
		e[i] = digits[s%36]
		s /= 36
	}
	for i, c := range b {
		e[epochTime+i] = digits[c%36]
	}
	return e, nil
}

// Start is when the run of the epoch started, to the second.
func (e Epoch) Start() time.Time {
	var s int64
	for _, c := range e[:epochTime] {
		s = s*36 + int64(digit(c))
	}
	return epochBase.Add(time.Duration(s) * time.Second)
}

// String is the epoch's ten digits.
func (e Epoch) String() string { return string(e[:]) }

// ParseEpoch reads an epoch from its ten digits.
func ParseEpoch(s string) (Epoch, bool) {
	var e Epoch
	if len(s) != EpochLen {
		return e, false
	}
	for i := 0; i < EpochLen; i++ {
		if digit(s[i]) < 0 {
			return e, false
		}
		e[i] = s[i]
	}
	return e, true
}

// digit is the value of a base-36 digit, -1 for another byte.
func digit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 10
	}
	return -1
}

// Stamp writes the stamp of version v into dst[:StampLen]; dst must be at
// least that long and v at most maxVersion (a higher one wraps).
func Stamp(dst []byte, e Epoch, v uint64) {
	dst[0] = stampMark
	copy(dst[1:], e[:])
	for i := StampLen - 1; i > EpochLen; i-- {
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
	// Foreign is a value another run stamped: its version means nothing
	// here, and its epoch says which run.
	Foreign
)

// ReadStamp reads the stamp at the start of a value: its kind, its
// version, and for a foreign one its epoch.
func ReadStamp(value []byte, e Epoch) (StampKind, uint64, Epoch) {
	var other Epoch
	if len(value) < StampLen || value[0] != stampMark {
		return Unstamped, 0, other
	}
	var v uint64
	for _, c := range value[1+EpochLen : StampLen] {
		d := digit(c)
		if d < 0 {
			return Unstamped, 0, other
		}
		v = v*36 + uint64(d)
	}
	own := true
	for i, c := range value[1 : 1+EpochLen] {
		if digit(c) < 0 {
			return Unstamped, 0, other
		}
		other[i] = c
		own = own && c == e[i]
	}
	if own {
		return Own, v, Epoch{}
	}
	return Foreign, v, other
}
