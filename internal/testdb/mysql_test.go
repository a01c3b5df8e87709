package testdb

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestMySQLURLWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{
		{ci: "", skip: true},
		{ci: "false", skip: true},
		{ci: "true", fail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv(MySQLURLEnv, "")
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			MySQLURL(f)
			if got := f.skipped != ""; got != tc.skip {
				t.Errorf("skipped = %v (%q), want %v", got, f.skipped, tc.skip)
			}
			if got := f.failed != ""; got != tc.fail {
				t.Errorf("failed = %v (%q), want %v", got, f.failed, tc.fail)
			}
			msg := f.skipped + f.failed
			if !strings.Contains(msg, "scripts/test") || !strings.Contains(msg, "mariadb-server") {
				t.Errorf("message %q does not say to run scripts/test or install mariadb-server", msg)
			}
		})
	}
}

func TestMySQLConfig(t *testing.T) {
	cfg, err := MySQLConfig("mysql://u:p%40w@127.0.0.1:3307/db")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "u" || cfg.Passwd != "p@w" || cfg.Addr != "127.0.0.1:3307" || cfg.DBName != "db" {
		t.Errorf("MySQLConfig = %s:%s@%s/%s", cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName)
	}
	if _, err := MySQLConfig("postgres://u@h/db"); err == nil {
		t.Error("MySQLConfig of a postgres URL succeeded")
	}
}

func TestFreshMySQLDatabase(t *testing.T) {
	base := MySQLURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var name string
	t.Run("fresh", func(t *testing.T) {
		u := FreshMySQLDatabase(t)
		if strings.HasSuffix(u, "/dbprobe") {
			t.Fatalf("URL still names the base database")
		}
		db := OpenMySQL(t, u)
		var tables int
		if err := db.QueryRowContext(ctx, "SELECT DATABASE(), (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE())").
			Scan(&name, &tables); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "dbprobe_test_") || tables != 0 {
			t.Fatalf("database %q with %d tables, want a fresh dbprobe_test_… one", name, tables)
		}
		if other := FreshMySQLDatabase(t); other == u {
			t.Fatalf("two fresh databases share the URL %s", u)
		}
	})

	db := OpenMySQL(t, base)
	var left int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("database %s was not dropped when its test ended", name)
	}
}
