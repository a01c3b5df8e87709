// Package runner is the engine every experiment drives. An experiment
// gives it a Plan: its histogram series, how its units of work are shared
// among the workers (PerWorker or Sequence), and a Worker per goroutine
// that opens a session and does one step at a time (a YCSB operation, a
// statement of a stress script, a chunk of a storage test).
//
// The runner keeps what every experiment shares: it opens the sessions,
// paces the steps in closed loop (as fast as the database answers) or open
// loop (at a target, with latency also measured from each step's intended
// start, so that a stall is never hidden), and through Step it guards each
// call with the operation timeout, repeats retryable failures with a
// backoff, reopens a session whose connection is in doubt, follows the
// database's availability, counts failures by code and stops the phase on
// bad input, at a failure more attempts cannot fix (Options.OnError), and
// when a phase without a duration has waited Options.ReconnectTimeout for
// a database that does not come back (Outcome.Stopped says which). Each worker records into its own recorder; a tick once a
// second collects interval and cumulative figures, and the phase ends on
// its count, its time, or an interruption, which drains the steps in
// flight.
package runner
