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
		Unavailable(t, PostgresReplicaURLEnv+" is not set: run the tests with scripts/test or scripts/with-replica, which start a throwaway PostgreSQL primary and a standby of it"+notStarted("DBPROBE_POSTGRES_REPLICA_UNAVAILABLE"))
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

// MySQLReplicaURLEnv and MySQLReplicaPrimaryURLEnv name the variables
// scripts/test, scripts/with-databases and scripts/with-mariadb-replica
// set to the URLs of a throwaway MariaDB pair: a replica, and the primary
// it replicates from (binary log on), which is not the server of
// MySQLURLEnv (see scripts/lib/myreplica.sh).
const (
	MySQLReplicaURLEnv        = "DBPROBE_MYSQL_REPLICA_URL"
	MySQLReplicaPrimaryURLEnv = "DBPROBE_MYSQL_REPLICA_PRIMARY_URL"
)

// MySQLReplicaPair creates an empty database on the MariaDB pair's
// primary, dropped when the test ends, and returns its URL there and on
// the replica, once the replica has applied its creation. Without the
// pair the test is skipped, or fails under CI=true.
func MySQLReplicaPair(t testing.TB) (primaryURL, replicaURL string) {
	t.Helper()
	base := strings.TrimSpace(os.Getenv(MySQLReplicaPrimaryURLEnv))
	rbase := strings.TrimSpace(os.Getenv(MySQLReplicaURLEnv))
	if base == "" || rbase == "" {
		Unavailable(t, MySQLReplicaPrimaryURLEnv+" or "+MySQLReplicaURLEnv+" is not set: run the tests with scripts/test or scripts/with-mariadb-replica, which start a throwaway MariaDB primary and a replica of it"+notStarted("DBPROBE_MYSQL_REPLICA_UNAVAILABLE"))
	}
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", MySQLReplicaPrimaryURLEnv, redactedError(err))
	}
	ru, err := url.Parse(rbase)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", MySQLReplicaURLEnv, redactedError(err))
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	name := "dbprobe_test_" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := openAdmin(base)
	if err != nil {
		t.Fatalf("connect to the replica pair's primary: %v", err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropMySQLDatabase(t, base, name) })
	pu.Path, ru.Path = "/"+name, "/"+name
	replicaURL = ru.String()
	for {
		db, err := openAdmin(replicaURL)
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return pu.String(), replicaURL
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replica did not apply the test database's creation in 60 s: %v", redactedError(err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
