// Package cli holds dbprobe's cobra commands. Flags become an
// experiment's typed configuration here and nowhere else: each value with
// where it came from (provenance.go, one mechanism for every flag), the
// command line with its secrets hidden (ycsb.go); the experiment itself
// (internal/ycsb, internal/durability) does the work.
package cli
