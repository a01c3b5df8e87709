package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQLURLEnv names the variable scripts/test sets to the URL of its
// throwaway MariaDB.
const MySQLURLEnv = "DBPROBE_MYSQL_URL"

// MySQLURL returns the URL of the throwaway MariaDB that scripts/test
// started (env DBPROBE_MYSQL_URL), mysql://user:password@127.0.0.1:port/db.
// Without it the test is skipped with a message saying to run scripts/test
// or install mariadb-server — except when CI=true, where a missing database
// fails the test.
func MySQLURL(t testing.TB) string {
	t.Helper()
	u := strings.TrimSpace(os.Getenv(MySQLURLEnv))
	if u == "" {
		Unavailable(t, MySQLURLEnv+" is not set: run the tests with scripts/test, which starts a throwaway MariaDB (install the Debian package mariadb-server first if it says the server is not found)"+notStarted("DBPROBE_MYSQL_UNAVAILABLE"))
	}
	return u
}

// MySQLConfig turns a mysql:// URL such as MySQLURL's into go-sql-driver's
// configuration, for tests that talk to the server outside dbprobe's driver.
func MySQLConfig(rawURL string) (*mysql.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, redactedError(err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("scheme %q is not mysql", u.Scheme)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.Timeout = 30 * time.Second
	return cfg, nil
}

// OpenMySQL opens a database/sql pool on a mysql:// URL, closed when the
// test ends.
func OpenMySQL(t testing.TB, rawURL string) *sql.DB {
	t.Helper()
	cfg, err := MySQLConfig(rawURL)
	if err != nil {
		t.Fatalf("%s: %v", MySQLURLEnv, err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// MySQLDatabaseUser creates user name with password pw, every privilege
// on the database base names and none on the server (no PROCESS, no
// SUPER), dropped when the test ends, and returns base with its
// credentials. admin is a connection allowed to create users.
func MySQLDatabaseUser(t testing.TB, admin *sql.DB, base, name, pw string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	for _, q := range []string{
		"DROP USER IF EXISTS '" + name + "'@'127.0.0.1'",
		"CREATE USER '" + name + "'@'127.0.0.1' IDENTIFIED BY '" + pw + "'",
		"GRANT ALL PRIVILEGES ON `" + dbName + "`.* TO '" + name + "'@'127.0.0.1'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { admin.Exec("DROP USER IF EXISTS '" + name + "'@'127.0.0.1'") })
	u.User = url.UserPassword(name, pw)
	return u.String()
}

// FreshMySQLDatabase creates an empty database on the server MySQLURL
// names, dbprobe_test_<random>, and returns its URL. The database is dropped
// when the test ends, after the test's own cleanups (register closing your
// connections after calling this). Tests in different packages, which go test
// runs in parallel, thus never share a table.
func FreshMySQLDatabase(t testing.TB) string {
	t.Helper()
	base := MySQLURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", MySQLURLEnv, redactedError(err))
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
		t.Fatalf("connect to the test MySQL: %v", err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropMySQLDatabase(t, base, name) })

	u.Path = "/" + name
	return u.String()
}

// openAdmin opens a pool of one connection on base.
func openAdmin(base string) (*sql.DB, error) {
	cfg, err := MySQLConfig(base)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	return db, nil
}

// dropMySQLDatabase drops a database the test created. MySQL waits for the
// metadata locks of sessions a test left open on it; the timeout ends the
// wait.
func dropMySQLDatabase(t testing.TB, base, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := openAdmin(base)
	if err != nil {
		t.Errorf("drop database %s: %v", name, err)
		return
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
		t.Errorf("drop database %s: %v", name, err)
	}
}
