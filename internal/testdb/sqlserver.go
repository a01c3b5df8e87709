package testdb

import (
	"os"
	"strings"
	"testing"
)

// SQLServerURLEnv names the variable that points the SQL Server tests at a
// server: a URL in go-mssqldb's form with the database to use, such as
// sqlserver://sa:password@127.0.0.1:1433?database=dbprobe&encrypt=disable.
// The tests create their tables under random names there and drop them;
// the memory-optimized ones need a database that can hold such tables (a
// MEMORY_OPTIMIZED_DATA filegroup), the durability ones the ALTER
// permission on it.
const SQLServerURLEnv = "DBPROBE_SQLSERVER_URL"

// SQLServerURL returns the URL of the SQL Server the tests may use
// (env DBPROBE_SQLSERVER_URL), or skips the test with a message saying how
// to give one.
//
// Unlike the other databases it skips under CI=true too: SQL Server cannot
// run on the machines the tests and CI run on. It is in no Debian package
// and its Linux build comes only from Microsoft's own package repository or
// container registry, which these machines cannot reach, so scripts/test
// cannot start one; failing in CI would only ever report that. The driver's
// SQL is pinned by golden tests instead, and the integration tests run
// wherever a developer points them at a server.
func SQLServerURL(t testing.TB) string {
	t.Helper()
	u := strings.TrimSpace(os.Getenv(SQLServerURLEnv))
	if u == "" {
		t.Skip(SQLServerURLEnv + " is not set: SQL Server cannot run here, so its integration tests run only against a server you name, " +
			"e.g. " + SQLServerURLEnv + "='sqlserver://sa:password@127.0.0.1:1433?database=dbprobe&encrypt=disable' (skipped even under CI=true)")
	}
	return u
}
