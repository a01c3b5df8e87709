package mysql

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// target builds a driver.Target from raw as driver.ParseTarget does for a
// registered scheme.
func target(t testing.TB, raw, password string) driver.Target {
	t.Helper()
	tg, err := driver.ParseTarget(raw, password)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", raw, err)
	}
	return tg
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw, password string
		addr, user    string
		pass, db      string
		check         func(*settings) string
	}{
		{raw: "mysql://u:p@db.example:3307/bench", addr: "db.example:3307", user: "u", pass: "p", db: "bench"},
		{raw: "mysql://u@db.example/bench", addr: "db.example:3306", user: "u", db: "bench"},
		{raw: "mariadb://u@127.0.0.1/bench", password: "fromenv", addr: "127.0.0.1:3306", user: "u", pass: "fromenv", db: "bench"},
		{raw: "mysql://u:p%40ss%2Fw%3Ard@[::1]:3306/b%20x", addr: "[::1]:3306", user: "u", pass: "p@ss/w:rd", db: "b x"},
		{raw: "mysql://u@/bench", addr: "127.0.0.1:3306", user: "u", db: "bench"},
		{raw: "mysql://u@127.0.0.1/b?tls=skip-verify&timeout=3&read_timeout=1m", addr: "127.0.0.1:3306", user: "u", db: "b", check: func(s *settings) string {
			if s.cfg.TLSConfig != "skip-verify" || s.cfg.Timeout != 3*time.Second || s.cfg.ReadTimeout != time.Minute {
				return "tls, timeout or read_timeout not taken"
			}
			return ""
		}},
		{raw: "mysql://u@h/b?innodb_lock_wait_timeout=2&lock_wait_timeout=3&max_statement_time=0.5&max_execution_time=500", addr: "h:3306", user: "u", db: "b", check: func(s *settings) string {
			want := map[string]string{"innodb_lock_wait_timeout": "2", "lock_wait_timeout": "3", "max_statement_time": "0.5", "max_execution_time": "500"}
			for k, v := range want {
				if s.cfg.Params[k] != v {
					return "session variable " + k + " = " + s.cfg.Params[k] + ", want " + v
				}
			}
			return ""
		}},
		{raw: "mysql://u@h/b?max_heap_table_size=4G", addr: "h:3306", user: "u", db: "b", check: func(s *settings) string {
			if s.maxHeapTableSize != 4<<30 {
				return "max_heap_table_size not taken"
			}
			return ""
		}},
		{raw: "mysql://u@h/b?password=secret", addr: "h:3306", user: "u", pass: "secret", db: "b"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			s, err := parseURL(target(t, tc.raw, tc.password))
			if err != nil {
				t.Fatal(err)
			}
			c := s.cfg
			if c.Addr != tc.addr || c.User != tc.user || c.Passwd != tc.pass || c.DBName != tc.db || c.Net != "tcp" {
				t.Errorf("config = %s@%s/%s (password %q), want %s@%s/%s (%q)", c.User, c.Addr, c.DBName, c.Passwd, tc.user, tc.addr, tc.db, tc.pass)
			}
			if !c.ClientFoundRows {
				t.Error("ClientFoundRows is off: an update that changes nothing would be ErrNotFound")
			}
			if c.Timeout <= 0 {
				t.Error("no connect timeout")
			}
			if tc.check != nil {
				if msg := tc.check(s); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func TestParseURLMistakes(t *testing.T) {
	const secret = "s3cr3t-pw"
	for _, tc := range []struct{ raw, says string }{
		{"mysql://:" + secret + "@h/b", "names no user"},
		{"mysql://u:" + secret + "@h", "names no database"},
		{"mysql://u:" + secret + "@h/", "names no database"},
		{"mysql://u:" + secret + "@h/a/b", "holds a /"},
		{"mysql://u:" + secret + "@h:0/b", "not a number from 1 to 65535"},
		{"mysql://u:" + secret + "@h:99999/b", "not a number from 1 to 65535"},
		{"mysql://u:" + secret + "@h:/b", "empty port"},
		{"mysql:u@h/b", "write a MySQL URL as"},
		{"mysql://u:" + secret + "@h/" + strings.Repeat("d", 65), "longer than MySQL's 64"},
		{"mysql://u:" + secret + "@h/b#frag", "fragment"},
		{"mysql://u:" + secret + "@h/b?sslmode=disable", `unknown option "sslmode"; known: innodb_lock_wait_timeout, lock_wait_timeout, max_execution_time, max_heap_table_size, max_statement_time, password, read_timeout, timeout, tls, write_timeout`},
		{"mysql://u:" + secret + "@h/b?tls=maybe", "tls="},
		{"mysql://u:" + secret + "@h/b?timeout=soon", "duration"},
		{"mysql://u:" + secret + "@h/b?timeout=-1s", "duration"},
		{"mysql://u:" + secret + "@h/b?innodb_lock_wait_timeout=0", "whole number between 1"},
		{"mysql://u:" + secret + "@h/b?innodb_lock_wait_timeout=1x", "whole number"},
		{"mysql://u:" + secret + "@h/b?innodb_lock_wait_timeout=1;DROP", "semicolon"},
		{"mysql://u:" + secret + "@h/b?max_statement_time=NaN", "number of seconds"},
		{"mysql://u:" + secret + "@h/b?max_heap_table_size=10", "at least 16384"},
		{"mysql://u:" + secret + "@h/b?timeout=1&timeout=2", "given 2 times"},
		{"mysql://u:" + secret + "@h/b?timeout=%zz", "do not parse"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			tg := driver.Target{Driver: "mysql", URL: u, Password: secret}
			_, err = parseURL(tg)
			if err == nil {
				t.Fatal("accepted, want an error")
			}
			if !badinput.Is(err) {
				t.Errorf("%v is not bad input", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q holds the password or several lines", err)
			}
		})
	}
}

func TestParseURLTLS(t *testing.T) {
	const secret = "Tls-s3cret"
	for _, tc := range []struct {
		raw     string
		allow   bool   // --allow-insecure-tls
		tls     string // go-sql-driver's TLSConfig
		mode    string // the Info setting; "" when refused
		refusal string
	}{
		{raw: "mysql://u@127.0.0.1/b", tls: "", mode: "off (loopback)"},
		{raw: "mysql://u@/b", tls: "", mode: "off (loopback)"},
		{raw: "mysql://u@localhost/b?tls=preferred", tls: "preferred", mode: "prefer (loopback)"},
		{raw: "mysql://u@[::1]/b?tls=skip-verify", tls: "skip-verify", mode: "require (loopback)"},
		{raw: "mysql://u@127.0.0.1/b?tls=true", tls: "true", mode: "verify-full"},
		{raw: "mysql://u@db.example.com/b", tls: "true", mode: "verify-full"},
		{raw: "mariadb://u@10.1.2.3:3307/b", tls: "true", mode: "verify-full"},
		{raw: "mysql://u@db.example.com/b?tls=true", tls: "true", mode: "verify-full"},
		{raw: "mysql://u@db.example.com/b?tls=false", allow: true, tls: "false", mode: "off (--allow-insecure-tls)"},
		{raw: "mysql://u@db.example.com/b?tls=skip-verify", allow: true, tls: "skip-verify", mode: "require (--allow-insecure-tls)"},
		{raw: "mysql://u@db.example.com/b", allow: true, tls: "true", mode: "verify-full"},
		{raw: "mysql://u:" + secret + "@db.example.com/b?tls=false", refusal: "TLS mode off to db.example.com, which is not loopback"},
		{raw: "mysql://u:" + secret + "@db.example.com/b?tls=skip-verify", refusal: "TLS mode require to db.example.com"},
		{raw: "mysql://u:" + secret + "@[2001:db8::5]/b?tls=preferred", refusal: "TLS mode prefer to 2001:db8::5"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			tg := target(t, tc.raw, "")
			tg.AllowInsecureTLS = tc.allow
			s, err := parseURL(tg)
			if tc.refusal != "" {
				if err == nil {
					t.Fatalf("accepted with tls = %s, want a refusal", s.tls)
				}
				msg := err.Error()
				if !badinput.Is(err) || !strings.Contains(msg, tc.refusal) || !strings.Contains(msg, "tls=true") || !strings.Contains(msg, "--allow-insecure-tls") {
					t.Errorf("refusal %q (bad input %v) should say %q, tls=true and --allow-insecure-tls", msg, badinput.Is(err), tc.refusal)
				}
				if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
					t.Errorf("refusal %q holds the password or several lines", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.cfg.TLSConfig != tc.tls || s.tls != tc.mode {
				t.Errorf("TLSConfig %q, tls setting %q; want %q, %q", s.cfg.TLSConfig, s.tls, tc.tls, tc.mode)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"16384": 16384, "64K": 64 << 10, "16m": 16 << 20, "4G": 4 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1", "1T", "99999999999999999999G", "1.5G"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// FuzzParseURL: any MySQL URL, with a password in it, either becomes a
// complete configuration that keeps the TLS policy, or is refused with one
// line of bad input that does not give the password away, nor patches it
// out of anyone's words (see driver.Target.Audit). The passwords are those
// that defeat a search for them (see drivertest.SecretPassword).
func FuzzParseURL(f *testing.F) {
	for i, s := range []string{
		"mysql://u:p@h:3306/b?tls=true&timeout=5s",
		"mariadb://u@[::1]/b?max_heap_table_size=1G",
		"mysql://u@h/b?innodb_lock_wait_timeout=1&max_statement_time=0.25",
		"mysql://u@h:/b", "mysql:opaque", "mysql://u@h/a/b", "mysql://u@h/b?x=%zz",
		"mysql://root@127.0.0.1:1/x?tls=maybe", "mysql://u@db.example.com/b?tls=false",
	} {
		for _, kind := range drivertest.SecretKinds {
			f.Add(s, []string{"pw", "p", "o", "éa"}[(i+int(kind))%4], kind)
		}
	}
	f.Fuzz(func(t *testing.T, raw, password string, kind uint8) {
		u, err := url.Parse(raw)
		if err != nil {
			return // driver.ParseTarget refuses it: FuzzParseTarget covers that
		}
		// The password goes into the URL, where users put it.
		at := func(password string) driver.Target {
			v := *u
			if u.User != nil || u.Host != "" {
				v.User = url.UserPassword(u.User.Username(), password)
			}
			return driver.Target{Driver: "mysql", URL: &v, Password: password}
		}
		refuse := func(d driver.Target) error {
			_, err := parseURL(d)
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
		tg := at(secret)
		s, err := parseURL(tg)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("parseURL(%q): %v is not bad input", tg.Redacted(), err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("parseURL(%q): a message of several lines: %q", tg.Redacted(), err)
			}
			if why := tg.Audit(err.Error(), refuse); why != "" {
				t.Fatalf("parseURL(%q), password %q: the message %s: %q", tg.Redacted(), secret, why, err)
			}
			return
		}
		c := s.cfg
		if c.User == "" || c.DBName == "" || c.Addr == "" || c.Net != "tcp" || !c.ClientFoundRows {
			t.Fatalf("parseURL(%q) accepted an incomplete configuration: %+v", raw, c)
		}
		if host, _, _ := net.SplitHostPort(c.Addr); c.TLSConfig != "true" && !driver.IsLoopback(host) {
			t.Fatalf("parseURL(%q) accepted tls=%q to %s without --allow-insecure-tls", u.Redacted(), c.TLSConfig, host)
		}
		// Session variables go into SET statements as they are: only
		// numbers may get there.
		for name, v := range c.Params {
			if strings.Trim(v, "0123456789.") != "" {
				t.Fatalf("parseURL(%q): session variable %s = %q is not a number", raw, name, v)
			}
		}
	})
}
