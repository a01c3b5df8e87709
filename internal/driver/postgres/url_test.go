package postgres

import (
	"net/url"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// clearPGEnv keeps the libpq variables of the machine out of a test: pgx
// reads them as defaults.
func clearPGEnv(t *testing.T) {
	for _, v := range []string{"PGHOST", "PGPORT", "PGSSLMODE", "PGSERVICE", "PGSERVICEFILE", "PGSSLROOTCERT", "PGSSLNEGOTIATION"} {
		t.Setenv(v, "")
	}
}

func TestPoolConfigTLS(t *testing.T) {
	clearPGEnv(t)
	const secret = "Tls-s3cret"
	for _, tc := range []struct {
		raw      string
		allow    bool   // --allow-insecure-tls
		pgSSL    string // PGSSLMODE
		mode     string // the Info setting; "" when refused
		refusal  string // part of the refusal
		verified bool   // every connection checks the certificate and the host name
	}{
		// Loopback keeps libpq's behaviour, whatever it is.
		{raw: "postgres://u@127.0.0.1:5432/db", mode: "prefer (loopback)"},
		{raw: "postgres://u@127.0.0.1:5432/db?sslmode=disable", mode: "off (loopback)"},
		{raw: "postgres://u@localhost/db?sslmode=require", mode: "require (loopback)"},
		{raw: "postgres://u@[::1]:5433/db?sslmode=allow", mode: "prefer (loopback)"},
		{raw: "postgres://u@127.0.0.2/db?sslmode=verify-ca", mode: "verify-ca (loopback)"},
		{raw: "postgres:///db?host=/var/run/postgresql", mode: "off (loopback)"},
		{raw: "postgres://u@127.0.0.1/db?sslmode=verify-full", mode: "verify-full", verified: true},
		{raw: "postgres://u@127.0.0.1/db", pgSSL: "disable", mode: "off (loopback)"},

		// Off loopback, no sslmode: verified TLS, not prefer.
		{raw: "postgres://u@db.example.com:5432/db", mode: "verify-full", verified: true},
		{raw: "postgres://u@10.0.0.7/db?application_name=x", mode: "verify-full", verified: true},
		{raw: "postgres://u@[2001:db8::1]/db", mode: "verify-full", verified: true},
		{raw: "postgres://u@127.0.0.1.nip.io/db", mode: "verify-full", verified: true}, // a name is never resolved
		{raw: "postgres://u@localhost.example.com/db", mode: "verify-full", verified: true},
		{raw: "postgres://u@127.0.0.1,db.example.com/db", mode: "verify-full", verified: true},
		{raw: "postgres://u@db.example.com/db?sslmode=verify-full", mode: "verify-full", verified: true},
		{raw: "postgres://u@db.example.com/db?sslrootcert=system", mode: "verify-full", verified: true},

		// Anything weaker off loopback is refused, or allowed by the flag.
		{raw: "postgres://u:" + secret + "@db.example.com/db?sslmode=disable", refusal: "TLS mode off to db.example.com, which is not loopback"},
		{raw: "postgres://u:" + secret + "@db.example.com/db?sslmode=allow", refusal: "TLS mode prefer to db.example.com"},
		{raw: "postgres://u:" + secret + "@db.example.com/db?sslmode=prefer", refusal: "falls back to plain text"},
		{raw: "postgres://u:" + secret + "@db.example.com/db?sslmode=require", refusal: "TLS mode require"},
		{raw: "postgres://u:" + secret + "@db.example.com/db?ssl=true", refusal: "TLS mode require"},
		{raw: "postgres://u:" + secret + "@db.example.com/db?sslmode=verify-ca", refusal: "not checked against the host name"},
		{raw: "postgres://u:" + secret + "@127.0.0.1,db.example.com/db?sslmode=prefer", refusal: "to db.example.com"},
		{raw: "postgres://u:" + secret + "@db.example.com/db", pgSSL: "require", refusal: "TLS mode require"},
		{raw: "postgres://u@db.example.com/db?sslmode=disable", allow: true, mode: "off (--allow-insecure-tls)"},
		{raw: "postgres://u@db.example.com/db?sslmode=require", allow: true, mode: "require (--allow-insecure-tls)"},
		{raw: "postgres://u@db.example.com/db?sslmode=verify-ca", allow: true, mode: "verify-ca (--allow-insecure-tls)"},
		{raw: "postgres://u@db.example.com/db", allow: true, mode: "verify-full", verified: true},
	} {
		t.Run(tc.raw+" "+tc.pgSSL, func(t *testing.T) {
			t.Setenv("PGSSLMODE", tc.pgSSL)
			target, err := driver.ParseTarget(tc.raw, "")
			if err != nil {
				t.Fatal(err)
			}
			target.AllowInsecureTLS = tc.allow
			cfg, mode, err := poolConfig(target)
			if tc.refusal != "" {
				if err == nil {
					t.Fatalf("accepted with tls = %s, want a refusal", mode)
				}
				msg := err.Error()
				if !badinput.Is(err) || !strings.Contains(msg, tc.refusal) || !strings.Contains(msg, "sslmode=verify-full") || !strings.Contains(msg, "--allow-insecure-tls") {
					t.Errorf("refusal %q (bad input %v) should say %q, sslmode=verify-full and --allow-insecure-tls", msg, badinput.Is(err), tc.refusal)
				}
				if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
					t.Errorf("refusal %q holds the password or several lines", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("poolConfig: %v", err)
			}
			if mode != tc.mode {
				t.Errorf("tls = %q, want %q", mode, tc.mode)
			}
			cc := &cfg.ConnConfig.Config
			allVerified := true
			for _, r := range tlsRoutes(cc) {
				allVerified = allVerified && r.Level == driver.TLSVerifyFull
			}
			if allVerified != tc.verified {
				t.Errorf("every route verified = %v, want %v (%+v)", allVerified, tc.verified, tlsRoutes(cc))
			}
			if tc.verified {
				// What pgx will do: one TLS configuration per host, none
				// without a certificate check or a server name.
				if cc.TLSConfig == nil || cc.TLSConfig.InsecureSkipVerify || cc.TLSConfig.ServerName != cc.Host {
					t.Errorf("main TLS config %+v for host %s: want verification of that name", cc.TLSConfig, cc.Host)
				}
				for _, fb := range cc.Fallbacks {
					if fb.TLSConfig == nil || fb.TLSConfig.InsecureSkipVerify || fb.TLSConfig.ServerName != fb.Host {
						t.Errorf("fallback to %s has TLS config %+v: want verification", fb.Host, fb.TLSConfig)
					}
				}
			}
		})
	}
}

func TestIsLoopbackHosts(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.255.0.9": true, "::1": true, "[::1]": true, "::ffff:127.0.0.1": true,
		"localhost": true, "LOCALHOST.": true, "/tmp": true, "/var/run/postgresql": true,
		"128.0.0.1": false, "10.0.0.1": false, "::2": false, "db.example.com": false, "localhost.example.com": false,
		"127.0.0.1.nip.io": false, "": false, "0.0.0.0": false,
	} {
		if got := driver.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestPoolConfigBadURLs(t *testing.T) {
	clearPGEnv(t)
	const secret = "Sup3r-s3cret"
	for _, raw := range []string{
		"postgres://u:" + secret + "@127.0.0.1/db?sslmode=sometimes",
		"postgres://u:" + secret + "@127.0.0.1:5432/db?connect_timeout=soon",
		"postgres://u:" + secret + "@127.0.0.1/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
		"postgres://u:" + secret + "@db.example.com/db?target_session_attrs=maybe",
	} {
		t.Run(raw, func(t *testing.T) {
			target, err := driver.ParseTarget(raw, "")
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = poolConfig(target)
			if err == nil || !badinput.Is(err) {
				t.Fatalf("poolConfig = %v, want bad input", err)
			}
			if msg := err.Error(); target.Reveals(msg) || strings.Contains(msg, secret) || strings.Contains(msg, "\n") || !strings.Contains(msg, "postgres://user@host:5432/database") {
				t.Errorf("message %q holds the password, several lines, or no example", msg)
			}
		})
	}
}

// FuzzParseURL: any PostgreSQL URL, with a password in it, either becomes a
// configuration that keeps the TLS policy or is refused with one line of
// bad input that does not give the password away, nor patches it out of
// pgx's words (see driver.Target.Audit). The passwords are those that
// defeat a search for them (see drivertest.SecretPassword).
func FuzzParseURL(f *testing.F) {
	for i, s := range []string{
		"postgres://u@127.0.0.1:5432/db?sslmode=disable",
		"postgresql://u@db.example.com/db",
		"postgres://u@h1,h2:5433/db?sslmode=prefer&target_session_attrs=read-write",
		"postgres://u@[::1]/db?connect_timeout=x",
		"postgres:///db?host=/tmp&port=5432",
		"postgres://u@h/db?options=-c%20synchronous_commit%3Doff&ssl=true",
		"postgres://u@h:99999/db", "postgres://u@h/db?sslmode=", "postgres://u@h/%zz",
		"postgres://u@127.0.0.1/db?sslmode=sometimes", "postgres://u@db.example.com/db?sslmode=require",
	} {
		for _, kind := range drivertest.SecretKinds {
			f.Add(s, []string{"pw", "o", "éa", "to"}[(i+int(kind))%4], kind)
		}
	}
	f.Fuzz(func(t *testing.T, raw, password string, kind uint8) {
		u, err := url.Parse(raw)
		if err != nil {
			return // driver.ParseTarget refuses it: FuzzParseTarget covers that
		}
		u.Scheme = "postgres"
		q := u.Query()
		// pgx reads these files while parsing; a fuzzed /dev/zero would
		// never end.
		for _, k := range []string{"sslrootcert", "sslcert", "sslkey", "passfile", "servicefile", "service"} {
			q.Del(k)
		}
		u.RawQuery = q.Encode()
		at := func(password string) driver.Target {
			v := *u
			v.User = url.UserPassword(u.User.Username(), password)
			return driver.Target{Driver: "postgres", URL: &v, Password: password}
		}
		refuse := func(d driver.Target) error {
			_, _, err := poolConfig(d)
			return err
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
		cfg, mode, err := poolConfig(target)
		if err != nil {
			msg := err.Error()
			if !badinput.Is(err) || strings.Contains(msg, "\n") {
				t.Fatalf("poolConfig(%q): %q is not one line of bad input", target.Redacted(), msg)
			}
			// pgx refuses a password with a NUL, whatever the rest of
			// the URL: the decoy it is compared with keeps the NULs.
			refuseDecoy := func(d driver.Target) error {
				_, _, err := poolConfig(at(withNULsOf(secret, d.Password)))
				return err
			}
			if why := target.Audit(msg, refuseDecoy); why != "" {
				t.Fatalf("poolConfig(%q), password %q: the message %s: %q", target.Redacted(), secret, why, msg)
			}
			return
		}
		if mode == "" {
			t.Fatalf("poolConfig(%q) records no TLS mode", target.Redacted())
		}
		for _, r := range tlsRoutes(&cfg.ConnConfig.Config) {
			if r.Level != driver.TLSVerifyFull && !driver.IsLoopback(r.Host) {
				t.Fatalf("poolConfig(%q) accepted TLS %s to %s without --allow-insecure-tls", target.Redacted(), r.Level, r.Host)
			}
		}
	})
}

// withNULsOf returns decoy, another password, with a NUL wherever password
// holds one, when it holds any: each of its other characters becomes
// decoy's first letter, which password lacks. Escaped in a URL's user
// information, a NUL (%00) is the one character pgx refuses in a password
// on its own (libpq's rule; see pgconn's uriDecode), naming the password
// rather than quoting it, so a password with one is compared with a decoy
// that is refused alike.
func withNULsOf(password, decoy string) string {
	if !strings.Contains(password, "\x00") {
		return decoy
	}
	return strings.Map(func(r rune) rune {
		if r == 0 {
			return 0
		}
		return rune(decoy[0])
	}, password)
}

// A NUL in the password is refused as pgx refuses it, naming the password
// and not quoting it; another password with a NUL gets the same message,
// which is what FuzzParseURL compares with (input 73013a31bf292692).
func TestPoolConfigNULPassword(t *testing.T) {
	clearPGEnv(t)
	refusal := func(password string) string {
		u, err := url.Parse("postgres://u@127.0.0.1/db")
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("u", password)
		_, _, err = poolConfig(driver.Target{Driver: "postgres", URL: u, Password: password})
		if !badinput.Is(err) {
			t.Fatalf("password %q: poolConfig = %v, want bad input", password, err)
		}
		return err.Error()
	}
	msg := refusal("s3cret\x00x")
	if !strings.Contains(msg, "forbidden value %00 in percent-encoded value in password") || strings.Contains(msg, "s3cret") {
		t.Errorf("message %q: want pgx's refusal of the NUL, without the password", msg)
	}
	if other := refusal("QQQQQQ\x00Q"); other != msg {
		t.Errorf("another password with a NUL: %q, want %q", other, msg)
	}
}
