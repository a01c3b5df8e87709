// Package compare tells whether two sets of runs differ: side A's result
// files against side B's, metric by metric (throughput; p50 and p99 of
// each operation; a storage experiment's rate; a stress run's server
// cost per iteration), with a verdict a skeptic accepts or none at all.
//
// Each result file is one run. Per metric the sides' values are
// compared with the Mann–Whitney rank test and the Hodges–Lehmann shift
// with its rank confidence interval (internal/report/stats), on the log
// scale so a shift is a ratio, "B is 4.1% faster", and the p-values are
// Holm-adjusted over the metrics compared, so that looking at ten metrics
// does not find a difference by chance. Too few runs for the test to
// reach p < 0.05 give no verdict and the runs that would; no difference
// shown says what difference these runs could have shown.
//
// Run is the entry point for dbprobe compare, sweep and report: it
// checks the two sides ran the same experiment and workload (refused
// with bad input otherwise, unless Options.Force), lists every setting
// that differs, and returns a Comparison that WriteText and WriteJSON
// render. Conditions (ParseCondition) are --fail-if's: a CI pipeline's
// "throughput<-5%".
package compare
