package sqlserver

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
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
		{name: "keys without regard to case", raw: "sqlserver://sa:p@127.0.0.1:1?Database=Bench&Encrypt=disable",
			database: "Bench", user: "sa", pw: "p", host: "127.0.0.1", port: 1, addr: "127.0.0.1:1"},
		{name: "named instance", raw: "sqlserver://sa:p@h/SQLEXPRESS?database=bench",
			database: "bench", user: "sa", pw: "p", host: "h", addr: `h\SQLEXPRESS`},
		{name: "Entra ID default", raw: "azuresql://myserver.database.windows.net?database=bench&fedauth=ActiveDirectoryDefault",
			database: "bench", fedAuth: "ActiveDirectoryDefault", host: "myserver.database.windows.net", addr: "myserver.database.windows.net:1433"},
		{name: "Entra ID method in any case", raw: "sqlserver://h?database=bench&fedauth=activedirectorymanagedidentity",
			database: "bench", fedAuth: "ActiveDirectoryManagedIdentity", host: "h", addr: "h:1433"},
		{name: "Entra ID password with its application", raw: "sqlserver://u%40t:Secret1@h?database=bench&fedauth=ActiveDirectoryPassword&applicationclientid=11111111-2222-3333-4444-555555555555",
			database: "bench", fedAuth: "ActiveDirectoryPassword", user: "u@t", pw: "Secret1", host: "h", addr: "h:1433"},
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
		{name: "Entra ID password without its application", raw: "sqlserver://u%40t:Secret1@h?database=bench&fedauth=ActiveDirectoryPassword",
			wantErr: "fedauth=ActiveDirectoryPassword needs applicationclientid= (the application (client) ID"},
		{name: "Entra ID interactive without its application", raw: "sqlserver://h?database=bench&fedauth=activedirectoryinteractive",
			wantErr: "fedauth=ActiveDirectoryInteractive needs applicationclientid="},
		{name: "Entra ID integrated", raw: "azuresql://h?database=bench&fedauth=ActiveDirectoryIntegrated",
			wantErr: "it runs ActiveDirectoryDefault (environment, workload or managed identity, Azure CLI) in its place; write fedauth=ActiveDirectoryDefault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseURL(driver.Target{URL: u, Password: tc.password})
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

// A key the URL gives empty, in any case, is not added again: go-mssqldb
// would refuse the pair, naming either key at random, so that the same
// URL got a different message from one run to the next.
func TestParseURLKeysGivenEmpty(t *testing.T) {
	for _, raw := range []string{
		"sqlserver://sa@db.example.com?database=b&enCrYpt",
		"sqlserver://sa@db.example.com?database=b&encrypt=",
		"sqlserver://sa@127.0.0.1?database=b&App+Name=",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		for i := range 20 {
			_, err := parseURL(driver.Target{URL: u})
			msg := fmt.Sprint(err)
			if strings.Contains(msg, "more than once") {
				t.Fatalf("%s: %s", raw, msg)
			}
			if i == 0 {
				first = msg
			} else if msg != first {
				t.Fatalf("%s: the message changes between runs: %q, then %q", raw, first, msg)
			}
		}
	}
}

func TestParseURLKeepsAppName(t *testing.T) {
	u, _ := url.Parse("sqlserver://h?database=bench&app+name=mine")
	c, err := parseURL(driver.Target{URL: u})
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
		c, err := parseURL(target)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("parseURL(%q) = %q: not one line of bad input", target.Redacted(), err)
			}
			// The password is text the message may hold for reasons of its
			// own (see driver.Target.Audit), whatever its length.
			if why := target.Audit(err.Error(), refuse); why != "" {
				t.Fatalf("parseURL(%q), password %q: the message %s: %q", target.Redacted(), target.Password, why, err)
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
		if tlsLevel(p) != driver.TLSVerifyFull && !driver.IsLoopback(p.Host) {
			t.Fatalf("parseURL(%q) accepted TLS %s to %s without --allow-insecure-tls", target.Redacted(), tlsLevel(p), p.Host)
		}
	})
}

// FuzzParseURLPassword puts the password in the URL, as users write it,
// and holds every refusal to never giving it away nor patching it out of
// anyone's words (see driver.Target.Audit). The passwords are those that
// defeat a search for them (see drivertest.SecretPassword).
func FuzzParseURLPassword(f *testing.F) {
	for i, seed := range []string{
		"sqlserver://sa@127.0.0.1:1433?database=bench",
		"mssql://sa@h?database=bench&encrypt=disable",
		"sqlserver://sa@h?database=b&TrustServerCertificate=true",
		"sqlserver://sa@h?database=b&encrypt=maybe",
		"sqlserver://sa@h?database=b&connection+timeout=x",
		"sqlserver://sa@h/inst", "sqlserver://sa@h?database=b%zz",
		"sqlserver://sa@127.0.0.1:1?database=x&fedauth=nope",
	} {
		for _, kind := range drivertest.SecretKinds {
			f.Add(seed, []string{"pw", "o", "p", "éa"}[(i+int(kind))%4], kind)
		}
	}
	f.Fuzz(func(t *testing.T, raw, password string, kind uint8) {
		u, err := url.Parse(raw)
		if err != nil {
			return // driver.ParseTarget refuses it: FuzzParseTarget covers that
		}
		u.Scheme = "sqlserver"
		at := func(password string) driver.Target {
			v := *u
			v.User = url.UserPassword(u.User.Username(), password)
			return driver.Target{Driver: "sqlserver", URL: &v, Password: password}
		}
		message := ""
		if drivertest.NeedsMessage(kind) {
			if err := refuse(at(drivertest.OtherPassword)); err != nil {
				message = err.Error()
			}
		}
		secret := drivertest.SecretPassword(password, kind, u, message)
		if secret == "" {
			return
		}
		target := at(secret)
		if _, err := parseURL(target); err != nil {
			if why := target.Audit(err.Error(), refuse); why != "" {
				t.Fatalf("parseURL(%q), password %q: the message %s: %q", target.Redacted(), secret, why, err)
			}
		}
	})
}

func TestParseURLTLS(t *testing.T) {
	const secret = "Tls-s3cret"
	for _, tc := range []struct {
		raw     string
		allow   bool // --allow-insecure-tls
		mode    string
		refusal string
	}{
		{raw: "sqlserver://sa@127.0.0.1?database=b", mode: "off (loopback)"},
		{raw: "sqlserver://sa@localhost/SQLEXPRESS?database=b&encrypt=disable", mode: "off (loopback)"},
		{raw: "sqlserver://sa@[::1]:1433?database=b&encrypt=true&TrustServerCertificate=true", mode: "require (loopback)"},
		{raw: "sqlserver://sa@127.0.0.1?database=b&encrypt=true", mode: "verify-full"},
		{raw: "sqlserver://sa@db.example.com?database=b", mode: "verify-full"},
		{raw: "azuresql://srv.database.windows.net?database=b&fedauth=ActiveDirectoryDefault", mode: "verify-full"},
		{raw: "sqlserver://sa@db.example.com?database=b&encrypt=strict", mode: "verify-full"},
		{raw: "sqlserver://sa@db.example.com?database=b&encrypt=strict&trustservercertificate=true", mode: "verify-full"},
		{raw: "sqlserver://sa@db.example.com?database=b&Encrypt=Mandatory&TrustServerCertificate=false", mode: "verify-full"},
		{raw: "sqlserver://sa@db.example.com?database=b&encrypt=disable", allow: true, mode: "off (--allow-insecure-tls)"},
		{raw: "sqlserver://sa@db.example.com?database=b&TrustServerCertificate=true", allow: true, mode: "require (--allow-insecure-tls)"},
		{raw: "sqlserver://sa:" + secret + "@db.example.com?database=b&encrypt=false", refusal: "TLS mode off to db.example.com, which is not loopback"},
		{raw: "sqlserver://sa:" + secret + "@db.example.com?database=b&encrypt=disable", refusal: "TLS mode off"},
		{raw: "sqlserver://sa:" + secret + "@db.example.com?database=b&TrustServerCertificate=true", refusal: "TLS mode require"},
		{raw: "sqlserver://sa:" + secret + "@10.0.0.9/inst?database=b&encrypt=true&trustservercertificate=yes", refusal: "TLS mode require to 10.0.0.9"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			target, err := driver.ParseTarget(tc.raw, "")
			if err != nil {
				t.Fatal(err)
			}
			target.AllowInsecureTLS = tc.allow
			c, err := parseURL(target)
			if tc.refusal != "" {
				if err == nil {
					t.Fatalf("accepted with tls = %s, want a refusal", c.tls)
				}
				msg := err.Error()
				if !badinput.Is(err) || !strings.Contains(msg, tc.refusal) || !strings.Contains(msg, "encrypt=true") || !strings.Contains(msg, "--allow-insecure-tls") {
					t.Errorf("refusal %q (bad input %v) should say %q, encrypt=true and --allow-insecure-tls", msg, badinput.Is(err), tc.refusal)
				}
				if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
					t.Errorf("refusal %q holds the password or several lines", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.tls != tc.mode {
				t.Errorf("tls = %q, want %q", c.tls, tc.mode)
			}
			p, err := msdsn.Parse(c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mode == "verify-full" && (p.TLSConfig == nil || p.TLSConfig.InsecureSkipVerify || p.TrustServerCertificate) {
				t.Errorf("go-mssqldb's TLS config %+v (trust %v) does not verify", p.TLSConfig, p.TrustServerCertificate)
			}
		})
	}
}

// refuse is parseURL's refusal of a target, for driver.Target.Audit.
func refuse(d driver.Target) error {
	_, err := parseURL(d)
	return err
}
