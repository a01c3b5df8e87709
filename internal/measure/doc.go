// Package measure records latencies into HDR histograms, one Recorder per
// worker so the hot path only ever takes its own worker's lock, and merges
// them exactly on a tick into interval and cumulative views.
//
// Values are microseconds with 3 significant digits over 0 µs … 1 hour.
// A value above the range is recorded at the top of the range and counted
// as an overflow, so it is flagged in the output, never dropped.
package measure
