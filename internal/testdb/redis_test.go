package testdb

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestRedisURLWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{
		{ci: "", skip: true},
		{ci: "false", skip: true},
		{ci: "true", fail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv(RedisURLEnv, "")
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			RedisURL(f)
			if got := f.skipped != ""; got != tc.skip {
				t.Errorf("skipped = %v (%q), want %v", got, f.skipped, tc.skip)
			}
			if got := f.failed != ""; got != tc.fail {
				t.Errorf("failed = %v (%q), want %v", got, f.failed, tc.fail)
			}
			msg := f.skipped + f.failed
			if !strings.Contains(msg, "scripts/test") || !strings.Contains(msg, "redis-server") {
				t.Errorf("message %q does not say to run scripts/test or install redis-server", msg)
			}
		})
	}
}

func databaseOf(t *testing.T, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.Trim(u.Path, "/"))
	if err != nil {
		t.Fatalf("URL path %q is not a database number", u.Path)
	}
	return n
}

func TestFreshRedisDatabase(t *testing.T) {
	base := RedisURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	admin := OpenRedis(t, base)
	var first, second int
	tokens := map[int]string{}
	t.Run("fresh", func(t *testing.T) {
		u := FreshRedisDatabase(t)
		first = databaseOf(t, u)
		c := OpenRedis(t, u)
		if n, err := redis.Int(c.Do(ctx, "DBSIZE")); err != nil || n != 0 {
			t.Fatalf("database %d holds %d keys (%v), want a fresh, empty one", first, n, err)
		}
		if _, err := c.Do(ctx, "SET", "left-behind", "x"); err != nil {
			t.Fatal(err)
		}
		other := FreshRedisDatabase(t)
		second = databaseOf(t, other)
		if first == 0 || second == 0 || first == second {
			t.Fatalf("fresh databases %d and %d: want two distinct ones, neither 0", first, second)
		}
		if n, err := redis.Int(OpenRedis(t, other).Do(ctx, "DBSIZE")); err != nil || n != 0 {
			t.Fatalf("the second database holds %d keys (%v)", n, err)
		}
		for _, n := range []int{first, second} {
			tok, err := redis.String(admin.Do(ctx, "GET", claimPrefix+strconv.Itoa(n)))
			if err != nil || tok == "" {
				t.Fatalf("no claim on database %d while it is in use (%v)", n, err)
			}
			tokens[n] = tok
		}
	})

	// Tests of other packages may have claimed the databases since, with
	// claims of their own.
	for n, tok := range tokens {
		if now, err := redis.String(admin.Do(ctx, "GET", claimPrefix+strconv.Itoa(n))); err != redis.ErrNil && (err != nil || now == tok) {
			t.Errorf("the claim of database %d is still the test's (%v) after it ended", n, err)
		}
	}
	// The key the test left was flushed with its database. (Another test
	// may have claimed it since: it too starts from an empty database, so
	// the key is gone either way.)
	u, _ := url.Parse(base)
	u.Path = "/" + strconv.Itoa(first)
	if n, err := redis.Int(OpenRedis(t, u.String()).Do(ctx, "EXISTS", "left-behind")); err != nil || n != 0 {
		t.Errorf("database %d still holds the test's key (%d, %v)", first, n, err)
	}
}

// Claims made at the same time, and held together, are all distinct.
func TestFreshRedisDatabaseClaimsAreExclusive(t *testing.T) {
	RedisURL(t)
	const n = 6
	got := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done() // also when a failed claim ends the goroutine
			got[i] = databaseOf(t, FreshRedisDatabase(t))
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, d := range got {
		if d == 0 || seen[d] {
			t.Errorf("databases handed out at once: %v; want %d distinct ones, none 0", got, n)
			break
		}
		seen[d] = true
	}
}

func TestStartRedis(t *testing.T) {
	var addr string
	t.Run("private", func(t *testing.T) {
		u := StartRedis(t, "--appendonly", "no")
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Hostname() != "127.0.0.1" {
			t.Fatalf("private server on %s, want 127.0.0.1", parsed.Hostname())
		}
		addr = parsed.Host
		c := OpenRedis(t, u)
		ctx := context.Background()
		cfg, err := redis.StringMap(c.Do(ctx, "CONFIG", "GET", "appendonly"))
		if err != nil || cfg["appendonly"] != "no" {
			t.Fatalf("appendonly = %q (%v): the extra directive must override the default", cfg["appendonly"], err)
		}
		if bind, err := redis.StringMap(c.Do(ctx, "CONFIG", "GET", "bind")); err != nil || bind["bind"] != "127.0.0.1" {
			t.Fatalf("bind = %q (%v)", bind["bind"], err)
		}
		// The password is required.
		noPW := *parsed
		noPW.User = nil
		if _, err := OpenRedis(t, noPW.String()).Do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Fatalf("PING without the password: %v, want NOAUTH", err)
		}
	})
	if addr == "" {
		return
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("the private server still listens on %s after its test ended", addr)
	}
}
