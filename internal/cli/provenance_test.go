package cli_test

import (
	"regexp"
	"strings"
	"testing"
)

// Every flag of the command is in the header with the value in force and
// where it came from, by one mechanism: the flags that set a property
// under that property's name, the others under their own.
func TestEveryFlagInTheHeader(t *testing.T) {
	stdout, stderr, err := run(t, "ycsb", "--db", "null", "--threads", "2", "--drain-timeout", "3s", "--no-copy", "--seed", "7", "--monitor-wait-samples", "5")
	if err != nil {
		t.Fatalf("ycsb: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		`threadcount\s+= 2\s+\(--threads\)`,
		`drain-timeout\s+= 3s\s+\(--drain-timeout\)`,
		`no-copy\s+= true\s+\(--no-copy\)`,
		`seed\s+= 7\s+\(--seed\)`,
		`monitor-wait-samples\s+= 5\s+\(--monitor-wait-samples\)`,
		`monitor-interval\s+= 1s\s+\(default\)`,
		`keep-db\s+= false\s+\(default\)`,
		`strict\s+= false\s+\(default\)`,
		`load path\s+= multi-row INSERT`,
	} {
		if !regexp.MustCompile(`(?m)^#\s+` + want).MatchString(stdout) {
			t.Errorf("the header lacks %s", want)
		}
	}
	// The flags that are properties are not listed twice.
	if strings.Contains(stdout, "#   threads ") {
		t.Errorf("--threads is listed beside threadcount:\n%s", stdout)
	}
}
