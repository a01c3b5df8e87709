package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// noisy draws n runs around level with a coefficient of variation cv:
// log-normal, the shape of run-to-run spread of a rate or a latency.
func noisy(rng *rand.Rand, n int, level, cv float64) []float64 {
	out := make([]float64, n)
	sigma := math.Sqrt(math.Log1p(cv * cv))
	for i := range out {
		out[i] = level * math.Exp(sigma*rng.NormFloat64()-sigma*sigma/2)
	}
	return out
}

// TestFalseDifferenceRate is the first synthetic check: over
// 10,000 comparisons of A against A (both sides from one distribution),
// compare says "difference" at most 5% (± 0.5%) of the time. With 5 runs
// per side the exact test rejects at 3.2% (2·4/252), below the 5% it is
// allowed.
func TestFalseDifferenceRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	const trials = 10000
	false_ := 0
	for range trials {
		m := Judge(noisy(rng, 5, 10000, 0.03), noisy(rng, 5, 10000, 0.03), true, 0)
		if m.Outcome == Better || m.Outcome == Worse {
			false_++
		}
	}
	rate := float64(false_) / trials
	t.Logf("A/A: %d false differences in %d (%.2f%%)", false_, trials, 100*rate)
	if rate > 0.055 {
		t.Errorf("false difference rate %.2f%%, want at most 5%% (± 0.5%%)", 100*rate)
	}
	// The test is not so timid it never rejects: the exact level is
	// 3.17%; 10,000 trials put the rate within ±0.5% of it.
	if math.Abs(rate-8.0/252) > 0.005 {
		t.Errorf("false difference rate %.2f%%, want about 3.17%% (the exact test's level)", 100*rate)
	}
}

// TestPowerAtTenPercent is the second synthetic check: a true
// 10% shift at a 3% coefficient of variation is found, in the right
// direction, in at least 80% of comparisons with 5 runs per side.
func TestPowerAtTenPercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	const trials = 10000
	found := 0
	for range trials {
		m := Judge(noisy(rng, 5, 10000, 0.03), noisy(rng, 5, 11000, 0.03), true, 0)
		if m.Outcome == Better {
			found++
		}
	}
	share := float64(found) / trials
	t.Logf("10%% shift at 3%% CV: found in %.1f%%", 100*share)
	if share < 0.8 {
		t.Errorf("found in %.1f%% of comparisons, want at least 80%%", 100*share)
	}
	// Latency, where lower is better: a 10% rise is worse.
	worse := 0
	for range 1000 {
		m := Judge(noisy(rng, 5, 400, 0.03), noisy(rng, 5, 440, 0.03), false, 0)
		if m.Outcome == Worse {
			worse++
		}
	}
	if worse < 800 {
		t.Errorf("a 10%% latency rise found worse in %d of 1000, want at least 800", worse)
	}
}

// TestIntervalCoversTheShift checks the change's interval covers the
// true change at least 95% of the time (it is conservative: 96.8% with
// 5 runs per side).
func TestIntervalCoversTheShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	covered := 0
	const trials = 4000
	for range trials {
		m := Judge(noisy(rng, 5, 1000, 0.05), noisy(rng, 5, 1040, 0.05), true, 0)
		if m.Change.Low <= 0.04 && 0.04 <= m.Change.High {
			covered++
		}
	}
	// 95% of 4000 less three standard errors (≈ 41).
	if covered < 3759 {
		t.Errorf("covered the true 4%% change in %d of %d", covered, trials)
	}
}

func TestVerdictWording(t *testing.T) {
	a := []float64{1000, 1010, 990, 1005, 995}
	faster := []float64{1100, 1110, 1090, 1105, 1095}
	cases := []struct {
		name     string
		a, b     []float64
		higher   bool
		min      float64
		outcome  Outcome
		contains []string
	}{
		{"faster", a, faster, true, 0, Better, []string{"B is 10.0% faster (95% CI ", "p = 0.008, 5 runs each)"}},
		{"slower", faster, a, true, 0, Worse, []string{"B is 9.1% slower (95% CI "}},
		{"latency lower is better", faster, a, false, 0, Better, []string{"B is better: 9.1% lower (95% CI "}},
		{"latency higher is worse", a, faster, false, 0, Worse, []string{"B is worse: 10.0% higher (95% CI "}},
		{"below min effect", a, faster, true, 0.2, BelowMinEffect, []string{"no difference that matters: B is 10.0% faster", "less than --min-effect 20.0%"}},
		{"same", a, []float64{1001, 1009, 991, 1004, 996}, true, 0, NoDifference, []string{"no difference shown (p = ", "with this spread, 5 runs per side would detect ", "% or more"}},
		{"min effect needs runs", a, []float64{1001, 1009, 991, 1004, 996}, true, 0.01, NoDifference, []string{"1.0% (--min-effect) would need "}},
		{"too few", []float64{1000, 1010, 990}, []float64{1040, 1050, 1030}, true, 0, TooFew, []string{"no verdict: 3 runs each, too few for the rank test to reach p < 0.05 (it needs 4 runs per side); with this spread, ", " runs per side would show the 4.0% seen here"}},
		{"one run each", []float64{1000}, []float64{1100}, true, 0, TooFew, []string{"no verdict: 1 run each", "run at least 4 per side (one run per side shows no spread)"}},
		{"all the same", []float64{7, 7, 7, 7, 7}, []float64{7, 7, 7, 7, 7}, false, 0, NoDifference, []string{"no difference shown (p = 1.00): every run of both sides measured the same"}},
		{"factor", a, []float64{3000, 3030, 2970, 3015, 2985}, true, 0, Better, []string{"B is 3.00× as fast (95% CI 2.9", "×, p = 0.008, 5 runs each)"}},
		{"latency factor", a, []float64{3000, 3030, 2970, 3015, 2985}, false, 0, Worse, []string{"B is worse: 3.00× as high (95% CI "}},
		{"unequal sides", []float64{1000, 1010, 990}, []float64{1100, 1110, 1090, 1105, 1095, 1101}, true, 0, Better, []string{"3 runs in A, 6 in B)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Judge(c.a, c.b, c.higher, c.min)
			if m.Outcome != c.outcome {
				t.Errorf("outcome %q, want %q (%s)", m.Outcome, c.outcome, m.Verdict)
			}
			for _, s := range c.contains {
				if !strings.Contains(m.Verdict, s) {
					t.Errorf("verdict %q lacks %q", m.Verdict, s)
				}
			}
		})
	}
}

// TestRunsNeededShowsTheChange checks the runs a too-few verdict asks
// for would show the change seen: Judge on that many runs drawn at the
// same spread finds it most of the time.
func TestRunsNeededShowsTheChange(t *testing.T) {
	m := Judge([]float64{1000, 1030, 970}, []float64{1050, 1080, 1020}, true, 0)
	if m.Outcome != TooFew || m.RunsNeeded < 4 {
		t.Fatalf("%+v", m)
	}
	rng := rand.New(rand.NewPCG(21, 4))
	n, found := m.RunsNeeded, 0
	cv := m.sd
	for range 1000 {
		x := Judge(noisy(rng, n, 1000, cv), noisy(rng, n, 1000*(1+m.Change.Estimate), cv), true, 0)
		if x.Outcome == Better {
			found++
		}
	}
	if found < 740 {
		t.Errorf("%d runs per side found the %.1f%% change in %d of 1000, want about 800", n, 100*m.Change.Estimate, found)
	}
}

func TestNotCompared(t *testing.T) {
	if m := Judge(nil, []float64{1}, true, 0); m.Outcome != NotCompared {
		t.Errorf("empty side: %q", m.Outcome)
	}
	// Zero values have no logarithm: the change is a difference over
	// A's median instead.
	m := Judge([]float64{0, 10, 12, 11, 9}, []float64{20, 21, 22, 19, 23}, false, 0)
	if m.Change == nil || m.Change.Scale != "difference" || m.Outcome != Worse {
		t.Errorf("zeros: %+v", m)
	}
	if m := Judge([]float64{0, 0, 0, 0}, []float64{1, 2, 3, 4}, false, 0); m.Outcome != NotCompared || !strings.Contains(m.Verdict, "A's median is 0") {
		t.Errorf("zero median: %q %q", m.Outcome, m.Verdict)
	}
}

// A fall to a third is as large a change on the log scale as a rise to
// three times: the runs needed to show it must not depend on which side
// is A (they were read from the percentage, 67% against 200%).
func TestRunsNeededIsSymmetric(t *testing.T) {
	a, b := []float64{18000, 23000, 28000}, []float64{3300, 7200, 11800}
	up, down := Judge(b, a, true, 0), Judge(a, b, true, 0)
	if up.Outcome != TooFew || down.Outcome != TooFew {
		t.Fatalf("outcomes %q and %q, want both %q", up.Outcome, down.Outcome, TooFew)
	}
	if up.RunsNeeded != down.RunsNeeded {
		t.Errorf("runs needed: %d for B above A, %d for B below A; want the same\n%s\n%s", up.RunsNeeded, down.RunsNeeded, up.Verdict, down.Verdict)
	}
}
