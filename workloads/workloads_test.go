package workloads

import (
	"strings"
	"testing"
)

func TestLookupByLetterFileAndPath(t *testing.T) {
	for _, name := range []string{"a", "A", "workloada", "workloads/workloada", "./workloads/workloada"} {
		text, canonical, ok := Lookup(name)
		if !ok || canonical != "workloads/workloada" || !strings.Contains(text, "readproportion=0.5") {
			t.Errorf("Lookup(%q) = %q, %v", name, canonical, ok)
		}
	}
	for _, name := range []string{"g", "workloadz", "mixed", ""} {
		if _, _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) found a workload", name)
		}
	}
}

// The core workloads' facts (DESIGN.md) are what users compare with YCSB.
func TestCoreWorkloadFacts(t *testing.T) {
	facts := map[string][]string{
		"a": {"readproportion=0.5", "updateproportion=0.5", "requestdistribution=zipfian"},
		"b": {"readproportion=0.95", "updateproportion=0.05", "requestdistribution=zipfian"},
		"c": {"readproportion=1", "requestdistribution=zipfian"},
		"d": {"readproportion=0.95", "insertproportion=0.05", "requestdistribution=latest"},
		"e": {"scanproportion=0.95", "insertproportion=0.05", "requestdistribution=zipfian", "scanlengthdistribution=uniform"},
		"f": {"readproportion=0.5", "readmodifywriteproportion=0.5", "requestdistribution=zipfian"},
	}
	for _, letter := range Names {
		text := MustText(letter)
		for _, want := range append(facts[letter], "fieldcount=10", "fieldlength=100", "readallfields=true", "writeallfields=false", "insertorder=hashed") {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("workload %s lacks %q", letter, want)
			}
		}
	}
}
