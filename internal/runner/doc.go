// Package runner drives a phase: it opens one driver session per worker,
// feeds each worker the operations of its workload generator in closed loop
// (as fast as the database answers) or open loop (paced at a target, with
// latency also measured from each operation's intended start so a stall is
// never hidden), records every outcome in the worker's own recorder, and
// ticks once a second to collect interval and cumulative figures.
package runner
