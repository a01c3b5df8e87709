package postgres_test

import (
	"net/url"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// postgresRefusals are the refusals of the secrets tests (internal/cli's
// canary tests), and an unreachable server, on the URL of the test server.
func postgresRefusals(t testing.TB) []drivertest.Refusal {
	base, err := url.Parse(testdb.PostgresURL(t))
	if err != nil {
		t.Fatal("the test server's URL does not parse")
	}
	at := func(change func(u *url.URL, q url.Values)) *url.URL {
		u := *base
		u.User = url.User(base.User.Username())
		q := u.Query()
		change(&u, q)
		u.RawQuery = q.Encode()
		return &u
	}
	return []drivertest.Refusal{
		{Name: "wrong password", URL: at(func(*url.URL, url.Values) {})},
		{Name: "unreachable", URL: at(func(u *url.URL, _ url.Values) { u.Host = "127.0.0.1:1" })},
		{Name: "refused option", URL: at(func(_ *url.URL, q url.Values) { q.Set("sslmode", "sometimes") })},
		{Name: "TLS failure", URL: at(func(_ *url.URL, q url.Values) { q.Set("sslmode", "verify-full") })},
		{Name: "malformed URL", URL: at(func(*url.URL, url.Values) {}), Unescaped: true},
	}
}

// FuzzRefusalPasswords: every refusal, under a password that defeats a
// search for it (short, or the user, the host, the port, the database, a
// word of the message), is one line of bad input that neither gives the
// password away nor patches it out of anyone's words.
func FuzzRefusalPasswords(f *testing.F) {
	drivertest.FuzzRefusals(f, postgresRefusals(f))
}

// The cases: a wrong password equal to the user name names the
// user, and a password of one letter, or the port, leaves the message of
// an unreachable server as it is.
func TestRefusalsKeepTheirWords(t *testing.T) {
	refusals := postgresRefusals(t)
	wrong, unreachable := refusals[0], refusals[1]
	user := wrong.URL.User.Username()
	for _, tc := range []struct {
		r        drivertest.Refusal
		password string
		want     string
	}{
		{wrong, user, "PostgreSQL at " + wrong.URL.Host + ` refused user "` + user + `": password authentication failed; check the user and password (URL, DBPROBE_PASSWORD)`},
		{unreachable, "o", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{unreachable, "p", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{unreachable, "1", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{unreachable, "127.0.0.1", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{unreachable, "at", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{unreachable, "check", "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
	} {
		err := tc.r.Refuse(tc.password)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s, password %q: %v\nwant %s", tc.r.Name, tc.password, err, tc.want)
		}
	}
}
