package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisURLEnv names the variable scripts/test sets to the URL of its
// throwaway Redis server (logical database 0).
const RedisURLEnv = "DBPROBE_REDIS_URL"

// RedisURL returns the URL of the throwaway Redis that scripts/test started
// (env DBPROBE_REDIS_URL). Without it the test is skipped with a message
// saying to run scripts/test or install redis-server — except when CI=true,
// where a missing server fails the test.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := strings.TrimSpace(os.Getenv(RedisURLEnv))
	if u == "" {
		Unavailable(t, RedisURLEnv+" is not set: run the tests with scripts/test, which starts a throwaway Redis (install the Debian package redis-server first if it says the server is not found)")
	}
	return u
}

// Logical database 0 of the shared server holds the claims; tests get the
// others.
const (
	claimPrefix = "dbprobe-test:claim:"
	// claimTTL frees the claim of a test process that died without its
	// cleanups; it outlasts go test's default 10-minute timeout.
	claimTTL = time.Hour
	// claimWait is how long FreshRedisDatabase waits for a database to
	// become free when every one is claimed.
	claimWait = 2 * time.Minute
)

// releaseClaim deletes a claim only if it is still ours.
var releaseClaim = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// FreshRedisDatabase gives the test a logical database of its own on the
// server RedisURL names, empty, and returns its URL.
//
// A key prefix would not isolate tests: the Redis driver owns keys outside
// any one table (its set of the tables it created), and a test may look at
// or flush the whole keyspace. So each test gets a whole logical database,
// 1 to databases-1 (database 0 holds the claims). A claim is a key
// dbprobe-test:claim:<n> in database 0 set with SET NX, which only one
// client can win, so tests in different packages, which go test runs in
// parallel, never share one; it expires after an hour in case the test's
// process dies. The database is flushed when claimed and again when the
// test ends, after the test's own cleanups (register closing your
// connections after calling this); then the claim is released. When every
// database is claimed it waits for one.
func FreshRedisDatabase(t testing.TB) string {
	t.Helper()
	base := RedisURL(t)
	opts, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("%s is not a Redis URL: %v", RedisURLEnv, redactedError(err))
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", RedisURLEnv, redactedError(err))
	}
	opts.DB = 0
	quiet(opts)
	ctx, cancel := context.WithTimeout(context.Background(), claimWait+time.Minute)
	defer cancel()
	admin := redis.NewClient(opts)
	defer admin.Close()

	databases := 16
	if m, err := admin.ConfigGet(ctx, "databases").Result(); err == nil {
		if n, err := strconv.Atoi(m["databases"]); err == nil {
			databases = n
		}
	}
	if databases < 2 {
		t.Fatalf("the test Redis has %d logical databases; FreshRedisDatabase needs at least 2", databases)
	}
	token := randomHex(t, 8)
	index := -1
	deadline := time.Now().Add(claimWait)
	for index < 0 {
		for n := 1; n < databases; n++ {
			ok, err := admin.SetNX(ctx, claimPrefix+strconv.Itoa(n), token, claimTTL).Result()
			if err != nil {
				t.Fatalf("claim a Redis database: %v", err)
			}
			if ok {
				index = n
				break
			}
		}
		if index < 0 {
			if time.Now().After(deadline) {
				t.Fatalf("all %d test Redis databases stayed claimed for %v", databases-1, claimWait)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	flush(t, opts, index)
	t.Cleanup(func() {
		flush(t, opts, index)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := redis.NewClient(opts)
		defer c.Close()
		if err := releaseClaim.Run(ctx, c, []string{claimPrefix + strconv.Itoa(index)}, token).Err(); err != nil {
			t.Errorf("release Redis database %d: %v", index, err)
		}
	})
	u.Path = "/" + strconv.Itoa(index)
	return u.String()
}

// flush empties logical database n.
func flush(t testing.TB, base *redis.Options, n int) {
	t.Helper()
	opts := *base
	opts.DB = n
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := redis.NewClient(&opts)
	defer c.Close()
	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Errorf("flush Redis database %d: %v", n, err)
	}
}

// OpenRedis opens a client on rawURL for a test's own commands (ACL
// users, CONFIG, CLIENT KILL), closed when the test ends.
func OpenRedis(t testing.TB, rawURL string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	quiet(opts)
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// quiet turns off what the test helpers have no use for: retries, and the
// maintenance-notification handshake go-redis tries on every connection.
func quiet(opts *redis.Options) {
	opts.MaxRetries = -1
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// StartRedis starts a Redis server private to the test, for what must not
// touch the shared one: server-wide settings (appendonly, appendfsync,
// renamed commands) that the tests running in parallel would see. It runs
// redis-server on 127.0.0.1, on a free port, in a temporary directory, with
// a random password, AOF on (appendfsync everysec) and no RDB snapshots;
// args are further configuration directives as redis-server takes them on
// its command line ("--appendonly", "no"), which override those. It returns
// the URL of database 0, and stops the server when the test ends. Without
// redis-server the test is skipped (failed under CI=true).
func StartRedis(t testing.TB, args ...string) string {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server not found: install the Debian package redis-server")
	}
	dir := t.TempDir()
	password := randomHex(t, 16)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		u, err := startRedis(t, server, dir, password, port, args)
		if err == nil {
			return u
		}
		lastErr = err
	}
	t.Fatalf("start a private redis-server: %v", lastErr)
	return ""
}

// freePort returns a port on 127.0.0.1 that nothing listened on a moment
// ago; the server may still lose it to another process, hence the retries.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedis(t testing.TB, server, dir, password string, port int, extra []string) (string, error) {
	args := []string{"-", // the configuration starts on stdin: the password stays off the command line
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--protected-mode", "yes",
		"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
	}
	cmd := exec.Command(server, append(args, extra...)...)
	cmd.Stdin = strings.NewReader("requirepass " + password + "\n")
	var out LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	// Wait for the port: go-redis's pool would slow down after a few
	// refused dials, so it is used only once the server listens.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			return "", fmt.Errorf("redis-server on port %d exited (%v): %s", port, err, strings.TrimSpace(out.String()))
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("redis-server did not listen on %s in 10s: %s", addr, strings.TrimSpace(out.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	u := fmt.Sprintf("redis://:%s@%s/0", password, addr)
	opts, err := redis.ParseURL(u)
	if err != nil {
		stop()
		return "", err
	}
	quiet(opts)
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		stop()
		return "", fmt.Errorf("redis-server on %s does not answer PING: %v", addr, err)
	}
	t.Cleanup(stop)
	return u, nil
}
