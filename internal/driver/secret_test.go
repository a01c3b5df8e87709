package driver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// stubTarget parses a --db value of the stub driver, failing the test on
// an error.
func stubTarget(t *testing.T, raw, password string) Target {
	t.Helper()
	target, err := ParseTarget(raw, password)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// A library's message is shown whole or withheld whole: whole when the
// password is not in it as a token, or only as a token the URL shows
// anyway (the user, the host, the port, the database), and withheld when
// it holds the password elsewhere or where a password stands.
func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		name, raw, password string
		msg                 string
		withheld            bool
	}{
		// The examples: a short password matched letter by letter
		// mangled the words and spelt itself out.
		{"letter inside words", "stub://u:o@127.0.0.1:1/x", "",
			"failed to connect to `user=u database=x`: 127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused", false},
		{"letter of port", "stub://u:p@127.0.0.1:1/x", "", "check host and port", false},
		{"password is the user", "stub://postgres:postgres@127.0.0.1:5432/bench", "",
			`password authentication failed for user "postgres"`, false},
		{"password is the user, MySQL", "stub://root:root@127.0.0.1:3306/bench", "",
			"Access denied for user 'root'@'localhost' (using password: YES)", false},
		{"password is the database", "stub://u:bench@h/bench", "", `database "bench" does not exist`, false},
		{"password is the port", "stub://u:1@127.0.0.1:1/x", "", "dial tcp 127.0.0.1:1: connect: connection refused", false},
		{"password is part of the host", "stub://u:0@127.0.0.1:5432/x", "", "dial tcp 127.0.0.1:5432: i/o timeout", false},
		{"letters of a longer number", "stub://u:1@h/x", "", "dial tcp 127.0.0.10:5432: i/o timeout", false},
		{"accented letter inside a word", "stub://u:%C3%A9@h/x", "", "le café est fermé", false},

		// A library echoing the connection string, even when the password
		// is a name the URL shows.
		{"DSN echo", "stub://postgres:postgres@h/db", "", "cannot parse `user=postgres password=postgres host=h`: bad", true},
		{"URL echo", "stub://postgres:postgres@h/db", "", "dial postgres://postgres:postgres@h/db failed", true},
		{"ADO echo", "stub://sa:sa@h/db", "", "server=h;user id=sa;Password=sa;database=db: bad option", true},
		{"key: value echo", "stub://u:u@h/db", "", `{"user":"u","pwd":"u"}`, true},
		{"password quoted", "stub://u:u@h/db", "", `wrong password "u"`, true},

		// The password where no name of the URL explains it.
		{"a word of the message", "stub://u:usertable@h/db", "", "relation usertable already exists", true},
		{"long password", "stub://u:hunter2@h/db", "", "unknown option hunter2", true},
		{"accented letter alone", "stub://u:%C3%A9@h/x", "", "mot de passe é refusé", true},
		{"not a word at its ends", "stub://u:-x-@h/x", "", "a-x-b", true},
		{"path escaped", "stub://u:p%2Fw%20d@h/db", "", "failed: p%2Fw%20d", true},
		{"query escaped", "stub://u:p%2Fw%20d@h/db", "", "failed: p%2Fw+d", true},
		{"as given", "stub://u:p%2Fw%20d@h/db", "", "failed: p/w d.", true},
		{"quoted by %q", "stub://u:a%22b@h/db", "", `invalid value "a\"b"`, true},
		{"from the environment", "stub://u@h/db", "s3cret", "auth s3cret refused", true},
		{"in a query option", "stub://u@h/db?password=s3cret", "", "auth s3cret refused", true},

		// The withheld sentence's own words are not the password.
		{"withheld sentence", "stub://u:port@h/db", "", Withheld + withheldCheck, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := stubTarget(t, tc.raw, tc.password)
			got := target.Scrub(tc.msg)
			want := tc.msg
			if tc.withheld {
				want = Withheld
			}
			if got != want {
				t.Errorf("password %q: Scrub(%q) = %q, want %q", target.Password, tc.msg, got, want)
			}
			if c := target.ScrubConnect(tc.msg); tc.withheld && c != Withheld+withheldCheck {
				t.Errorf("ScrubConnect = %q: want the withheld sentence with what to check", c)
			}
		})
	}
}

// Errors are scrubbed by layer: dbprobe's own sentences stay whole, and a
// library's message is withheld whole where it holds the password.
func TestScrubError(t *testing.T) {
	target := stubTarget(t, "stub://u:at@127.0.0.1:1/db", "")
	lib := errors.New("server said: option at is wrong") // holds the password "at"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"dbprobe's own sentence",
			badinput.New("cannot reach PostgreSQL at %s: %w; check host and port", "127.0.0.1:1", &Scrubbed{Msg: "connection refused", Err: lib}),
			"cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port"},
		{"bad input without a cause", badinput.New("table t in %s was not created by dbprobe", "stub://u:xxxxx@127.0.0.1:1/db"),
			"table t in stub://u:xxxxx@127.0.0.1:1/db was not created by dbprobe"},
		{"classified library error under dbprobe's context",
			fmt.Errorf("creating table t at once: %w", Classify(lib, "42", ClassOther)),
			"creating table t at once: " + Withheld},
		{"a quoted message no Target checked",
			PermissionDenied("PostgreSQL", "permission denied at table t", Classify(lib, "42501", ClassOther)),
			"PostgreSQL refused: " + Withheld + "; grant the user the privilege it names on the table (load needs INSERT; run needs SELECT, and UPDATE or INSERT as the workload does), or run as a user who has it"},
		{"a settled message", fmt.Errorf("open: %w", &Scrubbed{Msg: "open PostgreSQL at 127.0.0.1:1: " + Withheld, Err: lib}),
			"open: open PostgreSQL at 127.0.0.1:1: " + Withheld},
		{"library wrapping of its own", fmt.Errorf("connect at %s: %w", "h", lib), Withheld},
		{"nothing to hide", fmt.Errorf("creating table t: %w", Classify(errors.New("disk full"), "53100", ClassOther)),
			"creating table t: disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := target.ScrubError(tc.err); got != tc.want {
				t.Errorf("ScrubError = %q,\nwant %q", got, tc.want)
			}
		})
	}
	if got := target.ScrubError(nil); got != "" {
		t.Errorf("ScrubError(nil) = %q", got)
	}
}

func TestAudit(t *testing.T) {
	target := stubTarget(t, "stub://000", "000,")
	own := "TLS mode off to 000, which is not loopback"
	same := func(Target) error { return errors.New(own) }
	if !target.Reveals(own) {
		t.Fatalf("Reveals(%q) = false; the case needs text that holds the password by chance", own)
	}
	if why := target.Audit(own, same); why != "" {
		t.Errorf("Audit takes the message's own text %q for the password: %s", own, why)
	}
	if why := target.Audit(own+"; password 000,", same); !strings.Contains(why, "gives the password away") {
		t.Errorf("Audit misses the password written out after the message's own text: %q", why)
	}

	o := stubTarget(t, "stub://u:o@127.0.0.1:1/x", "")
	lib := "open PostgreSQL at 127.0.0.1:1: server closed the connection"
	refuse := func(d Target) error {
		if d.Password == o.Password {
			t.Fatalf("Audit called refuse with the password itself")
		}
		return errors.New(lib)
	}
	for msg, ok := range map[string]bool{
		lib: true,
		"open PostgreSQL at 127.0.0.1:1: " + Withheld:                                  true,
		"open PostgreSQL at 127.0.0.1:1: " + Withheld + withheldCheck:                  true,
		"open PxxxxxstgreSQL at 127.0.0.1:1: server clxxxxxsed the cxxxxxnnectixxxxxn": false,
		"open PostgreSQL at 127.0.0.1:1: server closed the connection (o)":             false,
	} {
		if why := o.Audit(msg, refuse); (why == "") != ok {
			t.Errorf("Audit(%q) = %q; want it accepted: %v", msg, why, ok)
		}
	}

	inURL := stubTarget(t, "stub://u:pa%2Fss@h/db?password=pa%2Fss", "")
	d := inURL.decoy()
	if p, _ := d.URL.User.Password(); p != d.Password || d.URL.Query().Get("password") != d.Password || d.Password == inURL.Password {
		t.Errorf("decoy = %q, URL %q: the password is not replaced everywhere", d.Password, d.URL)
	}
	if p, _ := inURL.URL.User.Password(); p != "pa/ss" {
		t.Errorf("decoy changed the original URL's password to %q", p)
	}
	if d.Redacted() != inURL.Redacted() {
		t.Errorf("the decoy's URL is shown as %s, the target's as %s", d.Redacted(), inURL.Redacted())
	}
}

// FuzzScrub: a message is returned whole or withheld whole, never
// patched; one without the password in any form is returned whole, and
// one that echoes a connection string with the password is withheld,
// whatever the password and the names around it.
func FuzzScrub(f *testing.F) {
	f.Add("o", "u", "127.0.0.1:1", "x", "failed to connect: dial tcp 127.0.0.1:1: connect: connection refused")
	f.Add("postgres", "postgres", "h", "db", `password authentication failed for user "postgres"`)
	f.Add("pw", "u", "h", "db", "host=h user=u")
	f.Add("é", "u", "h", "db", "café é")
	f.Fuzz(func(t *testing.T, password, user, host, database, msg string) {
		if password == "" {
			return
		}
		u := &url.URL{Scheme: "stub", User: url.UserPassword(user, password), Host: host, Path: "/" + database}
		target := Target{Driver: "stub", URL: u, Password: password}
		got := target.Scrub(msg)
		if got != msg && got != Withheld {
			t.Fatalf("Scrub(%q) = %q: neither the message nor withheld", msg, got)
		}
		held := false
		for _, form := range passwordForms(password) {
			held = held || strings.Contains(msg, form)
		}
		if !held && got != msg {
			t.Fatalf("Scrub(%q) withheld a message without the password %q", msg, password)
		}
		for _, echo := range []string{
			msg + " user=" + user + " password=" + password,
			msg + " Password=" + password,
			msg + " stub://" + user + ":" + password + "@" + host,
		} {
			if got := target.Scrub(echo); got != Withheld {
				t.Fatalf("Scrub(%q) = %q: the echoed password %q is not withheld", echo, got, password)
			}
		}
		for _, w := range []string{Withheld, Withheld + withheldCheck} {
			if got := target.Scrub(w); got != w {
				t.Fatalf("password %q: Scrub(%q) = %q", password, w, got)
			}
		}
	})
}
