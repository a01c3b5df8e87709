package measure

import (
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock. time.Now reads the wall clock
// as well, which costs about as much again: with two timestamps per
// operation that was a third of the harness's own CPU per operation.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns a monotonic timestamp in nanoseconds, for latencies only: it
// is comparable with other Now values in this process and with nothing else.
func Now() int64 { return nanotime() }

// base ties Now to wall time, so a monotonic timestamp can be shown as a time.
var base, baseWall = nanotime(), time.Now()

// Wall converts a Now timestamp to wall-clock time.
func Wall(ns int64) time.Time { return baseWall.Add(time.Duration(ns - base)) }

// FromTime converts a wall-clock time to a Now timestamp.
func FromTime(t time.Time) int64 { return base + int64(t.Sub(baseWall)) }
