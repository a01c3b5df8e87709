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
	got := redactCommand(args, newRunCommand().Flags())
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
		if got := redactCommand(args, newRunCommand().Flags()); got != want {
			t.Errorf("password %q: command line\n%s\nwant\n%s", password, got, want)
		}
	}
}

// Shorthand clusters and a stray URL: the flag parser reads -sp X as -s
// and -p X, and -spX as -s and -p X; a key=URL or a URL among the
// arguments shows without its password.
func TestCommandLineReadsFlagsAsTheParserDoes(t *testing.T) {
	args := []string{"dbprobe", "load", "-sp", "db.passwd=Zq9sec1", "-spdb.passwd=Zq9sec2", "-sp=db.passwd=Zq9sec3",
		"--db", "postgres:/o:Zq9sec4@127.0.0.1/x", "db.url=jdbc:postgresql://h/db?user=x&password=Zq9sec5",
		"-P", "workloads/workloada", "-p", "db.url=jdbc:postgresql://h/db?password=Zq9sec6", "--threads=4", "-s"}
	got := redactCommand(args, newLoadCommand().Flags())
	if strings.Contains(got, "Zq9sec") {
		t.Errorf("the command line shows a secret: %s", got)
	}
	for _, kept := range []string{"-sp db.passwd=xxxxx", "-spdb.passwd=xxxxx", "-sp=db.passwd=xxxxx", "--db postgres:…", "-P workloads/workloada", "--threads=4", " -s"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the command line lacks %q: %s", kept, got)
		}
	}
}
