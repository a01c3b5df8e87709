package driver

import (
	"net/url"
	"strings"

	"dbprobe/internal/badinput"
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
}

// redactedPassword stands in for a password wherever a URL is shown.
const redactedPassword = "xxxxx"

// ParseTarget parses a --db value. A bare driver name ("null") is accepted
// for drivers that need no address. password, when not empty, is used if the
// URL carries none.
func ParseTarget(raw, password string) (Target, error) {
	if strings.TrimSpace(raw) == "" {
		return Target{}, badinput.New("--db is empty; give a database URL such as postgres://user@127.0.0.1:5432/bench or sqlite:///tmp/bench.db")
	}
	if !strings.Contains(raw, ":") {
		raw += ":"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, badinput.New("--db %q is not a valid URL (%s); write it as scheme://user@host:port/database", redactURLText(raw), describeURLError(err))
	}
	if u.Scheme == "" {
		return Target{}, badinput.New("--db %q has no scheme; write it as scheme://…, with a scheme among %v", redactURLText(raw), Schemes())
	}
	_, name, err := Lookup(strings.ToLower(u.Scheme))
	if err != nil {
		return Target{}, badinput.New("--db %q: %v", redactURL(u), err)
	}
	t := Target{Driver: name, URL: u, Password: password}
	if p, ok := u.User.Password(); ok {
		t.Password = p
	} else if p := queryPassword(u); p != "" {
		t.Password = p
	}
	return t, nil
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
	return redactURL(t.URL)
}

// Scrub removes the target's password from a message that may quote it,
// such as an error a library built from the connection string.
func (t Target) Scrub(msg string) string {
	if t.Password == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, t.Password, redactedPassword)
	if esc := url.QueryEscape(t.Password); esc != t.Password {
		msg = strings.ReplaceAll(msg, esc, redactedPassword)
	}
	if esc := url.PathEscape(t.Password); esc != t.Password {
		msg = strings.ReplaceAll(msg, esc, redactedPassword)
	}
	return msg
}

func redactURL(u *url.URL) string {
	c := *u
	if _, ok := c.User.Password(); ok {
		c.User = url.UserPassword(c.User.Username(), redactedPassword)
	}
	q := c.Query()
	changed := false
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, redactedPassword)
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// redactURLText hides what looks like a password in a URL that did not parse:
// the text between the scheme's "//user:" and the last "@".
func redactURLText(raw string) string {
	start := strings.Index(raw, "://")
	if start < 0 {
		return raw
	}
	rest := raw[start+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	colon := strings.Index(rest[:at], ":")
	if colon < 0 {
		return raw
	}
	return raw[:start+3] + rest[:colon+1] + redactedPassword + rest[at:]
}

// describeURLError returns the url package's complaint without the URL it
// quotes, which may hold a password.
func describeURLError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}
