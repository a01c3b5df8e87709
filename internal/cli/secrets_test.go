package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// canary is a password no output may hold. Its marker is the part that
// shows even in a piece of it; the /, @, : and ? in it make the URL escape
// it, and make a URL that holds it unescaped fail to parse.
type canary struct {
	password, marker string
}

func newCanary(t *testing.T) canary {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	marker := "Cn4ry" + hex.EncodeToString(b[:])
	return canary{password: marker + "/p@ss:w?d", marker: marker}
}

// check fails the test when text shows the password, whole, escaped or in
// part.
func (c canary) check(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, c.marker) || (driver.Target{Password: c.password}).Reveals(text) {
		t.Errorf("%s shows the password %q:\n%s", what, c.password, text)
	}
}

// secretTarget is a database user whose password is a canary.
type secretTarget struct {
	name    string
	withPW  string   // the URL with the password in it
	noPW    *url.URL // the URL without it
	canary  canary
	invalid string // the URL with an option the driver refuses
	tlsFail string // the URL asking for TLS the loopback server does not offer
}

func (s secretTarget) rawWithUnescapedPassword() string {
	u := *s.noPW
	u.User = nil
	return strings.Replace(u.String(), "://", "://"+s.noPW.User.Username()+":"+s.canary.password+"@", 1)
}

func randomName(t *testing.T, prefix string) string {
	t.Helper()
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// postgresSecretTarget creates a role with a canary password that owns a
// fresh database: the shared server's own password stays as it is.
func postgresSecretTarget(t *testing.T) secretTarget {
	base := testdb.PostgresURL(t)
	c := newCanary(t)
	role := randomName(t, "dbprobe_canary_")
	ctx := context.Background()
	admin := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatalf("connect to the test PostgreSQL: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", strings.Replace(sql, c.password, "…", 1), err)
		}
	}
	admin("CREATE ROLE " + pgx.Identifier{role}.Sanitize() + " LOGIN PASSWORD '" + c.password + "'")
	// Registered before the database's, so it runs after the drop.
	t.Cleanup(func() { admin("DROP ROLE IF EXISTS " + pgx.Identifier{role}.Sanitize()) })
	fresh := testdb.FreshPostgresDatabase(t)
	u, err := url.Parse(fresh)
	if err != nil {
		t.Fatal(err)
	}
	admin("ALTER DATABASE " + pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize() + " OWNER TO " + pgx.Identifier{role}.Sanitize())
	u.User = url.User(role)
	withPW := *u
	withPW.User = url.UserPassword(role, c.password)
	return secretTarget{
		name: "postgres", withPW: withPW.String(), noPW: u, canary: c,
		invalid: strings.Replace(withPW.String(), "sslmode=disable", "sslmode=sometimes", 1),
		tlsFail: strings.Replace(withPW.String(), "sslmode=disable", "sslmode=verify-full", 1),
	}
}

// mysqlSecretTarget creates a MariaDB user with a canary password and
// every privilege on a fresh database.
func mysqlSecretTarget(t *testing.T) secretTarget {
	base := testdb.MySQLURL(t)
	fresh := testdb.FreshMySQLDatabase(t)
	c := newCanary(t)
	user := randomName(t, "canary_")
	u, err := url.Parse(fresh)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	admin := testdb.OpenMySQL(t, base)
	ctx := context.Background()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		account := "'" + user + "'@'" + host + "'"
		if _, err := admin.ExecContext(ctx, "CREATE USER "+account+" IDENTIFIED BY '"+c.password+"'"); err != nil {
			t.Fatalf("create user: %v", strings.ReplaceAll(err.Error(), c.password, "…"))
		}
		t.Cleanup(func() {
			if _, err := admin.ExecContext(ctx, "DROP USER IF EXISTS "+account); err != nil {
				t.Errorf("drop user: %v", err)
			}
		})
		if _, err := admin.ExecContext(ctx, "GRANT ALL PRIVILEGES ON `"+db+"`.* TO "+account); err != nil {
			t.Fatal(err)
		}
	}
	u.User = url.User(user)
	withPW := *u
	withPW.User = url.UserPassword(user, c.password)
	return secretTarget{
		name: "mysql", withPW: withPW.String(), noPW: u, canary: c,
		invalid: withPW.String() + "?tls=maybe",
		tlsFail: withPW.String() + "?tls=true",
	}
}

// redisSecretTarget creates an ACL user with a canary password on the
// shared server, for a logical database of the test's own.
func redisSecretTarget(t *testing.T) secretTarget {
	fresh := testdb.FreshRedisDatabase(t)
	c := newCanary(t)
	user := randomName(t, "canary_")
	admin := testdb.OpenRedis(t, fresh)
	ctx := context.Background()
	if _, err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">"+c.password, "~*", "&*", "+@all"); err != nil {
		t.Fatalf("ACL SETUSER: %v", strings.ReplaceAll(err.Error(), c.password, "…"))
	}
	t.Cleanup(func() {
		if _, err := admin.Do(ctx, "ACL", "DELUSER", user); err != nil {
			t.Errorf("ACL DELUSER: %v", err)
		}
	})
	u, err := url.Parse(fresh)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(user)
	withPW := *u
	withPW.User = url.UserPassword(user, c.password)
	tlsFail := withPW
	tlsFail.Scheme = "rediss"
	return secretTarget{
		name: "redis", withPW: withPW.String(), noPW: u, canary: c,
		invalid: withPW.String() + "?dial_timeout=soon",
		// A plain server never answers a TLS hello: the dial timeout ends the wait.
		tlsFail: tlsFail.String() + "?dial_timeout=1s",
	}
}

// runAsTyped runs dbprobe with os.Args set as a shell would set them, so
// that the command line the header records is the one typed.
func runAsTyped(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	saved := os.Args
	os.Args = append([]string{"dbprobe"}, args...)
	defer func() { os.Args = saved }()
	return run(t, args...)
}

// scraper reads a Prometheus endpoint until stopped, keeping every body.
type scraper struct {
	addr   string
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	bodies []string
}

func startScraper(t *testing.T) *scraper {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scraper{addr: l.Addr().String(), stop: make(chan struct{})}
	l.Close()
	client := &http.Client{Timeout: time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			resp, err := client.Get("http://" + s.addr + "/metrics")
			if err != nil {
				continue
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				s.mu.Lock()
				s.bodies = append(s.bodies, string(b))
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *scraper) finish() []string {
	close(s.stop)
	s.wg.Wait()
	return s.bodies
}

// checkFiles checks every output file a command may have written.
func checkFiles(t *testing.T, c canary, paths ...string) {
	t.Helper()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		c.check(t, filepath.Base(p), string(b))
	}
}

// secretTargets are the databases the secrets tests run on, each created
// only when its subtest runs.
var secretTargets = []struct {
	name string
	make func(*testing.T) secretTarget
}{
	{"postgres", postgresSecretTarget},
	{"mysql", mysqlSecretTarget},
	{"redis", redisSecretTarget},
}

// A password given by URL, DBPROBE_PASSWORD or --password-file works, and
// never shows in stdout, stderr, the JSON result, the Influx file or the
// Prometheus metrics of a load and a run.
func TestSecretsNeverShowOnSuccess(t *testing.T) {
	for _, st := range secretTargets {
		t.Run(st.name, func(t *testing.T) {
			s := st.make(t)
			dir := t.TempDir()
			pwFile := filepath.Join(dir, "password")
			if err := os.WriteFile(pwFile, []byte(s.canary.password+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, source := range []struct {
				name  string
				args  []string
				envPW string
			}{
				{"url", []string{"--db", s.withPW}, ""},
				{"env", []string{"--db", s.noPW.String()}, s.canary.password},
				{"file", []string{"--db", s.noPW.String(), "--password-file", pwFile}, ""},
			} {
				t.Run(source.name, func(t *testing.T) {
					t.Setenv("DBPROBE_PASSWORD", source.envPW)
					table := "secret_" + source.name
					for _, phase := range []string{"load", "run"} {
						out := filepath.Join(dir, source.name+"-"+phase+".jsonl")
						influx := filepath.Join(dir, source.name+"-"+phase+".influx")
						scrape := startScraper(t)
						args := append([]string{phase}, source.args...)
						args = append(args, "-p", "table="+table, "-p", "recordcount=200", "--threads", "2", "-s",
							"--out", out, "--influx-out", influx, "--metrics-addr", scrape.addr)
						if phase == "run" {
							// Long enough for the metrics to be read a few times.
							args = append(args, "-p", "operationcount=0", "--duration", "1s")
						}
						stdout, stderr, err := runAsTyped(t, args...)
						bodies := scrape.finish()
						if err != nil {
							t.Fatalf("%s: %v\n%s", phase, s.canary.scrub(err.Error()), s.canary.scrub(stderr))
						}
						s.canary.check(t, phase+" stdout", stdout)
						s.canary.check(t, phase+" stderr", stderr)
						checkFiles(t, s.canary, out, influx)
						for _, b := range bodies {
							s.canary.check(t, phase+" Prometheus metrics", b)
						}
						if phase == "run" && len(bodies) == 0 {
							t.Errorf("the metrics at %s were never read: nothing checked", scrape.addr)
						}
						if !strings.Contains(stdout, "off (loopback)") {
							t.Errorf("%s: the header does not record tls = off (loopback):\n%s", phase, stdout)
						}
						if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "off (loopback)") {
							t.Errorf("%s: the JSON result does not record the TLS mode (%v)", phase, err)
						}
					}
				})
			}
		})
	}
}

// Refusals — a wrong password, a URL that does not parse with the password
// in it, an option the driver refuses, TLS the server does not offer — are
// bad input (exit 2) whose message, output and files never show it.
func TestSecretsNeverShowOnFailure(t *testing.T) {
	for _, st := range secretTargets {
		t.Run(st.name, func(t *testing.T) {
			s := st.make(t)
			wrong := newCanary(t)
			wrongURL := *s.noPW
			wrongURL.User = url.UserPassword(s.noPW.User.Username(), wrong.password)
			dir := t.TempDir()
			for _, tc := range []struct {
				name string
				db   string
				says string
			}{
				{"wrong password", wrongURL.String(), ""},
				{"malformed URL", s.rawWithUnescapedPassword(), "not a valid URL"},
				{"refused option", s.invalid, ""},
				{"TLS failure", s.tlsFail, "TLS"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
					influx := strings.TrimSuffix(out, ".jsonl") + ".influx"
					stdout, stderr, err := runAsTyped(t, "load", "--db", tc.db, "-p", "recordcount=10", "--out", out, "--influx-out", influx)
					if err == nil {
						t.Fatalf("load succeeded; stdout:\n%s", s.canary.scrub(wrong.scrub(stdout)))
					}
					msg := err.Error()
					for _, c := range []canary{s.canary, wrong} {
						c.check(t, "the error", msg)
						c.check(t, "stdout", stdout)
						c.check(t, "stderr", stderr)
						checkFiles(t, c, out, influx)
					}
					if !badinput.Is(err) || strings.Contains(msg, "\n") {
						t.Errorf("error %q is not one line of bad input (exit 2)", s.canary.scrub(wrong.scrub(msg)))
					}
					if tc.says != "" && !strings.Contains(msg, tc.says) {
						t.Errorf("error %q does not say %q", s.canary.scrub(msg), tc.says)
					}
				})
			}
		})
	}
}

// scrub hides the canary in a failing test's own report: its marker is
// in every form of it.
func (c canary) scrub(s string) string {
	return strings.ReplaceAll(s, c.marker, "CANARY")
}

// A password that is also the user name, a letter, the port or a word of
// dbprobe's own message changes nothing in the message but the URL's
// password field: a wrong login still names the user, and an unreachable
// server's message keeps its words.
func TestSecretsKeepMessagesWhole(t *testing.T) {
	names := map[string]string{"postgres": "PostgreSQL", "mysql": "MySQL", "redis": "Redis"}
	for _, st := range secretTargets {
		t.Run(st.name, func(t *testing.T) {
			s := st.make(t)
			user := s.noPW.User.Username()
			wrong := *s.noPW
			wrong.User = url.UserPassword(user, user)
			_, stderr, err := runAsTyped(t, "load", "--db", wrong.String(), "-p", "recordcount=10")
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "refused user "+`"`+user+`"`) {
				t.Errorf("a wrong password equal to the user: %v (stderr %q); want bad input naming user %q", err, stderr, user)
			}
			for _, password := range []string{"o", "p", "1", "at", "check", "127.0.0.1", user} {
				unreachable := wrong
				unreachable.User = url.UserPassword(user, password)
				unreachable.Host = "127.0.0.1:1"
				_, _, err := runAsTyped(t, "load", "--db", unreachable.String(), "-p", "recordcount=10")
				want := "cannot reach " + names[st.name] + " at 127.0.0.1:1: connection refused; check host and port and that the server is running"
				if err == nil || err.Error() != want || !badinput.Is(err) {
					t.Errorf("password %q, unreachable server: %v\nwant bad input: %s", password, err, want)
				}
			}
		})
	}
}
