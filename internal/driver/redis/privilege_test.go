package redis

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// A command the user's ACL refuses is bad input that still counts as
// NOPERM; other error replies are not bad input.
func TestNoPermIsBadInput(t *testing.T) {
	err := classify(replyError("NOPERM User lp has no permissions to run the 'hset' command"))
	if !badinput.Is(err) || driver.Code(err) != "NOPERM" {
		t.Fatalf("NOPERM: %v (code %q), want bad input with code NOPERM", err, driver.Code(err))
	}
	err = classify(replyError("ERR The user executing the script can't run this command or subcommand script: faeeba06, on @user_script:5."))
	if !badinput.Is(err) || driver.Code(err) != "NOPERM" {
		t.Fatalf("a script's refused command: %v (code %q), want bad input with code NOPERM", err, driver.Code(err))
	}
	if err := classify(replyError("WRONGTYPE Operation against a key holding the wrong kind of value")); badinput.Is(err) {
		t.Fatalf("WRONGTYPE is bad input: %v", err)
	}
}
