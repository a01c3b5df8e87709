package mysql_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// leastPrivilegeUser creates a user holding only the given privileges on
// one table of the fresh database base names, and returns a URL that logs
// in as it. Users belong to the whole server, so the user has a random
// name and is dropped when the test ends; the server's main user is never
// changed.
func leastPrivilegeUser(t *testing.T, base, table, privileges string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := testdb.OpenMySQL(t, base)
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	user := "dbprobe_lp_" + hex.EncodeToString(rnd[:])
	password := "pw-" + hex.EncodeToString(rnd[:3]) + "-least"
	account := "'" + user + "'@'%'"
	if _, err := admin.ExecContext(ctx, "CREATE USER "+account+" IDENTIFIED BY '"+password+"'"); err != nil {
		t.Fatalf("create user: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := testdb.OpenMySQL(t, base).ExecContext(ctx, "DROP USER IF EXISTS "+account); err != nil {
			t.Errorf("drop user %s: %v", user, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	database := strings.TrimPrefix(u.Path, "/")
	if _, err := admin.ExecContext(ctx, "GRANT "+privileges+" ON `"+database+"`.`"+table+"` TO "+account); err != nil {
		t.Fatalf("grant: %v", err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Execute(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// The run phase works for a user holding only SELECT, INSERT and UPDATE on
// the table, and a user without UPDATE is told so in one line, with the
// GRANT to run, before anything runs.
func TestLeastPrivilegeRun(t *testing.T) {
	base := testdb.FreshMySQLDatabase(t)
	if _, stderr, err := runCLI(t, "load", "--db", base, "-p", "recordcount=300"); err != nil {
		t.Fatalf("load as the main user: %v\n%s", err, stderr)
	}
	lp := leastPrivilegeUser(t, base, "usertable", "SELECT, INSERT, UPDATE")
	for _, w := range []string{"a", "b", "c", "d"} {
		stdout, stderr, err := runCLI(t, "run", "--db", lp, "--workload", w, "-p", "recordcount=300", "-p", "operationcount=300", "--threads", "2")
		if err != nil {
			t.Fatalf("workload %s as the least-privilege user: %v\n%s", w, err, stderr)
		}
		if ops, failed := drivertest.Operations(stdout); ops != 300 || failed {
			t.Fatalf("workload %s: %d operations, failures %v:\n%s", w, ops, failed, stdout)
		}
	}

	count := func() int {
		t.Helper()
		var n int
		if err := testdb.OpenMySQL(t, base).QueryRow("SELECT COUNT(*) FROM usertable").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()

	noUpdate := leastPrivilegeUser(t, base, "usertable", "SELECT, INSERT")
	stdout, _, err := runCLI(t, "run", "--db", noUpdate, "--workload", "b", "-p", "recordcount=300", "-p", "operationcount=300")
	if !badinput.Is(err) {
		t.Fatalf("workload b without UPDATE: %v, want bad input\n%s", err, stdout)
	}
	if msg := err.Error(); !strings.Contains(msg, "lacks UPDATE") || !strings.Contains(msg, "GRANT UPDATE ON `usertable`") || strings.Contains(msg, "\n") {
		t.Fatalf("message %q: want one line naming UPDATE and the GRANT", msg)
	}
	if strings.Contains(stdout, "[OVERALL]") {
		t.Fatalf("the run started anyway:\n%s", stdout)
	}
	if _, stderr, err := runCLI(t, "run", "--db", noUpdate, "--workload", "c", "-p", "recordcount=300", "-p", "operationcount=100"); err != nil {
		t.Fatalf("workload c with SELECT and INSERT: %v\n%s", err, stderr)
	}
	// Nothing changed: the probes match no row and are rolled back.
	if n := count(); n != before {
		t.Fatalf("usertable holds %d rows, %d before the refused run", n, before)
	}
}
