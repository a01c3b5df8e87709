package redis

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// dialTimeout bounds how long opening one connection may take when the URL
// sets no dial_timeout, so that an unreachable host fails in bounded time.
const dialTimeout = 10 * time.Second

// urlForm is how a Redis URL is written, for error messages.
const urlForm = "redis://[user:password@]host:6379/0 (rediss:// for TLS)"

// tlsFix says how to get verified TLS from Redis, for the refusal of
// anything weaker off loopback. The scheme is the user's choice to make:
// a redis:// URL is never turned into rediss://, since many servers have
// no TLS port at all.
const tlsFix = "use rediss:// without skip_verify (the server's certificate must come from an authority this machine trusts)"

// tlsLevel is what go-redis's TLS configuration protects: none for
// redis://, verified for rediss://, unverified with skip_verify=true.
func tlsLevel(opts *redis.Options) driver.TLSLevel {
	switch {
	case opts.TLSConfig == nil:
		return driver.TLSOff
	case opts.TLSConfig.InsecureSkipVerify:
		return driver.TLSRequire
	}
	return driver.TLSVerifyFull
}

// clientOptions turns a target into go-redis options: the URL through
// redis.ParseURL, the password from the target when the URL carries none,
// and dbprobe's defaults for what the URL does not set. It returns the
// effective TLS mode for Info: plain redis:// to a host that is not
// loopback needs target.AllowInsecureTLS. Errors are badinput and never
// hold the password.
func clientOptions(target driver.Target, sessions int) (*redis.Options, string, error) {
	if target.URL == nil {
		return nil, "", badinput.New("no Redis URL; give one such as redis://:PASSWORD@127.0.0.1:6379/0")
	}
	u := *target.URL
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, "", badinput.New("--db %s: the Redis driver takes redis:// or rediss:// URLs; write it as %s", target.Redacted(), urlForm)
	}
	if u.Opaque != "" {
		return nil, "", badinput.New("--db %s has no host; write it as %s", target.Redacted(), urlForm)
	}
	// A password given as ?password=… (driver.ParseTarget took it into
	// target.Password) is not a go-redis option.
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		reason := target.Scrub(strings.TrimPrefix(err.Error(), "redis: "))
		return nil, "", badinput.New("--db %s is not a valid Redis URL: %w; write it as %s",
			target.Redacted(), &driver.Scrubbed{Msg: reason, Err: err}, urlForm)
	}
	if opts.DB < 0 {
		return nil, "", badinput.New("--db %s names database %d; Redis databases are numbered from 0: write it as %s", target.Redacted(), opts.DB, urlForm)
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		host = opts.Addr
	}
	mode, err := target.CheckTLS([]driver.TLSRoute{{Host: host, Level: tlsLevel(opts)}}, tlsFix)
	if err != nil {
		return nil, "", err
	}
	if opts.Password == "" && target.Password != "" {
		opts.Password = target.Password
	}
	if !q.Has("max_retries") {
		// No silent retries: a benchmark counts what happened, and an insert
		// script repeated after a lost reply would report its own record as
		// a duplicate.
		opts.MaxRetries = -1
	}
	if !q.Has("pool_size") {
		// Every session may hold a connection at once; the DB's own calls
		// (Inspect, CONFIG) need one or two more.
		opts.PoolSize = max(sessions, 1) + 2
	}
	if !q.Has("dial_timeout") {
		opts.DialTimeout = dialTimeout
	}
	if !q.Has("client_name") {
		opts.ClientName = "dbprobe"
	}
	// One dial attempt: a server that refuses the connection is reported at
	// once rather than after go-redis's five tries.
	opts.DialerRetries = 1
	opts.Dialer = plainDialer(opts)
	if !q.Has("protocol") {
		// RESP2: dbprobe uses nothing of RESP3, and go-redis looks for push
		// notifications before every RESP3 reply.
		opts.Protocol = 2
	} else if opts.Protocol != 2 && opts.Protocol != 3 {
		// go-redis takes any number and speaks RESP2 for it.
		return nil, "", badinput.New("--db %s: protocol=%d: Redis speaks RESP2 and RESP3; give protocol=2 or protocol=3", target.Redacted(), opts.Protocol)
	}
	// Context deadlines bound each call, so that a run's timeouts apply.
	opts.ContextTimeoutEnabled = true
	// Maintenance notifications are a Redis Cloud/Enterprise handshake the
	// measured path has no use for; "auto" would try it on every connection.
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return opts, mode, nil
}

// plainDialer dials as go-redis would (TCP, or TLS when the URL asks) but
// hands back a connection that hides its file descriptor. go-redis peeks
// at the socket of every connection it takes from the pool (a recvfrom
// system call per operation, 5% of the client's CPU in
// BenchmarkReadUpdate) to find connections the server closed; dbprobe
// learns that from the failed operation instead, classified as a lost
// connection, which is what a benchmark must count anyway.
func plainDialer(opts *redis.Options) func(ctx context.Context, network, addr string) (net.Conn, error) {
	tlsConfig := opts.TLSConfig
	d := &net.Dialer{Timeout: opts.DialTimeout, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if d.Timeout > 0 {
			// As tls.Dialer: the timeout bounds the handshake too.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d.Timeout)
			defer cancel()
		}
		sock, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// Raw reads and writes (see rawnet), under TLS when asked for.
		conn := rawnet.Wrap(sock)
		if tlsConfig != nil {
			tc := tls.Client(conn, tlsFor(tlsConfig, addr))
			if err := tc.HandshakeContext(ctx); err != nil {
				sock.Close()
				return nil, err
			}
			conn = tc
		}
		return opaqueConn{conn}, nil
	}
}

// tlsFor names the server to verify after addr's host when config does
// not, as tls.Dialer would.
func tlsFor(config *tls.Config, addr string) *tls.Config {
	if config.ServerName != "" {
		return config
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c := config.Clone()
	c.ServerName = host
	return c
}

// opaqueConn is a net.Conn without SyscallConn.
type opaqueConn struct{ net.Conn }
