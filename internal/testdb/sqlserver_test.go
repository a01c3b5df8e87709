package testdb

import (
	"strings"
	"testing"
)

func TestSQLServerURLWithoutServer(t *testing.T) {
	// SQL Server skips even under CI=true: no machine here can run one.
	for _, ci := range []string{"", "false", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv(SQLServerURLEnv, "")
			t.Setenv("CI", ci)
			f := &fakeTB{TB: t}
			SQLServerURL(f)
			if f.skipped == "" || f.failed != "" {
				t.Fatalf("skipped %q, failed %q; want a skip", f.skipped, f.failed)
			}
			if !strings.Contains(f.skipped, SQLServerURLEnv) || !strings.Contains(f.skipped, "sqlserver://") {
				t.Errorf("skip message %q does not say which variable to set and how", f.skipped)
			}
		})
	}
}

func TestSQLServerURLSet(t *testing.T) {
	const u = "sqlserver://sa:pw@127.0.0.1:1433?database=dbprobe"
	t.Setenv(SQLServerURLEnv, " "+u+"\n")
	f := &fakeTB{TB: t}
	if got := SQLServerURL(f); got != u || f.skipped != "" || f.failed != "" {
		t.Errorf("SQLServerURL = %q (skipped %q, failed %q), want %q", got, f.skipped, f.failed, u)
	}
}
