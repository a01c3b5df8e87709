package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresReplicaURLEnv and PostgresReplicaPrimaryURLEnv name the
// variables scripts/test and scripts/with-replica set to the URLs of a
// throwaway PostgreSQL pair: a standby, and the primary it streams from,
// which is not the server of PostgresURLEnv (see scripts/lib/pgstandby.sh).
const (
	PostgresReplicaURLEnv        = "DBPROBE_POSTGRES_REPLICA_URL"
	PostgresReplicaPrimaryURLEnv = "DBPROBE_POSTGRES_REPLICA_PRIMARY_URL"
)

// PostgresReplicaPair creates an empty database on the pair's primary,
// dropped when the test ends, and returns its URL there and on the
// standby, once the standby has replayed its creation. Without the pair
// the test is skipped, or fails under CI=true.
func PostgresReplicaPair(t testing.TB) (primaryURL, replicaURL string) {
	t.Helper()
	base := strings.TrimSpace(os.Getenv(PostgresReplicaPrimaryURLEnv))
	rbase := strings.TrimSpace(os.Getenv(PostgresReplicaURLEnv))
	if base == "" || rbase == "" {
		Unavailable(t, PostgresReplicaURLEnv+" is not set: run the tests with scripts/test or scripts/with-replica, which start a throwaway PostgreSQL primary and a standby of it")
	}
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresReplicaPrimaryURLEnv, redactedError(err))
	}
	ru, err := url.Parse(rbase)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresReplicaURLEnv, redactedError(err))
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
		t.Fatalf("connect to the replica pair's primary: %v", redactedError(err))
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, base, name) })
	pu.Path, ru.Path = "/"+name, "/"+name
	replicaURL = ru.String()
	for {
		c, err := pgx.Connect(ctx, replicaURL)
		if err == nil {
			c.Close(ctx)
			return pu.String(), replicaURL
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the standby did not replay the test database's creation in 60 s: %v", redactedError(err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// MySQLReplicaURLEnv names the variable scripts/with-mariadb-replica sets
// to the URL of a replica of the MariaDB DBPROBE_MYSQL_URL names.
const MySQLReplicaURLEnv = "DBPROBE_MYSQL_REPLICA_URL"

// MySQLReplicaOf returns the URL of database primaryURL names (one of
// FreshMySQLDatabase's) on the replica, once the replica has applied its
// creation. scripts/test starts no MariaDB replica (its MariaDB keeps the
// binary log off), so without one the test is skipped, CI or not: run it
// with scripts/with-mariadb-replica.
func MySQLReplicaOf(t testing.TB, primaryURL string) string {
	t.Helper()
	base := strings.TrimSpace(os.Getenv(MySQLReplicaURLEnv))
	if base == "" {
		t.Skip(MySQLReplicaURLEnv + " is not set: run this test with scripts/with-mariadb-replica, which starts a MariaDB primary and a replica of it")
	}
	ru, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", MySQLReplicaURLEnv, redactedError(err))
	}
	pu, err := url.Parse(primaryURL)
	if err != nil {
		t.Fatalf("not a URL: %v", redactedError(err))
	}
	ru.Path = pu.Path
	u := ru.String()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		db, err := openAdmin(u)
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return u
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replica did not apply the test database's creation in 60 s: %v", redactedError(err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
