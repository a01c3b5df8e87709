package redis

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

func TestClientOptions(t *testing.T) {
	type want struct {
		addr, user, password string
		db                   int
		tls                  bool
		poolSize, maxIdle    int
		dialTimeout          time.Duration
		clientName           string
	}
	for _, tc := range []struct {
		url, password string // password: DBPROBE_PASSWORD
		sessions      int
		want          want
	}{
		{url: "redis://127.0.0.1:6379/0", sessions: 8,
			want: want{addr: "127.0.0.1:6379", poolSize: 10, maxIdle: 10, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "redis://:s3cret@127.0.0.1:6380/3", sessions: 1,
			want: want{addr: "127.0.0.1:6380", password: "s3cret", db: 3, poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "rediss://bob:pw@db.example:7000/2", sessions: 0,
			want: want{addr: "db.example:7000", user: "bob", password: "pw", db: 2, tls: true, poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "REDIS://127.0.0.1", password: "fromenv", sessions: 200,
			want: want{addr: "127.0.0.1:6379", password: "fromenv", poolSize: 202, maxIdle: 202, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "redis://:inurl@127.0.0.1/1", password: "fromenv", sessions: 1, // the URL's wins, as driver.ParseTarget decides
			want: want{addr: "127.0.0.1:6379", password: "inurl", db: 1, poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "redis://127.0.0.1/5?password=q%26p", sessions: 1, // as pgx allows; ParseTarget takes it
			want: want{addr: "127.0.0.1:6379", password: "q&p", db: 5, poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "rediss://cache.example:6380/0", sessions: 4,
			want: want{addr: "cache.example:6380", tls: true, poolSize: 6, maxIdle: 6, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "redis://[::1]:6379/0?db=4", sessions: 1, // go-redis's ?db= overrides the path
			want: want{addr: "[::1]:6379", db: 4, poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		{url: "redis://localhost", sessions: 1,
			want: want{addr: "localhost:6379", poolSize: 3, maxIdle: 3, dialTimeout: dialTimeout, clientName: "dbprobe"}},
		// max_retries=-1 and protocol=2 are what dbprobe does anyway.
		{url: "redis://127.0.0.1/0?pool_size=50&max_retries=-1&protocol=2&dial_timeout=3s&client_name=bench&max_idle_conns=4", sessions: 8,
			want: want{addr: "127.0.0.1:6379", poolSize: 50, maxIdle: 4, dialTimeout: 3 * time.Second, clientName: "bench"}},
		{url: "redis://127.0.0.1/0?dial_timeout=7", sessions: 1, // whole seconds, as go-redis read them
			want: want{addr: "127.0.0.1:6379", poolSize: 3, maxIdle: 3, dialTimeout: 7 * time.Second, clientName: "dbprobe"}},
		{url: "redis://127.0.0.1/0?dial_timeout=0", sessions: 1, // zero or less: no limit
			want: want{addr: "127.0.0.1:6379", poolSize: 3, maxIdle: 3, clientName: "dbprobe"}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			target, err := driver.ParseTarget(tc.url, tc.password)
			if err != nil {
				t.Fatalf("ParseTarget: %v", err)
			}
			o, _, err := clientOptions(target, tc.sessions)
			if err != nil {
				t.Fatalf("clientOptions: %v", err)
			}
			got := want{addr: o.addr, user: o.user, password: o.password, db: o.db, tls: o.tls != nil,
				poolSize: o.poolSize, maxIdle: o.maxIdle, dialTimeout: o.dialTimeout, clientName: o.clientName}
			if got != tc.want {
				t.Errorf("options\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// Sessions' connections have no socket deadlines unless the URL sets a
// timeout, which then stands as written; the pool's timeouts have
// defaults of their own.
func TestTimeoutOptions(t *testing.T) {
	type timeouts struct{ read, write, pool, idle, age time.Duration }
	for _, tc := range []struct {
		query string
		want  timeouts
	}{
		{"", timeouts{pool: poolTimeout, idle: idleTimeout}},
		{"?pool_size=50&dial_timeout=3s", timeouts{pool: poolTimeout, idle: idleTimeout}},
		{"?read_timeout=30s", timeouts{read: 30 * time.Second, pool: poolTimeout, idle: idleTimeout}},
		{"?write_timeout=2s", timeouts{write: 2 * time.Second, pool: poolTimeout, idle: idleTimeout}},
		{"?read_timeout=1s&write_timeout=2s", timeouts{read: time.Second, write: 2 * time.Second, pool: poolTimeout, idle: idleTimeout}},
		{"?read_timeout=-1&pool_timeout=0", timeouts{idle: idleTimeout}},
		{"?pool_timeout=1m&conn_max_idle_time=5m&conn_max_lifetime=1h", timeouts{pool: time.Minute, idle: 5 * time.Minute, age: time.Hour}},
		{"?idle_timeout=5m&max_conn_age=1h", timeouts{pool: poolTimeout, idle: 5 * time.Minute, age: time.Hour}},
	} {
		target, err := driver.ParseTarget("redis://127.0.0.1:6379/0"+tc.query, "")
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := clientOptions(target, 8)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := (timeouts{o.readTimeout, o.writeTimeout, o.poolTimeout, o.idleTimeout, o.maxConnAge}); got != tc.want {
			t.Errorf("%s: timeouts %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestClientOptionsRefusesBadURLs(t *testing.T) {
	const secret = "Sup3r-s3cret"
	for _, tc := range []struct{ url, want string }{
		{"redis://:" + secret + "@127.0.0.1/abc", `is not a valid Redis URL: invalid database number: "abc"`},
		{"redis://:" + secret + "@127.0.0.1/1/2", "is not a valid Redis URL: invalid URL path: /1/2"},
		{"redis://:" + secret + "@127.0.0.1/0?colour=blue", "is not a valid Redis URL: unexpected option: colour"},
		{"redis://:" + secret + "@127.0.0.1/0?dial_timeout=soon", "is not a valid Redis URL: invalid dial_timeout duration"},
		{"redis://:" + secret + "@127.0.0.1/-1", "names database -1; Redis databases are numbered from 0"},
		{"redis:127.0.0.1", "has no host"},
		{"redis://:" + secret + "@127.0.0.1/0?pool_size=x", `is not a valid Redis URL: invalid pool_size number: strconv.Atoi: parsing "x": invalid syntax`},
		{"rediss://:" + secret + "@127.0.0.1/0?skip_verify=maybe", `is not a valid Redis URL: invalid skip_verify boolean: expected true/false/1/0 or an empty string, got "maybe"`},
		{"redis://:" + secret + "@127.0.0.1/0?skip_verify=true", "is not a valid Redis URL: unexpected option: skip_verify"},
		{"redis://:" + secret + "@127.0.0.1/0?protocol=9", "protocol=9: dbprobe speaks RESP2 to Redis"},
		{"redis://:" + secret + "@127.0.0.1/0?protocol=3", "protocol=3: dbprobe speaks RESP2 to Redis"},
		{"redis://:" + secret + "@127.0.0.1/0?max_retries=2", "max_retries=2: dbprobe never repeats a Redis command itself"},
		{"redis://:" + secret + "@127.0.0.1/0?pool_fifo=true&min_idle_conns=2", "pool_fifo, min_idle_conns: go-redis options that dbprobe's Redis client (redigo) has no counterpart for; remove them"},
		{"redis://:" + secret + "@127.0.0.1/0?pool_size=0", "pool_size=0: give 1 or more connections"},
		{"redis://:" + secret + "@127.0.0.1/0?max_idle_conns=-1", "max_idle_conns=-1: give 0 or more"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			target, err := driver.ParseTarget(tc.url, "")
			if err != nil {
				t.Fatalf("ParseTarget: %v", err)
			}
			o, _, err := clientOptions(target, 1)
			if err == nil {
				t.Fatalf("clientOptions = %+v, want an error", o)
			}
			msg := err.Error()
			if !badinput.Is(err) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q (bad input %v), want one holding %q", msg, badinput.Is(err), tc.want)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("message holds the password or several lines: %q", msg)
			}
			if !strings.Contains(msg, "redis://") && !strings.Contains(msg, "rediss://") {
				t.Errorf("message %q does not say how to write the URL", msg)
			}
		})
	}
}

// FuzzClientOptions: any --db value either parses into options or fails
// with one line of bad input that does not hold the password.
func FuzzClientOptions(f *testing.F) {
	for _, s := range []string{
		"redis://127.0.0.1:6379/0", "redis://:pw@127.0.0.1/3", "rediss://u:p@h:1/2?dial_timeout=1s",
		"redis://h/0?db=x", "redis://h/1/2", "redis://h/0?password=zz", "redis:opaque", "redis://[::1]/0",
		"redis://u:p%40ss@h/0?pool_size=-3&max_retries=x",
	} {
		f.Add(s, "envpass")
	}
	f.Fuzz(func(t *testing.T, raw, password string) {
		target, err := driver.ParseTarget(raw, password)
		if err != nil || (target.Driver != "redis") {
			return // not a Redis URL: ParseTarget's own fuzzing covers it
		}
		o, mode, err := clientOptions(target, 4)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("clientOptions(%q) error is not bad input: %v", target.Redacted(), err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Fatalf("error of several lines: %q", msg)
			}
			// The password must not show, unless it is text the message
			// holds anyway: the redacted URL's (a password "6379" and the
			// port), or the message's own words, which the same URL under
			// another password gives too (a password "pass" and the
			// "[user:password@]" of the URL form; "000," and the host 000
			// in "off to 000, which"). The parser's words are shown whole or
			// withheld whole, whatever the password's length.
			if why := target.Audit(msg, refuse); why != "" {
				t.Fatalf("error %q, password %q: the message %s", msg, target.Password, why)
			}
			return
		}
		if o.db < 0 || o.addr == "" || o.poolSize < 1 || o.maxIdle < 0 || mode == "" {
			t.Fatalf("clientOptions(%q) = db %d, addr %q, pool size %d, max idle %d, tls %q", target.Redacted(), o.db, o.addr, o.poolSize, o.maxIdle, mode)
		}
		if target.Password != "" && o.password == "" {
			t.Fatalf("clientOptions(%q) dropped the password", target.Redacted())
		}
		if host, _, _ := net.SplitHostPort(o.addr); tlsLevel(o) != driver.TLSVerifyFull && !driver.IsLoopback(host) {
			t.Fatalf("clientOptions(%q) accepted TLS %s to %s without --allow-insecure-tls", target.Redacted(), tlsLevel(o), host)
		}
	})
}

// FuzzClientOptionsPassword puts the password in the URL, as users write
// it, and holds every refusal to never giving it away nor patching it out
// of anyone's words (see driver.Target.Audit). The passwords are those
// that defeat a search for them (see drivertest.SecretPassword).
func FuzzClientOptionsPassword(f *testing.F) {
	for i, s := range []string{
		"redis://127.0.0.1:6379/0", "rediss://u@h:1/2?dial_timeout=1s&skip_verify=true", "redis://cache.example/0",
		"redis://h/0?db=x", "redis://h/1/2", "redis:opaque", "redis://[::1]/0?pool_size=-3&max_retries=x",
		"redis://u@127.0.0.1/0?dial_timeout=soon", "redis://u@127.0.0.1/abc",
	} {
		for _, kind := range drivertest.SecretKinds {
			f.Add(s, []string{"pw", "x", "o", "éa"}[(i+int(kind))%4], kind)
		}
	}
	f.Fuzz(func(t *testing.T, raw, password string, kind uint8) {
		u, err := url.Parse(raw)
		if err != nil {
			return // driver.ParseTarget refuses it: FuzzParseTarget covers that
		}
		if u.Scheme != "rediss" {
			u.Scheme = "redis"
		}
		at := func(password string) driver.Target {
			v := *u
			v.User = url.UserPassword(u.User.Username(), password)
			return driver.Target{Driver: "redis", URL: &v, Password: password}
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
		if _, _, err := clientOptions(target, 1); err != nil {
			if why := target.Audit(err.Error(), refuse); why != "" {
				t.Fatalf("clientOptions(%q), password %q: the message %s: %q", target.Redacted(), secret, why, err)
			}
		}
	})
}

func TestClientOptionsTLS(t *testing.T) {
	const secret = "Tls-s3cret"
	for _, tc := range []struct {
		url     string
		allow   bool // --allow-insecure-tls
		mode    string
		refusal string
	}{
		{url: "redis://127.0.0.1:6379/0", mode: "off (loopback)"},
		{url: "redis://localhost/0", mode: "off (loopback)"},
		{url: "redis://[::1]:6380/0", mode: "off (loopback)"},
		{url: "rediss://127.0.0.1/0?skip_verify=true", mode: "require (loopback)"},
		{url: "rediss://127.0.0.1/0", mode: "verify-full"},
		{url: "rediss://cache.example:6380/0", mode: "verify-full"},
		{url: "rediss://cache.example/0", allow: true, mode: "verify-full"},
		{url: "redis://cache.example/0", allow: true, mode: "off (--allow-insecure-tls)"},
		{url: "rediss://10.0.0.3/0?skip_verify=true", allow: true, mode: "require (--allow-insecure-tls)"},
		{url: "redis://:" + secret + "@cache.example/0", refusal: "TLS mode off to cache.example, which is not loopback"},
		{url: "redis://:" + secret + "@192.168.1.5:6379/0", refusal: "TLS mode off to 192.168.1.5"},
		{url: "rediss://:" + secret + "@cache.example/0?skip_verify=true", refusal: "TLS mode require to cache.example"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			target, err := driver.ParseTarget(tc.url, "")
			if err != nil {
				t.Fatal(err)
			}
			target.AllowInsecureTLS = tc.allow
			o, mode, err := clientOptions(target, 1)
			if tc.refusal != "" {
				if err == nil {
					t.Fatalf("accepted with tls = %s, want a refusal", mode)
				}
				msg := err.Error()
				if !badinput.Is(err) || !strings.Contains(msg, tc.refusal) || !strings.Contains(msg, "rediss://") || !strings.Contains(msg, "--allow-insecure-tls") {
					t.Errorf("refusal %q (bad input %v) should say %q, rediss:// and --allow-insecure-tls", msg, badinput.Is(err), tc.refusal)
				}
				if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
					t.Errorf("refusal %q holds the password or several lines", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mode != tc.mode {
				t.Errorf("tls = %q, want %q", mode, tc.mode)
			}
			if tc.mode == "verify-full" && (o.tls == nil || o.tls.InsecureSkipVerify || o.tls.ServerName == "") {
				t.Errorf("TLS config %+v does not verify", o.tls)
			}
		})
	}
}

// refuse is clientOptions's refusal of a target, for driver.Target.Audit.
func refuse(d driver.Target) error {
	_, _, err := clientOptions(d, 1)
	return err
}
