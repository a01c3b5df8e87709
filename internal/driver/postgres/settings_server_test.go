package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// Settings that ALTER DATABASE and ALTER ROLE give a database or a role
// apply to dbprobe's sessions and not to postgresql.conf: Info shows them
// as the sessions have them, with where each came from, and a URL's value
// over them.
func TestInfoShowsRoleAndDatabaseSettings(t *testing.T) {
	base := testdb.FreshPostgresDatabase(t)
	ctx := context.Background()
	c := admin(t, base)
	var database string
	if err := c.QueryRow(ctx, "SELECT current_database()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	role := "dbprobe_settings_" + hex.EncodeToString(rnd[:])
	password := "pw-" + hex.EncodeToString(rnd[:3])
	quotedRole, quotedDB := pgx.Identifier{role}.Sanitize(), pgx.Identifier{database}.Sanitize()
	if _, err := c.Exec(ctx, "CREATE ROLE "+quotedRole+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	// Registered before the DBs are opened, so it runs after they close;
	// the database's own settings go with the database.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+quotedRole); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	for _, stmt := range []string{
		"ALTER DATABASE " + quotedDB + " SET default_transaction_isolation = 'serializable'",
		"ALTER ROLE " + quotedRole + " SET statement_timeout = '7s'",
		"ALTER ROLE " + quotedRole + " IN DATABASE " + quotedDB + " SET lock_timeout = '3s'",
		"ALTER ROLE " + quotedRole + " IN DATABASE " + quotedDB + " SET plan_cache_mode = 'force_custom_plan'",
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)
	asRole := u.String()

	for _, tc := range []struct {
		name string
		url  string
		want map[string]string
	}{
		{"the role's and the database's", asRole, map[string]string{
			"transaction_isolation": "serializable (default_transaction_isolation, from ALTER DATABASE " + database + " SET)",
			"statement_timeout":     "7s (from ALTER ROLE " + role + " SET)",
			"lock_timeout":          "3s (from ALTER ROLE " + role + " IN DATABASE " + database + " SET)",
			"plan_cache_mode":       "force_custom_plan (from ALTER ROLE " + role + " IN DATABASE " + database + " SET)",
		}},
		{"the URL's over them", withParams(t, asRole, "default_transaction_isolation", "repeatable read", "options", "-c statement_timeout=9s"), map[string]string{
			"transaction_isolation": "repeatable read (default_transaction_isolation, from the URL)",
			"statement_timeout":     "9s (from the URL)",
			"lock_timeout":          "3s (from ALTER ROLE " + role + " IN DATABASE " + database + " SET)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := drivertest.MustOpen(t, tc.url, driver.Options{Sessions: 1})
			got := map[string]string{}
			for _, s := range db.Info().Settings {
				got[s.Name] = s.Value
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("%s = %q, want %q", name, got[name], want)
				}
			}
			// A role without privileges reads every one of them.
			for name, v := range got {
				if strings.HasPrefix(v, "unknown:") || strings.HasPrefix(v, "none:") {
					t.Errorf("%s = %q for a role without privileges", name, v)
				}
			}
		})
	}
	// The administrator's own connections keep the server's isolation: the
	// value above is the database's, read where the sessions run.
	db := drivertest.MustOpen(t, testdb.PostgresURL(t), driver.Options{Sessions: 1})
	for _, s := range db.Info().Settings {
		if s.Name == "transaction_isolation" && s.Value != "read committed" {
			t.Errorf("on the server's default database, transaction_isolation = %q, want read committed", s.Value)
		}
	}
}
