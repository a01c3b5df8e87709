package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// plain is the value answer gives a setting the test does not change: "v",
// or 0 for commit_delay, which shows commit_siblings beside any other.
func plain(name string) string {
	if name == "commit_delay" {
		return "0"
	}
	return "v"
}

// answer builds a server's answer in which every setting is known with
// its plain value from the configuration, then applies changes.
func answer(version int, changes ...settingRow) sessionAnswer {
	a := sessionAnswer{version: version, user: "bench", database: "ycsb"}
	byName := map[string]settingRow{}
	for _, c := range changes {
		byName[c.name] = c
	}
	for _, s := range settings {
		for _, n := range []string{s.name, s.sourceOf, s.alongside} {
			if n == "" {
				continue
			}
			r, ok := byName[n]
			if !ok {
				r = settingRow{name: n, known: true, value: plain(n), source: "configuration file"}
			}
			a.rows = append(a.rows, r)
		}
	}
	return a
}

func TestFormatSettings(t *testing.T) {
	urlParams := map[string]string{"options": "-c statement_timeout=5s", "lock_timeout": "1s", "synchronous_commit": "off"}
	for _, tc := range []struct {
		name   string
		answer sessionAnswer
		origin origin
		want   map[string]string // settings checked; the others must be plain
	}{
		{"the server's own", answer(150004), origin{}, nil},
		{"where session values came from", answer(170000,
			settingRow{name: "synchronous_commit", known: true, value: "off", source: "client"},
			settingRow{name: "transaction_isolation", known: true, value: "serializable", source: "override"},
			settingRow{name: "default_transaction_isolation", known: true, value: "serializable", source: "database"},
			settingRow{name: "statement_timeout", known: true, value: "5s", source: "client"},
			settingRow{name: "lock_timeout", known: true, value: "1s", source: "client"},
			settingRow{name: "idle_session_timeout", known: true, value: "1min", source: "user"},
			settingRow{name: "plan_cache_mode", known: true, value: "force_generic_plan", source: "database user"},
			settingRow{name: "log_statement", known: true, value: "all", source: "global"},
			settingRow{name: "default_transaction_read_only", known: true, value: "on", source: "session"},
		), origin{dbprobeSet: map[string]string{"synchronous_commit": "--durability delayed"}, params: urlParams}, map[string]string{
			"synchronous_commit":            "off (set by dbprobe for --durability delayed)",
			"transaction_isolation":         "serializable (default_transaction_isolation, from ALTER DATABASE ycsb SET)",
			"statement_timeout":             "5s (from the URL)",
			"lock_timeout":                  "1s (from the URL)",
			"idle_session_timeout":          "1min (from ALTER ROLE bench SET)",
			"plan_cache_mode":               "force_generic_plan (from ALTER ROLE bench IN DATABASE ycsb SET)",
			"log_statement":                 "all (from ALTER ROLE ALL SET)",
			"default_transaction_read_only": "on (SET in the session)",
		}},
		{"a startup parameter not from the URL (PGOPTIONS)", answer(150000,
			settingRow{name: "statement_timeout", known: true, value: "2s", source: "client"},
		), origin{params: map[string]string{}}, map[string]string{
			"statement_timeout": "2s (from the connection's startup parameters)",
		}},
		{"commit_delay with its siblings", answer(150000,
			settingRow{name: "commit_delay", known: true, value: "10", source: "configuration file"},
			settingRow{name: "commit_siblings", known: true, value: "5", source: "default"},
		), origin{}, map[string]string{"commit_delay": "10 (commit_siblings 5)"}},
		{"commit_delay off", answer(150000,
			settingRow{name: "commit_delay", known: true, value: "0", source: "default"},
		), origin{}, map[string]string{"commit_delay": "0"}},
		{"settings an older server lacks", answer(110022,
			settingRow{name: "idle_session_timeout"},
			settingRow{name: "plan_cache_mode"},
		), origin{}, map[string]string{
			"idle_session_timeout": "none: PostgreSQL 11 has no such setting (added in 14)",
			"plan_cache_mode":      "none: PostgreSQL 11 has no such setting (added in 12)",
		}},
		{"a setting hidden from the user", answer(160000,
			settingRow{name: "log_statement"},
		), origin{}, map[string]string{"log_statement": "unknown: the server shows no such setting to user bench"}},
		{"a setting missing from the answer", sessionAnswer{version: 160000, user: "bench"}, origin{}, map[string]string{
			"synchronous_commit": "unknown: not read back",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := formatSettings(tc.answer, tc.origin)
			if len(got) != len(settings) {
				t.Fatalf("%d settings, want %d: %v", len(got), len(settings), got)
			}
			for i, s := range got {
				if s.Name != settings[i].name {
					t.Errorf("setting %d is %s, want %s: the order must not change", i, s.Name, settings[i].name)
				}
				want, ok := tc.want[s.Name]
				switch {
				case ok && s.Value != want:
					t.Errorf("%s = %q, want %q", s.Name, s.Value, want)
				case !ok && len(tc.answer.rows) > 0 && s.Value != plain(s.Name):
					t.Errorf("%s = %q, want %s", s.Name, s.Value, plain(s.Name))
				}
			}
		})
	}
}

func TestSettingsQueryAsksForEverySetting(t *testing.T) {
	q := settingsQuery()
	for _, s := range settings {
		for _, n := range []string{s.name, s.sourceOf, s.alongside} {
			if n != "" && !strings.Contains(q, "'"+n+"'") {
				t.Errorf("the query does not ask for %s: %s", n, q)
			}
		}
	}
}

func TestAutocommitText(t *testing.T) {
	for _, tc := range []struct {
		opts driver.Options
		want string
	}{
		{driver.Options{}, "implicit: every operation is one statement, committed on its own; a load batch is one transaction (BEGIN, multi-row INSERTs, COMMIT)"},
		{driver.Options{BulkLoad: true}, "implicit: every operation is one statement, committed on its own; a load batch is one COPY, itself one transaction"},
		{driver.Options{OpPath: driver.PathProcedure, BulkLoad: true}, "implicit: every operation is one call of the table's function, committed on its own; a load batch is one COPY, itself one transaction"},
	} {
		t.Run(fmt.Sprint(tc.opts.OpPath, tc.opts.BulkLoad), func(t *testing.T) {
			if got := autocommitText(tc.opts); got != tc.want {
				t.Errorf("autocommitText = %q, want %q", got, tc.want)
			}
		})
	}
}
