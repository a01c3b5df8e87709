// Package sweep runs one experiment over the values of its settings
// (dbprobe sweep --vary threads=1,2,4,8 --vary durability=full,delayed
// --reps 3 -- run …): the cross product of the values, each variant
// repeated, the repetitions interleaved in a seeded shuffled order, the
// table loaded once per shape, and a recap table of the medians with
// the curve over a numeric setting, a Universal Scalability Law fit over
// a number of workers, a drift check and prices.
//
// The caller (internal/cli) turns the flags into complete command lines,
// one per variant, checked against the experiment's own flags before
// anything runs; this package orders them, runs each as a child process
// of dbprobe (see ChildExec for why), reads each run's JSON result back
// (ReadRun) and concludes.
//
// # The summary, schema version 1
//
// One JSON document (not JSON Lines), rewritten whole after every run
// (WriteFile: a temporary file renamed over it), read by ReadSummary:
//
//   - "type": "sweep", "schema_version": 1; "command" (secrets hidden),
//     "experiment" ("run", "storage scan"), "kind" (the runs' result kind:
//     "ycsb", "stress", "storage"), "status" ("running", "complete",
//     "interrupted", "failed"), "started_at", "ended_at", "seed", "reps",
//     "cooldown_ms", "between".
//   - "vary": each --vary: "key", "values", "as" ("flag" or "property"),
//     "shaping" (changes the table: a load per value), "concurrency" (a
//     number of workers: the fit is over it).
//   - "shapes": "id", the "settings" that tell it from the others, and
//     its "load" ("command", "path", "text", "status", "start", "end").
//   - "variants": "id", "name" ("threads=4 durability=full"), "settings",
//     "shape", "command" (a run's), "runs_ok", "medians", "min", "max"
//     (by metric key), the monitor's "limit" and "verdict", "trend" (its
//     throughput against the position: "runs", "rho", "p", "change",
//     "drifts") and "cost" ("given", "per_hour", "monthly", "run",
//     "per_million_ops", "per_1000_ops_s", "per_gb").
//   - "runs", in order: "position", "variant", "rep", "path" and "text"
//     (relative to the summary's directory), "status" ("ok", "failed",
//     "interrupted", "not run"), "exit_code", "error", "start", "end",
//     "first_op", "last_op", "gap_ms" and "overhead_ms" (from the
//     previous run's last operation; overhead leaves out --cooldown and
//     --between), "between_ms", "metrics", "limit", "verdict".
//   - "rows": the recap's metric rows ("key", "label") in order.
//     Metric keys: ops_per_s, read_avg_ms, read_p99_ms, write_avg_ms,
//     write_p99_ms, iteration_avg_ms, iteration_p99_ms (stress),
//     rate_bytes_per_s and bytes (storage), errors, ops, run_s.
//   - "curves": "key", "metric", "fixed" (the other varied settings),
//     "x", "y" (the medians).
//   - "fits": over a concurrency key, per "fixed": "lambda", "sigma",
//     "kappa", "r2", "points", "peak", "knee", "sentence", "error".
//   - "drift": the whole sweep's trend (each run relative to its
//     variant's median); "overhead": "gaps", "median_ms", "max_ms";
//     "conclusions": the sentences printed under the recap; "notes".
//   - "baseline": the ID of the variant the others are compared against
//     (--baseline; absent for the first). The comparisons themselves
//     are not kept: ComparePairs makes them again from the runs'
//     results, as the sweep's text output and dbprobe report do.
//
// A reader refuses another schema version. Adding a field is compatible;
// changing one's meaning needs a new version.
package sweep
