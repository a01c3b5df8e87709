package storage

import (
	"strings"
	"testing"
)

// The note under every storage summary says where its figures are: a
// rate for the five rate experiments, not for cache, which has none.
func TestOverallNote(t *testing.T) {
	for k := Kind(0); k <= lastKind; k++ {
		if _, ok := opUnits[k]; !ok {
			continue
		}
		note := overallNote(k)
		rate := strings.Contains(note, "rate")
		if k == Cache && rate {
			t.Errorf("cache: %q speaks of a rate", note)
		}
		if k != Cache && !rate {
			t.Errorf("%s: %q names no rate", k, note)
		}
		if !strings.Contains(note, "["+strings.ToUpper(k.String())+"]") {
			t.Errorf("%s: %q does not name its lines", k, note)
		}
	}
	if want := "[OVERALL] Throughput(ops/sec) is lookups by key per second ([CACHE-READ] Operations counts its statements); the working sets' hit shares and the estimate are [CACHE]'s"; overallNote(Cache) != want {
		t.Errorf("cache:\n got %q\nwant %q", overallNote(Cache), want)
	}
}
