// Package testdb hands integration tests the database servers that
// scripts/test starts for them. A test asks for a server and gets its URL; when
// there is none it is skipped with a message that says how to get one, except
// under CI=true, where a skipped integration test would hide a broken setup
// and the test fails instead.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresURLEnv names the variable scripts/test sets to the URL of its
// throwaway PostgreSQL.
const PostgresURLEnv = "DBPROBE_POSTGRES_URL"

// InCI reports whether the tests run in CI (CI=true), where an integration
// test must run rather than skip.
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v == "true" || v == "1" || v == "yes"
}

// Unavailable skips the test because a database is missing, or fails it under
// CI=true.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s; CI=true, so integration tests must run: run them through scripts/test on a machine with the server installed (.ci/run installs it)", why)
		return
	}
	t.Skip(why)
}

// notStarted returns why scripts/test could not start a server, as it left
// it in the variable named (DBPROBE_<SERVER>_UNAVAILABLE), ready to end a
// message; "" when it said nothing. The reason shows in the test's own
// failure, where CI's summary of a run keeps it.
func notStarted(variable string) string {
	if why := strings.TrimSpace(os.Getenv(variable)); why != "" {
		return "; scripts/test could not start it: " + why
	}
	return ""
}

// PostgresURL returns the URL of the throwaway PostgreSQL that scripts/test
// started (env DBPROBE_POSTGRES_URL). Without it the test is skipped with a
// message saying to run scripts/test or install postgresql — except when
// CI=true, where a missing database fails the test.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := strings.TrimSpace(os.Getenv(PostgresURLEnv))
	if u == "" {
		Unavailable(t, PostgresURLEnv+" is not set: run the tests with scripts/test, which starts a throwaway PostgreSQL (install the Debian package postgresql first if it says the server is not found)"+notStarted("DBPROBE_POSTGRES_UNAVAILABLE"))
	}
	return u
}

// FreshPostgresDatabase creates an empty database on the server PostgresURL
// names, dbprobe_test_<random>, and returns its URL. The database is dropped
// when the test ends, after the test's own cleanups (register closing your
// connections after calling this). Tests in different packages, which go test
// runs in parallel, thus never share a table.
func FreshPostgresDatabase(t testing.TB) string {
	t.Helper()
	base := PostgresURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresURLEnv, redactedError(err))
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	name := "dbprobe_test_" + hex.EncodeToString(rnd[:])

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, base, name) })

	u.Path = "/" + name
	return u.String()
}

// dropDatabase drops a database the test created, ending any session a test
// left open on it.
func dropDatabase(t testing.TB, base, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("drop database %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42601" { // before PostgreSQL 13: no FORCE
		_, err = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
	}
	if err != nil {
		t.Errorf("drop database %s: %v", name, err)
	}
}

// redactedError hides a URL error's text, which quotes the URL and with it
// the password.
func redactedError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
