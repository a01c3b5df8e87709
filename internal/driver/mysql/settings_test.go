package mysql

import (
	"fmt"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// mariaDB10 is what a MariaDB 10 server answers for the variables, by the
// names it has.
func mariaDB10() map[string]string {
	return map[string]string{
		"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "log_bin": "OFF", "binlog_format": "MIXED",
		"tx_isolation": "REPEATABLE-READ", "autocommit": "ON", "tx_read_only": "OFF",
		"innodb_buffer_pool_size": "268435456", "innodb_doublewrite": "ON", "innodb_flush_method": "O_DIRECT", "innodb_log_file_size": "100663296",
		"innodb_lock_wait_timeout": "50", "lock_wait_timeout": "86400", "innodb_deadlock_detect": "ON",
		"max_statement_time": "0.000000", "general_log": "OFF", "slow_query_log": "OFF", "long_query_time": "10.000000",
		"performance_schema": "OFF", "max_connections": "151", "max_allowed_packet": "16777216", "local_infile": "ON",
	}
}

func clone(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "-" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

func TestFormatVariables(t *testing.T) {
	const autocommitOn = "ON: every operation is one statement, committed on its own; a load batch is one transaction (see load path)"
	for _, tc := range []struct {
		name                 string
		session, global, url map[string]string
		opts                 driver.Options
		want                 map[string]string // settings checked
	}{
		{
			name: "MariaDB 10, the server's own", session: mariaDB10(), global: mariaDB10(),
			want: map[string]string{
				"transaction_isolation": "REPEATABLE-READ",
				"transaction_read_only": "OFF",
				"autocommit":            autocommitOn,
				"max_statement_time":    "0.000000",
				"slow_query_log":        "OFF",
			},
		},
		{
			name: "MySQL 8's names",
			session: clone(mariaDB10(), "tx_isolation", "-", "tx_read_only", "-", "max_statement_time", "-",
				"transaction_isolation", "READ-COMMITTED", "transaction_read_only", "OFF", "max_execution_time", "0"),
			global: clone(mariaDB10(), "tx_isolation", "-", "tx_read_only", "-", "max_statement_time", "-",
				"transaction_isolation", "READ-COMMITTED", "transaction_read_only", "OFF", "max_execution_time", "0"),
			want: map[string]string{"transaction_isolation": "READ-COMMITTED", "max_execution_time": "0"},
		},
		{
			name:    "where session values came from",
			session: clone(mariaDB10(), "innodb_lock_wait_timeout", "9", "tx_isolation", "SERIALIZABLE", "max_statement_time", "0.500000"),
			global:  clone(mariaDB10(), "tx_isolation", "REPEATABLE-READ"),
			url:     map[string]string{"innodb_lock_wait_timeout": "9", "max_statement_time": "0.5"},
			want: map[string]string{
				"innodb_lock_wait_timeout": "9 (from the URL)",
				"max_statement_time":       "0.500000 (from the URL)",
				"transaction_isolation":    "SERIALIZABLE (the session's own: the global value is REPEATABLE-READ)",
			},
		},
		{
			name:    "autocommit off, a slow log of everything, an empty value",
			session: clone(mariaDB10(), "autocommit", "OFF", "slow_query_log", "ON", "long_query_time", "0.000000", "innodb_flush_method", ""),
			global:  clone(mariaDB10(), "slow_query_log", "ON", "long_query_time", "0.000000", "innodb_flush_method", ""),
			opts:    driver.Options{OpPath: driver.PathProcedure},
			want: map[string]string{
				"autocommit":          "OFF: an operation's changes are not committed, and its row locks stay held, until the session's next COMMIT (a load batch's) or its end (the session's own: the global value is ON)",
				"slow_query_log":      "ON (long_query_time 0.000000)",
				"innodb_flush_method": `""`,
			},
		},
		{
			name:    "variables an older server lacks",
			session: clone(mariaDB10(), "innodb_deadlock_detect", "-", "max_statement_time", "-"),
			global:  mariaDB10(),
			want: map[string]string{
				"innodb_deadlock_detect": "none: the server has no variable innodb_deadlock_detect",
				"max_execution_time":     "none: the server has no variable max_execution_time or max_statement_time",
			},
		},
		{
			name: "procedure path", session: mariaDB10(), global: mariaDB10(), opts: driver.Options{OpPath: driver.PathProcedure},
			want: map[string]string{"autocommit": "ON: every operation is one CALL, whose statement commits on its own; a load batch is one transaction (see load path)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := formatVariables(tc.session, tc.global, tc.url, tc.opts)
			if len(got) != len(variables) {
				t.Fatalf("%d settings, want one per variable (%d): %v", len(got), len(variables), got)
			}
			byName := map[string]string{}
			for _, s := range got {
				byName[s.Name] = s.Value
			}
			for name, want := range tc.want {
				if byName[name] != want {
					t.Errorf("%s = %q, want %q", name, byName[name], want)
				}
			}
			if got[0].Name != flushVariable || got[4].Name != "transaction_isolation" || got[5].Name != "autocommit" {
				t.Errorf("order: %v", got)
			}
		})
	}
}

// The same answer gives the same lines in the same order.
func TestFormatVariablesIsStable(t *testing.T) {
	a := fmt.Sprint(formatVariables(mariaDB10(), mariaDB10(), nil, driver.Options{}))
	for range 20 {
		if b := fmt.Sprint(formatVariables(mariaDB10(), mariaDB10(), nil, driver.Options{})); b != a {
			t.Fatalf("%s\nthen\n%s", a, b)
		}
	}
}
