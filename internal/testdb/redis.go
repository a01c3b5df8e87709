package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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

	"github.com/gomodule/redigo/redis"
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
		Unavailable(t, RedisURLEnv+" is not set: run the tests with scripts/test, which starts a throwaway Redis (install the Debian package redis-server first if it says the server is not found)"+notStarted("DBPROBE_REDIS_UNAVAILABLE"))
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
var releaseClaim = redis.NewScript(1, `
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
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", RedisURLEnv, redactedError(err))
	}
	at := func(n int) string {
		v := *u
		v.Path = "/" + strconv.Itoa(n)
		return v.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimWait+time.Minute)
	defer cancel()
	admin := newRedisClient(at(0))
	defer admin.Close()

	databases := 16
	if m, err := redis.StringMap(admin.Do(ctx, "CONFIG", "GET", "databases")); err == nil {
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
			// SET NX answers OK to the one client that wins, nil to others.
			reply, err := admin.Do(ctx, "SET", claimPrefix+strconv.Itoa(n), token, "NX", "PX", claimTTL.Milliseconds())
			if err != nil {
				t.Fatalf("claim a Redis database: %v", redactedError(err))
			}
			if reply != nil {
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
	flush(t, at(index), index)
	t.Cleanup(func() {
		flush(t, at(index), index)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := newRedisClient(at(0))
		defer c.Close()
		conn, err := c.pool.GetContext(ctx)
		if err == nil {
			_, err = releaseClaim.DoContext(ctx, conn, claimPrefix+strconv.Itoa(index), token)
			conn.Close()
		}
		if err != nil {
			t.Errorf("release Redis database %d: %v", index, err)
		}
	})
	return at(index)
}

// flush empties the logical database of rawURL, number n.
func flush(t testing.TB, rawURL string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRedisClient(rawURL)
	defer c.Close()
	if _, err := c.Do(ctx, "FLUSHDB"); err != nil {
		t.Errorf("flush Redis database %d: %v", n, err)
	}
}

// RedisClient runs a test's own commands (ACL users, CONFIG, CLIENT KILL)
// outside the driver, each on a connection of a small pool, so that the
// goroutines of a test may share one. Replies are redigo's: read them with
// redis.String, redis.Int, redis.StringMap and the like.
type RedisClient struct {
	pool *redis.Pool
}

func newRedisClient(rawURL string) *RedisClient {
	return &RedisClient{pool: &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialURLContext(ctx, rawURL)
		},
		MaxIdle: 2,
	}}
}

// Do runs one command under ctx and returns its reply; an error reply is
// returned as the error. A command that fails for its connection (one
// the server closed since it was last used: a restart, CLIENT KILL) runs
// once more on a new one while ctx lasts.
func (c *RedisClient) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	reply, err := c.do(ctx, cmd, args...)
	var serverReply redis.Error
	if err != nil && !errors.As(err, &serverReply) && ctx.Err() == nil {
		reply, err = c.do(ctx, cmd, args...)
	}
	return reply, err
}

func (c *RedisClient) do(ctx context.Context, cmd string, args ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return redis.DoContext(conn, ctx, cmd, args...)
}

// Close closes the client's connections.
func (c *RedisClient) Close() error { return c.pool.Close() }

// OpenRedis opens a client on rawURL for a test's own commands, closed
// when the test ends.
func OpenRedis(t testing.TB, rawURL string) *RedisClient {
	t.Helper()
	if _, err := url.Parse(rawURL); err != nil {
		t.Fatal(redactedError(err))
	}
	c := newRedisClient(rawURL)
	t.Cleanup(func() { c.Close() })
	return c
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

	// Wait for the port, so that a refused dial below means a broken
	// server rather than one still starting.
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
	c := newRedisClient(u)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, "PING"); err != nil {
		stop()
		return "", fmt.Errorf("redis-server on %s does not answer PING: %v", addr, err)
	}
	t.Cleanup(stop)
	return u, nil
}
