package cli

import (
	"strings"
	"testing"
)

// The header's command line hides secrets given as properties, in every
// spelling of -p, as well as the password of the --db URL, in both
// spellings of --db.
func TestCommandLineHidesSecrets(t *testing.T) {
	args := []string{"dbprobe", "run", "--db", "postgres://bob:S3cretPW@127.0.0.1/db",
		"-p", "db.passwd=Canary1", "-pdb.password=Canary2", "-p=api.token=Canary3",
		"--property", "client.secret=Canary4", "--property=db.passwd=Canary5",
		"--db=mysql://root:S3cretPW2@127.0.0.1:3306/b?timeout=5s",
		"--db", "redis://127.0.0.1/0?password=S3cretPW3",
		"-p", "recordcount=1000", "-P", "workloads/workloada", "--threads", "4"}
	got := redactCommand(args)
	for _, secret := range []string{"S3cretPW", "Canary"} {
		if strings.Contains(got, secret) {
			t.Errorf("the command line shows %s: %s", secret, got)
		}
	}
	for _, kept := range []string{"--db postgres://bob:xxxxx@127.0.0.1/db", "--db=mysql://root:xxxxx@127.0.0.1:3306/b?timeout=5s",
		"--db redis://127.0.0.1/0?password=xxxxx",
		"db.passwd=xxxxx", "-pdb.password=xxxxx", "--property=db.passwd=xxxxx", "client.secret=xxxxx", "-p recordcount=1000", "-P workloads/workloada", "--threads 4"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the command line lacks %q: %s", kept, got)
		}
	}
}

// The password is hidden where it is given, and nowhere else: a short one,
// or one that is also a value of another argument, changes nothing else.
func TestCommandLineKeepsOtherArguments(t *testing.T) {
	for _, password := range []string{"o", "1000", "4", "workloads", "run"} {
		args := []string{"dbprobe", "run", "--db", "mysql://u:" + password + "@127.0.0.1:1/x",
			"-p", "recordcount=1000", "-P", "workloads/workloada", "--threads", "4", "--out", "o.jsonl"}
		want := "dbprobe run --db mysql://u:xxxxx@127.0.0.1:1/x -p recordcount=1000 -P workloads/workloada --threads 4 --out o.jsonl"
		if got := redactCommand(args); got != want {
			t.Errorf("password %q: command line\n%s\nwant\n%s", password, got, want)
		}
	}
}
