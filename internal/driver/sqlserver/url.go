package sqlserver

import (
	"errors"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/microsoft/go-mssqldb/azuread"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// urlForm is how a --db value for SQL Server is written, for messages.
const urlForm = "sqlserver://user:password@host:1433?database=NAME"

// fedAuthMethods are the Entra ID (Azure AD) authentication methods the
// azuread package accepts in fedauth=, by their canonical spelling.
var fedAuthMethods = []string{
	azuread.ActiveDirectoryDefault,
	azuread.ActiveDirectoryPassword,
	azuread.ActiveDirectoryServicePrincipal,
	azuread.ActiveDirectoryApplication,
	azuread.ActiveDirectoryServicePrincipalAccessToken,
	azuread.ActiveDirectoryManagedIdentity,
	azuread.ActiveDirectoryMSI,
	azuread.ActiveDirectoryInteractive,
	azuread.ActiveDirectoryDeviceCode,
	azuread.ActiveDirectoryAzCli,
	azuread.ActiveDirectoryAzureDeveloperCli,
	azuread.ActiveDirectoryAzurePipelines,
	azuread.ActiveDirectoryEnvironment,
	azuread.ActiveDirectoryWorkloadIdentity,
	azuread.ActiveDirectoryClientAssertion,
	azuread.ActiveDirectoryOnBehalfOf,
	azuread.ActiveDirectoryIntegrated,
}

// connConfig is a parsed SQL Server target.
type connConfig struct {
	// dsn is the URL go-mssqldb parses: scheme sqlserver, the password
	// included. Never print it.
	dsn string
	// database is the database named by ?database=.
	database string
	// fedAuth is the canonical Entra ID method, or "" for a SQL Server login.
	fedAuth string
	// user is the login, for messages.
	user string
	// addr is host:port or host\instance, for messages.
	addr string
	// tls is the effective TLS mode, for Info.
	tls string
}

// tlsFix says how to get verified TLS from SQL Server, for the refusal of
// anything weaker off loopback.
const tlsFix = "set encrypt=true (or strict) and leave TrustServerCertificate out (the server's certificate must come from an authority this machine trusts, or name it with certificate=FILE)"

// tlsLevel is what go-mssqldb's parsed encryption protects. encrypt=false
// (its default) encrypts the login packet only, and disable not even that:
// both send the traffic in plain text. TrustServerCertificate=true skips
// the certificate check; strict ignores it.
func tlsLevel(p msdsn.Config) dbdriver.TLSLevel {
	switch {
	case p.Encryption != msdsn.EncryptionRequired && p.Encryption != msdsn.EncryptionStrict:
		return dbdriver.TLSOff
	case p.TrustServerCertificate:
		return dbdriver.TLSRequire
	}
	return dbdriver.TLSVerifyFull
}

// auth describes the authentication for Info.
func (c connConfig) auth() string {
	if c.fedAuth == "" {
		return "SQL Server login " + quoteName(c.user)
	}
	return "Entra ID (fedauth=" + c.fedAuth + ", driver " + azuread.DriverName + ")"
}

// parseURL turns a target into go-mssqldb's own URL form. It accepts the
// schemes sqlserver, mssql and azuresql, needs ?database=, checks fedauth=
// against the methods the azuread package knows, and lets go-mssqldb check
// every other parameter, so that a mistake fails here as bad input rather
// than at the first connection. target.Password, when not empty, is used
// if the URL carries none (DBPROBE_PASSWORD, --password-file). Off
// loopback a URL without encrypt= gets encrypt=true, go-mssqldb's default
// being the login alone, and a weaker choice needs
// target.AllowInsecureTLS.
func parseURL(target dbdriver.Target) (connConfig, error) {
	var c connConfig
	u, password := target.URL, target.Password
	if u == nil {
		return c, badinput.New("no SQL Server URL; give one such as %s", urlForm)
	}
	shown := target.Redacted()
	switch strings.ToLower(u.Scheme) {
	case "sqlserver", "mssql", "azuresql":
	default:
		return c, badinput.New("--db %s is not a SQL Server URL; write it as %s", shown, urlForm)
	}
	if u.Opaque != "" || u.Host == "" {
		return c, badinput.New("--db %s names no host; write it as %s", shown, urlForm)
	}
	if u.Fragment != "" {
		return c, badinput.New("--db %s has a #fragment, which SQL Server URLs do not use; remove it", shown)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return c, badinput.New("--db %s has a malformed query string: %w; write options as ?database=NAME&key=value",
			shown, &dbdriver.Scrubbed{Msg: describeQueryError(err), Err: err})
	}
	// go-mssqldb reads keys without regard to case: find each one that way,
	// and refuse one given twice, which it would refuse later.
	seen := map[string]string{}
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if prev, dup := seen[lk]; dup || len(query[k]) > 1 {
			if !dup {
				prev = k
			}
			return c, badinput.New("--db %s gives %q more than once (as %q and %q); keep one", shown, lk, prev, k)
		}
		seen[lk] = k
	}
	get := func(key string) string {
		if k, ok := seen[key]; ok {
			return query[k][0]
		}
		return ""
	}

	// As given, spaces included: go-mssqldb logs in to that name, and
	// messages must name the database it tried.
	c.database = get("database")
	if strings.TrimSpace(c.database) == "" {
		hint := ""
		if p := strings.Trim(u.Path, "/"); p != "" {
			hint = " (in go-mssqldb's URL the path /" + p + " names an instance, not a database)"
		}
		return c, badinput.New("--db %s names no database%s; add ?database=NAME, as in %s", shown, hint, urlForm)
	}
	if f := strings.TrimSpace(get("fedauth")); f != "" {
		for _, m := range fedAuthMethods {
			if strings.EqualFold(f, m) {
				c.fedAuth = m
			}
		}
		if c.fedAuth == "" {
			return c, badinput.New("--db %s: unknown fedauth %q; use one of %s, or leave fedauth out to log in with a SQL Server login",
				shown, f, strings.Join(fedAuthMethods, ", "))
		}
		if err := checkFedAuth(c.fedAuth, get, shown); err != nil {
			return c, err
		}
	}

	dsn := *u
	dsn.Scheme = "sqlserver"
	_, hasPassword := u.User.Password()
	if password != "" && !hasPassword && get("password") == "" {
		dsn.User = url.UserPassword(u.User.Username(), password)
	}
	// A key the URL gives, even empty, is not added again: go-mssqldb
	// refuses a key given twice, naming either spelling at random.
	given := func(key string) bool {
		_, ok := seen[key]
		return ok
	}
	if !given("app name") {
		// The server's sessions then say who they are (sys.dm_exec_sessions).
		q := dsn.Query()
		q.Set("app name", "dbprobe")
		dsn.RawQuery = q.Encode()
	}
	host := u.Hostname()
	if !given("encrypt") && !dbdriver.IsLoopback(host) {
		q := dsn.Query()
		q.Set("encrypt", "true")
		dsn.RawQuery = q.Encode()
	}
	c.dsn = dsn.String()
	c.user = u.User.Username()
	if c.user == "" {
		c.user = get("user id")
	}
	instance := strings.Trim(u.Path, "/")
	c.addr = u.Host
	if _, _, err := net.SplitHostPort(u.Host); err != nil && instance == "" {
		c.addr += ":1433" // go-mssqldb's default port
	}
	if instance != "" {
		c.addr += `\` + instance
	}

	// go-mssqldb checks the remaining parameters (encrypt, timeouts, …).
	if p, ok := u.User.Password(); ok {
		target.Password = p
	} else if p := get("password"); p != "" {
		target.Password = p
	}
	p, err := msdsn.Parse(c.dsn)
	if err != nil {
		return c, badinput.New("--db %s: %w; fix or remove that option (the URL form is %s)",
			shown, &dbdriver.Scrubbed{Msg: target.Scrub(err.Error()), Err: err}, urlForm)
	}
	if c.tls, err = target.CheckTLS([]dbdriver.TLSRoute{{Host: p.Host, Level: tlsLevel(p)}}, tlsFix); err != nil {
		return c, err
	}
	return c, nil
}

// describeQueryError returns why a query string did not parse, without the
// query, which may hold a password.
func describeQueryError(err error) string {
	var esc url.EscapeError
	switch {
	case errors.As(err, &esc):
		return "a malformed %-escape"
	case strings.Contains(err.Error(), "semicolon"):
		return "a ';' between options (use '&')"
	}
	return "it cannot be parsed"
}
