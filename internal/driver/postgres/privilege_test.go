package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	_ "github.com/dbprobe/dbprobe/internal/driver/all"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// leastPrivilegeUser creates a login role holding only the given
// privileges on the table, in a fresh database, and returns a URL that
// logs in as it. Roles belong to the whole server, so the role has a
// random name and is dropped when the test ends; the server's main user is
// never changed.
func leastPrivilegeUser(t *testing.T, admin *pgx.Conn, base, table, privileges string) string {
	t.Helper()
	ctx := context.Background()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	role := "dbprobe_lp_" + hex.EncodeToString(rnd[:])
	password := "pw-" + hex.EncodeToString(rnd[:3]) + "-least"
	quoted := pgx.Identifier{role}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE ROLE "+quoted+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatalf("create role: %v", err)
	}
	t.Cleanup(func() {
		// Registered after the database's cleanup and the admin
		// connection's, so it runs before both.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A role with grants cannot be dropped: they go first.
		if _, err := admin.Exec(ctx, "REVOKE ALL ON "+pgx.Identifier{table}.Sanitize()+" FROM "+quoted); err != nil {
			t.Errorf("revoke from %s: %v", role, err)
		}
		if _, err := admin.Exec(ctx, "DROP ROLE IF EXISTS "+quoted); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if _, err := admin.Exec(ctx, "GRANT "+privileges+" ON "+pgx.Identifier{table}.Sanitize()+" TO "+quoted); err != nil {
		t.Fatalf("grant: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)
	return u.String()
}

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Execute(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// The run phase works for a user holding only SELECT, INSERT and UPDATE on
// the table: it does not read dbprobe's marker table, create functions or
// need the catalog beyond what every user sees. A user without UPDATE is
// told so in one line before anything runs.
func TestLeastPrivilegeRun(t *testing.T) {
	base := testdb.FreshPostgresDatabase(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	if _, stderr, err := runCLI(t, "load", "--db", base, "-p", "recordcount=300"); err != nil {
		t.Fatalf("load as the main user: %v\n%s", err, stderr)
	}
	lp := leastPrivilegeUser(t, admin, base, "usertable", "SELECT, INSERT, UPDATE")
	for _, w := range []string{"a", "b", "c", "d"} {
		stdout, stderr, err := runCLI(t, "run", "--db", lp, "--workload", w, "-p", "recordcount=300", "-p", "operationcount=300", "--threads", "2")
		if err != nil {
			t.Fatalf("workload %s as the least-privilege user: %v\n%s", w, err, stderr)
		}
		if ops, failed := drivertest.Operations(stdout); ops != 300 || failed {
			t.Fatalf("workload %s: %d operations, failures %v:\n%s", w, ops, failed, stdout)
		}
	}

	// Without UPDATE: one line naming the privilege and the GRANT, exit 2,
	// and no operation sent.
	readOnly := leastPrivilegeUser(t, admin, base, "usertable", "SELECT, INSERT")
	stdout, _, err := runCLI(t, "run", "--db", readOnly, "--workload", "a", "-p", "recordcount=300", "-p", "operationcount=300")
	if !badinput.Is(err) {
		t.Fatalf("workload a without UPDATE: %v, want bad input\n%s", err, stdout)
	}
	if msg := err.Error(); !strings.Contains(msg, "lacks UPDATE") || !strings.Contains(msg, "GRANT UPDATE ON") || strings.Contains(msg, "\n") {
		t.Fatalf("message %q: want one line naming UPDATE and the GRANT", msg)
	}
	if strings.Contains(stdout, "[OVERALL]") {
		t.Fatalf("the run started anyway:\n%s", stdout)
	}
	// Workload C only reads: the same user runs it.
	if _, stderr, err := runCLI(t, "run", "--db", readOnly, "--workload", "c", "-p", "recordcount=300", "-p", "operationcount=100"); err != nil {
		t.Fatalf("workload c with SELECT only: %v\n%s", err, stderr)
	}
	// Nor may it load into the table without INSERT.
	selectOnly := leastPrivilegeUser(t, admin, base, "usertable", "SELECT")
	_, _, err = runCLI(t, "run", "--db", selectOnly, "--workload", "d", "-p", "recordcount=300", "-p", "operationcount=100")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "lacks INSERT") {
		t.Fatalf("workload d without INSERT: %v, want bad input naming INSERT", err)
	}
}
