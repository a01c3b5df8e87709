// Package stats holds the statistics dbprobe's comparisons, sweeps and
// reports rest on: a rank test (Mann–Whitney U), the Hodges–Lehmann
// shift with its rank confidence interval, the Holm correction for
// testing several metrics at once, and the power arithmetic behind "5
// runs per side would detect 6% or more".
//
// Why rank methods: a benchmark's runs are few (3 to 10 per side), and
// their spread is rarely normal: one run that met a checkpoint or a cold
// cache sits far from the others. A rank test's false-alarm rate holds
// whatever the shape of the spread, and the Hodges–Lehmann shift (the
// median of every B−A difference) is not dragged by one such run as a
// difference of means is. The exact null distribution of U is used for
// small samples, where the normal approximation is poor; with ties (runs
// that measured the same value) the exact permutation distribution of
// the midranks given those ties.
//
// Why written here: gonum has no rank test, and
// github.com/aclements/go-moremath/stats (the one Go's old benchstat
// used) computes wrong p-values with ties: p = 0 for A = {0, 1, 1, 0}
// against B = {2, 6, 4}, where every one of the 35 ways to split the
// seven values gives p = 2/35. The exact distribution is a short
// dynamic program over the ranks (rank.go), checked against an
// enumeration of every split in the tests.
//
// The sweep's fit of the Universal Scalability Law belongs here too: the
// statistics every analysis command shares, in one package.
//
// The package knows nothing of results or databases: it takes and
// returns numbers, so sweep, compare and report share one tested set of
// statistics.
package stats
