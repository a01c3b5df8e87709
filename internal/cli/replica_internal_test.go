package cli

import (
	"strings"
	"testing"
)

// The header's command line hides the --read-db URL's password in both
// spellings, as it does --db's.
func TestCommandLineHidesReadDBPassword(t *testing.T) {
	args := []string{"dbprobe", "run", "--db", "postgres://bob:S3cretPW@127.0.0.1/db",
		"--read-db", "postgres://bob:S3cretRO@127.0.0.2/db", "--read-db=postgres://bob:S3cretRO2@127.0.0.3/db"}
	got := redactCommand(args, newRunCommand().Flags())
	if strings.Contains(got, "S3cret") {
		t.Errorf("the command line shows a password: %s", got)
	}
	for _, kept := range []string{"--read-db postgres://bob:xxxxx@127.0.0.2/db", "--read-db=postgres://bob:xxxxx@127.0.0.3/db"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the command line lacks %q: %s", kept, got)
		}
	}
}
