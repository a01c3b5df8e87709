package cli

import (
	"strings"
	"testing"

	"dbprobe/internal/driver"
)

// The header's command line hides secrets given as properties, in every
// spelling of -p, as well as the target's password.
func TestCommandLineHidesSecrets(t *testing.T) {
	args := []string{"dbprobe", "run", "--db", "postgres://bob:S3cretPW@127.0.0.1/db",
		"-p", "db.passwd=Canary1", "-pdb.password=Canary2", "-p=api.token=Canary3",
		"--property", "client.secret=Canary4", "--property=db.passwd=Canary5",
		"-p", "recordcount=1000", "-P", "workloads/workloada", "--threads", "4"}
	got := redactCommand(args, driver.Target{Password: "S3cretPW"})
	for _, secret := range []string{"S3cretPW", "Canary"} {
		if strings.Contains(got, secret) {
			t.Errorf("the command line shows %s: %s", secret, got)
		}
	}
	for _, kept := range []string{"db.passwd=xxxxx", "-pdb.password=xxxxx", "--property=db.passwd=xxxxx", "client.secret=xxxxx", "-p recordcount=1000", "-P workloads/workloada", "--threads 4"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the command line lacks %q: %s", kept, got)
		}
	}
}
