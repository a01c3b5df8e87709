package driver

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Target is a parsed --db value: which driver, and where.
type Target struct {
	// Driver is the canonical driver name the scheme maps to.
	Driver string
	// URL is the parsed URL, password included: never print it, use Redacted.
	URL *url.URL
	// Password comes from the URL, or from DBPROBE_PASSWORD or a file when
	// the URL has none. Drivers use it; nothing prints it.
	Password string
	// AllowInsecureTLS lets a driver connect to a host that is not loopback
	// with less than verified TLS (--allow-insecure-tls); see CheckTLS.
	AllowInsecureTLS bool
}

// redactedPassword stands in for a password wherever a URL is shown.
const redactedPassword = "xxxxx"

// ParseTarget parses a --db value. A bare driver name ("null") is accepted
// for drivers that need no address. password, when not empty, is used if the
// URL carries none.
func ParseTarget(raw, password string) (Target, error) {
	return ParseTargetFrom("--db", raw, password)
}

// ParseTargetFrom is ParseTarget for a URL given by source ("--db",
// "DBPROBE_DB"), which its messages name.
func ParseTargetFrom(source, raw, password string) (Target, error) {
	if strings.TrimSpace(raw) == "" {
		return Target{}, badinput.New("%s is empty; give a database URL such as postgres://user@127.0.0.1:5432/bench or sqlite:///tmp/bench.db", source)
	}
	// A bare name (null) is read as a scheme alone; messages quote the
	// URL as given, without the colon added for that.
	given := raw
	if !strings.Contains(raw, ":") {
		raw += ":"
	}
	u, err := url.Parse(raw)
	if err != nil {
		hint := ""
		if strings.Contains(given, "@") {
			hint = "; a / ? # or @ in the password must be escaped (%2F %3F %23 %40), or give it in DBPROBE_PASSWORD"
		}
		return Target{}, badinput.New("%s %q is not a valid URL (%s); write it as scheme://user@host:port/database%s", source, unparsedURL(given), describeURLError(err), hint)
	}
	if u.Scheme == "" {
		return Target{}, badinput.New("%s %q has no scheme; write it as scheme://…, with a scheme among %v", source, unparsedURL(given), Schemes())
	}
	if userInfoMisplaced(u) {
		return Target{}, badinput.New("%s %q does not parse as scheme://user:password@host/…: a / ? # or @ in the user name or the password must be escaped (%%2F %%3F %%23 %%40), or give the password in DBPROBE_PASSWORD or --password-file", source, unparsedURL(given))
	}
	if u.Fragment != "" {
		u.Fragment = ""
		return Target{}, badinput.New("%s %s has a #fragment, which no database URL uses; escape a # in a password or a name as %%23", source, redactURL(u))
	}
	_, name, err := Lookup(strings.ToLower(u.Scheme))
	if err != nil {
		if !strings.Contains(given, ":") {
			// A bare word ("URL", "postgress") holds no password: quoted
			// as typed, not as the scheme "url://…" it never had.
			return Target{}, badinput.New("%s %q: %v; give a URL such as postgres://user@127.0.0.1:5432/bench", source, given, err)
		}
		// Only the scheme is quoted: the rest of a URL no driver will
		// read may hold a password where no parser looks for one.
		return Target{}, badinput.New("%s %s://…: %v", source, strings.ToLower(u.Scheme), err)
	}
	t := Target{Driver: name, URL: u, Password: password}
	if p, ok := u.User.Password(); ok {
		t.Password = p
	} else if p := queryPassword(u); p != "" {
		t.Password = p
	}
	return t, nil
}

// SecretKey reports whether a URL option or a property holds a secret by
// its name: password, sslpassword, db.passwd, a secret, a token.
func SecretKey(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "passw") || strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// unparsedURL is a URL that did not parse, as a message may quote it: as
// given when it cannot hold a password (no user information, no password
// option), and else its scheme alone, since where the password is in a URL
// that does not parse cannot be known ("postgres:/u:pw@h" has no //).
func unparsedURL(raw string) string {
	if !strings.Contains(raw, "@") && !strings.Contains(strings.ToLower(raw), "passw") {
		return raw
	}
	return RedactURL(raw)
}

// userInfoMisplaced reports a URL whose user:password@ did not parse as
// one because a / ? # or @ in it was not escaped, or because the scheme
// lacks its //: the url package then reads the rest, password included, as
// the path, the query, the fragment or opaque text, which messages and the
// redacted URL would show.
func userInfoMisplaced(u *url.URL) bool {
	rest := u.Opaque + u.EscapedPath() + "?" + u.RawQuery + "#" + u.EscapedFragment()
	if h := u.Hostname(); strings.Contains(h, ":") && !strings.HasPrefix(u.Host, "[") && strings.Contains(rest, "@") {
		// "a://u:pw?x@h" ends the authority at the ?, and u:pw is read
		// as a host with a colon, which no host has (IPv6 is bracketed;
		// sqlite://:memory: has no @ after it).
		return true
	}
	if u.User == nil && u.Port() != "" && strings.Contains(rest, "@") {
		// "a://u:1234/pw@h": a password that starts with digits reads as
		// a port when a / ? or # follows them, and its rest, with the @,
		// as the path, the query or the fragment.
		return true
	}
	if strings.Contains(u.Fragment, "@") {
		// "a://u:p@w#d@h": an @ then a # in the password end the user
		// information at that @ and the authority at the #, so the
		// password's middle reads as the host and its rest, with the
		// real @, as the fragment. No database URL has a fragment.
		return true
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return false
		}
		// An @ in the user name ("a://@/:pw@h") ends the user info
		// early, and the password lands in the path.
	}
	at := strings.LastIndex(rest, "@")
	return at >= 0 && strings.Contains(rest[:at], ":")
}

// queryPassword returns a password given as a URL option (?password=…),
// which libraries such as pgx accept, so that it is scrubbed too.
func queryPassword(u *url.URL) string {
	for k, v := range u.Query() {
		if strings.EqualFold(k, "password") && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// Redacted returns the URL with its password replaced, safe to print.
func (t Target) Redacted() string {
	if t.URL == nil {
		return ""
	}
	if u := t.URL; u.Opaque == "" && u.Host == "" && u.Path == "" && u.RawQuery == "" && u.User == nil {
		return u.Scheme // a bare driver name, as given: null
	}
	return redactURL(t.URL)
}

// RedactURL returns a --db value as typed with its password replaced, for a
// command line shown back. A value that does not parse as ParseTarget
// reads it is shown as its scheme alone: where a password would be in it
// is unknown.
func RedactURL(raw string) string {
	if !strings.Contains(raw, ":") {
		return raw // a bare driver name
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Fragment != "" || userInfoMisplaced(u) {
		scheme, _, _ := strings.Cut(raw, ":")
		if !validScheme(scheme) {
			return "…"
		}
		return scheme + ":…"
	}
	return redactURL(u)
}

// validScheme reports a URL scheme as RFC 3986 spells one: a letter, then
// letters, digits, +, - and .
func validScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

func redactURL(u *url.URL) string {
	c := *u
	if _, ok := c.User.Password(); ok {
		c.User = url.UserPassword(c.User.Username(), redactedPassword)
	}
	q := c.Query()
	changed := false
	for k := range q {
		if SecretKey(k) {
			q.Set(k, redactedPassword)
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// describeURLError returns the url package's complaint without the URL it
// quotes, which may hold a password, and without the piece of it the
// complaint quotes ("invalid port \":pa\" after host" of a password with a /
// in it, "invalid URL escape \"%zz\""), which may be part of one. A quoted
// piece ends where Go's %q quoting ends it, not at the next quote: an
// escaped \" inside is part of the piece, and what follows it may be too.
// A quote that does not open Go's quoting drops the rest of the complaint.
func describeURLError(err error) string {
	msg := err.Error()
	if ue, ok := err.(*url.Error); ok {
		msg = ue.Err.Error()
	}
	var b strings.Builder
	for {
		start := strings.IndexByte(msg, '"')
		if start < 0 {
			break
		}
		b.WriteString(strings.TrimRight(msg[:start], " "))
		quoted, err := strconv.QuotedPrefix(msg[start:])
		if err != nil {
			return b.String()
		}
		msg = msg[start+len(quoted):]
	}
	b.WriteString(msg)
	return b.String()
}

// TLSLevel is how well a connection to the database is protected, from
// the weakest up.
type TLSLevel int

// The TLS levels, named as PostgreSQL's sslmode names them.
const (
	// TLSOff sends everything, login included, in plain text.
	TLSOff TLSLevel = iota
	// TLSPreferred uses TLS when the server offers it, falls back to plain
	// text when it does not, and checks no certificate.
	TLSPreferred
	// TLSRequire encrypts but does not check the server's certificate: it
	// resists a listener, not an impostor.
	TLSRequire
	// TLSVerifyCA checks that a trusted authority signed the server's
	// certificate, but not that it was issued for the host.
	TLSVerifyCA
	// TLSVerifyFull checks the certificate's chain and its host name.
	TLSVerifyFull
)

// String returns the level's name.
func (l TLSLevel) String() string {
	switch l {
	case TLSOff:
		return "off"
	case TLSPreferred:
		return "prefer"
	case TLSRequire:
		return "require"
	case TLSVerifyCA:
		return "verify-ca"
	case TLSVerifyFull:
		return "verify-full"
	}
	return "unknown"
}

// risk says what a level leaves open, for the refusal.
func (l TLSLevel) risk() string {
	switch l {
	case TLSOff:
		return "the traffic, login included, can be read on the way"
	case TLSPreferred:
		return "it falls back to plain text and checks no certificate"
	case TLSRequire:
		return "the server's certificate is not checked, so an impostor is not noticed"
	case TLSVerifyCA:
		return "the certificate is not checked against the host name"
	}
	return "it is not verified"
}

// TLSRoute is one host a driver may connect to, and the protection the
// connection would have.
type TLSRoute struct {
	Host  string
	Level TLSLevel
}

// CheckTLS enforces dbprobe's TLS policy on the routes a driver built from
// the target: to a host that is not loopback (see IsLoopback), anything
// short of verified TLS is refused unless AllowInsecureTLS is set, with a
// bad-input error saying what to do (fix: the driver's own way to verify,
// such as "set sslmode=verify-full"). It returns the effective mode for
// the driver's Info settings, under the name "tls": "verify-full",
// "off (loopback)", "require (--allow-insecure-tls)".
func (t Target) CheckTLS(routes []TLSRoute, fix string) (string, error) {
	if len(routes) == 0 {
		return "", nil
	}
	weakest := routes[0]
	var remote *TLSRoute // the weakest route off loopback
	for i, r := range routes {
		if r.Level < weakest.Level {
			weakest = r
		}
		if r.Level < TLSVerifyFull && !IsLoopback(r.Host) && (remote == nil || r.Level < remote.Level) {
			remote = &routes[i]
		}
	}
	switch {
	case weakest.Level == TLSVerifyFull:
		return weakest.Level.String(), nil
	case remote == nil:
		return weakest.Level.String() + " (loopback)", nil
	case t.AllowInsecureTLS:
		return weakest.Level.String() + " (--allow-insecure-tls)", nil
	}
	return "", badinput.New("--db %s: TLS mode %s to %s, which is not loopback: %s; %s, or add --allow-insecure-tls to accept that",
		t.Redacted(), remote.Level, remote.Host, remote.Level.risk(), fix)
}

// IsLoopback reports whether host names this machine beyond doubt: an
// address in 127.0.0.0/8 or ::1 (IPv4-mapped too), "localhost", or a unix
// socket (a path, or an abstract socket's @name). Other names are not
// resolved: a name that happens to point at 127.0.0.1 counts as remote, so
// the decision never depends on DNS.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@") {
		return true
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return addr.WithZone("").Unmap().IsLoopback()
}
