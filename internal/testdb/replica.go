package testdb

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresReplicaURLEnv names the variable scripts/test and
// scripts/with-replica set to the URL of a streaming standby of the
// throwaway PostgreSQL.
const PostgresReplicaURLEnv = "DBPROBE_POSTGRES_REPLICA_URL"

// PostgresReplicaOf returns the URL of database primaryURL names (one of
// FreshPostgresDatabase's) on the standby, once the standby has replayed
// its creation. Without a standby the test is skipped, or fails under
// CI=true.
func PostgresReplicaOf(t testing.TB, primaryURL string) string {
	t.Helper()
	base := strings.TrimSpace(os.Getenv(PostgresReplicaURLEnv))
	if base == "" {
		Unavailable(t, PostgresReplicaURLEnv+" is not set: run the tests with scripts/test or scripts/with-replica, which start a throwaway PostgreSQL and a standby of it")
	}
	ru, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresReplicaURLEnv, redactedError(err))
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
		c, err := pgx.Connect(ctx, u)
		if err == nil {
			c.Close(ctx)
			return u
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
