package cli_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// TestMissingWritePermissionStopsTheRun runs workload A on Redis as a user
// whose ACL allows reading only. Redis cannot be asked up front, so the
// first refused write stops the run: one line naming the refusal and what
// to grant, exit 2, rather than a run full of UPDATE-FAILED; the summary
// of what ran before it is kept, as for any fault that stops a phase.
func TestMissingWritePermissionStopsTheRun(t *testing.T) {
	base := testdb.FreshRedisDatabase(t)
	if _, stderr, err := run(t, "load", "--db", base, "-p", "recordcount=200"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	admin := testdb.OpenRedis(t, base)
	ctx := context.Background()
	const user, password = "dbprobe_reader", "reader-Secret-1"
	if _, err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "+@read", "+@connection", "+@scripting", "-@write"); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })

	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	stdout, stderr, err := run(t, "run", "--db", u.String(), "--workload", "a", "-p", "recordcount=200", "-p", "operationcount=100000", "--threads", "2")
	if !badinput.Is(err) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "grant the user") {
		t.Fatalf("err = %v, want one line of bad input saying what to grant\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(err.Error(), "run stopped: ERROR(NOPERM") || !strings.Contains(stdout, "# stopped: run stopped: ERROR(NOPERM") {
		t.Fatalf("err = %v: want the stop line, also in the summary\n%s", err, stdout)
	}
	if strings.Contains(stdout, "Return=ERROR, 100000") || strings.Contains(stderr, password) || strings.Contains(err.Error(), password) {
		t.Fatalf("the run went on past the refusal, or the password shows:\n%s\n%s", stdout, stderr)
	}
}
