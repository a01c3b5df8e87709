package sqlserver

import (
	"net/url"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, raw, password string
		// On success: what go-mssqldb reads from the DSN.
		database, fedAuth, user, pw, host, addr string
		port                                    uint64
		// On failure: a part of the message.
		wantErr string
	}{
		{name: "SQL login", raw: "sqlserver://sa:Secret1@127.0.0.1:1433?database=bench",
			database: "bench", user: "sa", pw: "Secret1", host: "127.0.0.1", port: 1433, addr: "127.0.0.1:1433"},
		{name: "mssql scheme, default port", raw: "mssql://sa:Secret1@db.local?database=bench",
			database: "bench", user: "sa", pw: "Secret1", host: "db.local", addr: "db.local:1433"},
		{name: "password given apart", raw: "sqlserver://sa@127.0.0.1:14330?database=bench", password: "fromEnv",
			database: "bench", user: "sa", pw: "fromEnv", host: "127.0.0.1", port: 14330, addr: "127.0.0.1:14330"},
		{name: "URL password wins", raw: "sqlserver://sa:inURL@127.0.0.1?database=bench", password: "fromEnv",
			database: "bench", user: "sa", pw: "inURL", host: "127.0.0.1", addr: "127.0.0.1:1433"},
		{name: "query password wins", raw: "sqlserver://127.0.0.1?database=bench&user+id=sa&password=inQuery", password: "fromEnv",
			database: "bench", user: "sa", pw: "inQuery", host: "127.0.0.1", addr: "127.0.0.1:1433"},
		{name: "keys without regard to case", raw: "sqlserver://sa:p@h:1?Database=Bench&Encrypt=disable",
			database: "Bench", user: "sa", pw: "p", host: "h", port: 1, addr: "h:1"},
		{name: "named instance", raw: "sqlserver://sa:p@h/SQLEXPRESS?database=bench",
			database: "bench", user: "sa", pw: "p", host: "h", addr: `h\SQLEXPRESS`},
		{name: "Entra ID default", raw: "azuresql://myserver.database.windows.net?database=bench&fedauth=ActiveDirectoryDefault",
			database: "bench", fedAuth: "ActiveDirectoryDefault", host: "myserver.database.windows.net", addr: "myserver.database.windows.net:1433"},
		{name: "Entra ID method in any case", raw: "sqlserver://h?database=bench&fedauth=activedirectorymanagedidentity",
			database: "bench", fedAuth: "ActiveDirectoryManagedIdentity", host: "h", addr: "h:1433"},
		{name: "service principal secret apart", raw: "sqlserver://app-id%40tenant@h?database=bench&fedauth=ActiveDirectoryServicePrincipal", password: "clientSecret",
			database: "bench", fedAuth: "ActiveDirectoryServicePrincipal", user: "app-id@tenant", pw: "clientSecret", host: "h", addr: "h:1433"},

		{name: "no database", raw: "sqlserver://sa:p@h:1433", wantErr: "names no database; add ?database=NAME"},
		{name: "empty database", raw: "sqlserver://sa:p@h:1433?database=", wantErr: "names no database; add ?database=NAME"},
		{name: "path instead of database", raw: "sqlserver://sa:p@h:1433/bench",
			wantErr: "names no database (in go-mssqldb's URL the path /bench names an instance, not a database); add ?database=NAME"},
		{name: "unknown fedauth", raw: "sqlserver://h?database=bench&fedauth=Kerberos", wantErr: `unknown fedauth "Kerberos"; use one of ActiveDirectoryDefault,`},
		{name: "database twice", raw: "sqlserver://h?database=a&Database=b", wantErr: `gives "database" more than once`},
		{name: "database repeated", raw: "sqlserver://h?database=a&database=b", wantErr: `gives "database" more than once`},
		{name: "no host", raw: "sqlserver:?database=bench", wantErr: "names no host"},
		{name: "bad escape", raw: "sqlserver://h?database=b%zzench", wantErr: "malformed query string: a malformed %-escape"},
		{name: "semicolons", raw: "sqlserver://h?database=bench;encrypt=true", wantErr: "a ';' between options (use '&')"},
		{name: "bad option value", raw: "sqlserver://sa:Secret1@h?database=bench&encrypt=perhaps", wantErr: "invalid encrypt 'perhaps'"},
		{name: "fragment", raw: "sqlserver://h?database=bench#x", wantErr: "#fragment"},
		{name: "other scheme", raw: "postgres://h?database=bench", wantErr: "is not a SQL Server URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseURL(u, tc.password)
			if tc.wantErr != "" {
				if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseURL = %v (bad input %v), want an error containing %q", err, badinput.Is(err), tc.wantErr)
				}
				for _, pw := range []string{"Secret1", tc.password} {
					if pw != "" && strings.Contains(err.Error(), pw) {
						t.Errorf("message holds the password: %q", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			if c.database != tc.database || c.fedAuth != tc.fedAuth || c.addr != tc.addr {
				t.Errorf("config = database %q, fedauth %q, addr %q; want %q, %q, %q", c.database, c.fedAuth, c.addr, tc.database, tc.fedAuth, tc.addr)
			}
			p, err := msdsn.Parse(c.dsn)
			if err != nil {
				t.Fatalf("go-mssqldb cannot parse the DSN: %v", err)
			}
			if p.Database != tc.database || p.User != tc.user || p.Password != tc.pw || p.Host != tc.host || p.Port != tc.port {
				t.Errorf("go-mssqldb reads database %q, user %q, password %q, host %q, port %d; want %q, %q, %q, %q, %d",
					p.Database, p.User, p.Password, p.Host, p.Port, tc.database, tc.user, tc.pw, tc.host, tc.port)
			}
			if p.AppName != "dbprobe" {
				t.Errorf("app name = %q, want dbprobe", p.AppName)
			}
			if !strings.HasPrefix(c.dsn, "sqlserver://") {
				t.Errorf("DSN %q does not use go-mssqldb's scheme", c.dsn)
			}
		})
	}
}

func TestParseURLKeepsAppName(t *testing.T) {
	u, _ := url.Parse("sqlserver://h?database=bench&app+name=mine")
	c, err := parseURL(u, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := msdsn.Parse(c.dsn)
	if err != nil || p.AppName != "mine" {
		t.Errorf("app name = %q, %v; want the user's", p.AppName, err)
	}
}

// FuzzParseURL feeds arbitrary --db values through driver.ParseTarget and
// parseURL: neither may panic, every refusal is bad input that never quotes
// the password, and every acceptance is a DSN go-mssqldb parses to the same
// database and password.
func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"sqlserver://sa:Secret1@127.0.0.1:1433?database=bench",
		"mssql://sa:Secret1@h?database=bench&encrypt=disable",
		"azuresql://h.database.windows.net?database=b&fedauth=ActiveDirectoryDefault",
		"sqlserver://sa:Secret1@h:1433/inst",
		"sqlserver://sa:Secret1@h?database=a&DATABASE=b",
		"sqlserver://sa:Secret1@h?database=b%zz",
		"sqlserver://sa:Secret1@h?database=b&connection+timeout=x",
		"sqlserver://:@?database=",
		"sqlserver://[::1]:1433?database=bench&password=Secret1",
	} {
		f.Add(seed, "envPassword")
	}
	f.Fuzz(func(t *testing.T, raw, password string) {
		target, err := driver.ParseTarget(raw, password)
		if err != nil || target.Driver != "sqlserver" {
			return
		}
		c, err := parseURL(target.URL, target.Password)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("parseURL(%q) = %v: not bad input", raw, err)
			}
			// Only a password that cannot be part of the message's own words
			// or of the URL's other parts proves a leak: letters and digits,
			// long, and not in the redacted URL or the URL form shown.
			pw := target.Password
			if distinctive(pw) && strings.Contains(err.Error(), pw) && !strings.Contains(target.Redacted(), pw) && !strings.Contains(urlForm, pw) {
				t.Fatalf("parseURL(%q): message %q holds the password", raw, err)
			}
			return
		}
		p, err := msdsn.Parse(c.dsn)
		if err != nil {
			t.Fatalf("parseURL(%q) accepted a DSN go-mssqldb refuses: %v", raw, err)
		}
		if p.Database != c.database || c.database == "" {
			t.Fatalf("parseURL(%q): database %q, go-mssqldb reads %q", raw, c.database, p.Database)
		}
		if target.Password != "" && p.Password != target.Password {
			t.Fatalf("parseURL(%q): go-mssqldb reads password %q, want %q", raw, p.Password, target.Password)
		}
	})
}

// distinctive reports a password of 8 bytes or more with a letter and a
// digit.
func distinctive(pw string) bool {
	return len(pw) >= 8 && strings.ContainsAny(pw, "0123456789") &&
		strings.ContainsAny(strings.ToLower(pw), "abcdefghijklmnopqrstuvwxyz")
}
