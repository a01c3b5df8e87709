// Package fleet lets several dbprobe processes, on one machine or many,
// run one experiment together: each takes its slice of the work
// (--client-index i --client-count n), they start their measured phase at
// an agreed instant (--start-at), each measures its clock against the
// database server's, and each checks before it starts that the server
// accepts the connections all of them will open. dbprobe merge then
// combines their results exactly (result.Merge).
//
// The slices follow YCSB's own rules so that a YCSB user recognises them:
// a load's records are insertstart/insertcount ranges, one contiguous
// range per client; a run's operationcount and target are shared out; and
// a run's inserts take key numbers no other client takes.
package fleet
