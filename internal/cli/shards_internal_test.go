package cli

import (
	"strings"
	"testing"
)

// The header's command line hides the password of every --shard URL, with
// or without record bounds, in both spellings of the flag.
func TestCommandLineHidesShardPasswords(t *testing.T) {
	args := []string{"dbprobe", "run", "--shard", "postgres://bob:Sh4rdPW1@10.0.0.1/db@0-499",
		"--shard=mysql://root:Sh4rdPW2@10.0.0.2:3306/b@500-", "--shard", "postgres://bob:Sh4rdPW3@10.0.0.3/db",
		"--shards-file", "shards.txt", "--threads", "4"}
	got := redactCommand(args, newRunCommand().Flags())
	if strings.Contains(got, "Sh4rdPW") {
		t.Errorf("the command line shows a shard's password: %s", got)
	}
	for _, kept := range []string{"--shard postgres://bob:xxxxx@10.0.0.1/db@0-499", "--shard=mysql://root:xxxxx@10.0.0.2:3306/b@500-",
		"--shard postgres://bob:xxxxx@10.0.0.3/db", "--shards-file shards.txt", "--threads 4"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the command line lacks %q: %s", kept, got)
		}
	}
}
