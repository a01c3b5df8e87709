// Package keygen chooses key numbers and names keys exactly as YCSB's core
// workload does (site.ycsb.generator and CoreWorkload.buildKeyName), so that
// dbprobe touches the same keys with the same popularity as YCSB for the same
// configuration and its results can be compared with YCSB's.
//
// Key names: AppendKey and KeyName build "user" + zero-padded decimal,
// hashing the number with FNVHash64 for insertorder=hashed.
//
// Request distributions (requestdistribution), each a Chooser:
//
//	uniform     NewUniform(0, recordcount-1)
//	zipfian     NewScrambledZipfian(lo, hi) — YCSB's core workloads scramble
//	latest      NewLatest(acknowledged), one per worker
//	hotspot     NewHotspot(lo, hi, hotspotdatafraction, hotspotopnfraction)
//	sequential  NewSequential(lo, hi)
//	exponential NewExponential(exponential.percentile, exponential.frac*recordcount),
//	            a distance back from the newest acknowledged key
//
// Field and scan lengths use NewUniform and NewZipfian over [min, max], as
// YCSB uses UniformLongGenerator and ZipfianGenerator for them.
//
// Key sequences: Counter numbers the load phase's inserts; Acknowledged
// numbers run-phase inserts and tells readers, through Last, which keys are
// known to exist. As in YCSB's CoreWorkload, the runner redraws a key above
// Acknowledged.Last (and, for exponential, below 0) so reads only target
// inserted keys.
//
// Randomness comes from the caller: every Next takes the worker's own
// *rand.Rand, seeded from --seed and the worker index, so choosers share no
// random state and a run can be repeated. Draws use math/rand/v2, not Java's
// Random, so the sequence of keys differs from YCSB's while the distribution
// of keys is the same. Next never allocates; see the benchmarks for its cost.
//
// Constructors panic on arguments that cannot describe a distribution (an
// empty range, a fraction outside [0, 1]): configuration is validated, with
// errors the user can act on, before it gets here.
package keygen
