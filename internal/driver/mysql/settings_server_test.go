package mysql_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// setGlobalText sets a global variable to a string value (quoted) and
// puts the old value back when the test ends.
func setGlobalText(t *testing.T, admin *sql.DB, name, value string) {
	t.Helper()
	old := globalVar(t, admin, name)
	if _, err := admin.Exec("SET GLOBAL "+name+" = ?", value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("SET GLOBAL "+name+" = ?", old); err != nil {
			t.Errorf("put %s back to %q: %v", name, old, err)
		}
	})
}

// Info shows the isolation and the session variables dbprobe's sessions
// have, as the server gives them: a global isolation set outside dbprobe,
// a session value the server's init_connect sets (told apart from the
// global one), and the URL's value over it.
func TestInfoShowsSessionVariables(t *testing.T) {
	base := testdb.FreshMySQLDatabase(t)
	admin := testdb.OpenMySQL(t, base)
	// Both names: MariaDB before 11.1 has only tx_isolation.
	isolation := "transaction_isolation"
	if err := admin.QueryRow("SELECT @@GLOBAL.transaction_isolation").Scan(new(string)); err != nil {
		isolation = "tx_isolation"
	}
	setGlobalText(t, admin, isolation, "SERIALIZABLE")
	// init_connect runs for users without SUPER (or CONNECTION_ADMIN) only.
	setGlobalText(t, admin, "init_connect", "SET SESSION innodb_lock_wait_timeout = 13")
	globalWait := globalVar(t, admin, "innodb_lock_wait_timeout")
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	user := testdb.MySQLDatabaseUser(t, admin, base, "dbprobe_vars_"+hex.EncodeToString(rnd[:]), "pw-"+hex.EncodeToString(rnd[:]))

	for _, tc := range []struct {
		name string
		url  string
		want map[string]string
	}{
		{"the server's", user, map[string]string{
			"transaction_isolation":    "SERIALIZABLE",
			"innodb_lock_wait_timeout": "13 (the session's own: the global value is " + globalWait + ")",
			"autocommit":               "ON: every operation is one statement, committed on its own; a load batch is one transaction (see load path)",
		}},
		{"the URL's over init_connect", withParams(t, user, "innodb_lock_wait_timeout", "9"), map[string]string{
			"transaction_isolation":    "SERIALIZABLE",
			"innodb_lock_wait_timeout": "9 (from the URL)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := drivertest.MustOpen(t, tc.url, driver.Options{Sessions: 1})
			info := db.Info()
			for name, want := range tc.want {
				if got := setting(info, name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			for _, s := range info.Settings {
				if strings.HasPrefix(s.Value, "none:") && s.Name != "max_execution_time" && s.Name != "max_statement_time" {
					t.Errorf("%s = %q: this server has it", s.Name, s.Value)
				}
			}
		})
	}
}
